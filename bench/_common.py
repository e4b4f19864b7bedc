"""Shared helpers for the benchmark scripts: side-by-side timing in one run, printed as ratios."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


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
