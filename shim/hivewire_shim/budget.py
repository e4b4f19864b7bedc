"""The bytes of client requests the shim holds at once, across all connections, and their limit.

Each connection's reader takes from the budget twice what it receives of a request (its pieces and the
joined whole are both in memory while it is assembled, so the limit bounds memory) and gives it back once
the call is over; a request that would take the total past the limit is refused (its connection is closed and
a WARNING, at most one a minute, says which setting to raise), so many large requests at once cannot run
the shim out of memory.
"""

from __future__ import annotations

import logging
import threading

from hivewire._ratelimit import RateLimit

__all__ = ["Budget", "OverBudget"]

log = logging.getLogger(__name__)


class OverBudget(Exception):
    """Taking these bytes would pass the limit."""


class Budget:
    """``limit`` bytes shared by every connection; :attr:`held` is what they hold now, :attr:`refused` how
    many requests were refused for want of room."""

    def __init__(self, limit: int, *, setting: str = "hivewire.shim.max.buffered.bytes") -> None:
        self.limit = limit
        self.setting = setting
        self.held = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._warn = RateLimit(60)

    def take(self, n: int) -> None:
        """Take ``n`` bytes, or raise :class:`OverBudget` (taking nothing)."""
        with self._lock:
            if self.held + n > self.limit:
                self.refused += 1
                held = self.held
                refused = True
            else:
                self.held += n
                refused = False
        if refused:
            if self._warn.due():
                log.warning(
                    "refused a client request: connections hold %d MB of requests and the limit is %d MB "
                    "(%s); raise it if the shim has the memory, or find the clients sending large requests",
                    held >> 20,
                    self.limit >> 20,
                    self.setting,
                )
            raise OverBudget(f"the shim holds {held} bytes of client requests (limit {self.limit}, {self.setting})")

    def give(self, n: int) -> None:
        """Give back ``n`` bytes taken before."""
        if n:
            with self._lock:
                self.held -= n
