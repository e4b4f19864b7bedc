"""Positions in a topic: time bounds as Kafka milliseconds, watermarks, the offset for a time, and the ranges a
read asked for that the broker no longer holds.

Shared by :func:`~hivewire.data.read_events` (one process) and the Spark data source (its planner), so both
give a time bound the same meaning. A :class:`MissingRange` is always exact: its first offset was asked for,
its last is the one before the first offset the broker still held, and it is only reported when the broker's
first retained offset lies above the first one asked for (records deleted, not a transaction marker or a
compacted hole).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from hivewire.errors import ConfigError, HivewireError

# The logger of read_events, whose positions these were first.
log = logging.getLogger("hivewire.notebook")

TimeBound = datetime | date | timedelta | int | float | str


def to_millis(bound: TimeBound, *, now: float | None = None) -> int:
    """A time bound as Kafka milliseconds since the epoch.

    ``datetime`` (naive ones are taken as UTC, like Kafka's timestamps), ``date`` (its UTC midnight), an ISO
    8601 string, a ``timedelta`` (that long before now), or a number of milliseconds since the epoch.
    """
    if isinstance(bound, bool):
        raise TypeError("a time bound cannot be a bool")
    if isinstance(bound, (int, float)):
        return int(bound)
    if isinstance(bound, timedelta):
        return int(((time.time() if now is None else now) - bound.total_seconds()) * 1000)
    if isinstance(bound, str):
        try:
            bound = datetime.fromisoformat(bound.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError("since/until", f"not an ISO 8601 time: {bound!r}") from None
    if isinstance(bound, datetime):
        if bound.tzinfo is None:
            bound = bound.replace(tzinfo=timezone.utc)
        return int(bound.timestamp() * 1000)
    if isinstance(bound, date):
        return int(datetime(bound.year, bound.month, bound.day, tzinfo=timezone.utc).timestamp() * 1000)
    raise TypeError(
        f"a time bound is a datetime, date, timedelta, ISO string or epoch milliseconds, not {type(bound).__name__}"
    )


@dataclass(frozen=True, order=True)
class MissingRange:
    """Offsets ``first`` to ``last`` (both included) of one partition, asked for but deleted by the broker."""

    topic: str
    partition: int
    first: int
    last: int

    @property
    def count(self) -> int:
        """How many offsets the range spans."""
        return self.last - self.first + 1

    def __str__(self) -> str:
        return f"{self.topic}/{self.partition} offsets {self.first}-{self.last} ({self.count} records)"


def report_missing(missing: list[MissingRange], reader: str) -> None:
    """One WARNING line naming every range ``reader`` asked for and the broker no longer held."""
    if missing:
        log.warning(
            "records lost to retention: %s asked for %s, which the broker had deleted (%d records in all); "
            "their events are not in the result. Lengthen the topic's retention.ms, or read them from another copy",
            reader,
            ", ".join(str(m) for m in missing),
            sum(m.count for m in missing),
        )


def _check(err: Any, what: str) -> None:
    if err is not None:
        from confluent_kafka import KafkaException

        raise HivewireError(f"{what}: {err}") from KafkaException(err)


class _Reader:
    """One bounded read: positions per partition, then the consume loop."""

    def __init__(self, consumer: Any, topic: str, timeout: float) -> None:
        self.consumer = consumer
        self.topic = topic
        self.timeout = timeout
        # Whether the brokers look offsets up by time: a property of the cluster, so probed once per read.
        self.by_time: bool | None = None

    def partitions(self) -> list[int]:
        metadata = self.consumer.list_topics(self.topic, timeout=self.timeout)
        topic = metadata.topics.get(self.topic)
        if topic is None or topic.error is not None or not topic.partitions:
            reason = topic.error if topic is not None and topic.error is not None else "no such topic"
            raise HivewireError(f"cannot read topic {self.topic!r}: {reason}")
        return sorted(topic.partitions)

    def watermarks(self, partition: int) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        low, high = self.consumer.get_watermark_offsets(
            TopicPartition(self.topic, partition), timeout=self.timeout, cached=False
        )
        return int(low), int(high)

    def timestamp_at(self, partition: int, offset: int, high: int) -> tuple[int, int | None] | None:
        """(offset, timestamp) of the first message at or after ``offset`` and before ``high``, else None."""
        from confluent_kafka import KafkaError, TopicPartition

        self.consumer.assign([TopicPartition(self.topic, partition, offset)])
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for msg in self.consumer.consume(1, timeout=min(1.0, self.timeout)):
                err = msg.error()
                if msg.partition() != partition:
                    continue
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        return None
                    continue
                if msg.offset() >= high:
                    return None
                kind, ts = msg.timestamp()
                return msg.offset(), (ts if kind else None)
        raise HivewireError(f"{self.topic}/{partition}: no message at offset {offset} within {self.timeout} s")

    def searches_by_time(self, partition: int, low: int, high: int) -> bool:
        """Whether the broker can look offsets up by time, probed on the non-empty ``partition`` [low, high).

        For time 0 a real broker names the partition's first offset. librdkafka's mock cluster answers "after
        the end" for every time; a broker too old for ListOffsets by time fails the request. Either way the
        answer is no, and :meth:`offset_for_time` searches the messages' timestamps instead, which is slower
        but finds the same offsets.
        """
        from confluent_kafka import KafkaException, TopicPartition

        if self.by_time is not None:
            return self.by_time
        assert low < high, "probe a non-empty partition: an empty one names no offset on any broker"
        reason = ""
        try:
            (found,) = self.consumer.offsets_for_times([TopicPartition(self.topic, partition, 0)], timeout=self.timeout)
        except KafkaException as e:
            reason = f"the request failed: {e}"
        else:
            if found.error is not None:
                reason = f"the request failed: {found.error}"
            elif found.offset < 0:
                reason = "it names no offset for time 0 in a non-empty partition"
        self.by_time = not reason
        if reason:
            log.warning(
                "%s: the broker cannot look offsets up by time (%s); searching message timestamps instead",
                self.topic,
                reason,
            )
        return self.by_time

    def broker_offset_for_time(self, partition: int, ms: int) -> int:
        """The broker's answer (Kafka's time index): the first offset at or after ``ms``, or -1 for none."""
        from confluent_kafka import KafkaException, TopicPartition

        try:
            (found,) = self.consumer.offsets_for_times(
                [TopicPartition(self.topic, partition, ms)], timeout=self.timeout
            )
        except KafkaException as e:
            raise HivewireError(
                f"{self.topic}/{partition}: looking up the offset for time {ms} failed ({e}); "
                f"check that the brokers are reachable, or raise timeout= (now {self.timeout:g} s)"
            ) from e
        _check(found.error, f"offsets_for_times({self.topic}/{partition})")
        return int(found.offset)

    def offset_for_time(self, partition: int, ms: int, low: int, high: int) -> int:
        """The first offset in [low, high) whose message timestamp is at or after ``ms``, else ``high``.

        Asks the broker (ListOffsets by time: Kafka's time index). For a broker that cannot answer, a binary
        search over the messages' timestamps finds the same offset, assuming (as Kafka's time index does)
        that timestamps grow with offsets.
        """
        if low >= high:
            return high
        if self.searches_by_time(partition, low, high):
            found = self.broker_offset_for_time(partition, ms)
            return high if found < 0 else max(low, min(found, high))
        # Smallest o in [low, high] such that reading from o starts at a message at or after ms (or at the end).
        last = self.timestamp_at(partition, high - 1, high)
        if last is not None and (last[1] is None or last[1] < ms):
            return high  # the common "after everything" case, in one probe
        lo, hi = low, high
        while lo < hi:
            mid = (lo + hi) // 2
            probe = self.timestamp_at(partition, mid, high)
            if probe is None or (probe[1] is not None and probe[1] >= ms):
                hi = mid
            else:
                lo = min(probe[0] + 1, hi)  # every offset in [mid, probe offset] starts at this older message
        return lo
