"""One raw network evaluation of a game position, in KataGo's `kata-raw-nn` terms.

KataGo reports raw outputs from White's perspective (win/loss, lead, self-play score, ownership +1 =
White) and the policy for the side to move with illegal points marked; see
tests/data/README.md. This module produces exactly those numbers for one fixed symmetry
from an OnnxModel, so our net can be compared with KataGo's value by value; like KataGo's GTP, it
mixes 0.2 of the optimistic policy into the policy of nets that have one (katago-transformer.md §5).
It imports onnxruntime (through engine.evaluators.onnx_evaluator), so the engine loads it only when
asked.
"""

from dataclasses import dataclass

import numpy as np

from dosaku.engine.evaluators import onnx_evaluator as oe
from dosaku.engine.evaluators.features import fill_features
from dosaku.engine.evaluators.positions import position_batch
from dosaku.engine.rules.constants import BLACK

# KataGo's GTP rootPolicyOptimism default (min(policyOptimism 1.0, 0.2)), which kata-raw-nn uses
RAW_NN_POLICY_OPTIMISM = 0.2


@dataclass
class RawNN:
    """KataGo's kata-raw-nn fields for one symmetry (NaN policy = illegal point)."""
    symmetry: int
    white_win: float
    white_loss: float
    no_result: float
    white_lead: float
    white_score_selfplay: float
    white_score_selfplay_sq: float
    var_time_left: float  # -1 when the net has no such head (KataGo's placeholder)
    shortterm_winloss_error: float  # likewise
    shortterm_score_error: float  # likewise
    policy: np.ndarray  # [H, W], row 0 = top
    policy_pass: float
    white_ownership: np.ndarray  # [H, W], +1 = White


def _shortterm(model, raw_score: np.ndarray) -> tuple[float, float, float]:
    """varTimeLeft and the short-term errors as KataGo post-processes them (nneval.cpp), -1
    each for a net without those heads."""
    errors = oe.shortterm_errors(raw_score[None], model)
    if errors is None:
        return -1.0, -1.0, -1.0
    var_time = float(oe.var_time_left(raw_score[None], model)[0])
    return var_time, float(errors[0, 0]), float(errors[0, 1])


def raw_nn(model, game, symmetry: int) -> RawNN:
    """The net's outputs for the game's position under `symmetry` (0..7), in board orientation.

    On a rectangular board the transpose bit is dropped, as KataGo does.
    """
    return raw_nn_batch(model, [game], symmetry)[0]


def raw_nn_batch(model, games: list, symmetry: int) -> list[RawNN]:
    """raw_nn of several games of one board size, evaluated in one network call."""
    rows = [raw_nn_inputs(model, game, symmetry) for game in games]
    raw = model.run(np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows]))
    return [_outputs(model, game, {k: v[i:i + 1] for k, v in raw.items()}, legal, symmetry)
            for i, (game, (_, _, legal)) in enumerate(zip(games, rows))]


def _effective(game, symmetry: int) -> int:
    return symmetry & 3 if game.width != game.height else symmetry


def raw_nn_inputs(model, game, symmetry: int):
    """(spatial [1, C, H, W], global [1, G], legal [1, H*W+1]) of the game's position under
    `symmetry`: what raw_nn feeds the net."""
    w, h = game.width, game.height
    batch = position_batch(game)
    spatial = np.zeros((1, model.num_spatial, h, w), np.float32)
    glob = np.zeros((1, model.num_global), np.float32)
    fill_features(batch, spatial, glob, np.array([_effective(game, symmetry)], np.int64))
    return spatial, glob, batch.legal[:1]


def policy_logits(raw: dict) -> np.ndarray:
    """The logits kata-raw-nn turns into its policy: with an optimistic channel (v12+ nets),
    KataGo mixes in RAW_NN_POLICY_OPTIMISM of it, pass included."""
    if "policy_optimistic" not in raw:
        return raw["policy"]
    return oe.mix_optimism(raw["policy"], raw["policy_optimistic"], RAW_NN_POLICY_OPTIMISM)


def _outputs(model, game, raw: dict, legal: np.ndarray, symmetry: int) -> RawNN:
    """RawNN from one position's raw outputs computed under `symmetry`."""
    w, h = game.width, game.height
    raw = oe.undo_symmetry_outputs(raw, _effective(game, symmetry))
    probs = oe.wdl(raw["value"], oe.no_result_possible(game.rules))[0]
    stats = oe.score_stats(raw["score"], probs[None], model.score_outputs, model.multipliers)
    policy = oe.policy_probs(policy_logits(raw), legal)[0].astype(np.float64)
    policy[~legal[0]] = np.nan
    sign = -1.0 if game.to_move == BLACK else 1.0
    win, loss = (probs[1], probs[0]) if sign < 0 else (probs[0], probs[1])
    var_time, wl_err, sc_err = _shortterm(model, raw["score"][0])
    return RawNN(symmetry, float(win), float(loss), float(probs[2]),
                 sign * float(stats["lead"][0]), sign * float(stats["score_mean"][0]),
                 float(stats["score_mean_sq"][0]), var_time, wl_err, sc_err,
                 policy[:-1].reshape(h, w), float(policy[-1]),
                 sign * oe.ownership(raw["ownership"][0]).astype(np.float64))
