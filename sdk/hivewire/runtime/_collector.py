"""The cyclic garbage collector's tuning while the runtime works (``hivewire.gc.tuning``).

Invariant: what :func:`collector_tuned` changes (the thresholds, the frozen objects) is undone when its
block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_tuned(enabled: bool = True) -> Iterator[None]:
    """Within the block, make the cyclic garbage collector run far less often (nothing if not ``enabled``).

    Every event allocates a handful of containers, so with the default threshold (700) the collector runs
    every few hundred events and, as the heap grows, spends more time scanning than hivewire spends
    dispatching; a larger threshold makes collections rare (``bench/bench_runtime.py`` measures it). Objects
    that exist at start (modules, configuration, listeners) are frozen out of the scans altogether. Cyclic
    garbage is still collected.
    """
    if not enabled:
        yield
        return
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(previous[0], 50_000), previous[1], previous[2])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
