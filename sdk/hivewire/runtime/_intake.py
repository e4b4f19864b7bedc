"""What a lane holds of the records waiting for its listener: the :class:`Intake` (its queue, bounds, spills,
parked ranges and replays), shared by every way of running listeners (the executors in ``_worker.py`` and
``_scheduler.py`` take from it); what it holds, a :class:`~hivewire.runtime._share.Share` of a batch in memory
or only its offsets (:class:`Spill`, read again later); and the :class:`Backlog` that bounds what is held in
memory.

Invariants: a spill names a range of one partition's offsets and carries its share's part of the batch, so
the batch stays unfinished (nothing past it is committed) until the range is read again and handled, or found
revoked (the commit rule is :class:`~hivewire.runtime._share.Share`'s).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import NamedTuple

from hivewire.errors import DecodeError, RecordsGoneError
from hivewire.events import _apiary as apiary
from hivewire.events._apiary import Decoded
from hivewire.runtime._item import Item
from hivewire.runtime._listener import Listener
from hivewire.runtime._parking import Parked
from hivewire.runtime._services import LaneServices
from hivewire.runtime._share import Share
from hivewire.runtime._source import Reader, Record, TopicPartition
from hivewire.runtime._tracker import Batch

log = logging.getLogger("hivewire.runtime.lane")


class Spill(NamedTuple):
    """A share not kept in memory because its lane was over its bounds: read again when the lane gets to it.
    Also a chunk of what a paused lane let pass, or of a sideline's replay (``keep``: only the events it says)."""

    batch: Batch
    start: int  # the share's first offset
    end: int  # one past its last
    events: int
    keep: Callable[[Decoded], bool] | None = None


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
        self.lock = threading.Lock()

    def add(self, events: int, size: int) -> None:
        with self.lock:
            self.depth += events
            self.bytes += size

    @property
    def full(self) -> bool:
        return self.depth >= self.max_events or self.bytes >= self.max_bytes

    @property
    def drained(self) -> bool:
        """At or below half of both bounds: consumption may resume."""
        return self.depth <= self.max_events // 2 and self.bytes <= self.max_bytes // 2


