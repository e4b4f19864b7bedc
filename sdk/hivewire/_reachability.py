"""Whether a service (Kafka, ZooKeeper, a metastore) answers: one line when it stops, one when it is back.

Clients retry on their own and would otherwise log every attempt; :class:`Reachability` turns their
attempts into a state and speaks only when the state changes, plus a reminder at most once a period while
the outage lasts (:class:`~hivewire._ratelimit.RateLimit`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from hivewire._ratelimit import RateLimit

__all__ = ["Reachability"]


class Reachability:
    """The state of one service as its client sees it: never connected yet, reachable, or unreachable.

    ``what`` names the service in sentences ("Kafka at broker1:9092"); ``hint`` says what to check
    ("check apiary.bootstrap.servers and that the brokers run"). Thread-safe: clients report from their own
    threads.
    """

    def __init__(
        self,
        what: str,
        hint: str,
        logger: logging.Logger,
        *,
        remind_every: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.hint = hint
        self._log = logger
        self._clock = clock
        self._lock = threading.Lock()
        self._created = clock()
        self._connected_once = False
        self._down_since: float | None = None
        self._reminder = RateLimit(remind_every, clock)

    @property
    def reachable(self) -> bool:
        """It answered, and has not failed since."""
        with self._lock:
            return self._connected_once and self._down_since is None

    @property
    def out(self) -> bool:
        """An outage was said and the service has not answered since (other lines about it can keep quiet)."""
        with self._lock:
            return self._down_since is not None

    @property
    def connected_once(self) -> bool:
        with self._lock:
            return self._connected_once

    def waiting_for(self) -> float:
        """Seconds since it was last reachable (since this object was made, if never); 0 while reachable."""
        with self._lock:
            if self._connected_once and self._down_since is None:
                return 0.0
            return self._clock() - (self._down_since if self._down_since is not None else self._created)

    def up(self) -> None:
        """The service answered."""
        if self._connected_once and self._down_since is None:
            return  # already up: no lock on the hot path (a delivery report per message in the shim's sink)
        with self._lock:
            down_since, first = self._down_since, not self._connected_once
            self._connected_once = True
            self._down_since = None
        if down_since is not None:
            self._log.warning("%s is reachable again (after %.0f s)", self.what, self._clock() - down_since)
        elif first:
            self._log.debug("%s is reachable", self.what)

    def down(self, reason: str) -> None:
        """An attempt to reach the service failed with ``reason`` (logged once per outage, then reminded)."""
        with self._lock:
            now = self._clock()
            new = self._down_since is None
            if new:
                self._down_since = now
            since = self._down_since if self._down_since is not None else now
        if new:
            self._reminder = RateLimit(self._reminder.seconds, self._clock)
            self._reminder.due()  # the first line below counts as the first reminder
            self._log.warning("%s is unreachable (%s); retrying; %s", self.what, _one_line(reason), self.hint)
            return
        count = self._reminder.due()
        if count:
            self._log.warning(
                "%s still unreachable after %.0f s (%d failed attempts since the last line; last: %s); %s",
                self.what,
                now - since,
                count,
                _one_line(reason),
                self.hint,
            )


def _one_line(text: str) -> str:
    """``text`` on one line, at most 300 characters (library reasons can be long)."""
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."
