"""The locks that keep changes to one object in order: striped readers-writer locks over string keys.

A change takes its tables' keys exclusively and their databases' keys shared (see
:class:`hivewire_shim.change.Change`), so changes to one table made through the shim run one at a time and
their events come out in the order the metastore applied them, while changes to other tables of the
database run side by side.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence

__all__ = ["Locks"]


class _Stripe:
    """A readers-writer lock: many shared holders or one exclusive one. A waiting exclusive holder keeps
    new shared ones out, so a database drop is not starved by a stream of table changes."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.shared = 0
        self.exclusive = False
        self.waiting_exclusive = 0
        self.waiting_shared = 0

    def acquire(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self.waiting_exclusive += 1
                try:
                    self._cond.wait_for(lambda: not self.exclusive and self.shared == 0)
                finally:
                    self.waiting_exclusive -= 1
                self.exclusive = True
            else:
                self.waiting_shared += 1
                try:
                    self._cond.wait_for(lambda: not self.exclusive and self.waiting_exclusive == 0)
                finally:
                    self.waiting_shared -= 1
                self.shared += 1

    def release(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self.exclusive = False
            else:
                self.shared -= 1
            self._cond.notify_all()


class Locks:
    """Striped readers-writer locks over string keys.

    :meth:`holding` takes keys exclusively or shared, every stripe in one global order (no deadlock: a
    thread waiting on a stripe holds only lower ones); a stripe wanted both ways is taken exclusively.
    """

    def __init__(self, stripes: int = 1024) -> None:
        self._stripes = [_Stripe() for _ in range(stripes)]

    def _stripe(self, key: str) -> _Stripe:
        return self._stripes[hash(key) % len(self._stripes)]

    def held(self, key: str) -> bool:
        """Whether ``key``'s lock (its stripe's) is held by anyone, in either mode."""
        stripe = self._stripe(key)
        return stripe.exclusive or stripe.shared > 0

    def held_exclusively(self, key: str) -> bool:
        return self._stripe(key).exclusive

    def waiting(self, key: str) -> int:
        """How many threads wait for ``key``'s stripe (for tests and diagnostics)."""
        stripe = self._stripe(key)
        return stripe.waiting_exclusive + stripe.waiting_shared

    @contextlib.contextmanager
    def holding(self, keys: Sequence[str], shared: Sequence[str] = ()) -> Iterator[None]:
        """Hold ``keys`` exclusively and ``shared`` shared."""
        modes: dict[int, bool] = {}
        for key in shared:
            modes.setdefault(hash(key) % len(self._stripes), False)
        for key in keys:
            modes[hash(key) % len(self._stripes)] = True
        taken: list[tuple[int, bool]] = []
        try:
            for i in sorted(modes):
                self._stripes[i].acquire(modes[i])
                taken.append((i, modes[i]))
            yield
        finally:
            for i, exclusive in reversed(taken):
                self._stripes[i].release(exclusive)
