"""Sibling ranking (training.sibling_values): the measures against hand-worked positions, and a
net judged by itself ranks perfectly while a random net does not. The net tests use the KataGo
net in ../shared/models."""

from pathlib import Path

import numpy as np
import pytest

from dosaku.training.sibling_values import POLICY, evaluator_for, rank_scores, sibling_values

NET = Path(__file__).resolve().parents[2] / "shared" / "models" / \
    "g170-b6c96-s175395328-d26788732.bin.gz"
needs_net = pytest.mark.skipif(not NET.exists(), reason=f"needs the KataGo net {NET} "
                                                        "(../shared/models beside the checkout)")


def test_rank_scores_of_hand_worked_children():
    truth = np.array([0.50, 0.60, 0.40, 0.61])
    assert rank_scores(truth, truth) == pytest.approx(
        {"regret": 0.0, "top1": 1.0, "pairs": 1.0, "corr": 1.0})
    backwards = rank_scores(-truth, truth)
    assert backwards["regret"] == pytest.approx(0.21) and backwards["top1"] == 0.0
    assert backwards["pairs"] == 0.0 and backwards["corr"] == pytest.approx(-1.0)
    # best child by the net is the 0.60 one: regret 0.01; the pair (0.60, 0.61) is within the
    # gap and not counted, the other five are ordered right except (0.50, 0.40)
    values = np.array([0.3, 0.9, 0.5, 0.8])
    scores = rank_scores(values, truth)
    assert scores["regret"] == pytest.approx(0.01) and scores["top1"] == 0.0
    assert scores["pairs"] == pytest.approx(4 / 5)


@needs_net
def test_the_teacher_ranks_its_own_children_perfectly_and_a_random_net_does_not(tmp_path):
    from dosaku.training.export import export_random
    teacher = evaluator_for(str(NET))
    random_net = str(export_random("b2c32", tmp_path / "random.onnx", seed=3, check_sizes=(7,)))
    report = sibling_values(teacher, {"random": evaluator_for(random_net), "self": teacher},
                            size=7, positions=12, seed=1, top=5)
    assert report["self"] == pytest.approx({"regret": 0.0, "top1": 1.0, "pairs": 1.0,
                                            "corr": 1.0})
    assert report["random"]["pairs"] < 0.8 and report["random"]["regret"] > 0.0
    assert report[POLICY]["regret"] >= 0.0
