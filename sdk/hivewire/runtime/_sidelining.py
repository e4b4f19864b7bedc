"""One listener's sidelines on this instance: which live events it skips, and the replays it queues.

A sideline (``hivewire sideline start``, :class:`~hivewire.coordination.Sideline`) is followed by the polling
thread of every instance, for the partitions it holds:

- **started** (and **resumed**): the live stream skips the listener's matching events. The first offset skipped
  per partition is recorded in the sideline (``starts``) before anything past it is committed: the
  partition's commits are capped there until the store has it, so a ``kill -9`` cannot lose where it began.
- **resumed**: what was skipped up to the live position is queued to the listener's lane as chunks to read
  again (the lane's :class:`~hivewire.runtime._intake.Spill`, with the sideline as its filter): the replay runs
  alongside the live stream, which still skips, and records how far it got (``replayed``) as chunks are done.
- **resolved**: per partition, the live stream stops skipping at the next offset it dispatches, recorded as
  ``ends``, and what was skipped up to there is queued *before* that offset's events: the lane takes its queue
  in order, so a table's replayed events are handled before its live ones. The sideline is finished when the
  replay has reached ``ends`` everywhere.

A partition that changes hands (a rebalance, a restart) continues from the sideline's ``replayed`` on its new
owner, which queues the rest before the first events it dispatches. An event that matches several unfinished
sidelines of the listener belongs to the oldest.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hivewire.coordination._state import Sideline
from hivewire.events._apiary import Decoded
from hivewire.events._model import EventType
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._parking import Chunks
from hivewire.runtime._source import TopicPartition, partition_name
from hivewire.runtime._tracker import CommitTracker

if TYPE_CHECKING:
    from hivewire.runtime._lane import Lane
    from hivewire.runtime._membership import Membership

log = logging.getLogger("hivewire.runtime.sidelining")

_Key = tuple[str, TopicPartition]  # a sideline's id and a partition


class Sidelining:
    """``lane``'s sidelines (its listener's), followed on the polling thread; replays are read ``chunk``
    offsets at a time."""

    def __init__(
        self, lane: Lane, tracker: CommitTracker, membership: Membership, chunk: int, metrics: Metrics
    ) -> None:
        self.lane = lane
        self.metrics = metrics
        self.tracker = tracker
        self.membership = membership
        self.chunk = max(1, chunk)
        self.sidelines: tuple[Sideline, ...] = ()
        self._starts: dict[_Key, int] = {}  # where this instance began skipping (stored, or being stored)
        self._ends: dict[_Key, int] = {}  # where it stopped
        self._queued: dict[_Key, int] = {}  # the replay queued up to, for the partitions' current generation
        self._complete: set[_Key] = set()  # resolved, and replayed here up to this instance's end
        self._pending: dict[_Key, int] = {}  # replays queued here and not finished, per sideline and partition
        self._first: dict[tuple[str, str | None, EventType], Sideline | None] = {}
        #: Per sideline: offsets replayed here since the start, and offsets queued here and not yet replayed.
        self.replayed: dict[str, int] = {}
        self.remaining: dict[str, int] = {}

    @property
    def active(self) -> bool:
        return bool(self.sidelines)

    # -- following (polling thread) ---------------------------------------------------------------------------

    def update(self, sidelines: tuple[Sideline, ...], positions: Mapping[TopicPartition, int]) -> None:
        """The listener's unfinished sidelines now; ``positions``: the next offset to dispatch per partition."""
        before = {s.id: s.state for s in self.sidelines}
        self.sidelines = sidelines
        self._first = {}
        ids = {s.id for s in sidelines}
        for mapping in (self._starts, self._ends, self._queued):
            for key in [key for key in mapping if key[0] not in ids]:
                del mapping[key]
        self._complete = {key for key in self._complete if key[0] in ids}
        self._pending = {key: n for key, n in self._pending.items() if key[0] in ids}
        for sideline in sidelines:
            if before.get(sideline.id) != sideline.state:
                log.info("listener %s: sideline %s (%s) is %s", self.lane.name, sideline.id, sideline.describe(),
                         sideline.state)  # fmt: skip
            if sideline.state != "started":
                for tp, position in positions.items():
                    self._catch_up(sideline, tp, position)
            if sideline.state == "resolved":
                for key in [key for key in self._complete if key[0] == sideline.id]:
                    self._settle(sideline, key)

    def dispatching(self, tp: TopicPartition, first: int) -> None:
        """Before ``tp``'s events from offset ``first`` are dispatched: queue the replays due before them (the
        first time this instance dispatches ``tp``, or the first time since a sideline was resumed)."""
        for sideline in self.sidelines:
            if sideline.state != "started" and (sideline.id, tp) not in self._queued:
                self._catch_up(sideline, tp, first)

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        """``partitions`` changed hands: their replays continue on the new owner, from ``replayed``."""
        gone = set(partitions)
        for key in [key for key in self._queued if key[1] in gone]:
            del self._queued[key]
        self._complete = {key for key in self._complete if key[1] not in gone}
        self._pending = {key: n for key, n in self._pending.items() if key[1] not in gone}  # never called back

    def skips(self, tp: TopicPartition, offset: int, decoded: Decoded) -> bool:
        """Whether the live stream skips ``decoded`` (of ``tp`` at ``offset``) for this listener."""
        sideline = self.first_match(decoded)
        if sideline is None:
            return False
        key = (sideline.id, tp)
        start = self._start(sideline, key)
        if sideline.state == "resolved":
            end = self._end(sideline, key)
            return start is not None and end is not None and start <= offset < end
        if start is None:
            self._begin(sideline, tp, offset)
        return start is None or offset >= start

    def skipped(self, tp: TopicPartition, offset: int, decoded: Decoded) -> bool:
        """Whether the live stream skipped ``decoded`` (any thread: for a lane reading a range again)."""
        sideline = self.first_match(decoded)
        if sideline is None:
            return False
        key = (sideline.id, tp)
        start = self._start(sideline, key)
        if start is None or offset < start:
            return False
        if sideline.state == "resolved":
            end = self._end(sideline, key)
            return end is not None and offset < end
        return True

    def first_match(self, decoded: Decoded) -> Sideline | None:
        """The oldest unfinished sideline ``decoded`` belongs to, if any (cached per table and type)."""
        cache = (decoded.db_name, decoded.table_name, decoded.event_type)
        try:
            return self._first[cache]
        except KeyError:
            pass
        found = next(
            (s for s in self.sidelines if s.matches(decoded.db_name, decoded.table_name, decoded.event_type.value)),
            None,
        )
        self._first[cache] = found
        return found

    # -- offsets ----------------------------------------------------------------------------------------------

    def _settle(self, sideline: Sideline, key: _Key) -> None:
        """``key``'s replay is done up to this instance's end: past it, this instance dispatched everything live.
        Another instance that held the partition before may have recorded a later end first (the store keeps
        the first): the replay has then reached that one too, as far as this partition is concerned."""
        name = partition_name(key[1])
        ends = [end for end in (self._ends.get(key), sideline.ends.get(name)) if end is not None]
        if ends and sideline.replayed.get(name, -1) < max(ends):
            self.membership.record(sideline.id, replayed={name: max(ends)})

    def _start(self, sideline: Sideline, key: _Key) -> int | None:
        start = self._starts.get(key)
        return start if start is not None else sideline.starts.get(partition_name(key[1]))

    def _end(self, sideline: Sideline, key: _Key) -> int | None:
        end = self._ends.get(key)
        return end if end is not None else sideline.ends.get(partition_name(key[1]))

    def _begin(self, sideline: Sideline, tp: TopicPartition, offset: int) -> None:
        """Skipping begins at ``offset``: nothing past it is committed until the sideline has it."""
        key = (sideline.id, tp)
        self._starts[key] = offset
        holder = ("sideline", sideline.id, tp)
        self.tracker.cap(tp, holder, offset)
        log.info("listener %s: sideline %s skips %s from offset %d", self.lane.name, sideline.id,
                 partition_name(tp), offset)  # fmt: skip
        self.membership.record(
            sideline.id, starts={partition_name(tp): offset}, then=lambda: self.tracker.uncap(tp, holder)
        )

    def _catch_up(self, sideline: Sideline, tp: TopicPartition, position: int) -> None:
        """Queue ``sideline``'s replay of ``tp`` up to ``position`` (resumed), or up to its end (resolved: the
        end is ``position`` when this instance is the first to stop skipping ``tp``)."""
        key, name = (sideline.id, tp), partition_name(tp)
        start = self._start(sideline, key)
        if start is None:
            return  # nothing of tp was skipped (yet)
        queued = self._queued.get(key)
        begin = max(start, sideline.replayed.get(name, start), start if queued is None else queued)
        if sideline.state == "resolved":
            end = self._end(sideline, key)
            if end is None:
                end = self._ends[key] = position
                log.info("listener %s: sideline %s no longer skips %s from offset %d", self.lane.name, sideline.id,
                         name, end)  # fmt: skip
                self.membership.record(sideline.id, ends={name: end})
        else:
            end = position
        self._queued[key] = max(begin, end)
        if begin >= end:
            if sideline.state == "resolved" and not self._pending.get(key):
                self._complete.add(key)
                self._settle(sideline, key)
            return
        self._pending[key] = self._pending.get(key, 0) + 1
        sid = sideline.id
        self.remaining[sid] = self.remaining.get(sid, 0) + end - begin
        done = [begin]

        def progress(reached: int, finished: bool) -> None:
            self.replayed[sid] = self.replayed.get(sid, 0) + reached - done[0]
            self.remaining[sid] = max(0, self.remaining.get(sid, 0) - (reached - done[0]))
            done[0] = reached
            self.membership.record(sid, replayed={name: reached})
            if finished:
                self._pending[key] = self._pending.get(key, 1) - 1
                latest = next((s for s in self.sidelines if s.id == sid), None)
                if latest is not None and latest.state == "resolved" and not self._pending[key]:
                    self._complete.add(key)
                    self._settle(latest, key)

        replayed = self.metrics.replayed.labels(self.lane.name, sid)

        def keep(decoded: Decoded) -> bool:
            found = self.first_match(decoded)
            if found is None or found.id != sid:
                return False
            replayed.inc()
            return True

        chunks = Chunks(self.tracker, tp, begin, end, self.chunk, end - begin, progress).chunks
        log.info("listener %s: sideline %s replays %s offsets %d..%d", self.lane.name, sid, name, begin, end - 1)
        self.lane.replay(chunks, keep)
