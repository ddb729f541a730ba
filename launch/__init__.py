"""From command-line flags to a running Engine: the settings table, the flag parser and the
Engine factory that `dosaku` (run_engine.py), the review tool and the benchmarks share."""
