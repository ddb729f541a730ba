"""The training loss: AlphaGo Zero's terms plus KataGo's score and ownership targets, and soft
targets from a teacher.

Per row, with the search/outcome targets weighted (1 - m) and the teacher's m, where
m = `teacher` mixing weight on rows that carry teacher targets and 0 on the others:

  policy       -pi . log p, times the row's policy_weight; p is the softmax over the legal
               actions read from the input planes (on board, empty, not a ko or superko ban;
               pass always), plus any action the target gives mass to
  value        cross-entropy of the (win, loss, no-result) softmax against z
  lead         Huber (delta 1 raw unit = SCORE_SCALE points) of the lead column against the
               final score; score_mean the same for the score-mean column (at full weight,
               or with teacher_score_mean mixed like lead: the teacher's lead at weight m)
  score_stdev  Gaussian negative log-likelihood of the final score under the score-mean column
               (not trained through it) and the stdev column (softplus)
  ownership    binary cross-entropy of (1 + tanh(o)) / 2 against (1 + final ownership) / 2,
               averaged over the board points
  teacher_*    the same forms against the teacher's policy, value, score lead and ownership
               (cross-entropy to a soft target: KL divergence plus the target's own entropy)
  l2           c * ||theta||^2 over convolution and linear weights

Every term is a batch mean of the per-row values with their row weights (policy_weight, 1 - m,
m) applied; the total weighs the terms by LossWeights (teacher terms by the weight of their
non-teacher counterpart).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from dosaku.training.model import SCORE_OUTPUTS, SCORE_SCALE
from dosaku.training.replay import Batch

TERMS = ("policy", "value", "lead", "score_mean", "score_stdev", "ownership", "teacher_policy",
         "teacher_value", "teacher_score", "teacher_ownership", "l2")
ILLEGAL_LOGIT = -1e4
MIN_STDEV = 0.05  # raw units (1 point): keeps the likelihood finite on exact predictions
_COLUMN = {name: i for i, name in enumerate(SCORE_OUTPUTS)}


@dataclass(frozen=True)
class LossWeights:
    """Weights of the loss terms in the total, and the teacher mixing weight."""
    policy: float = 1.0
    value: float = 1.5  # KataGo's weighting of the value term
    lead: float = 1.0
    score_mean: float = 0.5
    score_stdev: float = 0.1
    ownership: float = 1.5  # KataGo's: 1.5 per board point on average
    l2: float = 3e-5  # c: KataGo's L2 coefficient (our norms hold no batch statistics)
    teacher: float = 0.0  # m: 0 = search/outcome targets only, 1 = teacher targets only
    # the score-mean column learns the teacher's lead at weight m too: the final score of a
    # raw-policy game is far from where a search's score utility should point
    teacher_score_mean: bool = False

    def __post_init__(self):
        if not 0.0 <= self.teacher <= 1.0:
            raise ValueError(f"teacher mixing weight {self.teacher} is outside [0, 1]")


def legal_from_planes(spatial: torch.Tensor) -> torch.Tensor:
    """[N, H*W+1] bool: on-board empty points without a ko/superko ban (planes 0, 1, 2, 6)."""
    board = (spatial[:, 0] > 0) & (spatial[:, 1] == 0) & (spatial[:, 2] == 0) & (spatial[:, 6] == 0)
    flat = board.flatten(1)
    return torch.cat([flat, torch.ones_like(flat[:, :1])], dim=1)


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """-sum target * log softmax(logits) per row."""
    return -(target * F.log_softmax(logits, dim=1)).sum(dim=1)


def ownership_cross_entropy(raw: torch.Tensor, target: torch.Tensor, mask: torch.Tensor):
    """Mean over board points of BCE(sigmoid(2 raw), (1 + target) / 2), per row."""
    bce = F.binary_cross_entropy_with_logits(2.0 * raw, (1.0 + target) / 2.0, reduction="none")
    return (bce * mask).sum(dim=(1, 2)) / mask.sum(dim=(1, 2))


def huber(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.huber_loss(pred, target, reduction="none", delta=1.0)


def loss_terms(outputs, batch: Batch, weights: LossWeights, decayed) -> dict[str, torch.Tensor]:
    """Every term of TERMS (batch means) for the net's outputs on `batch`."""
    policy_logits, value_logits, score, ownership = outputs
    teach = weights.teacher * batch.has_teacher
    own = 1.0 - teach
    legal = legal_from_planes(batch.spatial)
    masked = policy_logits.masked_fill(
        ~(legal | (batch.policy > 0) | (batch.teacher_policy > 0)), ILLEGAL_LOGIT)
    board = batch.spatial[:, 0]
    lead = score[:, _COLUMN["lead"]]
    mean = score[:, _COLUMN["scoremean"]]
    stdev = F.softplus(score[:, _COLUMN["scorestdev"]]) + MIN_STDEV
    final = batch.score / SCORE_SCALE
    teacher_lead = batch.teacher_score / SCORE_SCALE
    if weights.teacher_score_mean:
        score_mean = own * huber(mean, final) + teach * huber(mean, teacher_lead)
    else:
        score_mean = huber(mean, final)
    per_row = {
        "policy": own * batch.policy_weight * soft_cross_entropy(masked, batch.policy),
        "value": own * soft_cross_entropy(value_logits, batch.value),
        "lead": own * huber(lead, final),
        "score_mean": score_mean,
        "score_stdev": torch.log(stdev) + 0.5 * ((final - mean.detach()) / stdev) ** 2,
        "ownership": own * ownership_cross_entropy(ownership, batch.ownership, board),
        "teacher_policy": teach * soft_cross_entropy(masked, batch.teacher_policy),
        "teacher_value": teach * soft_cross_entropy(value_logits, batch.teacher_value),
        "teacher_score": teach * huber(lead, teacher_lead),
        "teacher_ownership": teach * ownership_cross_entropy(ownership, batch.teacher_ownership,
                                                             board),
    }
    terms = {name: v.mean() for name, v in per_row.items()}
    terms["l2"] = weights.l2 * sum((p * p).sum() for p in decayed)
    return terms


def total_loss(terms: dict[str, torch.Tensor], weights: LossWeights) -> torch.Tensor:
    """The weighted sum the optimizer minimises."""
    factor = {name: getattr(weights, name) for name in TERMS[:6]}
    factor.update(teacher_policy=weights.policy, teacher_value=weights.value,
                  teacher_score=weights.lead, teacher_ownership=weights.ownership, l2=1.0)
    return sum(terms[name] * factor[name] for name in TERMS)
