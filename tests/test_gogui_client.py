"""GoGui 1.6's own programs drive the engine on its default net: GoGui's GTP client and board
parser read every analyze command (tests/gogui/AnalyzeCheck.java, compiled at test time against
gogui.jar), gogui-regress runs tests/gtp/*.tst, gogui-twogtp plays GNU Go with GNU Go as
referee. docs/gtp.md (Clients, GoGui) gives the same command lines.

GoGui's jars are in ../shared/clients/gogui (built from GoGui's source, never copied here) and
need Java 17; without them, or without java, the tests skip naming ../shared.
"""

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sgfmill import sgf

from tests.reference_rules import BLACK, WHITE, RefGame

ROOT = Path(__file__).resolve().parents[1]
GOGUI = ROOT.parent / "shared" / "clients" / "gogui"
SUITE = sorted((ROOT / "tests" / "gtp").glob("*.tst"))
TIMEOUT = 1200  # seconds; only catches a hang (a cold start converts the net and compiles)


def gogui_command(*words: str) -> str:
    """A command line as GoGui splits it (StringUtil.splitArguments: double quotes only)."""
    return " ".join(f'"{w}"' if re.search(r"\s", w) else w for w in words)


def engine(*flags: str) -> str:
    """Dosaku on its default net, as GoGui's tools take a program."""
    return gogui_command(sys.executable, str(ROOT / "run_engine.py"), *flags)


@pytest.fixture(scope="session")
def gogui() -> Path:
    """../shared/clients/gogui, or a skip naming it when its jars or java are missing."""
    for jar in ("gogui.jar", "gogui-regress.jar", "gogui-twogtp.jar"):
        if not (GOGUI / jar).is_file():
            pytest.skip(f"{GOGUI / jar} is absent (../shared/clients/gogui not available)")
    if shutil.which("java") is None or shutil.which("javac") is None:
        pytest.skip("java and javac (17) are needed for GoGui in ../shared/clients/gogui")
    return GOGUI


@pytest.fixture(scope="session")
def analyze_check(gogui, tmp_path_factory) -> str:
    """Class path of tests/gogui/AnalyzeCheck.java compiled against gogui.jar."""
    out = tmp_path_factory.mktemp("analyze-check")
    subprocess.run(["javac", "-cp", str(gogui / "gogui.jar"), "-d", str(out),
                    str(ROOT / "tests" / "gogui" / "AnalyzeCheck.java")], check=True, timeout=300)
    return f"{gogui / 'gogui.jar'}:{out}"


# ---- analyze commands ------------------------------------------------------------------------

