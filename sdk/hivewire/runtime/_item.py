"""One polled record as the lanes hold it (:class:`Item`): the record and its decoded message.

Invariant: an item is immutable and shared by every lane that gets it; each lane makes its own event of it
(:meth:`Item.event`).
"""

from __future__ import annotations

from hivewire.events._apiary import Decoded
from hivewire.events._model import ListenerEvent, Origin
from hivewire.metastore import MetastoreClient
from hivewire.runtime._source import MemoryRecord, Record, TopicPartition


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

    def event(self, metastore: MetastoreClient | None) -> ListenerEvent:
        """A new event of this record for one listener, with ``metastore`` as its metastore client."""
        return self.decoded.event(Origin(self._topic, self._partition, self._offset, self._timestamp), metastore)

    def __repr__(self) -> str:
        return (
            f"{self.decoded.event_type.name} {self.decoded.qualified_name} at "
            f"{self._topic}/{self._partition}@{self._offset}"
        )
