"""The training loop end to end on 5x5 with a tiny net: self-play -> train -> export -> gate,
resumed from disk; the gate on its own; teacher agreement of a net with itself, and of another
net per band of the teacher's score lead."""

import json

import pytest

from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.training.agreement import agreement
from dosaku.training.chunks import load_chunks
from dosaku.training.export import export_random
from dosaku.training.gate import GateConfig, gate
from dosaku.training.loop import Loop, LoopConfig
from dosaku.training.selfplay import SelfPlaySettings, generate
from dosaku.training.strength import main as strength_main

TINY_SELFPLAY = SelfPlaySettings(visits=4, fast_visits=2, full_search_prob=0.5,
                                 resign_threshold=0.0)
TINY_GATE = GateConfig(games=2, size=5, komi=7.0, visits=2)


def tiny_loop(out, generations):
    return Loop(LoopConfig(out=str(out), size=5, net="b2c32", generations=generations, games=2,
                           steps=3, batch=16, threads=1, selfplay=TINY_SELFPLAY,
                           gate=TINY_GATE), log=lambda msg: None)


def test_loop_runs_generations_and_resumes(tmp_path):
    tiny_loop(tmp_path, 2).run()
    state = json.loads((tmp_path / "loop.json").read_text())
    records = state["generations"]
    assert [r["generation"] for r in records] == [1, 2]
    for gen, record in enumerate(records, start=1):
        assert record["games"] == 2 and record["rows"] > 0
        assert record["steps"] == 3 * gen  # one training run carried across generations
        assert record["gate"]["games"] == 2
        assert record["gate"]["passed"] == (record["gate"]["score"] >= TINY_GATE.threshold)
        OnnxModel(tmp_path / "nets" / f"gen-{gen:03d}.onnx")  # exported and loadable
    promoted = [r["generation"] for r in records if r["gate"]["passed"]]
    expected_best = f"gen-{promoted[-1]:03d}.onnx" if promoted else "gen-000.onnx"
    assert state["best"].endswith(expected_best)

    finished = {p: p.stat().st_mtime_ns for p in (tmp_path / "nets").iterdir()}
    tiny_loop(tmp_path, 2).run()  # nothing left to do: nothing is redone
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "nets").iterdir()} == finished

    tiny_loop(tmp_path, 3).run()  # one more generation continues the training run
    records = json.loads((tmp_path / "loop.json").read_text())["generations"]
    assert [r["generation"] for r in records] == [1, 2, 3]
    assert records[2]["steps"] == 9


def test_gate_scores_a_match_and_applies_the_threshold(tmp_path):
    net = export_random("b2c32", tmp_path / "a.onnx", seed=1)
    strict = gate(net, net, tmp_path / "strict", GateConfig(games=2, size=5, komi=7.0,
                                                             visits=2, threshold=1.01))
    assert strict.games == 2 and 0.0 <= strict.score <= 1.0
    assert strict.score == (strict.wins + strict.draws / 2) / 2
    assert not strict.passed  # no score reaches 1.01
    lenient = gate(net, net, tmp_path / "strict", GateConfig(games=2, size=5, komi=7.0,
                                                              visits=2, threshold=0.0))
    assert lenient.passed and lenient.score == strict.score  # the same match, resumed


def test_a_teacher_agrees_with_itself_on_its_own_rows(tmp_path, b6c96_onnx):
    generate(tmp_path, teacher=b6c96_onnx, games=1, sizes=(9,),
             settings=SelfPlaySettings(visits=1, full_search_prob=1.0, resign_threshold=0.0),
             seed=3)
    report = agreement(OnnxModel(b6c96_onnx), tmp_path)
    measures = report["9x9"]
    assert measures["rows"] > 10
    assert measures["policy_top1"] == 1.0
    assert measures["policy_xent"] == pytest.approx(measures["teacher_entropy"], abs=1e-3)
    assert measures["winrate_mae"] < 1e-4
    assert measures["score_mae"] < 1e-3
    assert measures["ownership_mae"] < 1e-4


