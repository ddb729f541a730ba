"""The networks Dosaku ships (weights/), above all its default, and their model cards.

The default is KataGo's transformer net as KataGo released it (`.bin.gz`); our own nets ship as
ONNX files with their int8 copies. These tests fail, never skip, when a file or its card is
missing. They hold for whatever nets are dropped in: each card's machine-readable lines must match
the file (its sha256, the metadata the export wrote, the trunk read off the graph); `dosaku` with
no flags must play on it, a legal 9x9 game checked move by move against our own GameState; the
wheel must carry it (its file list); and, marked slow, that wheel installed into a fresh virtual
environment must play on it from anywhere.
"""

import ast
import configparser
import hashlib
import io
import logging
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest

from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.engine.evaluators.onnx_options import cpu_runs_int8_fast
from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE, opponent
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import rules_by_name
from dosaku.launch import flags as launch_flags
from dosaku.networks.cache import onnx_for
from dosaku.tournament.controller import GtpController
from dosaku.weights import (
    DEFAULT_NAME,
    FORMER_NAMES,
    card_path,
    default_card_path,
    default_model_path,
    int8_model_path,
    model_path,
    shipped_names,
)

ROOT = Path(__file__).resolve().parents[1]
CARD_FIELDS = ("sha256", "feature_set", "net", "training_steps", "int8_sha256", "int8_recipe")
KATAGO_CARD_FIELDS = ("sha256", "feature_set", "net", "licence")  # a KataGo net's card
CARD_LINE = re.compile(r"^([a-z0-9_]+):[ \t]*(\S+)[ \t]*$", re.MULTILINE)
NET_NAME = re.compile(r"b(\d+)c(\d+)")
# the sha256 of the transformer net as KataGo released it (the file in ../shared/models)
KATAGO_B10_SHA256 = "0ba27eced5180b3e3d0b898b280c541112989765e789d1eb6cd0d31b2b2c1229"
KATAGO_LICENCE = "https://katagotraining.org/network_license/"
SHIPS = ("Dosaku ships a network as its default: put it at {path} with its model card "
         "(weights/README.md says what the card must state). Without it `dosaku` falls back to "
         "random playouts, so this is a failure, not a skip.")
MOVE_CAP = 2 * 9 * 9  # plies; a game still going by then ends there
GENMOVE_TIMEOUT = 600.0  # seconds; the first genmove may compile the numba kernels
# The wheel is built from a copy of the checkout without these, so that files a past build left
# in build/ cannot slip into it, and building leaves nothing in the checkout.
BUILD_LEFTOVERS = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                         ".pytest_cache", ".hypothesis", "out", "matches")


def shipped_net() -> Path:
    """The shipped file; a failure (not a skip) when it is missing."""
    path = default_model_path()
    assert path.is_file(), f"{path} is missing. " + SHIPS.format(path=path)
    return path


def is_katago_file(name: str) -> bool:
    """Whether shipped net `name` is a KataGo model file (shipped as released), not our ONNX."""
    return model_path(name).name.endswith(".bin.gz")


def card_fields(name: str) -> dict[str, str]:
    """The model card's machine-readable `key: value` lines, each present exactly once: those
    of a KataGo file's card or those of one of our ONNX nets."""
    path = card_path(name)
    assert path.is_file(), f"model card {path} is missing. " + SHIPS.format(
        path=model_path(name))
    fields = KATAGO_CARD_FIELDS if is_katago_file(name) else CARD_FIELDS
    lines = [(k, v) for k, v in CARD_LINE.findall(path.read_text()) if k in fields]
    keys = [key for key, _ in lines]
    assert sorted(keys) == sorted(fields), (
        f"{path} must state each of {', '.join(fields)} once on a line of its own "
        f"(`sha256: <hex>`); found {keys}")
    return dict(lines)


