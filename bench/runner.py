"""Runs the benchmark modules R times and reports each figure's median with its spread.

Convention for a bench module (bench/<name>.py):
  measure(quick: bool) -> dict[str, tuple[float, str]]   figure name -> (value, unit)
It warms up (numba compilation, model loading) before timing unless latency is the point, and
raises Skip("why") when a requirement is missing (a model under ../shared, a package). The
default net, KataGo's transformer, ships in weights/: the benchmarks of it need no ../shared.
A module that also runs alone keeps a `__main__` block printing its figures (print_figures
helps).
A registry entry is "module" (calls measure) or "module:function" for a module with several
independently skippable parts, e.g. "search:measure_uniform" and "search:measure_onnx".
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dosaku.weights import model_path

Figures = dict[str, tuple[float, str]]
SHARED = Path(__file__).resolve().parents[1].parent / "shared"  # ../shared beside the checkout
B6C96_MODEL = SHARED / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
B10_MODEL = model_path("b10c384h6nbttflrs")  # KataGo's transformer net, shipped in weights/
TEST_DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
KATAGO_REFERENCE = TEST_DATA / "katago-b6c96-raw-nn.json"  # KataGo's outputs (its README)


class Skip(Exception):
    """A benchmark cannot run here (missing model, package, or module); the reason says which."""


@dataclass
class Figure:
    unit: str
    values: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.values)


@dataclass
class BenchResult:
    """One registry entry: status 'ok', 'skipped' or 'error', a message, its figures."""

    name: str
    status: str
    message: str = ""
    figures: dict[str, Figure] = field(default_factory=dict)
    seconds: float = 0.0


BENCH_PACKAGE = __name__.rpartition(".")[0]  # "dosaku.bench": the benchmarks' package


def resolve(entry: str, package: str = BENCH_PACKAGE):
    """The measure function of a registry entry; Skip when the module is not there (yet)."""
    mod_name, _, func_name = entry.partition(":")
    full = f"{package}.{mod_name}" if package else mod_name
    try:
        module = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name == full:
            raise Skip(f"module {full} does not exist yet") from None
        raise Skip(f"{full} needs {exc.name}, which is not installed") from None
    func = getattr(module, func_name or "measure", None)
    if func is None:
        raise Skip(f"{full} has no {func_name or 'measure'}(quick) function")
    return func


def run_entry(entry: str, repeat: int, quick: bool, package: str = BENCH_PACKAGE) -> BenchResult:
    """Call the entry's measure function `repeat` times and collect every figure's values."""
    start = time.monotonic()
    result = BenchResult(entry, "ok")
    try:
        func = resolve(entry, package)
        for _ in range(repeat):
            for name, (value, unit) in func(quick).items():
                fig = result.figures.setdefault(name, Figure(unit, []))
                if fig.unit != unit:
                    raise ValueError(f"figure {name!r} changed unit: {fig.unit} -> {unit}")
                fig.values.append(float(value))
    except Skip as exc:
        result = BenchResult(entry, "skipped", str(exc))
    except Exception as exc:  # a broken benchmark must not stop the others
        traceback.print_exc(file=sys.stderr)
        result = BenchResult(entry, "error", f"{type(exc).__name__}: {exc}", result.figures)
    result.seconds = round(time.monotonic() - start, 2)
    return result


def fmt(x: float) -> str:
    """Short human form: 3-4 significant digits, no exponent for large counts."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def markdown(results: list[BenchResult], meta: dict) -> str:
    lines = [f"Benchmarks: median of {meta['repeat']} runs, spread = min-max"
             f"{' (quick mode)' if meta['quick'] else ''}; {meta['machine']}, "
             f"{meta['date']}, commit {meta['commit']}", "",
             "| bench | figure | median | spread | unit |", "|---|---|---:|---:|---|"]
    notes = []
    for r in results:
        for name, fig in r.figures.items():
            spread = f"{fmt(min(fig.values))}-{fmt(max(fig.values))}"
            lines.append(f"| {r.name} | {name} | {fmt(fig.median)} | {spread} | {fig.unit} |")
        if r.status != "ok":
            notes.append(f"- {r.name}: {r.status}: {r.message}")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def cpu_kind(cpuinfo: str | None = None) -> str:
    """The CPU's model and the vector instructions that set the network's speed (what a
    speed ratio must name): e.g. "AMD EPYC: avx2 avx512f avx512_vnni"."""
    from dosaku.engine.evaluators.onnx_options import cpu_flags
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    model = next((line.partition(":")[2].strip() for line in cpuinfo.splitlines()
                  if line.startswith("model name")), platform.processor() or platform.machine())
    flags = cpu_flags(cpuinfo)
    vector = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16",
                          "amx_int8") if f in flags]
    return f"{model}: {' '.join(vector) or 'no AVX2'}"


def machine_info() -> dict:
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, text=True,
                                capture_output=True, timeout=10).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    return {"machine": f"{cpu_kind()}, {os.cpu_count()} cpus, "
                       f"Python {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d %H:%M"), "commit": commit}


def report_json(results: list[BenchResult], meta: dict) -> dict:
    benches = {}
    for r in results:
        d = asdict(r)
        d["figures"] = {name: {"median": fig.median, "min": min(fig.values),
                               "max": max(fig.values), "unit": fig.unit, "values": fig.values}
                        for name, fig in r.figures.items()}
        benches[r.name] = d
    return {"meta": meta, "benches": benches}


def run_all(entries: list[str], repeat: int, quick: bool, out: str | None,
            package: str = BENCH_PACKAGE, log=sys.stderr) -> list[BenchResult]:
    """Run every entry, print the markdown table, write bench.md and bench.json into `out`."""
    results = []
    for entry in entries:
        print(f"[bench] {entry} x{repeat} ...", file=log, flush=True)
        r = run_entry(entry, repeat, quick, package)
        why = f": {r.message}" if r.message else ""
        print(f"[bench] {entry}: {r.status}{why} ({r.seconds} s)", file=log, flush=True)
        results.append(r)
    meta = {"repeat": repeat, "quick": quick, **machine_info()}
    table = markdown(results, meta)
    print(table)
    if out:
        os.makedirs(out, exist_ok=True)
        Path(out, "bench.md").write_text(table, encoding="utf-8")
        Path(out, "bench.json").write_text(json.dumps(report_json(results, meta), indent=1),
                                           encoding="utf-8")
    return results


def print_figures(figures: Figures) -> None:
    """What a bench module's `__main__` prints: one figure a line."""
    for name, (value, unit) in figures.items():
        print(f"{name}: {fmt(value)} {unit}")