class Intake:
    """What one lane holds of the records waiting for its listener, and its bounds: the queue of shares and
    spills, the parked ranges while paused, the replays, and the reader of what is read again.

    Shared by the lane's executor (one thread, or the scheduler's intake thread) and the polling thread, under
    :attr:`lock`; the executor takes from it with :meth:`next` and :meth:`load` and tells it :attr:`failing`.
    Invariants: within the queue, one partition's shares and spills keep their offset order; every share
    queued in memory counts in :attr:`backlog` until its executor releases it; every spill counts in
    :attr:`spilled` until it is read again.
    """

    def __init__(self, listener: Listener, services: LaneServices) -> None:
        self.listener = listener
        self.name = listener.name
        self.services = services
        self._queue: deque[Share | Spill] = deque()
        # A plain Lock under the Condition: workers take it after every call, and `with lock` is cheaper.
        self.lock = threading.Lock()
        self._cond = threading.Condition(self.lock)
        self.backlog = Backlog(self.name, services.queue_events, services.queue_bytes)  # queued in memory
        self.spilled = 0  # events queued as spills, to be read again
        self._spilling = False
        # A listener failing on every event will not catch up soon, and every event held for it costs the
        # others (fresh memory, page faults): since its last failure, with no success after it, it holds at
        # most one poll's worth in memory before spilling. Written by the executor, read by the runner's thread.
        self.failing = False
        self.failing_bound = min(services.failing_bound, services.queue_events)
        self._reader: Reader | None = None
        #: Switched off (:meth:`pause`): written under the lock, read by the executor before each event.
        self.paused = False
        self._parked: dict[TopicPartition, Parked] = {}
        self.parked = 0  # events let pass while paused, to be read again on resuming
        # With sidelines: whether the live stream skipped an event (partition, offset), set by the runner.
        self.skipped: Callable[[TopicPartition, int, Decoded], bool] | None = None

    # -- feeding --------------------------------------------------------------------------------------
    def submit(self, share: Share, may_spill: bool = False) -> None:
        """Queue a share; with ``may_spill``, as a :class:`Spill` while this lane is over its bounds."""
        items = share.items
        with self._cond:
            if self.paused:
                self._park(share)
                self._cond.notify()
                return
            if may_spill and self._spills():
                self._queue.append(Spill(share.batch, items[0]._offset, items[-1]._offset + 1, len(items)))
                self.spilled += len(items)
            else:
                self._queue.append(share)
                self.backlog.add(len(items), share.size)
            self._cond.notify()

    def _park(self, share: Share) -> None:
        """Paused: extend the partition's parked range over this share instead of queueing it (lock held)."""
        batch, items, tracker = share.batch, share.items, self.services.tracker
        parked = self._parked.get(batch.tp)
        if parked is None or not parked.current:
            parked = self._parked[batch.tp] = Parked(tracker, batch, items[0]._offset)
        parked.add(batch.end, len(items))
        self.parked += len(items)
        Share.let_go(tracker, batch)  # the parked range's cap holds the commits instead

    def replay(self, chunks: Sequence[tuple[Batch, int, int, int]], keep: Callable[[Decoded], bool]) -> None:
        """Queue ``chunks`` of a partition to read again (what ``keep`` says of them), behind what is queued."""
        with self._cond:
            for batch, start, end, events in chunks:
                self._queue.append(Spill(batch, start, end, events, keep))
                self.spilled += events
            self._cond.notify()

    def pause(self) -> None:
        """Finish the call in progress, then take nothing more until :meth:`resume` (what arrives meanwhile is
        parked: offsets only)."""
        with self._cond:
            self.paused = True

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
            self.paused = False
            self._cond.notify_all()

    def wait_running(self) -> bool:
        """Wait while paused; False if the app stops meanwhile."""
        stopping = self.services.stopping
        with self._cond:
            while self.paused and not stopping.is_set():
                self._cond.wait(0.5)
        return not stopping.is_set()

    @property
    def spilling(self) -> bool:
        return self._spilling

    @property
    def behind(self) -> bool:
        """At its in-memory bound (the smaller one while :attr:`failing`): what comes next spills, or waits."""
        backlog = self.backlog
        return self.paused or backlog.full or (self.failing and backlog.depth >= self.failing_bound)

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

    def next(self, owner: Callable[[], bool]) -> Share | Spill | None:
        """The next share or spill to handle, waiting for one (and while paused); None when the app stops or
        ``owner()`` says (under the lock) that the calling thread no longer owns the lane."""
        with self._cond:
            while not self._queue or self.paused:
                if self.services.stopping.is_set() or not owner():
                    return None
                self._cond.wait(0.5)
            if self.services.stopping.is_set():
                return None
            return self._queue.popleft()

    def load(self, first: Spill) -> None:
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
        with self.lock:
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
            if wanted and self.listener.accepts(decoded):
                shares[share.batch].append(Item.of(tp, record, value, decoded))
                sizes[share.batch] += len(value)
        loaded: list[Share] = []
        for spill in taken:
            items = shares.get(spill.batch)
            if items:
                loaded.append(Share(tracker, spill.batch, items, sizes[spill.batch]))  # the spill's part goes on
            else:
                Share.let_go(tracker, spill.batch)  # revoked, or nothing left for this lane (compacted away)
        with self.lock:
            for ready in loaded:
                self.backlog.add(len(ready.items), ready.size)
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

    def wake(self) -> None:
        """Wake a thread waiting in :meth:`next` or :meth:`wait_running` (to see that the app stops)."""
        with self._cond:
            self._cond.notify_all()

    def close_reader(self) -> None:
        """Close the reader of what is read again (the executor's thread, as it ends); a later read opens one."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
