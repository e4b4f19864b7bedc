"""What a lane holds of the records waiting for its listener: :class:`Item` (a polled record and its decoded
message), a share of a batch in memory (:data:`Work`) or only its offsets (:class:`Spill`, read again later),
and the :class:`Backlog` that bounds what is held in memory.

Invariants: an item is immutable and shared by every lane that gets it (each makes its own event of it); a
share holds one partition's records of one poll, in offset order; a spill names a range of one partition's
offsets, and its batch stays unfinished (nothing past it is committed) until the range is read again and
handled, or found revoked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

from hivewire.events._apiary import Decoded
from hivewire.events._model import ListenerEvent, Origin
from hivewire.metastore import MetastoreClient
from hivewire.runtime._source import MemoryRecord, Record, TopicPartition
from hivewire.runtime._tracker import Batch


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
