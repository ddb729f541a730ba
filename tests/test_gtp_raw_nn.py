"""kata-raw-nn through GTP: exists only with a network, and reproduces KataGo's own
`kata-raw-nn 0` output on reference positions (tests/data/) within 2e-3."""

import threading
import time

import numpy as np
import pytest

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.gtp.commands import Commands
from dosaku.gtp.loader import EngineLoader
from dosaku.gtp.server import GtpServer
from tests.gtp_answers import ok

FAST = EngineConfig(playouts=64, seconds=0)
TOL = 2e-3
SCALARS = ("whiteWin", "whiteLoss", "noResult", "whiteLead", "whiteScoreSelfplay",
           "whiteScoreSelfplaySq", "varTimeLeft", "shorttermWinlossError",
           "shorttermScoreError", "policyPass")
# a spread of sizes, ko ban, passes, ladders, captures and a finished game
CHOSEN = ("gnugo9_n20_k7.5", "gnugo9_n37_k6.5", "gnugo13_n50_k7.5", "gnugo19_n60_k7.5",
          "pass9_n20_one_pass", "orient13_B_K3", "ladder_working_w_atari", "ko9_white_banned",
          "capture9_after")


def parse_raw_nn(text: str, width: int, height: int) -> list[dict]:
    """KataGo's layout back into values: one dict per `symmetry` block."""
    tokens = text.split()
    blocks, i = [], 0
    while i < len(tokens):
        key = tokens[i]
        if key == "symmetry":
            blocks.append({"symmetry": int(tokens[i + 1])})
            i += 2
        elif key in ("policy", "whiteOwnership"):
            values = [float("nan") if t == "NAN" else float(t)
                      for t in tokens[i + 1:i + 1 + width * height]]
            blocks[-1][key] = np.array(values).reshape(height, width)
            i += 1 + width * height
        else:
            blocks[-1][key] = float(tokens[i + 1])
            i += 2
    return blocks


# ---- without a network ---------------------------------------------------------------------
def test_absent_without_a_network():
    srv = GtpServer(Commands(EngineLoader.of(Engine(9, 9, 7.5, config=FAST))))
    assert "kata-raw-nn" not in ok(srv, "list_commands").split("\n")
    assert ok(srv, "known_command kata-raw-nn") == "false"
    assert srv.handle_line("kata-raw-nn 0") == "? kata-raw-nn needs a network (--model)\n\n"


def test_listed_from_the_loader_hint_until_the_engine_exists():
    release = threading.Event()

    def build():
        release.wait(5)
        return Engine(9, 9, 7.5, config=FAST)  # in the end: no network after all
    loader = EngineLoader.start(build, network=True)
    srv = GtpServer(Commands(loader))
    assert "kata-raw-nn" in ok(srv, "list_commands").split("\n")  # answers without waiting
    release.set()
    for _ in range(500):
        if loader.ready:
            break
        time.sleep(0.01)
    assert "kata-raw-nn" not in ok(srv, "list_commands").split("\n")  # the engine decides


# ---- with the b6c96 network ----------------------------------------------------------------
@pytest.fixture(scope="module")
def srv(b6c96_model):
    from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator
    evaluator = OnnxEvaluator(b6c96_model, seed=0)
    return GtpServer(Commands(EngineLoader.of(Engine(9, 9, 7.5, evaluator=evaluator,
                                                     config=FAST))))


@pytest.fixture
def reference(katago_reference):
    """reference(id): a KataGo reference position (tests/data)."""
    return katago_reference.__getitem__


def replay(srv, pos) -> None:
    n = pos["board_size"]
    for line in (f"boardsize {n}", "clear_board", "kata-set-rules chinese", f"komi {pos['komi']}"):
        ok(srv, line)
    for color, vertex in pos["moves"]:
        ok(srv, f"play {color} {vertex}")


def test_listed_with_a_network(srv):
    assert "kata-raw-nn" in ok(srv, "list_commands").split("\n")
    assert ok(srv, "known_command kata-raw-nn") == "true"
    for bad in ("kata-raw-nn", "kata-raw-nn 8", "kata-raw-nn x", "kata-raw-nn 0 1"):
        assert srv.handle_line(bad) == "? syntax error\n\n", bad


@pytest.mark.parametrize("pos_id", CHOSEN)
def test_matches_katago_reference(reference, srv, pos_id):
    pos = reference(pos_id)
    replay(srv, pos)
    n = pos["board_size"]
    [ours] = parse_raw_nn(ok(srv, "kata-raw-nn 0"), n, n)
    ref = pos["raw_nn"]
    assert ours["symmetry"] == 0
    for key in SCALARS:
        tol = TOL if key in ("whiteWin", "whiteLoss", "noResult", "policyPass") else 0.02
        assert ours[key] == pytest.approx(ref[key], abs=tol), key
    ref_policy = np.array([[np.nan if v is None else v for v in row] for row in ref["policy"]])
    np.testing.assert_array_equal(np.isnan(ours["policy"]), np.isnan(ref_policy))
    np.testing.assert_allclose(ours["policy"], ref_policy, atol=TOL)
    np.testing.assert_allclose(ours["whiteOwnership"], np.array(ref["whiteOwnership"]),
                               atol=TOL)


def test_all_prints_the_eight_symmetries(reference, srv):
    pos = reference("gnugo9_n20_k7.5")
    replay(srv, pos)
    blocks = parse_raw_nn(ok(srv, "kata-raw-nn all"), 9, 9)
    assert [b["symmetry"] for b in blocks] == list(range(8))
    single = parse_raw_nn(ok(srv, "kata-raw-nn 5"), 9, 9)[0]
    assert blocks[5]["whiteWin"] == single["whiteWin"]
    np.testing.assert_array_equal(blocks[5]["whiteOwnership"], single["whiteOwnership"])
    # the net is only nearly symmetric: the 8 evaluations differ a little, never a lot
    wins = [b["whiteWin"] for b in blocks]
    assert max(wins) - min(wins) < 0.1 and len(set(wins)) > 1
    for b in blocks:  # illegal points are the occupied ones under every symmetry
        np.testing.assert_array_equal(np.isnan(b["policy"]), np.isnan(blocks[0]["policy"]))