ONNX_NETS = [name for name in shipped_names() if not is_katago_file(name)]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trunk_size(path: Path) -> tuple[int, int]:
    """(residual blocks, trunk channels) read off the ONNX graph, not its metadata: the input
    convolution's output channels, and half the distinct inputs of 3x3 convolutions (a residual
    block has two 3x3 stages; a global-pooling block's two first-stage convolutions share one)."""
    graph = onnx.load(str(path)).graph
    shapes = {t.name: tuple(t.dims) for t in graph.initializer}
    convs = [(node.input[0], shapes[node.input[1]]) for node in graph.node
             if node.op_type == "Conv"]
    channels = next(shape[0] for source, shape in convs if source == "spatial")
    stage_inputs = {source for source, shape in convs if shape[2:] == (3, 3)}
    return len(stage_inputs) // 2, channels


def test_trunk_size_reads_a_known_net(b6c96_onnx):
    assert trunk_size(b6c96_onnx) == (6, 96)


def test_the_default_is_katagos_released_transformer_net_under_its_licence():
    """The default is KataGo's file byte for byte, under KataGo's name, and its card names the
    project, the licence and says the net is not ours."""
    shipped = shipped_net()
    assert shipped.name == f"{DEFAULT_NAME}.bin.gz" and DEFAULT_NAME in shipped_names()
    assert file_sha256(shipped) == KATAGO_B10_SHA256
    card = default_card_path().read_text()
    assert card_fields(DEFAULT_NAME)["licence"] == "katago-network-licence"
    assert KATAGO_LICENCE in card and "Not ours" in card and "KataGo project" in card


def test_katago_file_card_matches_its_conversion():
    """A KataGo file's card against the file and what our converter makes of it."""
    for name in shipped_names():
        if not is_katago_file(name):
            continue
        card, shipped = card_fields(name), model_path(name)
        assert card["sha256"] == file_sha256(shipped)
        model = OnnxModel(onnx_for(shipped))
        assert card["feature_set"] == model.feature_set
        assert card["net"] == model.meta["source_name"] == name
        assert model.meta["source_sha256"] == card["sha256"]


@pytest.mark.parametrize("name", ONNX_NETS)
def test_shipped_net_loads_and_matches_its_card(name):
    shipped, card = model_path(name), card_fields(name)
    model = OnnxModel(shipped)  # refuses a feature set or inputs the engine cannot feed
    assert card["sha256"].lower() == file_sha256(shipped), (
        f"weights/{name}.md states sha256 {card['sha256']}, but {shipped} hashes to "
        f"{file_sha256(shipped)}: the card describes another file")
    assert card["feature_set"] == model.feature_set
    assert card["net"] == model.meta.get("net"), "the card's net size is not the exported one"
    blocks, channels = map(int, NET_NAME.fullmatch(card["net"]).groups())
    assert trunk_size(shipped) == (blocks, channels)
    assert card["training_steps"] == model.meta.get("training_steps")


@pytest.mark.parametrize("name", ONNX_NETS)
def test_shipped_int8_copy_matches_its_card_and_its_net(name):
    """The int8 copy shipped beside each net (so no engine calibrates it at first start): the
    hash and recipe its card states, its net's metadata, and close to its net's outputs."""
    from dosaku.engine.evaluators.raw_nn import raw_nn
    from dosaku.networks.quantize import RECIPE
    card, copy = card_fields(name), int8_model_path(name)
    assert card["int8_sha256"] == file_sha256(copy), f"weights/{name}.md: stale int8_sha256"
    assert card["int8_recipe"] == RECIPE, f"make {copy} again with networks/quantize.py"
    float_net, int8 = OnnxModel(model_path(name)), OnnxModel(copy)
    assert {k: int8.meta.get(k) for k in CARD_FIELDS[1:4]} == \
        {k: float_net.meta.get(k) for k in CARD_FIELDS[1:4]}
    assert any(n.op_type == "QuantizeLinear" for n in onnx.load(str(copy)).graph.node)
    game = GameState(9, 9, 7.0, rules_by_name("chinese"))
    for vertex in ("E5", "C3", "G7"):
        game.play(game.to_move, parse_vertex(vertex, 9, 9))
    a, b = raw_nn(float_net, game, 0), raw_nn(int8, game, 0)
    assert abs(a.white_win - b.white_win) < 0.05
    top = np.unravel_index(np.nanargmax(b.policy), b.policy.shape)  # int8's first choice
    assert a.policy[top] >= 0.5 * np.nanmax(a.policy), "int8 prefers a move float32 does not"


