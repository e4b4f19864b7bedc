"""Run benchmarks side by side against two versions of hivewire, and print each figure's ratio, new to base.

The base is a commit (``--base REF``), checked out into a temporary git worktree; the new side is this working
tree as it is (uncommitted changes included), or another commit with ``--new REF``. Both sides run this
tree's benchmark scripts, so the measurement is the same and only the code under test differs: each run
gets ``PYTHONPATH`` pointing at its side's ``sdk``, ``shim`` and ``thrift``. For ``--rounds`` rounds, each
benchmark runs once on each side, one right after the other (which side goes first alternates from round to
round), with ``--json``. Then, per figure: the median of the base's values, the median of the new ones, and
the median of each round's new/base ratio, with the lowest and highest of those ratios (the noise).

Benchmarks are named without ``bench_`` and ``.py``; arguments for one follow its name after a colon:

    python bench/compare.py --base structure --rounds 3 apiary_decode 'runtime:--messages 50000 --rounds 1'

Without names, the four the structure work is measured by run: apiary_decode, runtime, shim and arrow. The
scripts import hivewire's public modules (``_common.hivewire_module`` names the few private ones in both layouts,
before and after the floors), so either side may be a commit from before the floors; ``bench_arrow.py`` and
``bench_archive.py`` also import this tree's test helpers, so their base must have the floors.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
DEFAULT = ["apiary_decode", "runtime", "shim", "arrow"]
PACKAGES = ("hivewire", "hivewire_shim", "hivewire_thrift")

Figures = dict[str, dict[str, Any]]  # name -> {"value", "unit", "better"}, as a script's --json prints them


def git(*args: str, cwd: Path = BENCH) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


# Runs a script with only PYTHONPATH's hivewire: an editable install's import hook (setuptools puts one in
# sys.meta_path) would otherwise serve modules the side's tree does not have from the installed tree.
_ISOLATED = (
    "import runpy, sys; "
    "sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith('__editable__')]; "
    "sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def python_path(tree: Path) -> str:
    return os.pathsep.join(str(tree / part) for part in ("sdk", "shim", "thrift"))


def check_imports(tree: Path) -> None:
    """Fail unless a Python with ``tree``'s PYTHONPATH imports hivewire's packages from ``tree``."""
    code = f"import importlib; print('\\n'.join(importlib.import_module(m).__file__ for m in {PACKAGES!r}))"
    out = subprocess.run(
        [sys.executable, "-c", _ISOLATED.replace("runpy.run_path(sys.argv[0], run_name='__main__')", code)],
        env={**os.environ, "PYTHONPATH": python_path(tree)},
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"with PYTHONPATH={python_path(tree)}, Python cannot import hivewire:\n{out.stderr[-2000:]}")
    for path in out.stdout.split():
        if not Path(path).resolve().is_relative_to(tree.resolve()):
            raise SystemExit(f"with PYTHONPATH={python_path(tree)}, Python imports {path}, not a module of {tree}")


def run_once(script: Path, args: list[str], tree: Path) -> Figures:
    """One run of ``script`` against the code of ``tree``: its figures."""
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", _ISOLATED, str(script), *args, "--json"],
        env={**os.environ, "PYTHONPATH": python_path(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{script.name} {shlex.join(args)} failed against {tree}:\n{out.stderr[-4000:]}")
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{script.name} printed no JSON figures (does it take --json?):\n{out.stdout[-2000:]}")
    print(f"    {time.monotonic() - started:5.0f} s", file=sys.stderr, flush=True)
    figures: Figures = json.loads(lines[-1])["figures"]
    return figures


def parse_benchmarks(names: list[str]) -> list[tuple[Path, list[str]]]:
    chosen = []
    for spec in names or DEFAULT:
        name, _, args = spec.partition(":")
        script = BENCH / f"bench_{name.removeprefix('bench_').removesuffix('.py')}.py"
        if not script.exists():
            known = sorted(p.stem.removeprefix("bench_") for p in BENCH.glob("bench_*.py"))
            raise SystemExit(f"no benchmark {name!r}; the benchmarks are: {', '.join(known)}")
        chosen.append((script, shlex.split(args)))
    return chosen


def describe(ref: str | None, tree: Path) -> str:
    commit = git("rev-parse", "--short", "HEAD", cwd=tree)
    if ref is None:
        changed = git("status", "--porcelain", "--untracked-files=no", "--", "sdk", "shim", "thrift", cwd=tree)
        return f"working tree at {commit}" + (" with uncommitted changes" if changed else "")
    return f"{ref} at {commit}"


def number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3f}"


def table(script: Path, args: list[str], base: list[Figures], new: list[Figures]) -> None:
    width = max(len("figure"), *(len(name) for name in base[0]))
    print(f"\n{script.name} {shlex.join(args)}".rstrip())
    print(f"  {'figure':<{width}}  {'unit':<8} {'base':>11} {'new':>11}   new/base (lowest-highest)   better")
    for name, first in base[0].items():
        pairs = [
            (b[name]["value"], n[name]["value"]) for b, n in zip(base, new, strict=True) if name in b and name in n
        ]
        if not pairs:
            print(f"  {name:<{width}}  (not in the new side's figures)")
            continue
        ratios = [n / b for b, n in pairs if b]
        spread = f"({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
        ratio = f"{statistics.median(ratios):8.2f} {spread:<16}" if ratios else f"{'-':>8} {'':<16}"
        print(
            f"  {name:<{width}}  {first['unit']:<8} {number(statistics.median(b for b, _ in pairs)):>11} "
            f"{number(statistics.median(n for _, n in pairs)):>11}   {ratio}   {first['better']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", nargs="*", metavar="NAME[:ARGS]", help=f"default: {' '.join(DEFAULT)}")
    parser.add_argument("--base", required=True, metavar="REF", help="the commit to compare with")
    parser.add_argument("--new", metavar="REF", help="a commit to measure instead of the working tree")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each benchmark on each side (default 3)")
    args = parser.parse_args()
    benchmarks = parse_benchmarks(args.benchmarks)
    root = Path(git("rev-parse", "--show-toplevel"))
    with tempfile.TemporaryDirectory(prefix="hivewire-compare-") as tmp:
        trees: dict[str, Path] = {}
        added: list[Path] = []
        try:
            for side, ref in (("base", args.base), ("new", args.new)):
                if ref is None:
                    trees[side] = root
                    continue
                trees[side] = Path(tmp) / side
                git("worktree", "add", "--detach", str(trees[side]), ref, cwd=root)
                added.append(trees[side])
            for tree in trees.values():
                check_imports(tree)
            labels = {"base": describe(args.base, trees["base"]), "new": describe(args.new, trees["new"])}
            print(f"base: {labels['base']}\nnew:  {labels['new']}\n{args.rounds} rounds", flush=True)
            results: dict[Path, dict[str, list[Figures]]] = {s: {"base": [], "new": []} for s, _ in benchmarks}
            for round_ in range(args.rounds):
                for script, bench_args in benchmarks:
                    order = ["base", "new"] if round_ % 2 == 0 else ["new", "base"]
                    for side in order:
                        print(f"round {round_ + 1}: {script.name} on {side}", file=sys.stderr, flush=True)
                        results[script][side].append(run_once(script, bench_args, trees[side]))
        finally:
            for tree in added:
                git("worktree", "remove", "--force", str(tree), cwd=root)
    print(f"\nmedians of {args.rounds} rounds; new/base is the median of each round's ratio")
    for script, bench_args in benchmarks:
        table(script, bench_args, results[script]["base"], results[script]["new"])


if __name__ == "__main__":
    main()
