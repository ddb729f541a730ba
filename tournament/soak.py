"""Soak run: a match under a real schedule while the engines' memory is sampled.

    python -m dosaku.tournament.soak ENGINE1 ENGINE2 --games N --kgs-time-settings byoyomi 30 2 3 \
        ...

Takes the options of tournament.match (usually Dosaku against GNU Go with a server-style clock)
plus --rss-interval. Every interval the resident memory (RSS) of each running engine process
is read from /proc; OUT/soak.json keeps the samples and a summary: per engine the games, the
games lost by an illegal move, a crash or on time, and per process the RSS after its first game
and at its last sample. soak.json is rewritten after every game, like match.json, and a rerun
with the same --out continues both: a soak stopped half-way keeps its memory record. Exit
status 0 when engine 1 lost no game that way.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Sequence

from dosaku.tournament.match import Match, config_from, parser
from dosaku.tournament.match_game import MatchError
from dosaku.tournament.match_report import report, write_json
from dosaku.tournament.resumable import run_resumable

FAULTS = ("illegal", "crash", "timeout")


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MB (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


class RssSampler(threading.Thread):
    """Samples the RSS of the match's engine processes until stopped, after the samples of
    an earlier run (`previous`; the clock `t` goes on from their last)."""

    def __init__(self, match: Match, interval: float, previous: Sequence[dict] = ()):
        super().__init__(daemon=True)
        self.match, self.interval = match, interval
        self.samples: list[dict] = list(previous)
        self.stop = threading.Event()
        self.start_time = time.monotonic() - (self.samples[-1]["t"] if self.samples else 0.0)

    def sample(self) -> None:
        games = len(self.match.records)
        for engine, pid in self.match.engine_pids():
            rss = rss_mb(pid)
            if rss is not None:
                self.samples.append({"t": round(time.monotonic() - self.start_time, 1),
                                     "games": games, "engine": engine, "pid": pid,
                                     "rss_mb": round(rss, 1)})

    def run(self) -> None:
        while not self.stop.wait(self.interval):
            self.sample()


def summary(records: list[dict], samples: list[dict]) -> dict:
    """Faults per engine (games it lost by an illegal move, a crash, on time) and the memory of
    each engine process: RSS once it had finished a game, at its last sample, the peak."""
    out = {}
    for engine in (1, 2):
        mine = [r for r in records if engine in (r["black"], r["white"])]
        lost = [r for r in mine if r["winner_engine"] not in (None, engine)]
        faults = {f: sum(1 for r in lost if r["reason"] == f) for f in FAULTS}
        color = {r["game"]: "B" if r["black"] == engine else "W" for r in mine}
        spare = [r["time_spare"][color[r["game"]]] for r in mine
                 if color[r["game"]] in r.get("time_spare", {})]
        processes = []
        for pid in sorted({s["pid"] for s in samples if s["engine"] == engine}):
            rss = [s for s in samples if s["pid"] == pid]
            settled = [s for s in rss if s["games"] > rss[0]["games"]] or rss
            processes.append({"pid": pid, "samples": len(rss),
                              "games": rss[-1]["games"] - rss[0]["games"],
                              "rss_after_first_game_mb": settled[0]["rss_mb"],
                              "rss_last_mb": rss[-1]["rss_mb"],
                              "rss_max_mb": max(s["rss_mb"] for s in rss)})
        out[f"engine{engine}"] = {"games": len(mine), "wins": sum(
            1 for r in mine if r["winner_engine"] == engine), **faults,
            "least_spare_seconds": round(min(spare), 3) if spare else None,
            "processes": processes}
    return out


class SoakMatch(Match):
    """A Match that samples its engines' memory and saves soak.json whenever it saves
    match.json (after every game)."""

    def __init__(self, cfg, interval: float):
        super().__init__(cfg)
        self.soak_path = os.path.join(cfg.out, "soak.json")
        self.summary: dict = {}  # soak.json's summary as last saved
        self.sampler = RssSampler(self, interval, self._previous_samples())

    def _previous_samples(self) -> list[dict]:
        """The samples of an earlier run into the same --out (none when match.json is gone)."""
        if not (os.path.exists(self.soak_path) and os.path.exists(self.path)):
            return []
        try:
            with open(self.soak_path, encoding="utf-8") as fh:
                return json.load(fh)["samples"]
        except (ValueError, KeyError) as exc:
            raise MatchError(f"{self.soak_path} is unreadable ({exc}); use another --out") \
                from None

    def save(self) -> None:
        super().save()
        samples = list(self.sampler.samples)
        self.summary = summary(list(self.records.values()), samples)
        write_json(self.soak_path, {"summary": self.summary, "samples": samples})


def main(argv: list[str] | None = None) -> int:
    ap = parser("python -m dosaku.tournament.soak", __doc__.split("\n")[0])
    ap.add_argument("--rss-interval", type=float, default=5.0,
                    help="seconds between memory samples (default 5)")
    a = ap.parse_args(argv)
    cfg = config_from(ap, a)

    def play() -> tuple[SoakMatch, list[dict]]:
        match = SoakMatch(cfg, a.rss_interval)
        match.sampler.start()
        try:
            records = match.run(progress=not a.no_progress)
        finally:
            match.sampler.stop.set()
            match.sampler.join()
        match.save()  # the samples taken after the last game
        return match, records

    status, played = run_resumable("soak", (MatchError,), play)
    if status:
        return status
    match, records = played
    report(cfg, records)
    result = match.summary  # of the last save, which came after the sampler stopped
    for name, s in result.items():
        rss = "; ".join(f"pid {p['pid']}: {p['rss_after_first_game_mb']:.0f} -> "
                        f"{p['rss_last_mb']:.0f} MB over {p['games']} games"
                        for p in s["processes"])
        print(f"{name}: {s['games']} games, {s['wins']} wins; illegal {s['illegal']}, "
              f"crash {s['crash']}, time losses {s['timeout']}; least spare time "
              f"{s['least_spare_seconds']} s; RSS {rss or 'not sampled'}")
    print(f"soak: {match.soak_path}")
    return 0 if not any(result["engine1"][f] for f in FAULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
