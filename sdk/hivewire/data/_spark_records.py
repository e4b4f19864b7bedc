"""The records of one :class:`~hivewire.data._spark_plan.KafkaRange`, read on a Spark executor and handed to
Spark as Arrow record batches: decoded (:func:`read_range`, :data:`hivewire.arrow.SCHEMA`) or raw
(:func:`read_raw_range`, :data:`RAW_SCHEMA`).

Invariants: each offset of the range that holds a message within its time bounds is handed once, in offset
order, and none outside it; a message that does not decode becomes a row with ``decode_error`` and ``raw``,
never a failed task; a range whose first records the broker deleted after planning is reported
(:mod:`hivewire.data._spark_loss`), not skipped in silence; a range that yields nothing for ``timeoutSeconds``
fails with a line saying so; the consumer is closed before the read returns.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import InputPartition

from hivewire.data._columnar import BATCH_ROWS as COLUMNAR_BATCH_ROWS
from hivewire.data._columnar import message_row
from hivewire.data._decoder import decode
from hivewire.data._rows import Message, paused_gc
from hivewire.data._spark_consumer import make_consumer, raise_if_refused
from hivewire.data._spark_loss import check_resumed
from hivewire.data._spark_options import SourceOptions
from hivewire.data._spark_plan import KafkaRange
from hivewire.errors import HivewireError
from hivewire.events._event import Origin

#: The raw source's schema: Spark's Kafka source's columns, without ``headers``.
RAW_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, timestampType int"
)

#: Rows per Arrow record batch handed to Spark: the columnar decoder's batch (small batches keep its
#: intermediate rows in the CPU's caches).
BATCH_ROWS = COLUMNAR_BATCH_ROWS


def records(options: SourceOptions, part: KafkaRange) -> Iterator[list[Any]]:
    """The records of ``part`` (confluent-kafka messages) in offset order, in lists of at most
    :data:`BATCH_ROWS`, within its time bounds; a start the broker deleted meanwhile is reported."""
    from confluent_kafka import KafkaError, TopicPartition

    if part.end <= part.start:
        return
    consumer = make_consumer(options)
    bounded = part.since_ms is not None or part.until_ms is not None
    since = part.since_ms if part.since_ms is not None else -(1 << 62)
    until = part.until_ms if part.until_ms is not None else 1 << 62
    checked = False
    try:
        consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
        last_progress = time.monotonic()
        done = False
        next_offset = part.start
        while not done:
            # no more than the range still holds: the records past its end would be fetched and dropped
            batch = consumer.consume(min(BATCH_ROWS, max(1, part.end - next_offset)), timeout=1.0)
            if not batch and time.monotonic() - last_progress > options.timeout:
                raise HivewireError(
                    f"{part.topic}/{part.partition}: no message for {options.timeout:g} s while reading "
                    f"[{part.start}, {part.end}); raise the timeoutSeconds option if the brokers are slow"
                )
            out = []
            for msg in batch:
                err = msg.error()
                if err is not None:
                    raise_if_refused(options, err)
                    if err.code() == KafkaError._PARTITION_EOF:
                        # The rest of the range holds no message (compaction, transaction markers, retention).
                        if not checked:
                            checked = True
                            check_resumed(options, consumer, part, part.end)
                        done = True
                        break
                    if not err.retriable():
                        raise HivewireError(f"{part.topic}/{part.partition}: {err.str()}")
                    continue
                last_progress = time.monotonic()
                offset = msg.offset()
                next_offset = offset + 1
                if not checked:
                    checked = True
                    if offset > part.start:
                        check_resumed(options, consumer, part, offset)
                if offset < part.start:
                    continue
                if offset >= part.end:
                    done = True
                    break
                if offset == part.end - 1:
                    done = True
                if bounded:
                    kind, ts = msg.timestamp()
                    if not kind or ts < since or ts >= until:
                        if done:
                            break
                        continue
                out.append(msg)
                if done:
                    break
            if out:
                yield out
    finally:
        consumer.close()


def read_range(options: SourceOptions, part: KafkaRange, columns: list[str] | None = None) -> Iterator[Any]:
    """The messages of ``part`` as Arrow record batches of hivewire.arrow.SCHEMA (only ``columns`` when given:
    the others are not decoded), in offset order."""
    values: list[bytes | None] = []
    origins: list[Origin | None] = []
    topic, partition = part.topic, part.partition

    def decoded(n: int) -> Any:  # the first n messages' batch; a message the native decoder refuses is a Message
        head, where = values[:n], origins[:n]
        with paused_gc():
            return decode(head, where, lambda i: message_row(Message(where[i], head[i]), "record"), columns)

    for found in records(options, part):
        with paused_gc():
            for msg in found:
                kind, ts = msg.timestamp()
                values.append(msg.value())
                origins.append(Origin(topic, partition, msg.offset(), ts if kind else None))
        while len(values) >= BATCH_ROWS:
            yield decoded(BATCH_ROWS)
            del values[:BATCH_ROWS], origins[:BATCH_ROWS]
    if values:
        yield decoded(len(values))


def read_raw_range(options: SourceOptions, part: KafkaRange) -> Iterator[Any]:
    """The records of ``part`` as Arrow record batches of :data:`RAW_SCHEMA`, nothing decoded."""
    import pyarrow as pa

    types = (pa.binary(), pa.binary(), pa.string(), pa.int32(), pa.int64(), pa.timestamp("us", tz="UTC"), pa.int32())
    names = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")
    for found in records(options, part):
        n = len(found)
        stamps: list[int | None] = []
        kinds: list[int | None] = []
        for msg in found:
            kind, ts = msg.timestamp()
            # confluent-kafka: 0 none, 1 create time, 2 log append time; Spark's Kafka source: 0 and 1
            stamps.append(ts * 1000 if kind else None)
            kinds.append(kind - 1 if kind else None)
        columns = (
            [msg.key() for msg in found],
            [msg.value() for msg in found],
            [part.topic] * n,
            [part.partition] * n,
            [msg.offset() for msg in found],
            stamps,
            kinds,
        )
        arrays = [pa.array(values, type=t) for values, t in zip(columns, types, strict=True)]
        yield pa.RecordBatch.from_arrays(arrays, names=list(names))


def read(options: SourceOptions, partition: InputPartition, *, raw: bool, columns: list[str] | None) -> Iterator[Any]:
    """The batches of ``partition``; none for the one partition Spark plans, without ours, when there is nothing
    to read (an empty topic or range: the reader's ``partitions()`` returned no range)."""
    if not isinstance(partition, KafkaRange):
        return iter(())
    if raw:
        return read_raw_range(options, partition)
    return read_range(options, partition, columns)
