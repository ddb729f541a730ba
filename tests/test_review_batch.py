"""`dosaku review GAMES... --out DIR`: a folder of games reviewed by local workers and, the way
a user would run one, on a local Ray cluster; every game's SGF annotated, its summary written,
a broken game reported without stopping the others, an interrupted run resumed."""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from sgfmill import sgf

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"  # two games of records/b6c96-100visits-vs-gnugo10-9x9
FLAGS = ["--model", "dosaku-zero-9x9", "--visits", "3", "--no-progress"]


def review(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "run_engine.py"), "review", *args],
                          capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture
def games(tmp_path) -> Path:
    """Two real 9x9 games in a folder, one in a sub-folder."""
    folder = tmp_path / "games"
    (folder / "more").mkdir(parents=True)
    shutil.copy(DATA / "gnugo-match-game-1.sgf", folder / "a.sgf")
    shutil.copy(DATA / "gnugo-match-game-2.sgf", folder / "more" / "b.sgf")
    return folder


def moves_of(path: Path) -> int:
    game = sgf.Sgf_game.from_bytes(path.read_bytes())
    return sum(1 for node in game.get_main_sequence()[1:] if node.get_move()[0])


def check_reviewed(out: Path, games: Path) -> dict:
    """Every game's reviewed SGF has a comment on each move; the summary lists them all."""
    summary = json.loads((out / "summary.json").read_text())
    by_game = {Path(s["game"]).relative_to(games).as_posix(): s for s in summary["games"]}
    assert set(by_game) == {"a.sgf", "more/b.sgf"}
    for rel, s in by_game.items():
        reviewed = sgf.Sgf_game.from_bytes((out / rel).read_bytes())
        nodes = [n for n in reviewed.get_main_sequence()[1:] if n.get_move()[0]]
        assert len(nodes) == moves_of(games / rel) == s["positions"] - 1
        assert all("winrate" in n.get("C").lower() for n in nodes if n.has_property("C"))
        assert sum(n.has_property("C") for n in nodes) >= len(nodes) - 1
        losses = [m["loss"] for c in "BW" for m in s["mistakes"][c]]
        assert losses and all(0 < x <= 1 for x in losses)
    return by_game


def test_local_workers_review_a_folder_and_resume(games, tmp_path):
    out = tmp_path / "out"
    done = review(str(games), "--out", str(out), "--workers", "2", *FLAGS)
    assert done.returncode == 0, done.stderr[-2000:]
    first = check_reviewed(out, games)
    assert all(s["searched"] == s["positions"] for s in first.values())
    # an interrupt: game b's sidecar lost its last ten positions, its SGF was never written
    sidecar = out / "more" / "b.sgf.json"
    data = json.loads(sidecar.read_text())
    kept = sorted(data["positions"], key=int)[:-10]
    data["positions"] = {k: data["positions"][k] for k in kept}
    sidecar.write_text(json.dumps(data))
    (out / "more" / "b.sgf").unlink()
    again = review(str(games), "--out", str(out), "--workers", "2", *FLAGS)
    assert again.returncode == 0, again.stderr[-2000:]
    second = check_reviewed(out, games)
    assert second["a.sgf"]["searched"] == 0 and second["more/b.sgf"]["searched"] == 10


def test_a_broken_game_is_reported_and_the_others_reviewed(games, tmp_path):
    (games / "broken.sgf").write_text("(;GM[1]SZ[9];B[ee];W[ee])")  # the same point twice
    out = tmp_path / "out"
    done = review(str(games), "--out", str(out), *FLAGS)
    assert done.returncode == 1
    summary = json.loads((out / "summary.json").read_text())["games"]
    errors = [s for s in summary if "error" in s]
    assert len(errors) == 1 and errors[0]["game"].endswith("broken.sgf")
    assert "illegal" in errors[0]["error"]
    assert len(summary) == 3 and (out / "a.sgf").exists()


def test_bad_arguments_are_refused(tmp_path):
    done = review(str(tmp_path / "nowhere.sgf"), "--out", str(tmp_path / "o"), *FLAGS)
    assert done.returncode == 2 and "no such SGF" in done.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # a Ray cluster takes a while to start and stop
@pytest.mark.parametrize("token", [False, True], ids=["no-token", "token-in-home"])
def test_ray_cluster_workers_review_a_folder(games, tmp_path, token):
    """A head node started as a user starts one (`ray start --head`, here with --block so
    that the test owns its processes and ends them alone, not every Ray on the machine), in a
    home of its own. Where that home holds a token (as any earlier local `ray.init()` leaves
    one), the head demands it, and the review must send it."""
    ray = shutil.which("ray", path=os.path.dirname(sys.executable))
    assert ray, "the test extra installs ray"
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    if token:
        (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0")  # workers import the installed dosaku
    port = free_port()
    short = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    head = subprocess.Popen([ray, "start", "--head", "--block", f"--port={port}",
                             "--node-ip-address=127.0.0.1", "--num-cpus=2",
                             "--include-dashboard=false", f"--temp-dir={short}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    try:
        said = []
        for line in head.stdout:
            said.append(line)
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail("ray start --head did not start")
        assert any("Token authentication is enabled" in line for line in said) == token
        out = tmp_path / "out"
        done = review(str(games), "--out", str(out), "--workers", "2",
                      "--ray-address", f"127.0.0.1:{port}", *FLAGS, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        check_reviewed(out, games)
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # the head and every Ray process it started
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(short, ignore_errors=True)
