"""ONNX policy-value models through onnxruntime (the only module that imports it).

`OnnxModel` runs raw batched inference of a model that follows the contract in
docs/architecture.md#the-onnx-model-contract and refuses models whose input feature set the
engine cannot encode. The functions below it turn raw outputs into probabilities and points as
KataGo does (katago-network.md §2.8), all from the side to move's view, and undo board
symmetries (§3.10). Feature encoding happens before this
module (engine/evaluators/features.py); `to_evaluation` produces the search's `Evaluation`.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.evaluators.features import FEATURE_SET, NUM_GLOBAL, NUM_SPATIAL, fill_features
from dosaku.engine.evaluators.onnx_options import PROVIDERS, cpu_has_int8_dot
from dosaku.engine.evaluators.subnormals import flush_subnormals_here

KNOWN_FEATURE_SETS = {FEATURE_SET: (NUM_SPATIAL, NUM_GLOBAL)}  # name -> (planes, globals)
GRAPH_OPTIMIZATION = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                      "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                      "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                      "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
KATAGO_V8_SCORE_OUTPUTS = ("scoremean", "scorestdev", "lead", "vartime")
DEFAULT_MULTIPLIERS = {"td_score": 20.0, "score_mean": 20.0, "score_stdev": 20.0, "lead": 20.0,
                       "variance_time": 40.0, "shortterm_value_error": 0.25,
                       "shortterm_score_error": 30.0}


class UnsupportedModelError(ValueError):
    """The model's declared feature set (or its inputs) is not one this engine can feed."""


def session_options(threads: int = 1, optimization: str = "all", parallel: bool = False,
                    spinning: bool = True) -> ort.SessionOptions:
    """Execution on `threads` intra-op threads. The defaults are the engine's: sequential, all
    graph optimizations, spinning threads; the others let bench/nn.py compare session settings
    without importing onnxruntime itself."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = threads if parallel else 1
    opts.execution_mode = (ort.ExecutionMode.ORT_PARALLEL if parallel
                           else ort.ExecutionMode.ORT_SEQUENTIAL)
    opts.graph_optimization_level = GRAPH_OPTIMIZATION[optimization]
    # without VNNI, onnxruntime's uint8 x int8 products add pairs in saturating 16-bit sums;
    # this has it use uint8 x uint8 for weights outside [-64, 63] (full-range int8 weights of
    # transformer nets' copies; the convolution recipe's 7-bit weights are not touched). With
    # VNNI or AMX the sums do not saturate, and the flag would keep onnxruntime off their kernels.
    if not cpu_has_int8_dot():
        opts.add_session_config_entry("session.x64quantprecision", "1")
    # subnormal numbers as zero on onnxruntime's pool threads (engine/evaluators/subnormals.py:
    # why, and the threads that call run)
    opts.add_session_config_entry("session.set_denormal_as_zero", "1")
    if not spinning:
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return opts


def choose_providers(provider: str) -> list[str]:
    """ORT provider list for a --provider flag, falling back to CPU with a note on stderr."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r} (choose from {', '.join(PROVIDERS)})")
    wanted = PROVIDERS[provider]
    available = ort.get_available_providers()
    if wanted not in available:
        print(f"dosaku: execution provider {provider} ({wanted}) is not available in this "
              f"onnxruntime build (available: {', '.join(available)}); using the CPU",
              file=sys.stderr)
        return [PROVIDERS["cpu"]]
    return [wanted] if wanted == PROVIDERS["cpu"] else [wanted, PROVIDERS["cpu"]]


