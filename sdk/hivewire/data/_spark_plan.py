"""The plan of a Spark read of a topic: which offsets of which partitions it reads, as :class:`KafkaRange`\\ s.

Runs on the driver. A batch query's offsets come from its ``startingOffsets``/``endingOffsets`` (or its time
bounds) within the partitions' watermarks when it is planned; a stream's from its checkpointed offsets
``{"<partition>": next offset}`` and, with ``maxEventsPerTrigger``, a budget shared fairly (:func:`admit`).

Invariants: a range is ``[start, end)`` of one partition, never empty, at most ``maxEventsPerSplit`` long, and
the ranges of one plan neither overlap nor leave a gap between the offsets planned; a :class:`KafkaRange` is
plain data (Spark pickles it to the executor that reads it, which imports this module).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import InputPartition

from hivewire.data._offsets import _Reader
from hivewire.data._spark_consumer import check_group, make_consumer, raise_if_refused
from hivewire.data._spark_options import SourceOptions
from hivewire.errors import ConfigError

#: {partition: (low, high)}: the first offset the broker holds and the next it will write.
Watermarks = dict[int, tuple[int, int]]


@dataclass(frozen=True)
class KafkaRange(InputPartition):
    """One Spark input partition: offsets ``[start, end)`` of one Kafka partition, and optional time bounds.

    Plain data, because Spark pickles it to the executor that reads it.
    """

    topic: str
    partition: int
    start: int
    end: int
    since_ms: int | None = None
    until_ms: int | None = None


def watermarks(options: SourceOptions) -> Watermarks:
    """{partition: (low, high)} of the topic now; a refusal of the topic or the group raised in one line."""
    from confluent_kafka import KafkaException

    errors: list[Any] = []
    consumer = make_consumer(options, errors)
    try:
        reader = _Reader(consumer, options.topic, options.timeout)
        deadline = time.monotonic() + options.timeout
        while True:  # in steps of a second: a refused login is said at once, not after the whole timeout
            try:
                found = consumer.list_topics(options.topic, timeout=max(0.1, min(1.0, deadline - time.monotonic())))
                break
            except KafkaException as e:
                # A wrong password or an untrusted certificate reaches only the error callback, which poll serves.
                consumer.poll(0.1)
                for error in errors:
                    raise_if_refused(options, error)
                if time.monotonic() >= deadline:
                    raise_if_refused(options, e.args[0])
                    raise
        metadata = found.topics.get(options.topic)
        if metadata is not None and metadata.error is not None:
            raise_if_refused(options, metadata.error)
        try:
            # the metadata just read names the partitions; asking again only to raise its error when it has none
            ok = metadata is not None and metadata.error is None and metadata.partitions
            partitions = sorted(metadata.partitions) if ok else reader.partitions()
            check_group(consumer, options, partitions[0])
            return {p: reader.watermarks(p) for p in partitions}
        except KafkaException as e:
            raise_if_refused(options, e.args[0])
            raise
    finally:
        consumer.close()


def positions(spec: str, marks: Watermarks, default: int, what: str) -> dict[int, int]:
    """Offsets per partition from ``earliest``, ``latest`` or JSON ``{"0": 12}`` (-2 earliest, -1 latest)."""
    if spec == "earliest":
        return {p: low for p, (low, _) in marks.items()}
    if spec == "latest":
        return {p: high for p, (_, high) in marks.items()}
    try:
        given = {int(k): int(v) for k, v in json.loads(spec).items()}
    except (ValueError, AttributeError, TypeError):
        raise ConfigError(what, f'must be earliest, latest or JSON like {{"0": 12, "1": -2}}, not {spec!r}') from None
    out = {}
    for p, (low, high) in marks.items():
        value = given.get(p, -2 if default == 0 else -1)
        out[p] = low if value == -2 else high if value == -1 else value
    return out


def time_offsets(options: SourceOptions, marks: Watermarks, ms: int) -> dict[int, int]:
    """The first offset of each partition whose timestamp is at or after ``ms`` (the partition's end if none)."""
    consumer = make_consumer(options)
    try:
        reader = _Reader(consumer, options.topic, options.timeout)
        return {p: reader.offset_for_time(p, ms, low, high) for p, (low, high) in marks.items()}
    finally:
        consumer.close()


def split(options: SourceOptions, ranges: dict[int, tuple[int, int]], *, timed: bool) -> list[KafkaRange]:
    """One KafkaRange per non-empty partition range, split into pieces of at most ``maxEventsPerSplit``;
    ``timed``: keep only the messages within the time bounds (a batch read's, not a stream's)."""
    out = []
    size = options.max_events_per_split
    since, until = (options.starting_timestamp, options.ending_timestamp) if timed else (None, None)
    for p, (start, end) in sorted(ranges.items()):
        for piece in range(start, end, size):
            out.append(KafkaRange(options.topic, p, piece, min(piece + size, end), since, until))
    return out


def admit(begin: dict[str, int], latest: dict[str, int], budget: int) -> dict[str, int]:
    """Ends that admit at most ``budget`` messages, shared fairly among the partitions that have some."""
    end = dict(begin)
    left = {p: max(0, latest[p] - begin[p]) for p in begin}
    while budget > 0 and any(left.values()):
        open_ = [p for p in sorted(left, key=int) if left[p]]
        share = max(1, budget // len(open_))
        for p in open_:
            take = min(share, left[p], budget)
            end[p] += take
            left[p] -= take
            budget -= take
            if budget == 0:
                break
    return end
