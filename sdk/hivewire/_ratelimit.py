"""When a log line that would repeat is due again: at most once a period, counting what it held back."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["RateLimit"]


class RateLimit:
    """Due at most once every ``seconds`` of ``clock`` (the first time at once); thread-safe.

    Each :meth:`due` counts one occurrence of what is logged. It returns 0 while the line is held back and,
    once it is due, how many occurrences the line speaks for: this one and those held back since the last,
    so the line can say "N since" instead of one line each.
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._last = float("-inf")
        self._held_back = 0
        self._lock = threading.Lock()

    def due(self) -> int:
        now = self._clock()
        with self._lock:
            if now - self._last < self.seconds:
                self._held_back += 1
                return 0
            self._last = now
            count, self._held_back = self._held_back + 1, 0
            return count
