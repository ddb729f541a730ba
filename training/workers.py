"""Where games run: in this process, or on Ray actors (one per worker, one core each).

Each actor loads its networks once (one onnxruntime thread, no spinning) and plays the games
it is handed; results come back as they finish, so the caller can write chunks while the
others play. Without an address Ray starts locally on this machine with num_cpus = workers,
quietly and without its dashboard; with `ray_address` it joins that cluster (whose nodes must
be able to import this package and read the network paths).
"""

from __future__ import annotations

import logging
from typing import Iterable, Iterator

from tqdm import tqdm

from dosaku.training.ray_cluster import join
from dosaku.training.selfplay_game import GameResult, GameSpec, Players, SelfPlaySettings, play_game


def run_games(specs: list[GameSpec], net: str | None, teacher: str | None,
              settings: SelfPlaySettings, workers: int = 1, ray_address: str | None = None,
              progress: bool = False) -> Iterator[GameResult]:
    """Play every spec and yield the results in the order they finish."""
    if not specs:
        return
    if workers <= 1 and ray_address is None:
        results = _local(specs, net, teacher, settings)
    else:
        results = _on_ray(specs, net, teacher, settings, max(workers, 1), ray_address)
    yield from tqdm(results, total=len(specs), unit="game", disable=not progress)


def _local(specs, net, teacher, settings) -> Iterable[GameResult]:
    players = Players(net, teacher)
    for spec in specs:
        yield play_game(players, spec, settings)


class GameWorker:
    """A Ray actor's state: its networks and the settings of the run."""

    def __init__(self, net: str | None, teacher: str | None, settings: SelfPlaySettings):
        self.players = Players(net, teacher)
        self.settings = settings

    def play(self, spec: GameSpec) -> GameResult:
        return play_game(self.players, spec, self.settings)


def _on_ray(specs, net, teacher, settings, workers, ray_address) -> Iterable[GameResult]:
    import ray
    from ray.util import ActorPool

    started_here = not ray.is_initialized()
    if started_here:
        if ray_address is None:
            ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.ERROR,
                     log_to_driver=False, configure_logging=True)
        else:
            join(ray_address)
    try:
        actor = ray.remote(num_cpus=1)(GameWorker)
        pool = ActorPool([actor.remote(net, teacher, settings) for _ in range(workers)])
        yield from pool.map_unordered(lambda a, spec: a.play.remote(spec), specs)
    finally:
        if started_here:
            ray.shutdown()
