"""How well a network's value ranks the children of a position, judged by the teacher.

A search spends its visits choosing among the children of a node by their values; agreement on
game rows (training.agreement) measures each value alone and can improve while the ranking of
siblings does not. Here a player net plays raw-policy games (moves drawn from its policy); at
every `every`-th position its `top` most likely board moves are each played, every net and the
teacher value the child, and each net is scored against the teacher's values of the same
children:

  regret  the teacher's best child value minus its value of the net's best child (0 is best)
  top1    share of positions where the net's best child is the teacher's
  pairs   share of child pairs the net orders as the teacher does (teacher gap > 0.02)
  corr    mean correlation of the net's child values with the teacher's

The "(policy)" line ranks the children by the player's prior instead: a value head that does
worse than it costs a search what the prior would have chosen. Values are the win rate (win +
no-result/2) of the parent's side to move, symmetry 0, float as given (no int8 copy).

    python -m dosaku.training.sibling_values TEACHER --size 9 --positions 500 --seed 2 NET [NET ...]
        (the last NET plays; .onnx or KataGo .bin.gz)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from dosaku.engine.evaluators.evaluator import PositionBatch
from dosaku.engine.evaluators.onnx_evaluator import OnnxEvaluator, OnnxModel
from dosaku.engine.evaluators.positions import batch_row_from_game, position_batch
from dosaku.engine.rules.coords import point_from_action
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.training.agreement import winrate
from dosaku.training.selfplay import onnx_path
from dosaku.training.selfplay_game import default_komi, top_board_moves

PAIR_GAP = 0.02  # teacher value gap below which a pair's order is not counted
MEASURES = ("regret", "top1", "pairs", "corr")
POLICY = "(policy)"


def children_batch(game: GameState, children: list[int]) -> PositionBatch:
    """One row per child: the position after each of the actions `children`."""
    batch = PositionBatch(len(children), game.width, game.height, game.komi, game.rules)
    for i, action in enumerate(children):
        game.play(game.to_move, point_from_action(action, game.width, game.height))
        batch_row_from_game(batch, i, game)
        game.undo()
    batch.count = len(children)
    return batch


def parent_values(evaluator: OnnxEvaluator, batch: PositionBatch) -> np.ndarray:
    """The win rate of the side that moved into each row's position, by the evaluator."""
    return 1.0 - winrate(evaluator.outputs(batch).wdl).astype(np.float64)


def rank_scores(values: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """The measures of one position: `values` against the teacher's `truth`, per child."""
    best = int(np.argmax(values))
    i, j = np.triu_indices(len(truth), 1)
    counted = np.abs(truth[i] - truth[j]) > PAIR_GAP
    scores = {"regret": float(truth.max() - truth[best]),
              "top1": float(truth[best] == truth.max())}
    if counted.any():
        scores["pairs"] = float(np.mean(np.sign(values[i] - values[j])[counted]
                                        == np.sign(truth[i] - truth[j])[counted]))
    if np.std(values) > 0 and np.std(truth) > 0:
        scores["corr"] = float(np.corrcoef(values, truth)[0, 1])
    return scores


def sibling_values(teacher: OnnxEvaluator, nets: dict[str, OnnxEvaluator], size: int,
                   positions: int, seed: int, top: int = 8, every: int = 3,
                   komi: float | None = None) -> dict[str, dict[str, float]]:
    """Mean measures per net (and POLICY) over `positions` positions of the last net's games."""
    player = list(nets.values())[-1]
    rng = np.random.default_rng(seed)
    komi = komi if komi is not None else default_komi(size)
    found: dict[str, dict[str, list]] = {k: {m: [] for m in MEASURES} for k in [*nets, POLICY]}
    taken = 0
    while taken < positions:
        game = GameState(size, size, komi, PRESETS["chinese"])
        moves = 0
        while not game.is_over() and moves < 2 * size * size and taken < positions:
            # the policy is over the legal actions already (the batch's legal mask)
            policy = player.outputs(position_batch(game)).policy[0].astype(np.float64)
            children = top_board_moves(policy, top).tolist()
            if moves % every == 0 and len(children) >= 3:
                batch = children_batch(game, children)
                truth = parent_values(teacher, batch)
                rankings = {name: parent_values(evaluator, batch)
                            for name, evaluator in nets.items()}
                rankings[POLICY] = policy[children]
                for name, ranking in rankings.items():
                    for measure, score in rank_scores(ranking, truth).items():
                        found[name][measure].append(score)
                taken += 1
            action = int(rng.choice(len(policy), p=policy / policy.sum()))
            game.play(game.to_move, point_from_action(action, size, size))
            moves += 1
    return {name: {m: float(np.mean(v)) if v else float("nan") for m, v in measures.items()}
            for name, measures in found.items()}


def evaluator_for(path: str) -> OnnxEvaluator:
    """A fixed-symmetry evaluator of an .onnx file or a KataGo .bin.gz (converted, cached)."""
    return OnnxEvaluator(OnnxModel(onnx_path(path)), symmetry=0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("teacher", help="the judge's network (.onnx or KataGo .bin.gz)")
    ap.add_argument("nets", nargs="+", help="networks to measure; the last one plays")
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--positions", type=int, default=500)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--top", type=int, default=8, help="children per position")
    args = ap.parse_args(argv)
    nets = {Path(p).name.split(".")[0]: evaluator_for(p) for p in args.nets}
    report = sibling_values(evaluator_for(args.teacher), nets, args.size, args.positions,
                            args.seed, args.top)
    print(f"{args.size}x{args.size}, {args.positions} positions, top {args.top} children of "
          f"{list(nets)[-1]}'s policy")
    for name, measures in report.items():
        print(f"{name:24s} " + " ".join(f"{m} {v:.4f}" for m, v in measures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
