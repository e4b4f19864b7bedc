"""Records the broker deleted before this consumer group read them: found, measured exactly, reported.

A group that stops for longer than the topic's retention (or whose records ``delete_records`` removed) comes
back to a committed offset the broker no longer holds, and librdkafka moves the position on
(``auto.offset.reset``) without telling the application. The watch reads the committed offset of each partition
when it is assigned; the first record read from the partition afterwards shows where reading resumed. When it
resumed past the committed offset and the broker's first retained offset lies above the committed one (records
deleted, not a transaction marker or a compacted hole: :func:`~hivewire.runtime._deleted.deleted_range`), the
exact range from the committed offset to the last one deleted before the first read is reported: one ERROR
line naming the partition, the offsets and the count, and
``hivewire_kafka_records_missing_total{topic,partition}``.

Invariants: each assignment of a partition is checked once, on its first record; once every assigned partition
has given a record the watch costs nothing per poll. Not covered: a consumer that keeps its partitions while it
falls behind retention (the broker deletes ahead of a slow reader); the lag metrics show that one coming.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from hivewire.runtime._deleted import deleted_range
from hivewire.runtime._source import TopicPartition as TP

log = logging.getLogger("hivewire.kafka")

#: Told of each missing range: the partition, its first and last missing offsets.
Missing = Callable[[TP, int, int], None]


class RetentionWatch:
    """Finds the records of assigned partitions that were deleted before the group read them."""

    def __init__(self, on_missing: Missing | None = None) -> None:
        self._expected: dict[TP, int] = {}
        self._on_missing = on_missing
        #: Every range reported so far: (topic, partition, first, last).
        self.reported: list[tuple[str, int, int, int]] = []

    def assigned(self, consumer: Consumer, partitions: Sequence[TopicPartition]) -> None:
        """Note the group's committed offsets of newly assigned ``partitions`` (in the rebalance callback)."""
        if not partitions:
            return
        try:
            committed = consumer.committed(list(partitions), timeout=10)
        except KafkaException as e:  # the coordinator is away: this assignment goes unchecked, said at DEBUG
            log.debug("could not read committed offsets to check for records lost to retention: %s", e)
            return
        for tp in committed:
            if tp.error is None and tp.offset >= 0:
                self._expected[(tp.topic, tp.partition)] = tp.offset

    def revoked(self, partitions: Sequence[TopicPartition]) -> None:
        for tp in partitions:
            self._expected.pop((tp.topic, tp.partition), None)

    def check(self, consumer: Consumer, records: Sequence[Any]) -> None:
        """Compare each assigned partition's first record with its committed offset (a no-op once all were)."""
        if not self._expected:
            return
        for record in records:
            key = (record.topic(), record.partition())
            expected = self._expected.pop(key, None)
            if expected is not None:
                self._confirm(consumer, key, expected, record.offset())
            if not self._expected:
                return

    def _confirm(self, consumer: Consumer, key: TP, expected: int, resumed: int) -> None:
        def first_retained() -> int | None:
            try:
                low, _end = consumer.get_watermark_offsets(TopicPartition(*key), timeout=10, cached=False)
            except KafkaException as e:
                log.debug("could not read the first retained offset of %s/%d: %s", *key, e)
                return None
            return int(low)

        deleted = deleted_range(expected, resumed, first_retained)
        if deleted is None:
            return
        last = deleted[1]
        self.reported.append((*key, expected, last))
        log.error(
            "records lost to retention: %s/%d offsets %d-%d (%d records) were deleted by the broker before this "
            "group read them (it resumed at %d); their events never reach the listeners. Lengthen the topic's "
            "retention.ms, or keep the group running; replay them from another copy if one exists",
            key[0],
            key[1],
            expected,
            last,
            last - expected + 1,
            resumed,
        )
        if self._on_missing is not None:
            self._on_missing(key, expected, last)
