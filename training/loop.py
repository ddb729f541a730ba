"""The AlphaGo Zero loop: self-play with the current net -> train -> export -> gate -> repeat.

    python -m dosaku.training.loop --size 9 --net b4c64 --out runs/x [--generations N] [--workers W]
        [--ray-address ADDR] [--teacher NET]

Everything lives under --out and every phase is resumable from what is on disk:

  nets/gen-000.onnx       generation 0: random weights of the chosen size
  data/gen-NNN/           the self-play (or teacher) chunks of generation NNN
  train/                  one training run carried across generations (checkpoints, losses.png)
  nets/gen-NNN.onnx       the trainer's net after generation NNN, exported and checked
  gates/gen-NNN/          its gate match against the current best
  loop.json               the current best net and one record per generation

Self-play uses the current best net (the one that passed the last gate); the trainer keeps
training its own latest weights on a replay window over the newest generations. With
--teacher the teacher plays and labels the games (distillation) and the loss mixes its soft
targets in.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dosaku.training.chunks import read_manifest
from dosaku.training.export import export_checkpoint, export_random
from dosaku.training.gate import GateConfig, gate
from dosaku.training.losses import LossWeights
from dosaku.training.selfplay import SelfPlaySettings, games_in, generate
from dosaku.training.train import TrainConfig, train

STATE = "loop.json"


@dataclass(frozen=True)
class LoopConfig:
    """One training loop: its board, net, budgets per generation and gate."""
    out: str  # run folder (see the module docstring)
    size: int = 9  # board size of self-play and of the gate
    net: str = "b4c64"  # net size by name (training/model.py)
    generations: int = 10  # generations to reach (a rerun continues up to this)
    games: int = 200  # self-play games per generation
    steps: int = 1000  # training steps per generation
    batch: int = 128  # training batch
    lr: float = 0.02  # training learning rate
    window_generations: int = 4  # replay window: the newest this many generations' data
    teacher: str | None = None  # teacher network: it plays and labels (distillation)
    teacher_weight: float = 0.8  # share of the teacher's soft targets in the loss
    workers: int = 1  # self-play workers (more: Ray actors)
    ray_address: str | None = None  # an existing Ray cluster to run self-play on
    threads: int = 0  # torch threads (0 = all cores)
    seed: int = 0
    selfplay: SelfPlaySettings = field(default_factory=SelfPlaySettings)
    gate: GateConfig = field(default_factory=GateConfig)


class Loop:
    """The run folder and its state; `run` carries it forward generation by generation."""

    def __init__(self, cfg: LoopConfig, log=print):
        self.cfg = cfg
        self.root = Path(cfg.out)
        self.log = log
        self.state_path = self.root / STATE
        if self.state_path.exists():
            self.state = json.loads(self.state_path.read_text())
        else:
            self.state = {"best": None, "generations": []}

    def _save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=1))
        os.replace(tmp, self.state_path)

    def _net_path(self, generation: int) -> Path:
        return self.root / "nets" / f"gen-{generation:03d}.onnx"

    def _data(self, generation: int) -> Path:
        return self.root / "data" / f"gen-{generation:03d}"

    def _record(self, generation: int) -> dict:
        records = self.state["generations"]
        if len(records) < generation:
            records.append({"generation": generation})
        return records[generation - 1]

    def start(self) -> None:
        """Generation 0: random weights become the first best net."""
        if self.state["best"] is None:
            path = self._net_path(0)
            path.parent.mkdir(parents=True, exist_ok=True)
            export_random(self.cfg.net, path, seed=self.cfg.seed)
            self.state["best"] = str(path)
            self._save()
            self.log(f"generation 0: random {self.cfg.net} weights in {path}")

    def selfplay(self, generation: int) -> None:
        cfg = self.cfg
        folder = self._data(generation)
        source = "teacher" if cfg.teacher else "selfplay"
        missing = cfg.games - games_in(folder, source)
        if missing > 0:
            self.log(f"generation {generation}: {missing} {source} games")
            generate(folder, net=None if cfg.teacher else self.state["best"],
                     teacher=cfg.teacher, games=missing, sizes=(cfg.size,),
                     settings=cfg.selfplay, workers=cfg.workers, ray_address=cfg.ray_address,
                     seed=cfg.seed * 1000 + generation)
        chunks = read_manifest(folder)["chunks"]
        record = self._record(generation)
        record["games"] = sum(int(c.get("games", 0)) for c in chunks)
        record["rows"] = sum(int(c["rows"]) for c in chunks)
        record["false_resignations"] = sum(int(c.get("false_resignations", 0)) for c in chunks)
        self._save()

    def train(self, generation: int) -> None:
        cfg = self.cfg
        first = max(1, generation - cfg.window_generations + 1)
        data = [str(self._data(g)) for g in range(first, generation + 1)]
        weights = LossWeights(teacher=cfg.teacher_weight if cfg.teacher else 0.0)
        result = train(TrainConfig(data=data, out=str(self.root / "train"), net=cfg.net,
                                   steps=generation * cfg.steps, batch=cfg.batch, lr=cfg.lr,
                                   window=None, threads=cfg.threads, seed=cfg.seed,
                                   resume=True, weights=weights, progress=False), self.log)
        export_checkpoint(result.checkpoint, self._net_path(generation))
        record = self._record(generation)
        record["steps"] = result.step
        record["losses"] = {k: round(v, 4) for k, v in result.losses.items()}
        self._save()

    def gate(self, generation: int) -> None:
        candidate, best = self._net_path(generation), self.state["best"]
        result = gate(candidate, best, self.root / "gates" / f"gen-{generation:03d}",
                      self.cfg.gate)
        record = self._record(generation)
        record["gate"] = {"against": Path(best).name, **asdict(result)}
        if result.passed:
            self.state["best"] = str(candidate)
        self._save()
        verdict = "promoted" if result.passed else "kept the current net"
        self.log(f"generation {generation}: gate score {result.score:.3f} over {result.games} "
                 f"games: {verdict}")

    def run(self) -> None:
        self.start()
        for generation in range(1, self.cfg.generations + 1):
            record = self._record(generation)
            if "gate" in record:
                continue  # finished in an earlier run
            self.selfplay(generation)
            if record.get("steps", 0) < generation * self.cfg.steps or \
                    not self._net_path(generation).exists():
                self.train(generation)
            self.gate(generation)


def parse_args(argv=None) -> LoopConfig:
    d, s, g = LoopConfig(out=""), SelfPlaySettings(), GateConfig()
    ap = argparse.ArgumentParser(prog="python -m dosaku.training.loop",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="run folder (resumed when it exists)")
    ap.add_argument("--size", type=int, default=d.size)
    ap.add_argument("--net", default=d.net, help="net size bXcY (default b4c64)")
    ap.add_argument("--generations", type=int, default=d.generations)
    ap.add_argument("--games", type=int, default=d.games, help="self-play games per generation")
    ap.add_argument("--steps", type=int, default=d.steps, help="training steps per generation")
    ap.add_argument("--batch", type=int, default=d.batch)
    ap.add_argument("--lr", type=float, default=d.lr)
    ap.add_argument("--window-generations", type=int, default=d.window_generations)
    ap.add_argument("--teacher", help="teacher network (ONNX or KataGo .bin.gz): distillation")
    ap.add_argument("--teacher-weight", type=float, default=d.teacher_weight)
    ap.add_argument("--workers", type=int, default=d.workers)
    ap.add_argument("--ray-address", help="join this Ray cluster for self-play")
    ap.add_argument("--threads", type=int, default=d.threads, help="torch threads (0 = all)")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--visits", type=int, default=s.visits, help="self-play full-search visits")
    ap.add_argument("--fast-visits", type=int, default=s.fast_visits)
    ap.add_argument("--full-search-prob", type=float, default=s.full_search_prob)
    ap.add_argument("--gumbel", action="store_true", help="Gumbel root search in self-play")
    ap.add_argument("--gumbel-simulations", type=int, default=s.gumbel_simulations)
    ap.add_argument("--gate-games", type=int, default=g.games)
    ap.add_argument("--gate-visits", type=int, default=g.visits)
    ap.add_argument("--gate-threshold", type=float, default=g.threshold)
    a = ap.parse_args(argv)
    selfplay = SelfPlaySettings(visits=a.visits, fast_visits=a.fast_visits,
                                full_search_prob=a.full_search_prob, gumbel=a.gumbel,
                                gumbel_simulations=a.gumbel_simulations)
    komi = selfplay.komi_for(a.size)
    gate_cfg = GateConfig(games=a.gate_games, threshold=a.gate_threshold, size=a.size,
                          komi=komi, visits=a.gate_visits, seed=a.seed)
    return LoopConfig(out=a.out, size=a.size, net=a.net, generations=a.generations,
                      games=a.games, steps=a.steps, batch=a.batch, lr=a.lr,
                      window_generations=a.window_generations, teacher=a.teacher,
                      teacher_weight=a.teacher_weight, workers=a.workers,
                      ray_address=a.ray_address, threads=a.threads, seed=a.seed,
                      selfplay=selfplay, gate=gate_cfg)


def main(argv=None) -> int:
    cfg = parse_args(argv)
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    Loop(cfg).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
