"""`dosaku review --ray-address ADDR`: the review workers of tournament/review_batch.py on a
Ray cluster, one core each. Ray lives with training (the `train` extra), so the runner is here
and run_engine hands it to the review command. The cluster's nodes must be able to import this
package and read the SGF, output and network paths (a shared file system, or one machine).
"""

from __future__ import annotations

from typing import Iterator

from dosaku.tournament.review_batch import ReviewJob, review_game
from dosaku.training.ray_cluster import join


def run_on_ray(jobs: list[ReviewJob], workers: int, address: str) -> Iterator[dict]:
    """Review the jobs on `workers` Ray tasks at a time on the cluster at `address`, yielding
    each game's summary as it finishes."""
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        join(address)
    try:
        task = ray.remote(num_cpus=1)(review_game)
        queue = list(jobs)
        running = [task.remote(queue.pop(0)) for _ in range(min(workers, len(queue)))]
        while running:
            done, running = ray.wait(running, num_returns=1)
            if queue:
                running.append(task.remote(queue.pop(0)))
            yield ray.get(done[0])
    finally:
        if started_here:
            ray.shutdown()
