"""Where a genmove's time goes, from the net to the tree: a self-play game at a fixed time a
move on the default net and flags, every phase of every search timed on the thread that runs it.

    python -m dosaku.bench.search_profile [--size 9] [--seconds 1] [--moves 12] [-- FLAGS...]

The engine runs in this process through the Engine API (as bench/budget.py), its own code
wrapped with timers, nothing else changed. Per search, on the search's thread: selection
(`select_batch`), backup (`expand_and_backup`), waiting for an evaluation, the rest of the
loop; on the evaluating threads: input features, the onnxruntime call, post-processing (the
symmetries undone and the outputs turned into an Evaluation), and each batch slot's time
without a call running, by cause (the search's start, its results waiting to be backed up,
backup and the next selection, the search's end).

Then the net alone: the same model, called from as many threads at once as the search keeps
batches in flight, on random inputs at each batch size the game used. The game's
evaluations, each at the net-alone cost of its batch size, give the seconds the net alone
would have needed; that over the seconds searched is the share of the net's speed the search
keeps.
"""

import argparse
import collections
import contextlib
import statistics
import threading
import time
from dataclasses import dataclass, field

from dosaku.bench.budget import KOMI
from dosaku.bench.runner import B10_MODEL, cpu_kind


@dataclass
class Timers:
    """Seconds by phase, summed over the game, and the evaluations by batch size."""
    seconds: collections.Counter = field(default_factory=collections.Counter)
    batches: collections.Counter = field(default_factory=collections.Counter)  # size -> calls
    lock: threading.Lock = field(default_factory=threading.Lock)
    finished: dict = field(default_factory=dict)  # id(batch) -> when its evaluation ended
    last_backup: dict = field(default_factory=dict)  # id(slot) -> when its backup began
    search_start: float = 0.0

    def add(self, phase: str, seconds: float) -> None:
        with self.lock:
            self.seconds[phase] += seconds

    def timed(self, phase: str, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(phase, time.perf_counter() - start)
        return wrapper


@contextlib.contextmanager
def instrumented(engine, timers: Timers):
    """The search's and the evaluator's phases wrapped with timers while the block runs: the
    driver's and the evaluator module's names, this engine's objects; all put back after."""
    from dosaku.engine.evaluators import onnx_evaluator as OE
    from dosaku.engine.search import driver
    search = engine.search
    evaluator = search.evaluator
    back_up, launch, run, evaluate = (search._back_up, search._launch, search.run,
                                      evaluator.evaluate)

    def counted_evaluate(batch):
        with timers.lock:
            timers.batches[batch.count] += 1
        try:
            return evaluate(batch)
        finally:
            timers.finished[id(batch)] = time.perf_counter()

    def waited_back_up(slot, *args):
        slot.result.result()  # _next_to_back_up waited for it, or the slot is the oldest
        now = time.perf_counter()
        done = timers.finished.pop(id(slot.batch), now)  # absent: no row was evaluated
        timers.add("slot: results wait to be backed up", now - done)
        timers.last_backup[id(slot)] = now
        return back_up(slot, *args)

    def timed_launch(slot, now):
        start = time.perf_counter()
        previous = timers.last_backup.pop(id(slot), None)
        if previous is None:
            timers.add("slot: search start to its first launch", start - timers.search_start)
        else:
            timers.add("slot: backup and next selection", start - previous)
        return launch(slot, now)

    def timed_run(*args, **kwargs):
        timers.search_start = time.perf_counter()
        timers.last_backup.clear()
        try:
            return run(*args, **kwargs)
        finally:
            end = time.perf_counter()
            for slot in search._slots:
                since = timers.last_backup.get(id(slot), timers.search_start)
                timers.add("slot: last backup to the search's end", end - since)

    wrappers = [
        (driver, "select_batch", timers.timed("select", driver.select_batch)),
        (driver, "expand_and_backup", timers.timed("backup", driver.expand_and_backup)),
        (driver, "_next_to_back_up",
         timers.timed("waiting for an evaluation", driver._next_to_back_up)),
        (OE, "fill_features", timers.timed("features", OE.fill_features)),
        (OE, "to_evaluation", timers.timed("post-processing", OE.to_evaluation)),
        (evaluator.model, "run", timers.timed("net", evaluator.model.run)),
        (evaluator, "evaluate", timers.timed("evaluate (whole call)", counted_evaluate)),
        (search, "_back_up", waited_back_up),
        (search, "_launch", timed_launch),
        (search, "run", timers.timed("search", timed_run)),
    ]
    saved = [(owner, name, vars(owner).get(name)) for owner, name, _ in wrappers]
    for owner, name, wrapper in wrappers:
        setattr(owner, name, wrapper)
    try:
        yield
    finally:
        for owner, name, original in saved:
            if original is None:  # a method of the object's class: drop the wrapper
                delattr(owner, name)
            else:
                setattr(owner, name, original)


def play(size: int, seconds: float, moves: int, flags: list[str]):
    """The engine and its timers after a self-play game of `moves` moves at `seconds` a move
    (tree reuse included), timed after a first genmove that is thrown away."""
    from dosaku.engine.rules.constants import MOVE_OK
    from dosaku.launch.factory import build_engine
    from dosaku.launch.flags import parse_flags
    args = parse_flags(["--model", str(B10_MODEL), "--boardsize", str(size),
                        "--komi", str(KOMI[size]), "--time", str(seconds), *flags])
    engine = build_engine(args)
    engine.genmove(engine.to_move, commit=False)  # first touch of tree, buffers and net
    engine.clear_cache()
    timers = Timers()
    with instrumented(engine, timers):
        for _ in range(moves):
            start = time.perf_counter()
            move = engine.genmove(engine.to_move, commit=False)
            timers.add("genmove", time.perf_counter() - start)
            if not isinstance(move, int) or engine.play(engine.to_move, move) != MOVE_OK:
                break
    return engine, timers


def net_alone(model, parallel: int, size: int, batch_sizes, seconds: float) -> dict[int, float]:
    """Seconds per call of the model at each batch size, `parallel` calls at once (each call's
    wall time: calls made / (threads x seconds))."""
    from dosaku.bench.nn import parallel_runs
    per_call = {}
    for n in sorted(batch_sizes):
        evaluations, wall, _ = parallel_runs([model] * parallel, n, size, seconds)
        per_call[n] = wall * parallel / (evaluations / n)
    return per_call


def report(size: int, seconds: float, engine, timers: Timers, alone: dict[int, float]) -> None:
    s = timers.seconds
    parallel = max(1, engine.search._parallel)
    searched = s["search"]
    evaluations = sum(n * c for n, c in timers.batches.items())
    calls = sum(timers.batches.values())
    print(f"\n{size}x{size} at {seconds:g} s a move: {s['genmove']:.2f} s of genmove, "
          f"{searched:.2f} s searched, {evaluations} evaluations in {calls} calls "
          f"({evaluations / searched:.1f} a second searched), {parallel} in flight")
    sizes = ", ".join(f"{n}: {c}" for n, c in sorted(timers.batches.items()))
    print(f"  batch sizes (size: calls): {sizes}")
    print("  on the search's thread (share of the seconds searched):")
    main = ("select", "backup", "waiting for an evaluation")
    for phase in main:
        print(f"    {phase:28s} {s[phase]:7.2f} s  {s[phase] / searched:6.1%}")
    rest = searched - sum(s[p] for p in main)
    print(f"    {'the rest of the loop':28s} {rest:7.2f} s  {rest / searched:6.1%}")
    outside = s["genmove"] - searched
    print(f"  genmove outside the search: {outside:.2f} s ({outside / s['genmove']:.1%})")
    print(f"  on the evaluating threads (share of {parallel} x the seconds searched):")
    for phase in ("features", "net", "post-processing"):
        print(f"    {phase:28s} {s[phase]:7.2f} s  {s[phase] / (parallel * searched):6.1%}")
    idle = parallel * searched - s["evaluate (whole call)"]
    print(f"    {'idle (no call running)':28s} {idle:7.2f} s  {idle / (parallel * searched):6.1%}")
    print("  a slot's time without a call running, by cause:")
    for phase in sorted(p for p in s if p.startswith("slot: ")):
        print(f"    {phase[6:]:40s} {s[phase]:6.2f} s  {s[phase] / (parallel * searched):6.1%}")
    needed = sum(alone[n] * c for n, c in timers.batches.items()) / parallel
    rate_alone = evaluations / needed
    print(f"  net alone at the game's batch sizes ({parallel} calls at once): "
          f"{rate_alone:.1f} evaluations a second; the game kept "
          f"{evaluations / searched / rate_alone:.1%} of it")
    inflation = s["net"] / (needed * parallel)
    print(f"  the net's calls in the game took {inflation:.2f}x their time alone")
    print("  per call alone (ms): " + ", ".join(
        f"{n}: {1000 * t:.1f}" for n, t in sorted(alone.items())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, choices=sorted(KOMI), default=9)
    ap.add_argument("--seconds", type=float, default=1.0, help="time a move (default 1)")
    ap.add_argument("--moves", type=int, default=12, help="moves played and timed (default 12)")
    ap.add_argument("--alone-seconds", type=float, default=2.0,
                    help="seconds the net alone runs at each batch size (default 2)")
    ap.add_argument("flags", nargs="*", help="dosaku's own flags (after --), e.g. --int8")
    args = ap.parse_args()
    engine, timers = play(args.size, args.seconds, args.moves, args.flags)
    model = engine.search.evaluator.model
    alone = net_alone(model, max(1, engine.search._parallel), args.size, timers.batches,
                      args.alone_seconds)
    report(args.size, args.seconds, engine, timers, alone)
    print(f"  (median batch size {statistics.median(timers.batches.elements()):g})")
    print(f"CPU: {cpu_kind()}")


if __name__ == "__main__":
    main()
