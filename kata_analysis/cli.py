"""`dosaku analysis`: KataGo's JSON analysis engine on stdin/stdout.

Takes KataGo's command line, `analysis -model M -config C -override-config k=v,...` (plus
`-analysis-threads N` and `-quit-without-waiting`), so that a client that starts
`katago analysis` (KaTrain, ogatak, LizzieYzy, analyze-sgf) can start `dosaku analysis` the
same way; the rest of the line is `dosaku`'s own engine flags (--threads, --int8, --seed, ...).
Here `-config` and `--config` name a KataGo config file (kata_analysis/settings.py).

Start-up: flags, the engine (network converted and kernels compiled on a first run), one
SharedBatcher over its evaluator, numAnalysisThreads workers; then KataGo's ready line on
stderr, and the server reads stdin. stdout carries answers only (launch/stdio.py).
"""

import logging
import os
import sys
from dataclasses import replace

from dosaku.engine.engine import Engine
from dosaku.engine.search.batching import SharedBatcher
from dosaku.kata_analysis.server import AnalysisServer, Output, model_info
from dosaku.kata_analysis.settings import SettingsError, build_settings, read_cfg, read_overrides
from dosaku.kata_analysis.tasks import TaskQueue
from dosaku.kata_analysis.workers import Worker
from dosaku.launch.factory import build_engine, engine_config
from dosaku.launch.flags import announce_evaluator, parse_flags
from dosaku.launch.stdio import protocol_stream

log = logging.getLogger("dosaku")
READY = "Started, ready to begin handling requests"
KATAGO_OPTIONS = {"model", "config", "override-config", "analysis-threads", "human-model"}
KATAGO_SWITCHES = {"quit-without-waiting"}
# evaluated rows the analysis threads share (engine/search/batching.py): as many as one search's
# own cache holds, about 50 MB on 19x19
SHARED_CACHE_ROWS = 16384


def split_command_line(argv: list[str]) -> tuple[dict[str, str], set[str], list[str]]:
    """(KataGo's options by name, KataGo's switches given, our own flags). KataGo's names are
    taken with one dash or two; SettingsError for one without its value."""
    options, switches, ours = {}, set(), []
    i = 0
    while i < len(argv):
        name = argv[i].lstrip("-") if argv[i].startswith("-") else None
        if name in KATAGO_SWITCHES:
            switches.add(name)
        elif name in KATAGO_OPTIONS:
            if i + 1 >= len(argv):
                raise SettingsError(f"{argv[i]} needs a value")
            options[name] = argv[i + 1]
            i += 1
        else:
            ours.append(argv[i])
        i += 1
    return options, switches, ours


def read_settings(options: dict[str, str]):
    """(settings, engine flags, unused keys) from -config, -override-config and
    -analysis-threads."""
    entries = read_cfg(options["config"]) if "config" in options else {}
    entries.update(read_overrides(options.get("override-config", "")))
    if "analysis-threads" in options:
        entries["numAnalysisThreads"] = options["analysis-threads"]
    return build_settings(entries, "config" in options)


def savings(counters) -> str:
    """One line on what the searches' evaluation caches and kept trees saved (SearchCounters)."""
    total = {k: sum(getattr(c, k) for c in counters)
             for k in ("searches", "lookups", "hits", "visits", "visits_reused")}
    return ("{searches} searches: evaluation cache {hits} hits of {lookups} lookups, "
            "{visits_reused} of {visits} root visits kept from earlier searches").format(**total)


def main(argv: list[str]) -> None:
    try:
        options, switches, ours = split_command_line(argv)
        settings, engine_flags, unused = read_settings(options)
    except SettingsError as err:
        print(f"dosaku analysis: {err}", file=sys.stderr)
        sys.exit(2)
    flags = []
    for name, value in engine_flags.items():  # our flags on the line win over the config's
        if f"--{name}" not in ours:
            flags += [f"--{name}", value]
    if "model" in options:
        flags += ["--model", options["model"]]
    args = parse_flags(flags + ours)
    logging.basicConfig(level=args.log_level.upper(), handlers=[logging.StreamHandler(sys.stderr)],
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    if unused:
        log.warning("KataGo settings this engine does not use, ignored: %s", ", ".join(unused))
    if "human-model" in options:
        log.warning("-human-model is not supported; ignored")
    announce_evaluator(args)
    out = Output(protocol_stream())
    engine = build_engine(args, serving=True)
    batcher = SharedBatcher(engine.evaluator, settings.max_batch, SHARED_CACHE_ROWS)
    config = replace(engine_config(args), tree_reuse=False, report_reuse=False,
                     report_moves=False)
    tasks = TaskQueue()
    server = AnalysisServer(settings, engine, tasks, out,
                            [model_info(args.model or args.evaluator, settings.max_batch,
                                        getattr(getattr(engine.evaluator, "model", None),
                                                "meta", {}))],
                            config.search.max_nodes, batcher.clear_cache)
    workers = [Engine(evaluator=batcher.client(settings.search_threads), config=config)
               for _ in range(settings.analysis_threads)]
    for worker_engine in workers:
        Worker(worker_engine, tasks, out, lambda: server.cache_epoch).start()
    log.info("analysing up to %d positions at a time, %d leaves in flight each, batches of "
             "up to %d", settings.analysis_threads, settings.search_threads, settings.max_batch)
    print(READY, file=sys.stderr, flush=True)
    server.serve(sys.stdin.buffer, "quit-without-waiting" in switches)
    if batcher.calls:
        log.info("%d positions evaluated in %d network calls (%.1f a call)", batcher.rows,
                 batcher.calls, batcher.rows / batcher.calls)
        log.info(savings([w.search.counters for w in workers]))
        log.info("shared evaluation cache: %d hits of %d lookups", batcher.cache.hits,
                 batcher.cache.lookups)
    logging.shutdown()
    os._exit(0)