def raw_nn_sums(answer: str) -> tuple[float, float]:
    """(win + loss + no-result, policy over the board + pass) of a kata-raw-nn answer."""
    lines = answer.splitlines()
    field = dict(line.split(" ", 1) for line in lines if re.match(r"[a-zA-Z]+ \S+$", line))
    outcome = sum(float(field[k]) for k in ("whiteWin", "whiteLoss", "noResult"))
    rows = lines[lines.index("policy") + 1:lines.index("policyPass " + field["policyPass"])]
    policy = sum(float(v) for row in rows for v in row.split() if v != "NAN")
    return outcome, policy + float(field["policyPass"])


def play_itself(engine: GtpController) -> GameState:
    """Genmove for both colours until two passes, a resignation or MOVE_CAP plies, each move
    checked against our own record of the game."""
    game = GameState(9, 9, 7.5, rules_by_name("chinese"))
    color = BLACK
    while len(game.moves) < MOVE_CAP and not game.is_over():
        answer = engine.send(f"genmove {'b' if color == BLACK else 'w'}", GENMOVE_TIMEOUT)
        if answer.lower() == "resign":
            break
        point = parse_vertex(answer, 9, 9)
        assert point is not None, f"genmove answered {answer!r}"
        assert game.play(color, point) == MOVE_OK, \
            f"illegal move {answer} at ply {len(game.moves) + 1}: {game.moves}"
        color = opponent(color)
    return game


def test_dosaku_without_flags_plays_a_legal_game_on_the_shipped_net():
    shipped = shipped_net()
    log = io.StringIO()
    command = shlex.join([sys.executable, str(ROOT / "run_engine.py"), "--visits", "16",
                          "--boardsize", "9"])
    with GtpController(command, stderr_log=log) as engine:
        assert "kata-raw-nn" in engine.send("list_commands").split()
        outcome, policy = raw_nn_sums(engine.send("kata-raw-nn 0", GENMOVE_TIMEOUT))
        assert outcome == pytest.approx(1.0, abs=1e-4) and policy == pytest.approx(1.0, abs=1e-3)
        game = play_itself(engine)
    assert f"network {DEFAULT_NAME}: {shipped} (shipped default)" in log.getvalue()
    stones = {color for color, point in game.moves if point != PASS_POINT}
    assert stones == {BLACK, WHITE}, f"a game without stones of both colours: {game.moves}"


@pytest.mark.parametrize("name", shipped_names())
def test_model_flag_takes_a_shipped_net_by_name(name):
    args = launch_flags.parse_flags(["--model", name])
    assert (args.model, args.evaluator) == (str(model_path(name)), "onnx")


@pytest.mark.parametrize("former", sorted(FORMER_NAMES))
def test_former_names_still_work_and_say_the_new_one(former, caplog):
    with caplog.at_level(logging.WARNING, logger="dosaku"):
        args = launch_flags.parse_flags(["--model", former])
    assert args.model == str(model_path(FORMER_NAMES[former]))
    assert Path(args.model).is_file()
    assert caplog.messages == [f"--model {former}: that net is now named {FORMER_NAMES[former]}"]


def test_default_names_the_default_net():
    assert launch_flags.parse_flags(["--model", "default"]).model == str(default_model_path())


def test_an_unknown_net_name_is_refused_with_the_shipped_names(capsys):
    with pytest.raises(SystemExit):
        launch_flags.parse_flags(["--model", "b20c256"])
    error = capsys.readouterr().err
    assert "no shipped net of that name" in error
    assert all(name in error for name in shipped_names())


def test_model_flag_still_chooses_another_net(tmp_path, caplog):
    other = tmp_path / "other.onnx"
    args = launch_flags.parse_flags(["--model", str(other), "--no-int8"])
    assert (args.model, args.evaluator) == (str(other), "onnx")
    with caplog.at_level(logging.INFO, logger="dosaku"):
        launch_flags.announce_evaluator(args)
    assert caplog.messages == [f"network other: {other} (--model), float32"]