def test_agreement_per_lead_band_splits_the_rows_by_the_teachers_lead(tmp_path, b6c96_onnx):
    generate(tmp_path / "rows", teacher=b6c96_onnx, games=1, sizes=(9,),
             settings=SelfPlaySettings(visits=1, full_search_prob=1.0, resign_threshold=0.0),
             seed=4)
    student = OnnxModel(export_random("b2c32", tmp_path / "student.onnx", check_sizes=(9,)))
    report = agreement(student, tmp_path / "rows", lead_bands=[2.0, 10.0])
    leads = [abs(float(x)) for rows in load_chunks(tmp_path / "rows")
             for x in rows.teacher["teacher_score"]]
    expected = {"0-2": sum(x < 2 for x in leads), "2-10": sum(2 <= x < 10 for x in leads),
                "10+": sum(x >= 10 for x in leads)}
    expected = {name: n for name, n in expected.items() if n}  # empty bands are left out
    assert [k for k in report if k.startswith("9x9 lead")] == [f"9x9 lead {n}" for n in expected]
    bands = {name: report[f"9x9 lead {name}"] for name in expected}
    assert {name: b["rows"] for name, b in bands.items()} == expected
    whole = report["9x9"]
    assert whole["rows"] == len(leads) > 10
    assert whole["score_mae"] > 0.1  # a random net: the bands below split real errors
    for measure in ("policy_top1", "policy_xent", "winrate_mae", "score_mae", "ownership_mae"):
        pooled = sum(b["rows"] * b[measure] for b in bands.values()) / whole["rows"]
        assert pooled == pytest.approx(whole[measure], rel=1e-6)  # float32 means


def test_strength_report_plays_every_generation_against_each_opponent(tmp_path, gnugo):
    run = tmp_path / "run"
    for gen in (0, 1):
        export_random("b2c32", run / "nets" / f"gen-{gen:03d}.onnx", seed=gen, check_sizes=(5,))
    made = generate(run / "data" / "gen-001", games=2, sizes=(5,),
                    settings=SelfPlaySettings(visits=4, fast_visits=2, resign_threshold=0),
                    seed=1)
    cpu_minutes = sum(e["game_cpu_seconds"] for e in made) / 60
    out = tmp_path / "report"
    assert strength_main([str(run), "--out", str(out), "--opponents", "rollout",
                          "--last-opponents", "gnugo1", "--games", "2", "--visits", "4",
                          "--size", "5", "--komi", "7", "--gnugo", gnugo]) == 0
    records = json.loads((out / "strength.json").read_text())
    assert [(r["generation"], r["opponent"]) for r in records] == [
        (0, "rollout"), (1, "rollout"), (1, "gnugo1")]  # GNU Go plays the last net only
    for r in records:
        assert r["wins"] + r["draws"] + r["losses"] == 2
        match = json.loads((out / "run" / f"gen-{r['generation']:03d}-vs-{r['opponent']}"
                            / "match.json").read_text())
        assert match["summary"]["engine1_wins"] == r["wins"]
        assert f"gen-{r['generation']:03d}.onnx" in match["config"]["engines"][0]
        assert ("--level 1 " in match["config"]["engines"][1]) == (r["opponent"] == "gnugo1")
    assert [r["selfplay_cpu_minutes"] for r in records] == \
        [0.0, round(cpu_minutes, 1), round(cpu_minutes, 1)]
    table = (out / "strength.md").read_text().splitlines()
    assert len(table) == 4 and table[2].startswith("| run | 0 |") and table[2].endswith("|  |")
    assert (out / "strength.png").stat().st_size > 0


def test_gate_engines_play_float32_at_fixed_visits(tmp_path):
    """A gate's nets are fresh exports: an int8 copy (a convolution net's default on AVX2)
    would be quantized and calibrated for each one, and the result would depend on the CPU."""
    import shlex

    from dosaku.launch.flags import parse_flags
    from dosaku.training.gate import engine_command
    args = parse_flags(shlex.split(engine_command(tmp_path / "gen-001.onnx", TINY_GATE))[2:])
    assert (args.int8, args.visits, args.threads, args.boardsize) == (False, 2, 1, 5)
