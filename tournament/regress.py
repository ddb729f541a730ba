"""Run GoGui-style GTP regression files (`.tst`) against any engine.

Semantics follow gogui-regress (Regress.java): a command line with a numeric id is a test; a
`#? [regex]` line right after it is matched with `re.fullmatch` (MULTILINE|DOTALL) against the
answer text after `=id`; `[!regex]` negates, a trailing `*` marks an expected failure; a `?`
answer always fails; a numbered command without `#?` fails only on a `?` answer. Unnumbered
commands are set-up steps: a `?` answer to one is counted as an error but fails nothing.
One engine process per file, started in the file's directory.

Exit status: 0 when no test failed unexpectedly (expected failures and unexpected passes are
allowed), 1 when some test failed unexpectedly, 2 on a file error (unreadable file, bad `#?`
line, bad regex, failing --gtpfile command) or an engine error (cannot start, died, timed out);
after an engine error the rest of that file is skipped and the other files still run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field

from dosaku.tournament.controller import EngineError, GtpController

PASS, FAIL, XFAIL, XPASS = "PASS", "FAIL", "fail (expected)", "unexpected pass"


class TstError(Exception):
    """A malformed regression file."""


@dataclass
class Expectation:
    """A parsed `#?` line: the regex, whether it is negated, whether failure is expected."""

    regex: re.Pattern
    negate: bool
    expected_fail: bool
    shown: str

    def matches(self, text: str) -> bool:
        """True when the answer text satisfies the pattern (after negation)."""
        return (self.regex.fullmatch(text) is not None) != self.negate


@dataclass
class Step:
    """One command line of a .tst file and its optional expectation."""

    lineno: int
    line: str
    id: int | None
    command: str
    expect: Expectation | None = None


@dataclass
class Outcome:
    """The result of one numbered test."""

    step: Step
    status: str
    got: str


@dataclass
class FileReport:
    """Everything that happened while running one file."""

    path: str
    outcomes: list[Outcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    fatal: str | None = None
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)


def _command_id(line: str) -> int | None:
    head, sep, _ = line.partition(" ")
    return int(head) if sep and head.isdigit() else None


def parse_expectation(spec: str, where: str) -> Expectation | None:
    """Parse the text after `#?`; None for an empty pattern (plain test)."""
    spec = spec.strip()
    if not spec:
        return None
    expected_fail = spec.endswith("*")
    if expected_fail:
        spec = spec[:-1].rstrip()
    if not (spec.startswith("[") and spec.endswith("]")):
        raise TstError(f"{where}: pattern must be written [regex]: {spec!r}")
    shown = spec[1:-1].strip()
    negate = shown.startswith("!")
    body = shown[1:] if negate else shown
    try:
        regex = re.compile(body, re.MULTILINE | re.DOTALL)
    except re.error as exc:
        raise TstError(f"{where}: bad regex {body!r}: {exc}") from exc
    return Expectation(regex, negate, expected_fail, shown)


def parse_tst(text: str, name: str = "<tst>") -> list[Step]:
    """Split a .tst file into command steps; `#?` lines attach to the command just before."""
    steps: list[Step] = []
    previous_is_command = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        where = f"{name}:{lineno}"
        if line.startswith("#?"):
            if not previous_is_command:
                raise TstError(f"{where}: '#?' without a command on the line before")
            step = steps[-1]
            if step.id is None:
                raise TstError(f"{where}: '#?' after a command without a numeric id")
            step.expect = parse_expectation(line[2:], where)
            previous_is_command = False
            continue
        previous_is_command = False
        if not line or line.startswith("#"):
            continue
        line = line.replace("\t", " ")
        cid = _command_id(line)
        command = line.partition(" ")[2].strip() if cid is not None else line
        steps.append(Step(lineno, line, cid, command))
        previous_is_command = True
    return steps


def judge(step: Step, ok: bool, text: str) -> str:
    """The status of a numbered test given the engine's answer."""
    exp = step.expect
    failed = (not ok) or (exp is not None and not exp.matches(text))
    if exp is not None and exp.expected_fail:
        return XFAIL if failed else XPASS
    return FAIL if failed else PASS


def _short(text: str, limit: int | None) -> str:
    shown = text.replace("\n", "\\n")
    if limit is not None and len(shown) > limit:
        shown = shown[:limit] + "..."
    return repr(shown)


