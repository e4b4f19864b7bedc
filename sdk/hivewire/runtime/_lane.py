"""A listener's worker ("lane"): its own thread and queue, events handled in order, retries, timeouts, dead letters.

Each listener gets one lane, so a listener that raises, hangs or is slow does not hold up the others. This
module's :class:`Lane` handles its events one at a time on one thread (a sync listener of concurrency 1);
:class:`~hivewire.runtime._scheduler.ScheduledLane` keeps the same intake (queue, bounds, spills) and runs
N events at once, ordered per table (``concurrency`` > 1, or an ``async def`` listener).

A lane keeps its backlog in memory up to its bounds (``hivewire.listener.queue.size`` events or
``hivewire.listener.queue.bytes``). Beyond them, while another lane is keeping up
(``hivewire.listener.overflow=reread``, the default), it keeps only a :class:`Spill` per share, the share's
batch and offsets, and reads those records again from the source with a :class:`~hivewire.runtime._source.Reader` of
its own when it gets to them, until its backlog has drained to half of both bounds. So a listener far behind
neither holds memory nor holds up the others; only the commits wait for it. When every lane is over its
bounds (or with ``overflow=pause``, when any is) the runner pauses consumption instead: reading ahead for
nobody would only be read twice. Within a lane events are handled one at a time in the order they were
polled, spilled or not, which keeps the order of each table's events.

A paused lane (:meth:`Lane.pause`, a listener switched off with ``hivewire listener pause``) finishes the call
it is in and takes nothing more; what arrives for it meanwhile is kept as one
:class:`~hivewire.runtime._parking.Parked` range of offsets per partition, which holds back those partitions'
commits and becomes spills again on :meth:`Lane.resume`.

A call that raises is retried on the listener's policy (:class:`~hivewire.runtime._delivery.Delivery`), then
the record is dead-lettered with the error; the lane's share of the batch is released only after that, and the
dead letter holds the batch (and stays in the lane's backlog, against its bounds) until the broker
acknowledges it, so nothing is committed before it is handled or dead-lettered. A share holds one partition's
records of one poll. A call that exceeds the listener's timeout counts as a failed attempt: the
:class:`Watchdog` abandons the stuck thread (Python cannot kill it) and starts a fresh one that continues with
the same event.

Exactly one thread owns a lane's current share: the generation ``_gen``. The watchdog bumps it under the
lane's lock *before* anything else, and a worker checks it under the same lock after every call, so a call
that returns just as it is given up can neither release the share a second time (which would let the
tracker commit past an event another listener has not handled) nor start on the next event.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from hivewire.errors import DecodeError, RecordsGoneError
from hivewire.events import _apiary as apiary
from hivewire.events._apiary import Decoded
from hivewire.events._model import ListenerEvent
from hivewire.metastore import MetastoreClient
from hivewire.runtime._delivery import Delivery, ListenerTimeout, _Revoked, _Stopping, _Superseded
from hivewire.runtime._intake import Backlog, Item, Spill, Work
from hivewire.runtime._listener import Handler, Listener
from hivewire.runtime._parking import Parked
from hivewire.runtime._services import LaneServices
from hivewire.runtime._source import Reader, Record, TopicPartition
from hivewire.runtime._tracker import Batch

log = logging.getLogger("hivewire.runtime.lane")


Resume = tuple[Work, int, int, Exception]  # share, index, attempts made, the error of the last one


class Lane:
    """One worker of one listener."""

    def __init__(self, listener: Listener, index: int, services: LaneServices) -> None:
        self.listener = listener
        self.index = index
        self.name = listener.name
        self.services = services
        self.timeout = listener.timeout or services.timeout
        self.metrics = services.metrics.for_listener(listener.name)
        self._queue: deque[Work | Spill] = deque()
        # A plain Lock under the Condition: workers take it after every call, and `with lock` is cheaper.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.backlog = Backlog(self.name, services.queue_events, services.queue_bytes)  # queued in memory
        self.letters = Backlog(self.name, services.queue_events, services.queue_bytes)  # dead letters in flight
        self.delivery = Delivery(listener, services, self.metrics, self.letters)  # retries and dead letters
        self.spilled = 0  # events queued as spills, to be read again
        self._spilling = False
        # A listener failing on every event will not catch up soon, and every event held for it costs the
        # others (fresh memory, page faults): since its last failure, with no success after it, it holds at
        # most one poll's worth in memory before spilling. Written by the lane's thread, read by the runner's.
        self.failing = False
        self.failing_bound = min(services.failing_bound, services.queue_events)
        self._reader: Reader | None = None
        self._gen = 0
        self._thread: threading.Thread | None = None
        self._abandoned: list[threading.Thread] = []
        # What the owning thread is doing, for the watchdog; written before `_started`, read under the lock.
        self._share: Work | None = None
        self._index = 0
        self._attempt = 0
        self._started: tuple[int, float] | None = None
        self.timeouts = 0
        self._paused = False
        self._parked: dict[TopicPartition, Parked] = {}
        self.parked = 0  # events let pass while paused, to be read again on resuming
        # With sidelines: whether the live stream skipped an event (partition, offset), set by the runner.
        self.skipped: Callable[[TopicPartition, int, Decoded], bool] | None = None

    # -- feeding --------------------------------------------------------------------------------------
    def submit(self, batch: Batch, items: list[Item], size: int, may_spill: bool = False) -> None:
        """Queue a share; with ``may_spill``, as a :class:`Spill` while this lane is over its bounds."""
        with self._cond:
            if self._paused:
                self._park(batch, items)
                self._cond.notify()
                return
            if may_spill and self._spills():
                self._queue.append(Spill(batch, items[0]._offset, items[-1]._offset + 1, len(items)))
                self.spilled += len(items)
            else:
                self._queue.append((batch, items, size))
                self.backlog.add(len(items), size)
            self._cond.notify()

    def _park(self, batch: Batch, items: list[Item]) -> None:
        """Paused: extend the partition's parked range over this share instead of queueing it (lock held)."""
        tp, tracker = batch.tp, self.services.tracker
        parked = self._parked.get(tp)
        if parked is None or not parked.current:
            parked = self._parked[tp] = Parked(tracker, batch, items[0]._offset)
        parked.add(batch.end, len(items))
        self.parked += len(items)
        tracker.release(batch)  # the parked range's cap holds the commits instead

    def replay(self, chunks: Sequence[tuple[Batch, int, int, int]], keep: Callable[[Decoded], bool]) -> None:
        """Queue ``chunks`` of a partition to read again (what ``keep`` says of them), behind what is queued."""
        with self._cond:
            for batch, start, end, events in chunks:
                self._queue.append(Spill(batch, start, end, events, keep))
                self.spilled += events
            self._cond.notify()

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        """Finish the call in progress, then take nothing more until :meth:`resume` (what arrives meanwhile is
        parked: offsets only)."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        """Go on: first what was queued before the pause, then what was parked (read again), then the rest."""
        with self._cond:
            size = max(1, self.services.queue_events // 2)
            for parked in self._parked.values():
                if parked.current:
                    for batch, start, end, events in parked.chunks(size):
                        self._queue.append(Spill(batch, start, end, events))
                        self.spilled += events
            self._parked.clear()
            self.parked = 0
            self._paused = False
            self._cond.notify_all()

    def _wait_running(self) -> bool:
        """Wait while paused; False if the app stops meanwhile."""
        stopping = self.services.stopping
        with self._cond:
            while self._paused and not stopping.is_set():
                self._cond.wait(0.5)
        return not stopping.is_set()

    @property
    def spilling(self) -> bool:
        return self._spilling

    @property
    def behind(self) -> bool:
        """At its in-memory bound (the smaller one while :attr:`failing`): what comes next spills, or waits."""
        backlog = self.backlog
        return self._paused or backlog.full or (self.failing and backlog.depth >= self.failing_bound)

    @property
    def caught_up(self) -> bool:
        """Back to half of its in-memory bound: what comes next may be held in memory again."""
        backlog = self.backlog
        return backlog.drained and (not self.failing or backlog.depth <= self.failing_bound // 2)

    def _spills(self) -> bool:
        """Whether the next share is spilled: from :attr:`behind` until :attr:`caught_up` (lock held)."""
        if self._spilling:
            if self.caught_up:
                self._spilling = False
                log.info(
                    "listener %s has caught up to %d events behind; holding what comes next in memory again",
                    self.name,
                    self.backlog.depth,
                )
        elif self.behind:
            self._spilling = True
            log.info(
                "listener %s is %d events (%d bytes) behind%s: reading what comes next again from the topic "
                "when it gets there, instead of holding it in memory",
                self.name,
                self.backlog.depth,
                self.backlog.bytes,
                " and failing" if self.failing else "",
            )
        return self._spilling

    @property
    def outstanding(self) -> int:
        """Events routed to this listener and not yet done with: queued (in memory or spilled), in hand, or
        dead letters not yet acknowledged."""
        return max(0, self.backlog.depth + self.letters.depth + self.spilled + self.parked - self._index)

    @property
    def depth(self) -> int:
        """Events queued in memory, and dead letters not yet acknowledged."""
        return self.backlog.depth + self.letters.depth

    @property
    def bytes(self) -> int:
        return self.backlog.bytes + self.letters.bytes

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
        items = share[1]
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
        with self._cond:
            self._cond.notify_all()

    def join(self, timeout: float) -> bool:
        """Wait for the current thread to finish; abandoned (timed-out) threads are not waited for."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _next(self, gen: int) -> Work | Spill | None:
        with self._cond:
            while not self._queue or self._paused:
                if self.services.stopping.is_set() or gen != self._gen:
                    return None
                self._cond.wait(0.5)
            if self.services.stopping.is_set():
                return None
            return self._queue.popleft()

    def _run(self, gen: int, resume: Resume | None) -> None:
        client = self.services.metastore()
        try:
            if resume is not None:
                share, index, attempts, error = resume
                if not self._process(gen, share, index, client, attempts, error):
                    return
            while True:
                work = self._next(gen)
                if work is None:
                    return
                if isinstance(work, Spill):
                    self._load(work)
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
                reader, owner = self._reader, gen == self._gen
            if reader is not None and owner:  # a thread the watchdog gave up never reads again
                self._reader = None
                reader.close()

    def _end_call(self, gen: int) -> None:
        """After every listener call: raise :class:`_Superseded` if the watchdog gave this thread up meanwhile."""
        with self._lock:
            if gen != self._gen:
                raise _Superseded
            self._started = None  # only the owner clears it: never wipe a newer thread's marker

    # -- spilled shares -------------------------------------------------------------------------------
    def wants(self, decoded: Decoded) -> bool:
        """Whether the runner routes ``decoded`` to this lane."""
        return self.listener.accepts(decoded)

    def _load(self, first: Spill) -> None:
        """Read ``first`` again, with the spills of its partition queued right after it (one read for all, up to
        half the lane's event bound, the smaller one while failing), and queue them at the front as shares.

        Only the run of spills at the queue's head is taken, so nothing jumps ahead of a share of its own
        partition that is in memory; shares of different partitions may swap, as their order never mattered.
        Spills are read together only while each begins where the last ended or later (a sideline's replay,
        queued behind live shares spilled further on, is read on its own: one read over both would end
        before it began).
        Loaded shares go back into the queue rather than being handled here, so that a thread the watchdog
        gives up in the middle of one leaves the rest to its successor.
        """
        tp, tracker = first.batch.tp, self.services.tracker
        with self._lock:
            taken, others = [first], []
            bound = self.failing_bound if self.failing else self.services.queue_events
            budget = max(bound // 2, first.events) - first.events
            queue = self._queue
            while queue and isinstance(head := queue[0], Spill):
                if head.batch.tp != tp:
                    others.append(head)
                elif head.events <= budget and head.start >= taken[-1].end:
                    budget -= head.events
                    taken.append(head)
                else:
                    break
                queue.popleft()
            queue.extendleft(reversed(others))
            self.spilled -= sum(spill.events for spill in taken)
        current = [spill for spill in taken if tracker.is_current(spill.batch)]
        records = self._read(tp, current[0].start, current[-1].end) if current else ()
        if records is None:
            return  # stopping: the batches stay unfinished, so they are not committed
        shares: dict[Batch, list[Item]] = {spill.batch: [] for spill in current}
        sizes = dict.fromkeys(shares, 0)
        bounds = iter(current)
        share: Spill | None = next(bounds, None)
        for record in records:
            value, offset = record.value(), record.offset() or 0
            while share is not None and offset >= share.end:
                share = next(bounds, None)
            if share is None:
                break
            if value is None or offset < share.start:
                continue  # between two shares: other lanes' records
            try:
                decoded = apiary.read(value)
            except DecodeError:
                continue  # dead-lettered by the runner when it was polled
            # A replay keeps the events its sideline skipped; anything else read again leaves out what the live
            # stream skipped (a sideline's events stay skipped when read again).
            keep, skipped = share.keep, self.skipped
            wanted = keep(decoded) if keep is not None else skipped is None or not skipped(tp, offset, decoded)
            if wanted and self.wants(decoded):
                shares[share.batch].append(Item.of(tp, record, value, decoded))
                sizes[share.batch] += len(value)
        loaded: list[Work] = []
        for spill in taken:
            items = shares.get(spill.batch)
            if items:
                loaded.append((spill.batch, items, sizes[spill.batch]))
            else:
                tracker.release(spill.batch)  # revoked, or nothing left for this lane (compacted away)
        with self._lock:
            for _, items, size in loaded:
                self.backlog.add(len(items), size)
            self._queue.extendleft(reversed(loaded))

    def _read(self, tp: TopicPartition, start: int, end: int) -> Sequence[Record] | None:
        """The records of a spilled share, trying until they are read; None if the app stops first."""
        stopping, delay = self.services.stopping, 1.0
        while not stopping.is_set():
            try:
                if self._reader is None:
                    self._reader = self.services.source.reader()
                return self._reader.read(tp, start, end, 10.0)
            except RecordsGoneError as e:
                log.error(
                    "listener %s fell so far behind that %s/%s offsets %d..%d were deleted before it got to "
                    "them; it never sees them: %s",
                    self.name,
                    tp[0],
                    tp[1],
                    start,
                    end - 1,
                    e,
                )
                return ()
            except Exception as e:
                log.warning(
                    "listener %s could not read %s/%s offsets %d..%d again (%s); trying again in %.0f s",
                    self.name,
                    tp[0],
                    tp[1],
                    start,
                    end - 1,
                    e,
                    delay,
                )
                stopping.wait(delay)
                delay = min(delay * 2, 30.0)
        return None

    # -- handling -------------------------------------------------------------------------------------
    def _process(
        self,
        gen: int,
        work: Work,
        start: int,
        client: MetastoreClient | None,
        attempts: int = 0,
        error: Exception | None = None,
    ) -> bool:
        """Handle ``items[start:]``; release the batch share when done. False: this thread must stop.

        ``error`` (with ``attempts``) resumes a call the watchdog gave up: ``items[start]`` goes straight to
        the retries.
        """
        batch, items, size = work
        tracker, stopping, handlers = self.services.tracker, self.services.stopping, self.listener.handlers
        lock = self._lock
        epoch, current = tracker.epoch, tracker.is_current(batch)
        monotonic = time.monotonic
        handled = 0
        finished: list[float] = []  # when each event was done: its latency, observed per event at the end
        self._share = work
        try:
            for i in range(start, len(items)):
                if stopping.is_set() or (self._paused and not self._wait_running()):
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
                        self.failing = False
                        continue
                    self.metrics.failed.inc()
                self.failing = True
                outcome = self._retry(gen, batch, item, view, handler, attempts, error)
                attempts, error = 0, None
                handled += outcome
                finished.append(monotonic())
                self.failing = not outcome
        except (_Stopping, _Superseded):
            return False
        finally:
            self.metrics.handled.inc(handled)
        self._share = None
        self._index = 0
        self.metrics.observe_latencies(batch.started, finished)
        self.backlog.add(-len(items), -size)
        tracker.release(batch)
        room = self.services.room
        if not room.is_set() and self.backlog.depth < self.services.pace_bound:
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
        work, index, attempt = resume_at
        log.error(
            "listener %s: call on %s did not return within %.1f s; abandoning that thread and continuing in a new one",
            self.name,
            work[1][index],
            self.timeout,
        )
        error = ListenerTimeout(f"{self.name} did not return within {self.timeout:g} s")
        self._spawn(gen, (work, index, attempt, error))

    def prune_abandoned(self) -> int:
        """Forget abandoned threads whose call finally returned; the number still running."""
        self._abandoned = [thread for thread in self._abandoned if thread.is_alive()]
        return len(self._abandoned)


class Watchdog(threading.Thread):
    """Checks every lane for calls that overran their timeout, and counts the threads abandoned per listener.

    Python cannot kill a thread, so every timeout leaves one behind until its call returns (if ever). Their
    number is the ``hivewire_listener_abandoned_threads`` gauge; above ``max_abandoned`` for one listener it
    is logged at CRITICAL and ``/health`` reports the app DOWN (only a restart reclaims them).
    """

    def __init__(self, lanes: Sequence[Lane], stopping: threading.Event, interval: float = 0.2) -> None:
        super().__init__(name="hivewire-watchdog", daemon=True)
        self._lanes = list(lanes)
        self._stopping = stopping
        self._interval = interval
        self._over_cap: set[str] = set()

    @property
    def over_cap(self) -> frozenset[str]:
        """The listeners with more abandoned threads still running than ``max_abandoned`` (at the last check)."""
        return frozenset(self._over_cap)

    def run(self) -> None:
        while not self._stopping.wait(self._interval):
            self.check(time.monotonic())

    def check(self, now: float) -> None:
        abandoned: dict[str, int] = {}
        for lane in self._lanes:
            lane.check_timeout(now)
            abandoned[lane.listener.name] = abandoned.get(lane.listener.name, 0) + lane.prune_abandoned()
        for lane in self._lanes:
            name = lane.listener.name
            if name not in abandoned:
                continue  # a listener with several lanes: done at its first
            count, cap = abandoned.pop(name), lane.services.max_abandoned
            lane.metrics.abandoned.set(count)
            if count > cap and name not in self._over_cap:
                self._over_cap.add(name)
                log.critical(
                    "listener %s has %d abandoned threads still stuck in calls (more than %d): the "
                    "process leaks threads; /health reports DOWN. Restart it, and find out why the "
                    "listener hangs (a call without a timeout of its own?)",
                    name,
                    count,
                    cap,
                )
            elif count <= cap:
                self._over_cap.discard(name)