class OnnxModel:
    """A loaded ONNX model: metadata checks plus raw batched inference. `source` is a file or,
    for a network converted where no cache could be written, the serialized model itself."""

    def __init__(self, source: str | Path | bytes, threads: int = 1, provider: str = "cpu",
                 options: ort.SessionOptions | None = None):
        self.source = source if isinstance(source, bytes) else Path(source)
        self.name = "a network in memory" if isinstance(source, bytes) else str(self.source)
        self.session = ort.InferenceSession(
            self.source if isinstance(source, bytes) else str(self.source),
            sess_options=options or session_options(threads), providers=choose_providers(provider))
        self.meta = dict(self.session.get_modelmeta().custom_metadata_map)
        self.feature_set = self.meta.get("feature_set")
        if self.feature_set not in KNOWN_FEATURE_SETS:
            declared = "no feature_set metadata" if self.feature_set is None else (
                f"feature set {self.feature_set!r}")
            raise UnsupportedModelError(
                f"{self.name}: the model declares {declared}; this engine can only encode inputs "
                f"for {', '.join(KNOWN_FEATURE_SETS)}. Convert KataGo nets with "
                f"`python -m dosaku.networks.katago_convert MODEL.bin.gz OUT.onnx`.")
        shapes = {i.name: i.shape for i in self.session.get_inputs()}
        if set(shapes) != {"spatial", "global"}:
            raise UnsupportedModelError(f"{self.name}: inputs must be 'spatial' and 'global', "
                                        f"got {sorted(shapes)}")
        self.num_spatial = shapes["spatial"][1]
        self.num_global = shapes["global"][1]
        if (self.num_spatial, self.num_global) != KNOWN_FEATURE_SETS[self.feature_set]:
            raise UnsupportedModelError(
                f"{self.name}: {self.feature_set} needs {KNOWN_FEATURE_SETS[self.feature_set]} "
                f"spatial/global inputs, the model has ({self.num_spatial}, {self.num_global})")
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.score_outputs = tuple(self.meta.get("score_outputs", ",".join(KATAGO_V8_SCORE_OUTPUTS))
                                   .split(","))
        self.multipliers = {**DEFAULT_MULTIPLIERS, **json.loads(self.meta.get("multipliers", "{}"))}
        self.providers = self.session.get_providers()
        # a graph that takes every input point to be on the board (katago_convert's full_board)
        self.full_board = self.meta.get("full_board") == "1"

    def run(self, spatial: np.ndarray, global_in: np.ndarray) -> dict[str, np.ndarray]:
        """Raw outputs by name for a batch: spatial [N, C, H, W], global [N, G]. ValueError for
        off-board points (mask plane 0 below 1) when the graph is a full-board one."""
        if self.full_board and len(spatial) and spatial[:, 0].min() < 1.0:
            raise ValueError(f"{self.name} is a graph for boards that fill its input; this batch "
                             "has off-board points (convert the net without --full-board)")
        flush_subnormals_here()
        feeds = {"spatial": np.ascontiguousarray(spatial, dtype=np.float32),
                 "global": np.ascontiguousarray(global_in, dtype=np.float32)}
        return dict(zip(self.output_names, self.session.run(self.output_names, feeds)))


# ------------------------------------------------------------------ post-processing (§2.8)

