"""What happens to an event whose listener call failed: retried on the listener's :class:`RetryPolicy`, then
dead-lettered with the error (:class:`Delivery`), and the exceptions that steer a lane's threads and tasks
meanwhile (:class:`_Stopping`, :class:`_Superseded`, :class:`_Revoked`; :class:`ListenerTimeout` is a failed
call like any other).

One arithmetic for every way of running listeners: after ``n`` failed calls the next comes
``RetryPolicy.delay(n)`` seconds later, for at most ``max_attempts`` calls in all; a :class:`DecodeError` is
never retried. :meth:`Delivery.retry` (a lane's own thread) and :meth:`Delivery.retry_async` (a task on the
event loop) are the same loop over that schedule, one sleeping and calling, the other awaiting.

A dead letter holds its batch (nothing past it is committed) and counts in the lane's ``letters`` backlog
until the broker acknowledges it (:func:`send_dead_letter`). A record whose partition was revoked is neither
retried nor dead-lettered: its new owner reads it again, and a dead letter from here would be a second verdict.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from hivewire.errors import DecodeError
from hivewire.runtime._frames import user_traceback
from hivewire.runtime._intake import Backlog
from hivewire.runtime._item import Item
from hivewire.runtime._listener import Handler, Listener
from hivewire.runtime._metrics import ListenerMetrics
from hivewire.runtime._options import RetryPolicy
from hivewire.runtime._services import LaneServices
from hivewire.runtime._share import Share
from hivewire.runtime._source import Record, Source
from hivewire.runtime._tracker import Batch, CommitTracker

log = logging.getLogger("hivewire.runtime.lane")


class _Stopping(Exception):
    """The app is stopping: leave the current event unfinished (it is not committed)."""


class _Superseded(Exception):
    """The watchdog replaced this thread after a timeout: stop touching the lane."""


class _Revoked(Exception):
    """The record's partition was revoked: its new owner handles it; neither retry nor dead-letter it."""


class ListenerTimeout(Exception):
    """A listener call did not return within the listener's timeout."""


_CONTROL = (_Stopping, _Superseded, _Revoked)  # not a listener's failure: they end the retries at once


class Delivery:
    """One listener's retries and dead letters (one per lane, shared by the threads or tasks running it)."""

    def __init__(self, listener: Listener, services: LaneServices, metrics: ListenerMetrics, letters: Backlog) -> None:
        self.name = listener.name
        self.policy: RetryPolicy = listener.retry or services.retry
        self.metrics = metrics
        self.letters = letters
        self._services = services

    def backoff(self, attempts: int, error: BaseException, what: object) -> float | None:
        """Seconds to wait before the next call, after ``attempts`` failed calls of which the last raised
        ``error``; None when the policy gives up (its attempts are spent, or ``error`` is a DecodeError)."""
        policy = self.policy
        if isinstance(error, DecodeError) or attempts >= policy.max_attempts:
            return None
        self.metrics.retried.inc()
        log.debug(
            "listener %s failed on %s (attempt %d of %d): %r; retrying",
            self.name,
            what,
            attempts,
            policy.max_attempts,
            error,
        )
        return policy.delay(attempts)

    def retry(
        self,
        call: Callable[[], None],
        attempts: int,
        error: Exception,
        sleep: Callable[[float], None],
        what: object,
    ) -> tuple[int, Exception | None]:
        """Call ``call`` again, after ``attempts`` failed calls (the last raised ``error``), on the policy's
        schedule: (calls made, None) once one succeeds, (calls made, the last error) when the policy gives up.

        ``sleep`` waits between calls; the control exceptions (``_Stopping``, ``_Superseded``, ``_Revoked``)
        raised by it or by ``call`` end the retries and propagate."""
        while (delay := self.backoff(attempts, error, what)) is not None:
            sleep(delay)
            attempts += 1
            try:
                call()
            except _CONTROL:
                raise
            except Exception as e:
                error = e
            else:
                return attempts, None
        return attempts, error

    async def retry_async(
        self,
        call: Callable[[], Awaitable[None]],
        attempts: int,
        error: Exception,
        sleep: Callable[[float], Awaitable[None]],
        what: object,
    ) -> tuple[int, Exception | None]:
        """:meth:`retry` for a task on the event loop: the same schedule, awaiting ``sleep`` and ``call``."""
        while (delay := self.backoff(attempts, error, what)) is not None:
            await sleep(delay)
            attempts += 1
            try:
                await call()
            except _CONTROL:
                raise
            except Exception as e:
                error = e
            else:
                return attempts, None
        return attempts, error

    def revoked(self, record: Record) -> None:
        """Say that ``record`` is left to its partition's new owner."""
        log.info(
            "listener %s: partition %s/%s was revoked while retrying offset %s; leaving it to the new owner",
            self.name,
            record.topic(),
            record.partition(),
            record.offset(),
        )

    def give_up(
        self, batch: Batch, record: Record, error: BaseException, attempts: int, handler: Handler | None = None
    ) -> None:
        """Dead-letter ``record`` after ``attempts`` calls, the last failing with ``error`` (unless its partition
        was revoked meanwhile: then it is left to the new owner)."""
        services = self._services
        tracker = services.tracker
        if not tracker.is_current(batch):
            # The new owner reads the record again; a dead letter from here would be a second, wrong verdict.
            self.revoked(record)
            return
        self.metrics.dead_lettered.inc()
        if len(services.failures) < 100:
            services.failures.append((self.name, error))
        # The traceback once per event, at its final failure (retries log at DEBUG), and the line of the
        # listener's own code in the message itself, where a log search finds it. Only the user's frames:
        # the whole traceback (lanes, the event loop, concurrent.futures) is at DEBUG.
        log.error(
            "listener %s gave up on %s/%s@%s after %d attempt(s): %r at %s; dead-lettering\n%s",
            self.name,
            record.topic(),
            record.partition(),
            record.offset(),
            attempts,
            error,
            where(error, handler),
            user_traceback(error),
        )
        log.debug("listener %s: the whole traceback", self.name, exc_info=error)
        headers = dead_letter_headers(services.app_name, self.name, record, error, attempts)
        send_dead_letter(services.source, tracker, self.letters, batch, record, headers)