def test_missing_shipped_net_falls_back_to_rollouts_with_a_warning(monkeypatch, tmp_path, caplog):
    absent = tmp_path / "default.onnx"
    monkeypatch.setattr(launch_flags, "SHIPPED_MODEL", absent)
    args = launch_flags.parse_flags([])
    assert (args.model, args.evaluator) == (None, "rollout")
    with caplog.at_level(logging.INFO, logger="dosaku"):
        launch_flags.announce_evaluator(args)
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert f"no network: the shipped {absent} is missing" in caplog.messages[0]


def run(args: list, cwd: Path) -> str:
    """stdout of a command that must succeed (its output shown when it does not)."""
    p = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, f"{args} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def build_wheel(tmp_path: Path) -> Path:
    """The project's wheel, built from a clean copy of the checkout into tmp_path/dist."""
    source = shutil.copytree(ROOT, tmp_path / "source", ignore=BUILD_LEFTOVERS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", tmp_path / "dist", source], elsewhere)
    wheel, = (tmp_path / "dist").glob("dosaku-*.whl")
    return wheel


# our packages and the composition root, which an install provides as dosaku.engine etc. only
OUR_NAMES = ("engine", "launch", "training", "bench", "gtp", "networks", "tournament", "weights",
             "kata_analysis", "run_engine")
NAMES_AFTER_IMPORT = f"""
import importlib, importlib.util, dosaku
inside = [importlib.import_module("dosaku." + name) for name in {OUR_NAMES!r}
          if name != "training"]  # (training needs torch, an extra: found, not imported)
print([name for name in {OUR_NAMES!r} if importlib.util.find_spec(name)])
print([m.__file__ for m in inside] + [importlib.util.find_spec("dosaku.training").origin])
"""


def names_after_importing_dosaku(python, cwd: Path) -> tuple[list[str], list[str]]:
    """In a process of `python` started in `cwd` (another folder than the checkout) that has
    imported dosaku and its packages: which of our bare names (`engine`, ...) are importable,
    and the files dosaku.engine etc. come from."""
    bare, files = run([python, "-c", NAMES_AFTER_IMPORT], cwd).splitlines()
    return ast.literal_eval(bare), ast.literal_eval(files)


def test_importing_dosaku_makes_no_other_name_importable(tmp_path, monkeypatch):
    """The install (here the checkout's own, `pip install -e .`) adds the one name dosaku:
    after importing it and every package in it, from another folder, `engine`, `gtp`, ... are
    not importable (nothing of ours shadows a user's module of the same name, nor the other way
    round), while dosaku.engine etc. are, from this checkout. The slow test below checks the
    same in an installed wheel."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    bare, inside = names_after_importing_dosaku(sys.executable, tmp_path)
    assert bare == [], f"importing dosaku made {bare} importable"
    assert len(inside) == len(OUR_NAMES), inside
    assert all(Path(f).resolve().is_relative_to(ROOT) for f in inside), inside


def test_wheel_carries_the_packages_the_nets_and_the_command(tmp_path):
    """The wheel's file list and metadata: every module of every package setup.cfg installs,
    run_engine, the shipped nets byte for byte with their cards and int8 copies, all inside one
    top-level package, dosaku; the `dosaku` command, and torch and ray only as extras.
    (Installing it into a new virtual environment and playing there is the slow test below.)"""
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
        metadata = z.read(f"{dist_info}/METADATA").decode()
        carried = {name: hashlib.sha256(z.read(f"dosaku/weights/{model_path(name).name}"))
                   .hexdigest() for name in shipped_names()}
        int8 = {name: hashlib.sha256(z.read(f"dosaku/weights/int8/{name}.onnx")).hexdigest()
                for name in ONNX_NETS}
        cards = {name: z.read(f"dosaku/weights/{name}.md").decode() for name in shipped_names()}
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    packages = {n.removeprefix("dosaku.") for n in config["options"]["packages"].split()
                if n.count(".") == 1}
    on_disk = {"dosaku/" + p.relative_to(ROOT).as_posix() for pkg in packages
               for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts}
    assert on_disk and on_disk <= names, sorted(on_disk - names)
    assert {"dosaku/__init__.py", "dosaku/run_engine.py"} <= names
    assert {n.split("/")[0] for n in names} == {"dosaku", dist_info}
    assert not any(n.startswith("dosaku/tests/") for n in names)
    assert carried == {name: file_sha256(model_path(name)) for name in shipped_names()}
    assert int8 == {name: file_sha256(int8_model_path(name)) for name in ONNX_NETS}
    assert cards == {name: card_path(name).read_text() for name in shipped_names()}
    assert re.search(r"^dosaku\s*=\s*dosaku\.run_engine:main$", entry_points, re.MULTILINE), \
        entry_points
    requires = re.findall(r"^Requires-Dist: (.*)$", metadata, re.MULTILINE)
    heavy = [r for r in requires if re.match(r"(torch|ray)\b", r)]
    assert heavy and all("extra ==" in r for r in heavy), requires


@pytest.mark.slow
def test_installed_wheel_carries_the_net_and_plays_on_it(tmp_path, monkeypatch):
    """What a user gets from `pip install`: the wheel and what it declares, in a virtual
    environment of its own (nothing of this machine's Python shows through: no torch, no
    sympy), a home and cache that are empty, default flags, and a 19x19 opening move from the
    shipped net, converted on this first start and played in float32 without any quantizing."""
    shipped = shipped_net()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.delenv("PYTHONPATH", raising=False)  # children must not see the checkout
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], elsewhere)
    run([venv / "bin" / "pip", "install", "-q", wheel], elsewhere)

    python = venv / "bin" / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    elsewhere).strip())
    assert site.is_relative_to(venv)
    bare, inside = names_after_importing_dosaku(python, elsewhere)
    assert bare == [], f"importing dosaku made {bare} importable"
    assert inside and all(Path(f).is_relative_to(site / "dosaku") for f in inside), inside
    numba = run([python, "-c", "import numba; print(numba.__file__)"], elsewhere).strip()
    assert Path(numba).is_relative_to(site), numba
    absent = run([python, "-c", "import importlib.util as u\n"
                  "print([m for m in ('torch', 'ray', 'sympy') if u.find_spec(m)])"], elsewhere)
    assert absent.strip() == "[]", f"the base install brought {absent}"
    installed = (site / "dosaku" / "weights" / shipped.name).resolve()
    assert installed.is_file(), f"the wheel does not carry the net: {installed} is missing"
    assert file_sha256(installed) == file_sha256(shipped)
    card = site / "dosaku" / "weights" / f"{DEFAULT_NAME}.md"
    assert card.is_file() and card.read_text() == default_card_path().read_text()
    for name in ONNX_NETS:
        int8 = site / "dosaku" / "weights" / "int8" / f"{name}.onnx"
        assert file_sha256(int8) == file_sha256(int8_model_path(name))

    log = io.StringIO()
    with GtpController(str(venv / "bin" / "dosaku"), cwd=str(elsewhere),
                       stderr_log=log) as engine:
        assert engine.send("name") == f"Dosaku ({DEFAULT_NAME})"
        assert engine.send("version").endswith(f"+{DEFAULT_NAME}")
        move = engine.send("genmove b", GENMOVE_TIMEOUT)
    point = parse_vertex(move, 19, 19)
    assert point not in (None, PASS_POINT), f"genmove answered {move!r}"
    column, row = "ABCDEFGHJKLMNOPQRST".index(move[0].upper()), int(move[1:]) - 1
    assert min(column, row, 18 - column, 18 - row) >= 2, f"{move} is no opening move"
    precision = "int8 where it pays" if cpu_runs_int8_fast() else "float32"
    assert f"network {DEFAULT_NAME}: {installed} (shipped default), {precision}" in log.getvalue()
    assert f"converting {installed} to ONNX" in log.getvalue()
    assert "quantizing" not in log.getvalue()