def test_every_analyze_command_reads_in_gogui(analyze_check):
    p = subprocess.run(["java", "-cp", analyze_check, "AnalyzeCheck",
                        engine("--visits", "16"), "9", "E5", "C3", "G4", "D7"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    lines = p.stdout.splitlines()
    entries = {m[3]: (m[1], m[2], m[4]) for m in
               (re.fullmatch(r"(OK|FAIL) (\w+) ([^:]+): (.*)", ln) for ln in lines) if m}
    assert len(entries) == len(lines) >= 10, p.stdout + p.stderr
    assert [label for label, (ok, _, _) in entries.items() if ok != "OK"] == [], p.stdout
    assert p.returncode == 0, p.stdout + p.stderr
    types = Counter(kind for _, kind, _ in entries.values())
    assert types >= Counter(dboard=2, cboard=1, sboard=1, gfx=1, pspairs=1, var=1), types

    def numbers(label):
        return dict((k, float(v)) for k, v in re.findall(r"(\w+) (-?[\d.]+)", entries[label][2]))
    policy, ownership = numbers("Policy"), numbers("Ownership")
    assert 0 <= policy["min"] and policy["max"] <= 1 and 0.9 < policy["sum"] <= 1.0001, policy
    assert -1 <= ownership["min"] < 0 < ownership["max"] <= 1, ownership
    assert 0 < numbers("Territory")["coloured"] <= 81
    winrates = entries["Winrates"][2]
    assert re.fullmatch(r"labelled (\d+) words( \d{1,3})+", winrates)
    assert int(winrates.split()[1]) == len(winrates.split()) - 3  # one percentage a point
    assert re.fullmatch(r"pairs \d+ first [A-HJ][1-9] \d+", entries["Visits"][2])
    assert re.fullmatch(r"moves \d+ first B [A-HJ][1-9]", entries["Principal Variation"][2])
    assert entries["Search"][2] == "commands VAR LABEL INFLUENCE TEXT"


# ---- gogui-regress ---------------------------------------------------------------------------

def gogui_regress(gogui: Path, files: list[Path], out: Path) -> tuple[int, str, dict[str, int]]:
    """gogui-regress on `files` (one engine process a file: GoGui starts one for each), its
    exit code, output and the totals of its summary.dat."""
    p = subprocess.run(["java", "-jar", str(gogui / "gogui-regress.jar"), "-output", str(out),
                        engine("--visits", "32"), *map(str, files)],
                       cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    head, values = (out / "summary.dat").read_text().splitlines()[:2]
    totals = dict(zip(head.lstrip("#").split("\t"), values.split("\t")))
    return p.returncode, p.stdout + p.stderr, {k: int(totals[k]) for k in
                                                ("Tests", "FAIL", "fail", "PASS", "pass", "Error")}


def assert_all_as_expected(files: list[Path], code: int, output: str, t: dict[str, int]) -> None:
    texts = [f.read_text() for f in files]
    numbered = sum(len(re.findall(r"^\d+\s", text, re.M)) for text in texts)
    must_fail = sum(text.count("\n#? [.*]*") for text in texts)
    assert (code, t["FAIL"], t["PASS"], t["Error"]) == (0, 0, 0, 0), output
    assert t["Tests"] == numbered, (t, numbered)  # every numbered command was a test
    assert t["fail"] == must_fail, output  # every command that must be rejected was rejected


def test_gogui_regress_protocol_and_gogui_files(gogui, tmp_path):
    """The two files in which gogui-regress once disagreed with tournament.regress: the
    framing of multi-line answers (kgs_gogui.tst) and the net's name in name/version."""
    files = [ROOT / "tests" / "gtp" / "protocol.tst", ROOT / "tests" / "gtp" / "kgs_gogui.tst"]
    assert_all_as_expected(files, *gogui_regress(gogui, files, tmp_path / "out"))


@pytest.mark.slow
def test_gogui_regress_whole_suite(gogui, tmp_path):
    assert len(SUITE) >= 8
    assert_all_as_expected(SUITE, *gogui_regress(gogui, SUITE, tmp_path / "out"))


# ---- gogui-twogtp ----------------------------------------------------------------------------

def replay(game: sgf.Sgf_game) -> list:
    """The moves of an SGF game, each checked legal on the reference rules (simple ko, no
    suicide), colours alternating from Black."""
    size = game.get_size()
    ref = RefGame(size, size)
    moves = [node.get_move() for node in game.get_main_sequence()[1:]]
    for i, (colour, point) in enumerate(moves):
        assert colour == "bw"[i % 2], (i, colour)
        move = None if point is None else (point[1], size - 1 - point[0])
        ref.play(BLACK if colour == "b" else WHITE, move)  # asserts the move is legal
    return moves


def test_twogtp_plays_gnugo_with_gnugo_referee(gogui, gnugo, tmp_path):
    dosaku = engine("--visits", "8")
    p = subprocess.run(["java", "-jar", str(gogui / "gogui-twogtp.jar"), "-black", dosaku,
                        "-white", f"{gnugo} --mode gtp --level 0", "-referee",
                        f"{gnugo} --mode gtp", "-size", "9", "-komi", "7", "-games", "2",
                        "-alternate", "-auto", "-sgffile", str(tmp_path / "game")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [ln.split("\t") for ln in (tmp_path / "game.dat").read_text().splitlines()
            if not ln.startswith("#")]
    assert [r[0] for r in rows] == ["0", "1"], rows
    result = r"[BW]\+(R|\d+(\.\d+)?)|0"
    for game_number, row in enumerate(rows):
        res_referee, alternated, errors = row[3], row[4], row[11]
        assert (alternated, errors) == (str(game_number), "0"), row
        assert re.fullmatch(result, res_referee), row
        game = sgf.Sgf_game.from_bytes((tmp_path / f"game-{game_number}.sgf").read_bytes())
        root = game.get_root()
        dosaku_colour = "PW" if game_number else "PB"
        assert root.get(dosaku_colour).startswith("Dosaku"), root.get(dosaku_colour)
        assert game.get_size() == 9 and game.get_komi() == 7
        assert re.fullmatch(result, root.get("RE")), root.get("RE")
        moves = replay(game)
        assert len(moves) >= 10
        if not root.get("RE").endswith("+R"):  # scored: the game ended with two passes
            assert [point for _, point in moves[-2:]] == [None, None], moves[-2:]
