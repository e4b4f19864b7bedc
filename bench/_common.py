"""Shared helpers for the benchmark scripts.

Side-by-side timing in one run, printed as ratios (:func:`interleaved`, :func:`report`), and where a run's
results go (:class:`Output`): the printed report, the figures as JSON for ``compare.py`` (``--json``), and the
script's own section of ``bench/README.md`` (``--update-readme``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Literal, TextIO

README = Path(__file__).resolve().with_name("README.md")


def hivewire_module(new: str, old: str) -> ModuleType:
    """``new`` (a module of hivewire's floors), or ``old``, its name before the floors (commit 3e5e6c2 and
    earlier), so that ``compare.py`` can run these scripts against commits of either layout."""
    try:
        return importlib.import_module(new)
    except ImportError:
        return importlib.import_module(old)


def interleaved(contenders: dict[str, Callable[[], int]], rounds: int = 5) -> dict[str, float]:
    """Run each contender ``rounds`` times, alternating, and return its median rate (units per second).

    Each contender does a fixed amount of work and returns how many units it did. Alternating the
    contenders spreads the machine's noise over all of them instead of favouring whoever ran first.
    """
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            units = fn()
            rates[name].append(units / (time.perf_counter() - start))
    return {name: statistics.median(values) for name, values in rates.items()}


def report(title: str, rates: dict[str, float], unit: str, baseline: str) -> None:
    """Print rates and each one's ratio to ``baseline``."""
    print(f"\n{title}")
    base = rates[baseline]
    for name, rate in rates.items():
        print(f"  {name:<40} {rate:>12,.0f} {unit}/s   ratio to {baseline}: {rate / base:5.2f}")


# -- where a run's results go -------------------------------------------------------------------------


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` and ``--update-readme`` to a benchmark's arguments."""
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the figures as one JSON object on stdout (the report goes to stderr); compare.py reads it",
    )
    parser.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite this benchmark's section of bench/README.md with this run's report, date and machine",
    )


Better = Literal["higher", "lower"]


class Output:
    """A benchmark run's results: its printed report and its figures.

    Used as ``with Output(__file__, args) as out:`` around the run; ``out.figure(...)`` records each figure.
    With ``--json`` everything printed (by this process or its children) goes to stderr, and at the end one
    JSON object goes to stdout: ``{"benchmark": ..., "figures": {name: {"value", "unit", "better"}}}``. With
    ``--update-readme`` the printed report is also written into the script's section of ``bench/README.md``.
    Nothing is written when the run fails.
    """

    def __init__(self, script: str, args: argparse.Namespace, readme: Path = README) -> None:
        self.script = Path(script).name
        self.readme = readme
        self.json = bool(getattr(args, "json", False))
        self.update_readme = bool(getattr(args, "update_readme", False))
        self.figures: dict[str, dict[str, object]] = {}
        self._report = io.StringIO()
        self._stack = contextlib.ExitStack()
        self._stdout_fd: int | None = None
        self._started = date.today()
        self._load = _load_average()

    def figure(self, name: str, value: float, unit: str, better: Better = "higher") -> None:
        """Record one figure; ``better`` says which way is an improvement (for ``compare.py``)."""
        self.figures[name] = {"value": value, "unit": unit, "better": better}

    def __enter__(self) -> Output:
        if self.json:
            # At the descriptor, so that child processes (a JVM, a shim) cannot write into the JSON either.
            sys.stdout.flush()
            self._stdout_fd = os.dup(1)
            os.dup2(2, 1)
        if self.update_readme:
            self._stack.enter_context(contextlib.redirect_stdout(_Tee(sys.stdout, self._report)))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stack.close()
        sys.stdout.flush()
        if self._stdout_fd is not None:
            os.dup2(self._stdout_fd, 1)
            os.close(self._stdout_fd)
        if error is not None:
            return
        if self.update_readme:
            write_section(self.script, self._section(), self.readme)
            print(f"{self.readme}: {self.script}'s section rewritten", file=sys.stderr)
        if self.json:
            print(json.dumps({"benchmark": self.script, "figures": self.figures}), flush=True)

    def _section(self) -> str:
        args = [a for a in sys.argv[1:] if a not in ("--update-readme", "--json")]
        command = shlex.join(["python", f"bench/{self.script}", *args])
        report = "\n".join(line.rstrip() for line in self._report.getvalue().strip().splitlines())
        return (
            f"Latest run: {self._started.isoformat()}, `{command}`, code at {_code_commit()}; "
            f"{machine()}{self._load}.\n\n```text\n{report}\n```"
        )


class _Tee(io.TextIOBase):
    def __init__(self, *streams: TextIO | io.StringIO) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def _markers(script: str) -> tuple[str, str]:
    return f"<!-- {script}: begin -->", f"<!-- {script}: end -->"


def write_section(script: str, body: str, readme: Path = README) -> None:
    """Replace what is between ``script``'s two markers in ``readme`` with ``body``."""
    begin, end = _markers(script)
    text = readme.read_text()
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if len(pattern.findall(text)) != 1:
        raise SystemExit(
            f"{readme} needs exactly one pair of the lines {begin} and {end} around {script}'s latest figures"
        )
    readme.write_text(pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text))


def machine() -> str:
    """The machine, as a line of text: OS, architecture, CPUs and their model, Python."""
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = f" ({line.split(':', 1)[1].strip()})"
                break
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs{model}, Python {platform.python_version()}"


def _load_average() -> str:
    try:
        return f", load average {os.getloadavg()[0]:.1f} at the start"
    except OSError:
        return ""


def _code_commit() -> str:
    """The commit of the hivewire being measured (where it is imported from), and whether it has changes."""
    try:
        import hivewire
    except ImportError:
        return "an unknown commit"
    tree = Path(hivewire.__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no", "--", "../../sdk", "../../shim", "../../thrift")
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return f"{commit} with uncommitted changes" if changed else commit
