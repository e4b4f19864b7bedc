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

A call that raises is retried with exponential backoff (tenacity), then the record is dead-lettered with
the error; the lane's share of the batch is released only after that, and the dead letter holds the batch
(and stays in the lane's backlog, against its bounds) until the broker acknowledges it, so nothing is
committed before it is handled or dead-lettered. A share holds one partition's records of one poll. A call
that exceeds the listener's timeout counts as a failed attempt: the :class:`Watchdog` abandons the stuck
thread (Python cannot kill it) and starts a fresh one that continues with the same event.

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
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from hivewire.errors import DecodeError, RecordsGoneError
from hivewire.events import _apiary as apiary
from hivewire.events._apiary import Decoded
from hivewire.events._model import ListenerEvent, Origin
from hivewire.metastore import MetastoreClient
from hivewire.runtime._frames import user_traceback
from hivewire.runtime._listener import Handler, Listener, RetryPolicy
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._parking import Parked
from hivewire.runtime._source import MemoryRecord, Reader, Record, Source, TopicPartition
from hivewire.runtime._tracker import Batch, CommitTracker

log = logging.getLogger("hivewire.runtime.lane")


class Item(MemoryRecord, frozen=True, gc=False, kw_only=True):
    """One polled record as the lanes hold it: the record (what dead letters are made of) and its decoded message.

    One per record, shared by every lane that gets it; each lane makes its own event from it. Never tracked by
    the cyclic garbage collector: otherwise every collection scans a slow listener's whole backlog of Kafka
    messages and events, a cost that grows with the backlog (``bench_runtime.py`` reports the collector's share).
    """

    decoded: Decoded

    @classmethod
    def of(cls, tp: TopicPartition, record: Record, value: bytes, decoded: Decoded) -> Item:
        """The item of ``record`` (of partition ``tp``, whose ``value`` decoded to ``decoded``)."""
        kind, timestamp = record.timestamp()
        return cls(
            value, tp[0], tp[1], record.offset() or 0, timestamp if kind else None, record.key(), decoded=decoded
        )

    def event(self, handler: MetastoreClient | None) -> ListenerEvent:
        """A new event of this record for one listener, with ``handler`` as its metastore."""
        return self.decoded.event(Origin(self._topic, self._partition, self._offset, self._timestamp), handler)

    def __repr__(self) -> str:
        return (
            f"{self.decoded.event_type.name} {self.decoded.qualified_name} at "
            f"{self._topic}/{self._partition}@{self._offset}"
        )


Work = tuple[Batch, list[Item], int]  # a lane's share of a batch, and the bytes of its record values
Resume = tuple[Work, int, int, BaseException]  # share, index, attempts made, the error of the last one


class Spill(NamedTuple):
    """A share not kept in memory because its lane was over its bounds: read again when the lane gets to it.
    Also a chunk of what a paused lane let pass, or of a sideline's replay (``keep``: only the events it says)."""

    batch: Batch
    start: int  # the share's first offset
    end: int  # one past its last
    events: int
    keep: Callable[[Decoded], bool] | None = None


class _Stopping(Exception):
    """The app is stopping: leave the current event unfinished (it is not committed)."""


class _Superseded(Exception):
    """The watchdog replaced this thread after a timeout: stop touching the lane."""


class _Revoked(Exception):
    """The record's partition was revoked: its new owner handles it; neither retry nor dead-letter it."""


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
    queue_events: int
    queue_bytes: int
    app_name: str
    stopping: threading.Event
    metastore: Callable[[], MetastoreClient | None]
    fatal: Callable[[BaseException], None]
    max_abandoned: int = 8
    failing_bound: int = 500  # events a failing listener holds in memory: the runner's poll size
    pace_bound: int = 2000  # below this many queued events a listener needs more (Runner._pace)
    room: threading.Event = field(default_factory=threading.Event)  # set when one does
    # The first failures given up on, (listener, exception): hivewire.testing.run_app raises the first.
    failures: list[tuple[str, BaseException]] = field(default_factory=list)


class Backlog:
    """Events (and bytes of their records) out of the source's hands but not yet done with, under bounds.

    A lane's queue, its dead letters not yet acknowledged, or the undecodable records the runner dead-letters.
    When a queue is :attr:`full` its lane spills (or, with ``overflow=pause``, the runner pauses); when dead
    letters are, the runner pauses consumption until every backlog it watches is :attr:`drained`.
    """

    def __init__(self, name: str, max_events: int, max_bytes: int) -> None:
        self.name = name
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.depth = 0
        self.bytes = 0
        self._lock = threading.Lock()

    def add(self, events: int, size: int) -> None:
        with self._lock:
            self.depth += events
            self.bytes += size

    @property
    def full(self) -> bool:
        return self.depth >= self.max_events or self.bytes >= self.max_bytes

    @property
    def drained(self) -> bool:
        """At or below half of both bounds: consumption may resume."""
        return self.depth <= self.max_events // 2 and self.bytes <= self.max_bytes // 2


class Lane:
    """One worker of one listener."""

    def __init__(self, listener: Listener, index: int, services: LaneServices) -> None:
        self.listener = listener
        self.index = index
        self.name = listener.name
        self.services = services
        self.policy = listener.retry or services.retry
        self.timeout = listener.timeout or services.timeout
        self.metrics = services.metrics.for_listener(listener.name)
        self._queue: deque[Work | Spill] = deque()
        # A plain Lock under the Condition: workers take it after every call, and `with lock` is cheaper.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.backlog = Backlog(self.name, services.queue_events, services.queue_bytes)  # queued in memory
        self.letters = Backlog(self.name, services.queue_events, services.queue_bytes)  # dead letters in flight
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
        error: BaseException | None = None,
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
        handler: Callable[[Any], object],
        attempts: int,
        error: BaseException,
    ) -> int:
        """Retry ``view`` after ``attempts`` failed calls; 1 if a call succeeded, 0 if given up or revoked."""
        policy, tracker = self.policy, self.services.tracker
        # Failure handling runs at background priority: the GIL is given up before each retry and dead letter
        # (here and in _sleep), so a listener failing on every event (exceptions, tracebacks, dead letters) runs
        # on the CPU the healthy listeners leave idle (bench_runtime.py's isolation modes measure it).
        time.sleep(0)
        if isinstance(error, DecodeError) or attempts >= policy.max_attempts:
            return self._give_up(batch, record, error, attempts, handler)
        replay = [error]  # tenacity's first attempt re-raises the failure that brought us here

        def attempt() -> None:
            if replay:
                raise replay.pop()
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

        def retryable(e: BaseException) -> bool:
            return not isinstance(e, (DecodeError, _Stopping, _Superseded, _Revoked))

        def before_sleep(state: RetryCallState) -> None:
            self.metrics.retried.inc()
            log.debug(
                "listener %s failed on %s (attempt %d of %d): %r; retrying",
                self.name,
                view,
                self._attempt,
                policy.max_attempts,
                state.outcome.exception() if state.outcome else "?",
            )

        self._attempt = attempts
        retrying = Retrying(
            stop=stop_after_attempt(policy.max_attempts - attempts + 1),
            wait=lambda state: policy.delay(attempts - 1 + state.attempt_number),
            retry=retry_if_exception(retryable),
            sleep=self._sleep,
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            retrying(attempt)
            return 1
        except _Revoked:
            return self._revoked(record)
        except (_Stopping, _Superseded):
            raise  # not the listener's failure: _process stops this thread
        except Exception as final:
            return self._give_up(batch, record, final, self._attempt, handler)

    def _sleep(self, seconds: float) -> None:
        time.sleep(0)  # background priority (see _retry), also when the backoff is zero
        if self.services.stopping.wait(seconds):
            raise _Stopping

    def _revoked(self, record: Record) -> int:
        log.info(
            "listener %s: partition %s/%s was revoked while retrying offset %s; leaving it to the new owner",
            self.name,
            record.topic(),
            record.partition(),
            record.offset(),
        )
        return 0

    def _give_up(
        self, batch: Batch, record: Record, error: BaseException, attempts: int, handler: Handler | None = None
    ) -> int:
        tracker = self.services.tracker
        if not tracker.is_current(batch):
            # The new owner reads the record again; a dead letter from here would be a second, wrong verdict.
            return self._revoked(record)
        self.metrics.dead_lettered.inc()
        if len(self.services.failures) < 100:
            self.services.failures.append((self.listener.name, error))
        # The traceback once per event, at its final failure (retries log at DEBUG), and the line of the
        # listener's own code in the message itself, where a log search finds it. Only the user's frames:
        # the whole traceback (lanes, tenacity, concurrent.futures) is at DEBUG.
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
        headers = dead_letter_headers(self.services.app_name, self.listener.name, record, error, attempts)
        send_dead_letter(self.services.source, tracker, self.letters, batch, record, headers)
        return 0

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


def send_dead_letter(
    source: Source, tracker: CommitTracker, backlog: Backlog, batch: Batch, record: Record, headers: dict[str, str]
) -> None:
    """Publish ``record`` as a dead letter; until the broker acknowledges it, it holds ``batch`` (so nothing past
    it is committed) and counts in ``backlog`` (its record is held in memory for the resends, so the backlog
    bounds also cover dead letters piling up behind a broken topic)."""
    value = record.value()
    size = len(value) if value else 0
    backlog.add(1, size)

    def delivered() -> None:
        backlog.add(-1, -size)
        tracker.release(batch)

    tracker.hold(batch)
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
