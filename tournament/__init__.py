"""The tournament kit: tools that drive GTP engines from outside and keep what they played.

- `controller.py`: the client side of GTP, any engine as a subprocess over pipes;
- `match.py` (with `match_game.py`, `match_report.py`, `clock.py`, `elo.py`): matches between
  two engines under visits or real clocks, SGFs, Elo with its interval; `rescore.py` scores
  again the games a referee failed on; `soak.py`: a match while the engines' memory is sampled;
- `records.py`: a finished match or soak kept as one compact file in records/;
- `regress.py`: GoGui's `.tst` regression files against any engine;
- `compare.py` (with `compare_gtp.py`, `compare_positions.py`, `compare_stats.py`): two engines
  move by move on positions of real games, a strong judge valuing where they differ;
- `review.py` (with `review_records.py`, `review_output.py`, `review_batch.py`): a game review.

Matches, soaks, regressions and comparisons run every engine, Dosaku included, as a GTP
subprocess and never use the gtp/ server, so they can referee any engine; the review alone runs
Dosaku in-process (an `Engine` built by launch/factory.py from `dosaku`'s flags).
`resumable.py` is the ending the resumable commands share.
"""