def send_dead_letter(
    source: Source, tracker: CommitTracker, backlog: Backlog, batch: Batch, record: Record, headers: dict[str, str]
) -> None:
    """Publish ``record`` as a dead letter; until the broker acknowledges it, it holds ``batch`` (so nothing past
    it is committed) and counts in ``backlog`` (its record is held in memory for the resends, so the backlog
    bounds also cover dead letters piling up behind a broken topic)."""
    value = record.value()
    size = len(value) if value else 0
    backlog.add(1, size)

    release = Share.letter(tracker, batch)

    def delivered() -> None:
        backlog.add(-1, -size)
        release()

    source.dead_letter(record, headers, delivered)


def dead_letter_headers(
    app: str, listener: str, record: Record, error: BaseException | str, attempts: int
) -> dict[str, str]:
    """hivewire's dead-letter headers: who failed, why, how often, and where the record came from."""
    if isinstance(error, BaseException):
        kind = f"{type(error).__module__}.{type(error).__qualname__}"
        message = f"{type(error).__name__}: {error}"
        trace = _traceback(error)
    else:
        kind, message, trace = "hivewire.errors.DecodeError", error, ""
    timestamp = record.timestamp()
    decoded = record.decoded if isinstance(record, Item) else None
    return {
        "hivewire.app": app,
        "hivewire.listener": listener,
        "hivewire.error": message[:4000],
        "hivewire.error.type": kind,
        "hivewire.traceback": trace[-8000:],
        "hivewire.attempts": str(attempts),
        "hivewire.source.topic": record.topic() or "",
        "hivewire.source.partition": str(record.partition()),
        "hivewire.source.offset": str(record.offset()),
        "hivewire.source.timestamp": str(timestamp[1] if timestamp and timestamp[0] else ""),
        # db.table (db for a database event): what keys the letter when its record had no key (issue 33).
        **({"hivewire.source.table": decoded.qualified_name} if decoded is not None else {}),
    }


def where(error: BaseException, handler: Handler | None) -> str:
    """``file:line`` of the listener's own frame in ``error``'s traceback (the innermost frame of the
    handler's file, else the innermost frame), or ``"?"`` when it has none."""
    code = getattr(handler, "__code__", None)
    home = code.co_filename if code is not None else None
    found: str | None = None
    last: str | None = None
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        last = f"{filename}:{tb.tb_lineno}"
        if filename == home:
            found = last
        tb = tb.tb_next
    return found or last or "?"


def _traceback(error: BaseException) -> str:
    """The frames of ``error`` (and what caused it), without source lines.

    ``traceback.format_exception`` reads and parses source files for every frame (Python 3.11's caret
    anchors): with a listener failing on every event that alone starved the healthy listeners.
    """
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < 5:
        seen.add(id(current))
        frames = []
        tb = current.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            frames.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}')
            tb = tb.tb_next
        parts.append(
            "Traceback (most recent call last):\n" + "\n".join(frames) + f"\n{type(current).__qualname__}: {current}"
        )
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return "\n\nwhich was caused by:\n".join(parts)
