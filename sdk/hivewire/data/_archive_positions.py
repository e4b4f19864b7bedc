"""Where an archiver reads each partition it is assigned (:class:`Positions`): the next offset it expects, and,
after every assignment or seek, the check that the partition resumed where the Delta table says.

Exactly once rests on the position coming from the table. A seek that did not take effect (it failed, or raced
the fetcher) leaves the consumer where it was, and accepting what follows would skip the range between for
good: so the position is checked against the first message, not assumed.

Invariants:

* a message of a partition not assigned, or below the next offset expected, is refused (fetched before a
  re-seek or a revocation);
* after an assignment or a seek, the first message must be at the offset sought (the partition's low
  watermark when the table has none for it). Any other first message is refused, the partition re-sought, and
  nothing of it is taken until it resumes there; a first offset past the one sought is taken only when a
  *successful* re-seek delivers it again, which proves that nothing lies between on the broker. A failed
  re-seek proves nothing: the partition stays refused;
* what lies between, when the partition resumed past the offset sought, is said only when the broker deleted
  it (:func:`~hivewire.runtime._deleted.deleted_range`: retention): one ERROR line with the exact range; a
  skip over transaction markers or a compacted hole is no loss and is not reported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from hivewire.data._offsets import MissingRange
from hivewire.runtime._deleted import deleted_range

log = logging.getLogger("hivewire.archive")


def offset_beginning() -> int:
    """librdkafka's logical offset of a partition's first record (its low watermark)."""
    from confluent_kafka import OFFSET_BEGINNING

    return int(OFFSET_BEGINNING)


@dataclass
class _Start:
    """Where a partition must resume after an assignment or a seek, until its first message confirms it."""

    offset: int | None  # the table's next offset; None: none stored, so the partition's low watermark
    redelivered: int | None = None  # the refused first offset, once a re-seek succeeded
    reseek_batch: int = -1  # the consume() batch during which we re-sought


class Positions:
    """The read positions of one archiver's assigned partitions of ``topic``; ``consumer()`` is its consumer
    while it runs (None otherwise: nothing is sought or asked then)."""

    def __init__(self, topic: str, consumer: Callable[[], Any]) -> None:
        self.topic = topic
        self._consumer = consumer
        self.assigned: set[int] = set()
        #: First messages refused since this archiver started: not where the table says (then re-sought).
        self.refused = 0
        self._next: dict[int, int] = {}  # partition -> next offset expected (older deliveries are stale)
        self._starts: dict[int, _Start] = {}  # partitions whose position since the last seek is unconfirmed
        self._batch = 0  # consume() batches so far

    def assign(self, offsets: dict[int, int]) -> None:
        """The group assigned these partitions, each to be read from its offset (OFFSET_BEGINNING: its start)."""
        for partition, offset in offsets.items():
            self._expect(partition, offset)
        self.assigned = set(offsets)

    def drop(self, partitions: Iterable[int]) -> None:
        """These partitions are revoked or lost."""
        for p in partitions:
            self._next.pop(p, None)
            self._starts.pop(p, None)
            self.assigned.discard(p)

    def new_batch(self) -> None:
        """A consume() batch begins: what a re-seek refuses is refused for the rest of the batch it happened in."""
        self._batch += 1

    def takes(self, partition: int, offset: int) -> bool:
        """Whether the message at ``offset`` of ``partition`` is the next one to archive (the position moves
        past it); if not, it is refused, and the partition re-sought when it did not resume where expected."""
        if partition not in self.assigned or offset < self._next.get(partition, 0):
            return False  # fetched before a re-seek or a revocation
        if partition in self._starts and not self._resumes_where_expected(partition, offset):
            return False
        self._next[partition] = offset + 1
        return True

    def seek(self, partition: int, offset: int) -> None:
        """Continue ``partition`` from ``offset`` (OFFSET_BEGINNING: its start); the first message checks it."""
        self._expect(partition, offset)
        self._seek_consumer(partition, offset)

    def seek_past(self, partition: int, stored: int) -> None:
        """Another writer archived ``partition`` up to ``stored``, beyond what was read: continue after it."""
        if partition in self.assigned and self._next.get(partition, 0) <= stored:
            self.seek(partition, stored + 1)

    def _expect(self, partition: int, offset: int) -> None:
        self._next[partition] = max(offset, 0)
        self._starts[partition] = _Start(offset if offset >= 0 else None)

    def _resumes_where_expected(self, partition: int, offset: int) -> bool:
        """Whether the first message since ``partition``'s last assignment or seek, at ``offset``, is where the
        table says the partition resumes. If not, re-seek and refuse the message."""
        start = self._starts[partition]
        if start.reseek_batch == self._batch:
            return False  # fetched, in this same batch, before our re-seek
        expected = start.offset if start.offset is not None else self._first_retained(partition)
        if offset == expected:
            del self._starts[partition]
            return True
        where = f"offset {start.offset}" if start.offset is not None else f"the low watermark ({expected})"
        if offset == start.redelivered:
            # A successful re-seek to the table's position delivered the same first message: nothing lies
            # between on the broker.
            self._skipped(partition, expected, offset, where)
            del self._starts[partition]
            return True
        self.refused += 1
        log.warning(
            "%s/%d: the first message after seeking to %s is at offset %d: the seek did not take effect. "
            "Not archiving this partition until it resumes where the table says; seeking again",
            self.topic,
            partition,
            where,
            offset,
        )
        target = start.offset if start.offset is not None else offset_beginning()
        self._next[partition] = max(target, 0)
        start.redelivered = offset if self._seek_consumer(partition, target) else None
        start.reseek_batch = self._batch
        return False

    def _skipped(self, partition: int, expected: int | None, resumed: int, where: str) -> None:
        """``partition`` resumed at ``resumed``, past ``expected``, and nothing lies between on the broker: say
        what retention deleted there, if anything (transaction markers and compacted holes are no loss)."""
        deleted = None
        if expected is not None:
            deleted = deleted_range(expected, resumed, lambda: self._first_retained(partition))
        if deleted is None:
            log.debug(
                "%s/%d resumes at offset %d, not at %s: no record lies between", self.topic, partition, resumed, where
            )
            return
        log.error(
            "records lost to retention: %s were deleted by the broker before they were archived (%s/%d resumes "
            "at offset %d, not at %s); archiving from %d. Lengthen the topic's retention.ms, or keep the archive "
            "running; replay them from another copy if one exists",
            MissingRange(self.topic, partition, *deleted),
            self.topic,
            partition,
            resumed,
            where,
            resumed,
        )

    def _first_retained(self, partition: int) -> int | None:
        """The partition's first offset on the broker now (its low watermark), or None when it cannot be asked."""
        from confluent_kafka import KafkaException, TopicPartition

        consumer = self._consumer()
        if consumer is None:
            return None
        try:
            found = consumer.get_watermark_offsets(TopicPartition(self.topic, partition), timeout=10.0, cached=False)
        except KafkaException as e:
            log.warning("%s/%d: could not read the low watermark (%s)", self.topic, partition, e)
            return None
        return int(found[0]) if found else None

    def _seek_consumer(self, partition: int, offset: int) -> bool:
        from confluent_kafka import KafkaException, TopicPartition

        consumer = self._consumer()
        if consumer is None:
            return False
        try:
            consumer.seek(TopicPartition(self.topic, partition, offset))
        except KafkaException as e:
            log.warning(
                "seeking %s/%d to %d failed (%s): its messages are refused until it resumes there",
                self.topic,
                partition,
                offset,
                e,
            )
            return False
        return True
