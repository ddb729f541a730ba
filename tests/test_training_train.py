"""The trainer on rows of random 5x5 games: the loss falls, teacher targets pull the net
towards the teacher, an interrupted run resumes to the same weights, and the command-line run
-> export -> engine chain plays a legal game through GTP."""

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from dosaku.engine.rules.constants import BLACK, MOVE_OK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.training.checkpoint import checkpoints, load_checkpoint
from dosaku.training.chunks import write_chunk
from dosaku.training.losses import LossWeights, loss_terms
from dosaku.training.model import SCORE_OUTPUTS, SCORE_SCALE, build_net
from dosaku.training.replay import ReplayWindow, rows_batch
from dosaku.training.train import TrainConfig, Trainer, TrainError, parse_args, train
from tests.training_rows import random_game_rows

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A chunk folder with 5x5 rows carrying teacher targets (about 600 rows)."""
    folder = tmp_path_factory.mktemp("chunks")
    write_chunk(folder, "games-1.npz", random_game_rows(5, 12, seed=11, teacher=True), "test")
    return folder


def config(data, out, **kw):
    base = dict(net="b2c32", steps=40, batch=32, lr=0.05, warmup=5, checkpoint_every=20,
                threads=1, seed=3, progress=False)
    return TrainConfig([str(data)], str(out), **{**base, **kw})


def fixed_batch(data):
    """128 rows drawn once from all games (openings alone would show little to learn)."""
    pool = ReplayWindow.load([data], None, print).pools[(5, 5)]
    return rows_batch(pool, np.random.default_rng(0).choice(len(pool.rows), 128, replace=False))


def losses_of(checkpoint, data, weights=LossWeights()):
    state = load_checkpoint(checkpoint)
    net = build_net(state["net"])
    net.load_state_dict(state["model"])
    cfg = TrainConfig([], "", net=state["net"], weights=weights)
    return Trainer(net, cfg, torch.device("cpu")).evaluate(fixed_batch(data))


@pytest.mark.parametrize("bf16", [False, True])
def test_loss_falls_on_a_fixed_batch(data, tmp_path, bf16):
    cfg = config(data, tmp_path / "run", bf16=bf16)
    before = Trainer(build_net("b2c32", cfg.seed), cfg, torch.device("cpu")).evaluate(
        fixed_batch(data))
    result = train(cfg, log=lambda _: None)
    after = losses_of(result.checkpoint, data)
    assert result.step == 40
    assert after["total"] < 0.85 * before["total"], (before, after)
    for term in ("policy", "value", "ownership", "score_mean"):
        assert after[term] < before[term], (term, before[term], after[term])
    rows = list(csv.DictReader(open(tmp_path / "run" / "losses.csv")))
    assert [int(r["step"]) for r in rows] == list(range(1, 41))
    assert (tmp_path / "run" / "losses.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_teacher_weight_moves_the_policy_towards_the_teacher(data, tmp_path):
    runs = {m: train(config(data, tmp_path / f"m{m}", weights=LossWeights(teacher=m)),
                     log=lambda _: None) for m in (0.0, 1.0)}
    # Measured with teacher weight 1: the cross-entropy to the teacher's soft targets.
    probe = LossWeights(teacher=1.0)
    own = losses_of(runs[0.0].checkpoint, data, probe)
    taught = losses_of(runs[1.0].checkpoint, data, probe)
    assert taught["teacher_policy"] < own["teacher_policy"] - 0.1, (own, taught)
    assert taught["teacher_ownership"] < own["teacher_ownership"]


def test_value_and_lead_weights_reach_the_loss(data, tmp_path):
    args = ["--data", str(data), "--out", str(tmp_path), "--teacher", "1"]
    parsed = parse_args(args + ["--value-loss", "20", "--lead-loss", "20"]).weights
    assert (parsed.value, parsed.lead, parsed.teacher) == (20.0, 20.0, 1.0)
    assert parse_args(args).weights == LossWeights(teacher=1.0)
    probe = LossWeights(teacher=1.0)
    light, heavy = (losses_of(train(config(data, tmp_path / f"w{w}",
                                           weights=LossWeights(teacher=1.0, value=w, lead=w)),
                                    log=lambda _: None).checkpoint, data, probe)
                    for w in (0.1, 5.0))
    assert heavy["teacher_value"] < light["teacher_value"], (light, heavy)


def test_teacher_score_mean_moves_the_score_mean_target_to_the_teachers_lead(data):
    batch = fixed_batch(data)
    net = build_net("b2c32", 1)
    with torch.no_grad():
        outputs = net(batch.spatial, batch.global_in)
        mean = outputs[2][:, SCORE_OUTPUTS.index("scoremean")]

        def plain_huber(target):  # written out: 0.5 d^2 inside 1 raw unit, |d| - 0.5 beyond
            d = (mean - target / SCORE_SCALE).abs()
            return torch.where(d < 1, 0.5 * d * d, d - 0.5).mean().item()

        def score_mean_term(**kw):
            return loss_terms(outputs, batch, LossWeights(**kw), [])["score_mean"].item()

        final, lead = plain_huber(batch.score), plain_huber(batch.teacher_score)
        assert abs(final - lead) > 1e-3  # the two targets differ on these rows
        assert score_mean_term(teacher=1.0) == pytest.approx(final, rel=1e-5)
        with_flag = dict(teacher_score_mean=True)
        assert score_mean_term(teacher=1.0, **with_flag) == pytest.approx(lead, rel=1e-5)
        assert score_mean_term(teacher=0.0, **with_flag) == pytest.approx(final, rel=1e-5)
    args = ["--data", str(data), "--out", "run"]
    assert parse_args(args + ["--teacher-score-mean"]).weights.teacher_score_mean
    assert not parse_args(args).weights.teacher_score_mean


def test_interrupted_run_resumes_to_the_weights_of_an_uninterrupted_one(data, tmp_path):
    whole = train(config(data, tmp_path / "whole", steps=30, checkpoint_every=10),
                  log=lambda _: None)
    part = tmp_path / "part"
    train(config(data, part, steps=25, checkpoint_every=10), log=lambda _: None)
    # As if killed after step 25, before its checkpoint: the latest on disk is step 20.
    checkpoints(part)[-1].unlink()
    with pytest.raises(TrainError, match="--resume"):
        train(config(data, part, steps=30, checkpoint_every=10), log=lambda _: None)
    messages = []
    resumed = train(config(data, part, steps=30, checkpoint_every=10, resume=True),
                    log=messages.append)
    assert any("at step 20" in m for m in messages)
    assert resumed.step == 30
    a, b = load_checkpoint(whole.checkpoint), load_checkpoint(resumed.checkpoint)
    for key, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][key]), key
    momentum_a = [s["momentum_buffer"] for s in a["optimizer"]["state"].values()]
    momentum_b = [s["momentum_buffer"] for s in b["optimizer"]["state"].values()]
    assert all(torch.equal(x, y) for x, y in zip(momentum_a, momentum_b))
    rows_a = list(csv.DictReader(open(tmp_path / "whole" / "losses.csv")))
    rows_b = list(csv.DictReader(open(part / "losses.csv")))
    assert [r["step"] for r in rows_b] == [str(s) for s in range(1, 31)]
    assert [r["total"] for r in rows_a] == [r["total"] for r in rows_b]


def gtp(proc, command):
    proc.stdin.write(command + "\n")
    proc.stdin.flush()
    lines = []
    while (line := proc.stdout.readline()) != "\n":
        assert line, f"engine closed stdout after {command!r}"
        lines.append(line)
    answer = "".join(lines).strip()
    assert answer.startswith("="), f"{command!r} -> {answer!r}"
    return answer[1:].strip()


def test_command_line_train_export_and_play_a_legal_game(data, tmp_path):
    run, net = tmp_path / "run", tmp_path / "net.onnx"
    env_python = [sys.executable, "-m"]
    subprocess.run(env_python + ["dosaku.training.train", "--data", str(data), "--net", "b2c32",
                                 "--out", str(run), "--steps", "6", "--batch", "16",
                                 "--checkpoint-every", "4", "--threads", "1", "--no-progress"],
                   cwd=ROOT, check=True, capture_output=True, timeout=600)
    assert [p.name for p in checkpoints(run)] == ["step-000000004.pt", "step-000000006.pt"]
    done = subprocess.run(env_python + ["dosaku.training.export", str(run), str(net)], cwd=ROOT,
                          check=True, capture_output=True, text=True, timeout=600)
    assert "6 training steps" in done.stdout
    proc = subprocess.Popen([sys.executable, str(ROOT / "run_engine.py"), "--model", str(net),
                             "--no-int8",  # a throwaway net: no int8 copy calibrated for it
                             "--visits", "8", "--boardsize", "5", "--resign-threshold", "0"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        game = GameState(5, 5, 7.5, PRESETS["chinese"])
        color = BLACK
        while not game.is_over() and len(game.moves) < 60:
            vertex = gtp(proc, f"genmove {'b' if color == BLACK else 'w'}")
            point = parse_vertex(vertex, 5, 5)
            assert point is not None, f"genmove answered {vertex!r}"
            assert game.play(color, point) == MOVE_OK, f"illegal move {vertex} at move " \
                                                       f"{len(game.moves) + 1}"
            color = WHITE if color == BLACK else BLACK
        assert sum(p != PASS_POINT for _, p in game.moves) >= 4, game.moves
        gtp(proc, "quit")
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
