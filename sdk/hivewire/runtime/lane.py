"""A listener's worker ("lane"): its own thread and queue, events handled in order, retries, timeouts, dead letters.

Each listener gets one lane (or ``concurrency`` lanes, each owning a share of the tables), so a listener
that raises, hangs or is slow holds up only itself. Within a lane events are handled one at a time in the
order they were polled, which keeps the order of each table's events.

A call that raises is retried with exponential backoff (tenacity), then the record is dead-lettered with
the error; the lane's share of the batch is released only after that, so nothing is committed before it is
handled or dead-lettered. A call that exceeds the listener's timeout counts as a failed attempt: the
:class:`Watchdog` abandons the stuck thread (Python cannot kill it) and starts a fresh one that continues
with the same event.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from hivewire.errors import DecodeError
from hivewire.events import ListenerEvent
from hivewire.listener import Listener, RetryPolicy
from hivewire.metastore import MetastoreClient
from hivewire.metrics import Metrics
from hivewire.runtime.tracker import Batch, CommitTracker
from hivewire.source import Record, Source

__all__ = ["Lane", "LaneServices", "Watchdog"]

log = logging.getLogger(__name__)

Item = tuple[Record, ListenerEvent]
Work = tuple[Batch, list[Item]]


class _Stopping(Exception):
    """The app is stopping: leave the current event unfinished (it is not committed)."""


class _Superseded(Exception):
    """The watchdog replaced this thread after a timeout: stop touching the lane."""


class ListenerTimeout(Exception):
    """A listener call did not return within the listener's timeout."""


@dataclass
class LaneServices:
    """What every lane of an app shares."""

    tracker: CommitTracker
    source: Source
    metrics: Metrics
    retry: RetryPolicy
    timeout: float
    queue_size: int
    app_name: str
    stopping: threading.Event
    metastore: Callable[[], MetastoreClient | None]
    fatal: Callable[[BaseException], None]