class Runner:
    """Runs files one by one and prints per-test lines as they complete."""

    def __init__(self, engine: str, timeout: float | None, gtpfile: str | None, long: bool,
                 quiet: bool, verbose: bool, out=None):
        self.engine = engine
        self.timeout = timeout
        self.gtpfile = gtpfile
        self.long = long
        self.quiet = quiet
        self.verbose = verbose
        self.out = out

    def run_file(self, path: str, prefix: str) -> FileReport:
        report = FileReport(path)
        start = time.monotonic()
        try:
            with open(path, encoding="utf-8") as fh:
                steps = parse_tst(fh.read(), path)
            pre = self._gtpfile_steps()
        except (OSError, UnicodeDecodeError, TstError) as exc:
            report.fatal = f"file error: {exc}"
            return report
        cwd = os.path.dirname(os.path.abspath(path))
        try:
            engine = GtpController(self.engine, cwd=cwd,
                                   stderr_log=sys.stderr if self.verbose else None)
        except EngineError as exc:
            report.fatal = f"engine error: {exc}"
            return report
        try:
            self._run_steps(engine, pre, steps, report, prefix)
        finally:
            engine.close()
            report.seconds = time.monotonic() - start
        return report

    def _gtpfile_steps(self) -> list[Step]:
        if self.gtpfile is None:
            return []
        with open(self.gtpfile, encoding="utf-8") as fh:
            return parse_tst(fh.read(), self.gtpfile)

    def _run_steps(self, engine: GtpController, pre: list[Step], steps: list[Step],
                   report: FileReport, prefix: str) -> None:
        for step in pre:
            ok, text = self._send(engine, step, report, prefix)
            if ok is None:
                return
            if not ok:
                report.fatal = f"file error: --gtpfile command {step.line!r} failed: {text}"
                return
        for step in steps:
            ok, text = self._send(engine, step, report, prefix)
            if ok is None:
                return
            if step.id is None:
                if not ok:
                    report.errors.append(f"line {step.lineno}: {step.line!r} -> ? {text}")
                    self._print(f"{prefix}error (line {step.lineno}) {step.line!r}: ? {text}")
                continue
            status = judge(step, ok, text)
            report.outcomes.append(Outcome(step, status, text if ok else "? " + text))
            self._print_outcome(prefix, report.outcomes[-1])

    def _send(self, engine: GtpController, step: Step, report: FileReport, prefix: str):
        """(ok, text), or (None, message) after an engine error, which ends the file."""
        if self.verbose:
            print(f">> {step.line}", file=sys.stderr)
        try:
            resp = engine.send_raw(step.line, timeout=self.timeout)
        except EngineError as exc:
            report.fatal = f"engine error at line {step.lineno} ({step.line!r}): {exc}"
            if step.id is not None:
                report.outcomes.append(Outcome(step, FAIL, f"<{exc}>"))
                self._print_outcome(prefix, report.outcomes[-1])
            return None, str(exc)
        if self.verbose:
            print(f"<< {resp.full}", file=sys.stderr)
        return resp.ok, resp.text

    def _print(self, text: str) -> None:
        print(text, file=self.out or sys.stdout, flush=True)

    def _print_outcome(self, prefix: str, o: Outcome) -> None:
        if self.quiet and o.status in (PASS, XFAIL):
            return
        limit = None if self.long else 120
        line = f"{prefix}{o.status:<16} {o.step.id:>5} {o.step.command}"
        if self.long or o.status != PASS:
            expected = f"[{o.step.expect.shown}]" if o.step.expect else "(no error)"
            line += f"  expected {expected} got {_short(o.got, limit)}"
        self._print(line)


def summarize(reports: list[FileReport], out=None) -> int:
    """Print the per-file and total table; return the exit status."""
    out = out or sys.stdout
    header = f"{'file':<32} {'tests':>5} {'PASS':>5} {'FAIL':>5} {'fail':>5} {'upass':>5} " \
             f"{'error':>5} {'time':>7}"
    print("\n" + header, file=out)
    totals = [0] * 6
    seconds = 0.0
    for r in reports:
        row = [len(r.outcomes), r.count(PASS), r.count(FAIL), r.count(XFAIL), r.count(XPASS),
               len(r.errors)]
        totals = [a + b for a, b in zip(totals, row)]
        seconds += r.seconds
        name = os.path.basename(r.path)
        print(f"{name:<32} " + " ".join(f"{v:>5}" for v in row) + f" {r.seconds:>6.1f}s", file=out)
        if r.fatal:
            print(f"  !! {r.fatal}", file=out)
    if len(reports) > 1:
        print(f"{'total':<32} " + " ".join(f"{v:>5}" for v in totals) + f" {seconds:>6.1f}s",
              file=out)
    print("(fail = expected failure, upass = unexpected pass, error = failed set-up command)",
          file=out)
    if any(r.fatal for r in reports):
        return 2
    return 1 if totals[2] else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.tournament.regress",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--engine", required=True, help="engine command line (split with shlex)")
    ap.add_argument("files", nargs="+", metavar="FILE.tst")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds to wait for each answer (default: no limit)")
    ap.add_argument("--gtpfile", help="GTP commands to send before each test file")
    ap.add_argument("--long", action="store_true", help="expected/got on every line, untruncated")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    ap.add_argument("--verbose", action="store_true",
                    help="log the GTP stream and engine stderr to stderr")
    args = ap.parse_args(argv)
    runner = Runner(args.engine, args.timeout, args.gtpfile, args.long, args.quiet, args.verbose)
    reports = []
    for path in args.files:
        prefix = f"{os.path.basename(path)}: " if len(args.files) > 1 else ""
        reports.append(runner.run_file(path, prefix))
    return summarize(reports)


if __name__ == "__main__":
    sys.exit(main())
