"""A lane's executor of one thread (:class:`Worker`): a sync listener of concurrency 1 gets its events one at a
time, in the order its intake holds them, on a thread of its own.

A call that exceeds the listener's timeout counts as a failed attempt: the
:class:`~hivewire.runtime._lane.Watchdog` calls :meth:`Worker.check_timeout`, which abandons the stuck thread
(Python cannot kill it) and starts a fresh one that continues with the same event.

Exactly one thread owns the lane's current share: the generation ``_gen``. The watchdog bumps it under the
intake's lock *before* anything else, and a worker checks it under the same lock after every call, so a call
that returns just as it is given up can neither release the share a second time (which would let the tracker
commit past an event another listener has not handled) nor start on the next event.
"""

from __future__ import annotations

import logging
import threading
import time

from hivewire.events._model import ListenerEvent
from hivewire.metastore import MetastoreClient
from hivewire.runtime._delivery import Delivery, ListenerTimeout, _Revoked, _Stopping, _Superseded
from hivewire.runtime._intake import Intake, Spill
from hivewire.runtime._listener import Handler, Listener
from hivewire.runtime._metrics import ListenerMetrics
from hivewire.runtime._services import LaneServices
from hivewire.runtime._share import Share
from hivewire.runtime._source import Record
from hivewire.runtime._tracker import Batch

log = logging.getLogger("hivewire.runtime.lane")

Resume = tuple[Share, int, int, Exception]  # share, index, attempts made, the error of the last one


