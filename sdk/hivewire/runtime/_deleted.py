"""The one check of a read that resumed past the offset it expected (:func:`deleted_range`): which of the
offsets it skipped the broker deleted (retention, ``delete_records``) before they were read.

It serves every reader that starts at an offset it knows: the runtime's consumer group on each assignment
(:mod:`hivewire.runtime._retention`), ``read_events`` (:mod:`hivewire.data._notebook`), the archive
(:mod:`hivewire.data._archive_positions`) and the Spark source's executors (:mod:`hivewire.data._spark_loss`).

Invariant: a range is reported only when the broker's first retained offset lies above the expected one, so a
skip over transaction markers or a compacted hole is never reported as loss; the range reported ends before the
first offset the broker still holds, before where reading resumed, and before the end of what was to be read.
"""

from __future__ import annotations

from collections.abc import Callable


def deleted_range(
    expected: int, resumed: int, first_retained: Callable[[], int | None], end: int | None = None
) -> tuple[int, int] | None:
    """Reading that should have begun at ``expected`` resumed at ``resumed`` (the end of the range when nothing
    came): the first and last offsets deleted before they were read, or None when nothing was.

    ``first_retained()`` asks the broker for its first retained offset (None when it cannot be asked); it is
    called only when reading resumed past ``expected``. ``end`` bounds the range (one past its last offset)."""
    if resumed <= expected:
        return None
    low = first_retained()
    if low is None or low <= expected:
        return None  # the expected offset is still there: a transaction marker or a compacted hole
    last = min(low, resumed) - 1 if end is None else min(low, resumed, end) - 1
    return expected, last