def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def policy_probs(logits: np.ndarray, legal: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Softmax over legal actions only ([N, A], pass last); illegal actions get probability 0."""
    z = np.where(legal, logits.astype(np.float64) / temperature, -np.inf)
    top = z.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(z - top)
    total = e.sum(axis=1, keepdims=True)
    return (e / np.where(total > 0, total, 1.0)).astype(np.float32)


def mix_optimism(policy: np.ndarray, optimistic: np.ndarray, optimism: float) -> np.ndarray:
    """KataGo's policy optimism for nets with an optimistic channel: p0 + (p1 - p0) * optimism."""
    return policy + (optimistic - policy) * optimism


def no_result_possible(rules) -> bool:
    """KataGo keeps the no-result output only under simple ko or territory scoring."""
    return rules.ko == "simple" or rules.scoring == "territory"


def wdl(value_logits: np.ndarray, allow_no_result: bool = True) -> np.ndarray:
    """(win, loss, no-result) probabilities [N, 3] of the side to move."""
    z = value_logits.astype(np.float64).copy()
    if not allow_no_result:
        z[:, 2] -= 100000.0
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    if not allow_no_result:
        p[:, 2] = 0.0
    return p


def score_stats(score_raw: np.ndarray, probs: np.ndarray, names=KATAGO_V8_SCORE_OUTPUTS,
                multipliers=None) -> dict[str, np.ndarray]:
    """Score mean, stdev, E[score^2] and lead in points for the side to move (float64)."""
    m = {**DEFAULT_MULTIPLIERS, **(multipliers or {})}
    raw = score_raw.astype(np.float64)
    col = {n: raw[:, i] for i, n in enumerate(names)}
    mean = col["scoremean"] * m["score_mean"]
    stdev = softplus(col["scorestdev"]) * m["score_stdev"]
    lead = col["lead"] * m["lead"]
    result = 1.0 - probs[:, 2]
    return {"score_mean": mean * result, "score_stdev": stdev,
            "score_mean_sq": (mean * mean + stdev * stdev) * result, "lead": lead * result}


def shortterm_errors(score_raw: np.ndarray, model: OnnxModel) -> np.ndarray | None:
    """The net's predicted short-term errors [N, 2] (win/loss value, score in points) as
    KataGo post-processes them (nneval.cpp, by model version); None for a net without those
    heads (KataGo's supportsShorttermError: version 9 and up)."""
    names = model.score_outputs
    if "shortterm_winloss_error" not in names:
        return None
    m = model.multipliers
    raw = score_raw.astype(np.float64)
    wl = raw[:, names.index("shortterm_winloss_error")]
    sc = raw[:, names.index("shortterm_score_error")]
    version = int(model.meta.get("model_version", "10"))
    if version >= 14:
        wl_err = softplus(wl * 0.5) * np.sqrt(m["shortterm_value_error"])
        sc_err = softplus(sc * 0.5) * np.sqrt(m["shortterm_score_error"])
    elif version >= 10:
        wl_err = np.sqrt(softplus(wl) * m["shortterm_value_error"])
        sc_err = np.sqrt(softplus(sc) * m["shortterm_score_error"])
    else:
        wl_err, sc_err = softplus(wl), softplus(sc) * 10.0
    return np.stack([wl_err, sc_err], axis=1)


def var_time_left(score_raw: np.ndarray, model: OnnxModel) -> np.ndarray:
    """KataGo's varTimeLeft [N] (nneval.cpp), for a net with a "vartime" score output."""
    raw = score_raw[:, model.score_outputs.index("vartime")].astype(np.float64)
    return softplus(raw) * model.multipliers["variance_time"]


def ownership(raw: np.ndarray) -> np.ndarray:
    """Ownership in [-1, 1], +1 = the side to move owns the point."""
    return np.tanh(raw)


# ------------------------------------------------------------------ symmetries (§3.10)

def apply_symmetry(planes: np.ndarray, sym: int) -> np.ndarray:
    """Move board planes [..., H, W] by symmetry `sym` (bit0 flip rows, bit1 flip columns,
    bit2 transpose, applied in that order); the transpose is skipped on non-square boards."""
    if sym & 1:
        planes = planes[..., ::-1, :]
    if sym & 2:
        planes = planes[..., :, ::-1]
    if sym & 4 and planes.shape[-1] == planes.shape[-2]:
        planes = np.swapaxes(planes, -1, -2)
    return np.ascontiguousarray(planes)


def undo_symmetry(planes: np.ndarray, sym: int) -> np.ndarray:
    """Inverse of apply_symmetry: transpose first, then the flips."""
    if sym & 4 and planes.shape[-1] == planes.shape[-2]:
        planes = np.swapaxes(planes, -1, -2)
    return apply_symmetry(planes, sym & 3)


def undo_symmetry_policy(policy: np.ndarray, sym: int, height: int, width: int) -> np.ndarray:
    """Policy [N, H*W+1] computed under `sym` back in board orientation (pass unchanged)."""
    n = policy.shape[0]
    board = undo_symmetry(policy[:, :-1].reshape(n, height, width), sym).reshape(n, -1)
    return np.concatenate([board, policy[:, -1:]], axis=1)


def undo_symmetry_outputs(raw: dict, sym: int) -> dict:
    """Raw outputs of an evaluation under `sym` moved back to board orientation."""
    out = dict(raw)
    height, width = raw["ownership"].shape[1:]
    for key in ("policy", "policy_optimistic"):
        if key in raw:
            out[key] = undo_symmetry_policy(raw[key], sym, height, width)
    out["ownership"] = undo_symmetry(raw["ownership"], sym)
    return out


@dataclass
class NetOutputs:
    """A network's post-processed outputs per row, side to move's view (what a teacher gives)."""
    policy: np.ndarray  # [N, H*W+1] probabilities over the legal actions, pass last
    wdl: np.ndarray  # [N, 3] (win, loss, no-result) probabilities
    lead: np.ndarray  # [N] score lead in points
    ownership: np.ndarray  # [N, H*W] in [-1, 1], +1 = the side to move owns the point
    score_mean: np.ndarray  # [N] expected final score
    score_mean_sq: np.ndarray  # [N] expected squared final score (mean^2 + variance)
    shortterm_error: np.ndarray | None = None  # [N, 2] (shortterm_errors), None without the heads


def net_outputs(raw: dict, legal: np.ndarray, model: OnnxModel, allow_no_result: bool,
                optimism: float = 0.0) -> NetOutputs:
    """NetOutputs from raw outputs in board orientation."""
    logits = raw["policy"]
    if optimism and "policy_optimistic" in raw:
        logits = mix_optimism(logits, raw["policy_optimistic"], optimism)
    probs = wdl(raw["value"], allow_no_result)
    stats = score_stats(raw["score"], probs, model.score_outputs, model.multipliers)
    return NetOutputs(policy_probs(logits, legal), probs, stats["lead"],
                      ownership(raw["ownership"]).reshape(probs.shape[0], -1),
                      stats["score_mean"], stats["score_mean_sq"],
                      shortterm_errors(raw["score"], model))


def to_evaluation(raw: dict, legal: np.ndarray, model: OnnxModel, allow_no_result: bool,
                  optimism: float = 0.0) -> Evaluation:
    """The search's Evaluation from raw outputs in board orientation: value = win - loss,
    score = lead in points, ownership flattened, the score mean and its second moment, the
    no-result probability, the short-term errors and varTimeLeft (nets with those heads); all
    for the side to move."""
    out = net_outputs(raw, legal, model, allow_no_result, optimism)
    errors = var_time = None
    if out.shortterm_error is not None:
        errors = out.shortterm_error.astype(np.float32)
        var_time = var_time_left(raw["score"], model).astype(np.float32)
    return Evaluation(out.policy, (out.wdl[:, 0] - out.wdl[:, 1]).astype(np.float32),
                      out.lead.astype(np.float32), out.ownership.astype(np.float32),
                      out.score_mean.astype(np.float32), out.score_mean_sq.astype(np.float32),
                      errors, out.wdl[:, 2].astype(np.float32), var_time)


class OnnxEvaluator:
    """The search's Evaluator over an OnnxModel: input features, one random board symmetry per
    position (or a fixed one), one inference call per batch, KataGo's post-processing.

    Safe to call from several threads at once (onnxruntime sessions are): input buffers are
    per thread and the symmetries come from the evaluator's seed and the batch's, not from a
    shared generator. `parallel_calls` (declared in its capabilities) tells the search how many
    calls to keep in flight: one per core when the model runs each call on one thread.
    """

    def __init__(self, model: OnnxModel, symmetry: int | None = None, seed: int = 0,
                 parallel_calls: int = 1, float_model: str | Path | bytes | None = None):
        self.model = model
        self.symmetry = symmetry  # None: a random symmetry per position
        self.seed = seed
        self.capabilities = Capabilities(parallel_calls=parallel_calls, network=True,
                                         optimistic_policy="policy_optimistic"
                                         in model.output_names,
                                         shortterm_error="shortterm_winloss_error"
                                         in model.score_outputs,
                                         precompile_kind=model.feature_set)
        self.float_model = float_model  # the float32 file a quantized `model` was made from
        self._float: OnnxModel | None = None
        self._local = threading.local()  # .buffers: (capacity, H, W) -> input arrays

    def raw_model(self) -> OnnxModel:
        """The model whose outputs kata-raw-nn reports: the float32 original of a quantized
        net (loaded on first use), so that they stay comparable with KataGo's; else the model
        that plays."""
        if self.float_model is None:
            return self.model
        if self._float is None:
            self._float = OnnxModel(self.float_model)
        return self._float

    def _inputs(self, capacity: int, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        buffers = self._local.__dict__.setdefault("buffers", {})
        key = (capacity, height, width)
        if key not in buffers:
            buffers[key] = (
                np.zeros((capacity, self.model.num_spatial, height, width), dtype=np.float32),
                np.zeros((capacity, self.model.num_global), dtype=np.float32))
        return buffers[key]

    def evaluate(self, batch) -> Evaluation:
        raw = self._raw(batch)
        return to_evaluation(raw, batch.legal[:batch.count], self.model,
                             no_result_possible(batch.rules), batch.policy_optimism)

    def outputs(self, batch) -> NetOutputs:
        """All post-processed outputs (policy, WDL, lead, ownership) of the batch's rows."""
        raw = self._raw(batch)
        return net_outputs(raw, batch.legal[:batch.count], self.model,
                           no_result_possible(batch.rules))

    def _raw(self, batch) -> dict:
        """Raw outputs in board orientation for rows 0..count-1 (features, one run, symmetries
        undone)."""
        n = batch.count
        if self.symmetry is not None:
            syms = np.full(n, self.symmetry, dtype=np.int64)
        else:
            syms = np.random.default_rng([self.seed, batch.seed]).integers(0, 8, n)
        if batch.width != batch.height:
            syms &= 3  # no transposition on a rectangular board
        spatial, global_in = self._inputs(batch.capacity, batch.height, batch.width)
        fill_features(batch, spatial, global_in, syms)
        raw = self.model.run(spatial[:n], global_in[:n])
        for s in np.unique(syms):
            if s:
                rows = syms == s
                undone = undo_symmetry_outputs({k: v[rows] for k, v in raw.items()}, int(s))
                for k, v in undone.items():
                    raw[k][rows] = v
        return raw