class Lane:
    """One worker of one listener."""

    def __init__(self, listener: Listener, index: int, services: LaneServices) -> None:
        self.listener = listener
        self.name = listener.name if listener.concurrency == 1 else f"{listener.name}[{index}]"
        self.services = services
        self.policy = listener.retry or services.retry
        self.timeout = listener.timeout or services.timeout
        self.metrics = services.metrics.for_listener(listener.name)
        self._queue: deque[Work] = deque()
        self._cond = threading.Condition()
        self.depth = 0
        self._gen = 0
        self._threads: list[threading.Thread] = []
        # What the current thread is doing, for the watchdog.
        self._share: tuple[Batch, list[Item]] | None = None
        self._index = 0
        self._attempt = 0
        self._started: tuple[int, float] | None = None
        self.timeouts = 0

    # -- feeding --------------------------------------------------------------------------------------
    def submit(self, batch: Batch, items: list[Item]) -> None:
        with self._cond:
            self._queue.append((batch, items))
            self.depth += len(items)
            self._cond.notify()

    @property
    def full(self) -> bool:
        return self.depth >= self.services.queue_size

    @property
    def busy_since(self) -> float | None:
        started = self._started
        return started[1] if started else None

    # -- threads --------------------------------------------------------------------------------------
    def start(self) -> None:
        self._spawn(None)

    def _spawn(self, resume: tuple[Batch, list[Item], int, int, BaseException] | None) -> None:
        self._gen += 1
        thread = threading.Thread(target=self._run, args=(self._gen, resume), daemon=True,
                                  name=f"hivewire-{self.name}-{self._gen}")
        self._threads.append(thread)
        thread.start()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def join(self, timeout: float) -> bool:
        """Wait for the current thread to finish; abandoned (timed-out) threads are not waited for."""
        thread = self._threads[-1] if self._threads else None
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _next(self, gen: int) -> Work | None:
        with self._cond:
            while not self._queue:
                if self.services.stopping.is_set() or gen != self._gen:
                    return None
                self._cond.wait(0.5)
            if self.services.stopping.is_set():
                return None
            return self._queue.popleft()

    def _run(self, gen: int, resume: tuple[Batch, list[Item], int, int, BaseException] | None) -> None:
        client = self.services.metastore()
        try:
            if resume is not None:
                batch, items, index, attempts, error = resume
                if not self._process(gen, batch, items, index, client, attempts, error):
                    return
            while True:
                work = self._next(gen)
                if work is None:
                    return
                if not self._process(gen, work[0], work[1], 0, client):
                    return
        except BaseException as e:
            # SystemExit/KeyboardInterrupt from listener code, or a bug in hivewire: this lane cannot go on,
            # and without it nothing after its current batch can be committed. Stop the app cleanly instead
            # of stalling; uncommitted events are read again on restart.
            log.critical("listener worker %s stopped by %r; stopping the app", self.name, e, exc_info=True)
            self.services.fatal(e)
        finally:
            if client is not None:
                client.close()

    # -- handling -------------------------------------------------------------------------------------
    def _process(self, gen: int, batch: Batch, items: list[Item], start: int, client: MetastoreClient | None,
                 attempts: int = 0, error: BaseException | None = None) -> bool:
        """Handle ``items[start:]``; release the batch share when done. False: this thread must stop."""
        tracker, stopping, handlers = self.services.tracker, self.services.stopping, self.listener.handlers
        epoch, stale = tracker.epoch, tracker.stale(batch)
        monotonic = time.monotonic
        handled = 0
        self._share = (batch, items)
        for i in range(start, len(items)):
            if stopping.is_set():
                break
            if tracker.epoch != epoch:  # a rebalance happened while this share was being handled
                epoch, stale = tracker.epoch, tracker.stale(batch)
            record, event = items[i]
            origin = event.origin
            if stale and origin is not None and (origin.topic, origin.partition) in stale:
                continue  # the partition was revoked: its new owner reads this record again
            self._index = i
            view = event.copy(handler=client)  # each listener gets its own objects
            if error is None:
                # The common case, inlined: one call, no retry machinery.
                self._attempt = 1
                self._started = (gen, monotonic())
                try:
                    handlers[event.event_type](view)
                except Exception as e:
                    error, attempts = e, 1
                    if gen == self._gen:
                        self.metrics.failed.inc()
                self._started = None
                if gen != self._gen:
                    break
                if error is None:
                    handled += 1
                    continue
            outcome = self._retry(gen, batch, record, view, handlers[event.event_type], attempts, error)
            attempts, error = 0, None
            if outcome is None:
                break
            handled += outcome
        else:
            self._share = None
            self.metrics.handled.inc(handled)
            self.metrics.latency.observe(monotonic() - batch.started)
            with self._cond:
                self.depth -= len(items)
            tracker.release(batch)
            return True
        self.metrics.handled.inc(handled)
        return False

    def _retry(self, gen: int, batch: Batch, record: Record, view: ListenerEvent, handler: Callable[[Any], object],
               attempts: int, error: BaseException) -> int | None:
        policy = self.policy
        if isinstance(error, DecodeError) or attempts >= policy.max_attempts:
            self._dead_letter(batch, record, error, attempts)
            return 0
        replay = [error]  # tenacity's first attempt re-raises the failure that brought us here

        def attempt() -> None:
            if replay:
                raise replay.pop()
            self._attempt += 1
            self._started = (gen, time.monotonic())
            try:
                handler(view)
            except Exception:
                if gen == self._gen:
                    self.metrics.failed.inc()
                raise
            finally:
                self._started = None
                if gen != self._gen:
                    raise _Superseded

        def retryable(e: BaseException) -> bool:
            return not isinstance(e, (DecodeError, _Stopping, _Superseded))

        def before_sleep(state: RetryCallState) -> None:
            self.metrics.retried.inc()
            log.info("listener %s failed on %s (attempt %d of %d): %s; retrying", self.name, view,
                        self._attempt, policy.max_attempts, state.outcome.exception() if state.outcome else "?")

        self._attempt = attempts
        retrying = Retrying(
            stop=stop_after_attempt(policy.max_attempts - attempts + 1),
            wait=lambda state: policy.delay(attempts - 1 + state.attempt_number),
            retry=retry_if_exception(retryable), sleep=self._sleep, before_sleep=before_sleep, reraise=True)
        try:
            retrying(attempt)
            return 1
        except (_Stopping, _Superseded):
            return None
        except Exception as final:
            if gen != self._gen:
                return None
            self._dead_letter(batch, record, final, self._attempt)
            return 0

    def _sleep(self, seconds: float) -> None:
        if self.services.stopping.wait(seconds):
            raise _Stopping

    def _dead_letter(self, batch: Batch, record: Record, error: BaseException, attempts: int) -> None:
        self.metrics.dead_lettered.inc()
        log.error("listener %s gave up on %s/%s@%s after %d attempt(s): %r; dead-lettering", self.name,
                  record.topic(), record.partition(), record.offset(), attempts, error)
        headers = dead_letter_headers(self.services.app_name, self.listener.name, record, error, attempts)
        tracker = self.services.tracker
        tracker.hold(batch)
        self.services.source.dead_letter(record, headers, lambda: tracker.release(batch))

    # -- watchdog -------------------------------------------------------------------------------------
    def check_timeout(self, now: float) -> None:
        """Called by the watchdog: if the current call overran the timeout, continue in a fresh thread."""
        started, share = self._started, self._share
        if started is None or share is None or now - started[1] < self.timeout:
            return
        with self._cond:
            if self._started is not started or started[0] != self._gen:
                return
            self._started = None
            batch, items = share
            index = self._index
            self.timeouts += 1
            self.metrics.timeouts.inc()
            self.metrics.failed.inc()
            event = items[index][1]
            log.error("listener %s: call on %s did not return within %.1f s; abandoning that thread and "
                      "continuing in a new one", self.name, event, self.timeout)
            error = ListenerTimeout(f"{self.name} did not return within {self.timeout:g} s")
            self._spawn((batch, items, index, self._attempt, error))


def dead_letter_headers(app: str, listener: str, record: Record, error: BaseException | str,
                        attempts: int) -> dict[str, str]:
    """hivewire's dead-letter headers: who failed, why, how often, and where the record came from."""
    if isinstance(error, BaseException):
        kind = f"{type(error).__module__}.{type(error).__qualname__}"
        message = f"{type(error).__name__}: {error}"
        trace = _traceback(error)
    else:
        kind, message, trace = "hivewire.errors.DecodeError", error, ""
    timestamp = record.timestamp()
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
    }


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
        parts.append("Traceback (most recent call last):\n" + "\n".join(frames) +
                     f"\n{type(current).__qualname__}: {current}")
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return "\n\nwhich was caused by:\n".join(parts)


class Watchdog(threading.Thread):
    """Checks every lane for calls that overran their timeout."""

    def __init__(self, lanes: list[Lane], stopping: threading.Event, interval: float = 0.2) -> None:
        super().__init__(name="hivewire-watchdog", daemon=True)
        self._lanes = lanes
        self._stopping = stopping
        self._interval = interval

    def run(self) -> None:
        while not self._stopping.wait(self._interval):
            now = time.monotonic()
            for lane in self._lanes:
                lane.check_timeout(now)