class Worker:
    """Runs one lane's events one after another on one thread (replaced after a timeout)."""

    def __init__(
        self,
        listener: Listener,
        services: LaneServices,
        intake: Intake,
        delivery: Delivery,
        metrics: ListenerMetrics,
        timeout: float,
    ) -> None:
        self.listener = listener
        self.name = listener.name
        self.services = services
        self.delivery = delivery
        self.metrics = metrics
        self.timeout = timeout
        self._intake = intake
        self._lock = intake.lock  # the generation is checked under the intake's lock
        self._gen = 0
        self._thread: threading.Thread | None = None
        self._abandoned: list[threading.Thread] = []
        # What the owning thread is doing, for the watchdog; written before `_started`, read under the lock.
        self._share: Share | None = None
        self._index = 0
        self._attempt = 0
        self._started: tuple[int, float] | None = None
        self.timeouts = 0

    @property
    def done_in_hand(self) -> int:
        """Events of the share in hand already handled."""
        return self._index

    @property
    def busy_since(self) -> float | None:
        started = self._started
        return started[1] if started else None

    @property
    def current(self) -> str | None:
        """The event the listener's call is in (``CREATE_TABLE db.t at topic/partition@offset``), if any."""
        share, index = self._share, self._index
        if self._started is None or share is None:
            return None
        items = share.items
        return repr(items[index]) if index < len(items) else None

    @property
    def abandoned_threads(self) -> int:
        """Threads given up after a timeout whose listener call still has not returned."""
        return sum(1 for thread in list(self._abandoned) if thread.is_alive())

    # -- threads --------------------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            self._gen += 1
            gen = self._gen
        self._spawn(gen, None)

    def _spawn(self, gen: int, resume: Resume | None) -> None:
        thread = threading.Thread(target=self._run, args=(gen, resume), daemon=True, name=f"hivewire-{self.name}-{gen}")
        self._thread = thread
        thread.start()

    def wake(self) -> None:
        self._intake.wake()

    def join(self, timeout: float) -> bool:
        """Wait for the current thread to finish; abandoned (timed-out) threads are not waited for."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _run(self, gen: int, resume: Resume | None) -> None:
        intake = self._intake

        def owner() -> bool:  # whether this thread still owns the lane (the watchdog has not replaced it)
            return gen == self._gen

        client = self.services.metastore()
        try:
            if resume is not None:
                share, index, attempts, error = resume
                if not self._process(gen, share, index, client, attempts, error):
                    return
            while True:
                work = intake.next(owner)
                if work is None:
                    return
                if isinstance(work, Spill):
                    intake.load(work)
                    continue
                if not self._process(gen, work, 0, client):
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
            with self._lock:
                owns = gen == self._gen
            if owns:  # a thread the watchdog gave up never reads again
                intake.close_reader()

    def _end_call(self, gen: int) -> None:
        """After every listener call: raise :class:`_Superseded` if the watchdog gave this thread up meanwhile."""
        with self._lock:
            if gen != self._gen:
                raise _Superseded
            self._started = None  # only the owner clears it: never wipe a newer thread's marker

    # -- spilled shares -------------------------------------------------------------------------------

    def _process(
        self,
        gen: int,
        share: Share,
        start: int,
        client: MetastoreClient | None,
        attempts: int = 0,
        error: Exception | None = None,
    ) -> bool:
        """Handle ``items[start:]``; release the batch share when done. False: this thread must stop.

        ``error`` (with ``attempts``) resumes a call the watchdog gave up: ``items[start]`` goes straight to
        the retries.
        """
        batch, items = share.batch, share.items
        intake = self._intake
        tracker, stopping, handlers = self.services.tracker, self.services.stopping, self.listener.handlers
        lock = self._lock
        epoch, current = tracker.epoch, tracker.is_current(batch)
        monotonic = time.monotonic
        handled = 0
        finished: list[float] = []  # when each event was done: its latency, observed per event at the end
        self._share = share
        try:
            for i in range(start, len(items)):
                if stopping.is_set() or (intake.paused and not intake.wait_running()):
                    return False
                if tracker.epoch != epoch:  # a rebalance happened while this share was being handled
                    epoch, current = tracker.epoch, tracker.is_current(batch)
                if not current:
                    break  # the share's partition was revoked: its new owner reads these records again
                item = items[i]
                self._index = i
                view = item.event(client)  # each listener gets its own objects
                handler = handlers[item.decoded.event_type]
                if error is None:
                    # The common case, inlined: one call, no retry machinery.
                    self._attempt = 1
                    self._started = (gen, monotonic())
                    try:
                        handler(view)
                    except Exception as e:
                        error, attempts = e, 1
                    with lock:  # _end_call, inlined
                        if gen != self._gen:
                            raise _Superseded
                        self._started = None
                    if error is None:
                        handled += 1
                        finished.append(monotonic())
                        intake.failing = False
                        continue
                    self.metrics.failed.inc()
                intake.failing = True
                outcome = self._retry(gen, batch, item, view, handler, attempts, error)
                attempts, error = 0, None
                handled += outcome
                finished.append(monotonic())
                intake.failing = not outcome
        except (_Stopping, _Superseded):
            return False
        finally:
            self.metrics.handled.inc(handled)
        self._share = None
        self._index = 0
        self.metrics.observe_latencies(batch.started, finished)
        intake.backlog.add(-len(items), -share.size)
        share.done()
        room = self.services.room
        if not room.is_set() and intake.backlog.depth < self.services.pace_bound:
            room.set()  # the runner waits for a listener that needs more (Runner._pace)
        return True

    def _retry(
        self,
        gen: int,
        batch: Batch,
        record: Record,
        view: ListenerEvent,
        handler: Handler,
        attempts: int,
        error: Exception,
    ) -> int:
        """Retry ``view`` after ``attempts`` failed calls; 1 if a call succeeded, 0 if given up or revoked."""
        tracker, delivery = self.services.tracker, self.delivery
        # Failure handling runs at background priority: the GIL is given up before each retry and dead letter
        # (here and in _sleep), so a listener failing on every event (exceptions, tracebacks, dead letters) runs
        # on the CPU the healthy listeners leave idle (bench_runtime.py's isolation modes measure it).
        time.sleep(0)
        self._attempt = attempts

        def call() -> None:
            if not tracker.is_current(batch):
                raise _Revoked
            self._attempt += 1
            self._started = (gen, time.monotonic())
            try:
                handler(view)
            except Exception:
                self._end_call(gen)
                self.metrics.failed.inc()
                raise
            self._end_call(gen)

        try:
            attempts, failure = delivery.retry(call, attempts, error, self._sleep, view)
        except _Revoked:
            delivery.revoked(record)
            return 0
        if failure is None:
            return 1
        delivery.give_up(batch, record, failure, attempts, handler)
        return 0

    def _sleep(self, seconds: float) -> None:
        time.sleep(0)  # background priority (see _retry), also when the backoff is zero
        if self.services.stopping.wait(seconds):
            raise _Stopping

    # -- watchdog -------------------------------------------------------------------------------------
    def check_timeout(self, now: float) -> None:
        """Called by the watchdog: if the current call overran the timeout, continue in a fresh thread."""
        started = self._started
        if started is None or now - started[1] < self.timeout:
            return
        with self._lock:
            if self._started is not started or started[0] != self._gen or self._share is None:
                return  # the call returned (and its thread still owns the share) since we looked
            # Supersede first, under the lock the worker checks after its call: from here on the hung
            # thread owns nothing, whenever its call returns.
            self._gen += 1
            gen = self._gen
            self._started = None
            resume_at = (self._share, self._index, self._attempt)
            if self._thread is not None:
                self._abandoned.append(self._thread)
        self.timeouts += 1
        self.metrics.timeouts.inc()
        self.metrics.failed.inc()
        share, index, attempt = resume_at
        log.error(
            "listener %s: call on %s did not return within %.1f s; abandoning that thread and continuing in a new one",
            self.name,
            share.items[index],
            self.timeout,
        )
        error = ListenerTimeout(f"{self.name} did not return within {self.timeout:g} s")
        self._spawn(gen, (share, index, attempt, error))

    def prune_abandoned(self) -> int:
        """Forget abandoned threads whose call finally returned; the number still running."""
        self._abandoned = [thread for thread in self._abandoned if thread.is_alive()]
        return len(self._abandoned)
