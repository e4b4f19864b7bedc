"""The ``hivewire`` PySpark data sources: an Apiary topic as a DataFrame, in batch and as a stream.

Spark 4's Python Data Source API (``pyspark.sql.datasource``). Each Spark input partition is an offset range of
one Kafka partition (:class:`KafkaRange`, split when large), read on an executor by a confluent-kafka consumer
that is assigned the range (no group is joined, nothing is committed). Two sources share that reading:

* ``hivewire`` decodes each message in Python, with the columnar decoder (:mod:`hivewire.data._columnar`: no
  event or Thrift object per message), and hands Spark Arrow record batches of :data:`hivewire.arrow.SCHEMA`;
  a message that does not decode becomes a row with ``decode_error`` and ``raw``, never a failed task.
* ``hivewire_raw`` hands Spark only the records, as Arrow batches in the columns of Spark's own Kafka source
  (:data:`RAW_SCHEMA`: ``key``, ``value``, ``topic``, ``partition``, ``offset``, ``timestamp``,
  ``timestampType``); :func:`hivewire.spark.read` applies the projection of :mod:`hivewire.data._spark_sql` to
  them, so the per-event work runs in the JVM. A Python data source returns its final rows (Spark cannot add
  expressions inside it), hence two names.

Streaming offsets are ``{"<partition>": next offset}``: Spark stores them in its checkpoint, so a restarted
query re-reads exactly the ranges of its unfinished batch, and a sink that is exactly-once in Spark is
exactly-once here. Where each method runs matters: the DataSource and the readers are pickled between
Python processes, so a consumer is only ever created inside a call and closed before it returns.

Records the broker deleted before they were read are never skipped in silence: offsets to read below the first
one the broker holds (when the query is planned) and a range whose first records are gone when an executor
reads it (deleted in between) are reported as exact ranges per partition, ``[first, last]`` and the count: the
query fails with them (``failOnDataLoss``, the default), or one WARNING line says them and the rest is read.

Importing this module imports pyspark and pyarrow; :func:`hivewire.spark.register` does that on first use.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from hivewire.config._kafka import resolve_secrets
from hivewire.data._columnar import BATCH_ROWS as COLUMNAR_BATCH_ROWS
from hivewire.data._columnar import message_row
from hivewire.data._decoder import decode
from hivewire.data._rows import Message, paused_gc
from hivewire.errors import ConfigError, HivewireError
from hivewire.events._event import Origin
from hivewire.runtime._deleted import deleted_range

#: The format name: ``spark.read.format(NAME)``.
NAME = "hivewire"
#: The raw source's name: Kafka records only, in the columns of Spark's Kafka source.
RAW_NAME = "hivewire_raw"
#: The raw source's schema: Spark's Kafka source's columns, without ``headers``.
RAW_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, timestampType int"
)

#: The consumer group id the sources' consumers name: never joined and nothing committed, but librdkafka looks
#: the group's coordinator up, so a broker with ACLs must allow READ on it (``docs/data.md``).
GROUP = "hivewire-spark"

log = logging.getLogger("hivewire.spark")

#: Rows per Arrow record batch handed to Spark: the columnar decoder's batch (small batches keep its
#: intermediate rows in the CPU's caches).
BATCH_ROWS = COLUMNAR_BATCH_ROWS

_PREFIX = "kafka."


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


@dataclass(frozen=True)
class SourceOptions:
    """The data source's options, read from Spark's case-insensitive string options."""

    topic: str
    consumer: dict[str, str]
    starting_offsets: str
    ending_offsets: str
    starting_timestamp: int | None
    ending_timestamp: int | None
    max_events_per_split: int
    max_events_per_trigger: int | None
    fail_on_data_loss: bool
    timeout: float

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SourceOptions:
        """Read ``options`` (keys are case-insensitive), or raise ConfigError naming the bad one."""
        given = {k.lower(): v for k, v in options.items()}
        consumer = {k[len(_PREFIX) :]: v for k, v in given.items() if k.startswith(_PREFIX)}
        if "bootstrap.servers" not in consumer:
            raise ConfigError(
                "kafka.bootstrap.servers", 'set the Kafka brokers: .option("kafka.bootstrap.servers", "host:9092")'
            )
        topic = given.get("topic")
        if not topic:
            raise ConfigError("topic", 'set the Apiary topic: .option("topic", "apiary")')
        return cls(
            topic=topic,
            consumer=consumer,
            starting_offsets=given.get("startingoffsets", "earliest"),
            ending_offsets=given.get("endingoffsets", "latest"),
            starting_timestamp=_millis(given, "startingtimestamp"),
            ending_timestamp=_millis(given, "endingtimestamp"),
            max_events_per_split=_whole(given, "maxeventspersplit", 100_000),
            max_events_per_trigger=_whole(given, "maxeventspertrigger", None),
            fail_on_data_loss=_flag(given, "failondataloss", True),
            timeout=float(_whole(given, "timeoutseconds", 60)),
        )


def _whole(given: Mapping[str, str], key: str, default: int | None) -> Any:
    text = given.get(key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(key, f"must be a whole number of at least 1, not {text!r}")
    return value


def _flag(given: Mapping[str, str], key: str, default: bool) -> bool:
    text = given.get(key)
    if text is None:
        return default
    if text.lower() not in ("true", "false"):
        raise ConfigError(key, f"must be true or false, not {text!r}")
    return text.lower() == "true"


def _millis(given: Mapping[str, str], key: str) -> int | None:
    """A time bound: epoch milliseconds or an ISO 8601 time (naive = UTC), as ``read_events`` takes them."""
    from hivewire.data._offsets import to_millis

    text = given.get(key)
    if text is None:
        return None
    return to_millis(int(text) if text.lstrip("-").isdigit() else text)


def _consumer(options: SourceOptions, errors: list[Any] | None = None) -> Any:
    """A consumer with the source's settings; librdkafka's client errors (a refused password or certificate,
    which it retries for ever and never raises) are appended to ``errors`` when the caller serves them."""
    from confluent_kafka import Consumer

    from hivewire.runtime._kafka_refusal import RefusalLog

    # secrets as file:PATH / env:NAME are read where the consumer runs (the driver, each executor)
    conf: dict[str, Any] = {"group.id": GROUP, **resolve_secrets(options.consumer)}
    # librdkafka's line per retry of a refused login at DEBUG: the refusal is raised once, as one line
    conf["logger"] = RefusalLog(logging.getLogger("hivewire.kafka.librdkafka.spark"))
    if errors is not None:
        conf["error_cb"] = errors.append
    # confluent-kafka wants a group id even for assign(); these make sure it is never used: no subscribe(),
    # no commits, no stored offsets.
    conf.update({"enable.auto.commit": False, "enable.auto.offset.store": False, "enable.partition.eof": True})
    # A range whose first offsets the broker deleted after planning resumes at the first one it holds (never at
    # the end, librdkafka's default), and the executor's check reports what was deleted.
    conf["auto.offset.reset"] = "earliest"
    return Consumer(conf)


def _refused(options: SourceOptions, error: Any) -> None:
    """Raise one line naming what to grant or fix if Kafka refused the source for good (a missing ACL, ...)."""
    from hivewire.runtime._kafka_refusal import refusal

    found = refusal(
        error,
        servers=options.consumer["bootstrap.servers"],
        settings={"group.id": GROUP, **options.consumer},
        option="kafka.",
        operation="READ",
        resource=options.topic,
    )
    if found is not None:
        raise HivewireError(str(found))


def _check_group(consumer: Any, options: SourceOptions, partition: int) -> None:
    """Ask the group's committed offset of one partition, to raise a refusal of the group's ACL.

    The consumers name a group (librdkafka looks its coordinator up, which the group's ACL guards), and an
    executor's read fails on a refusal only if it comes before the read ends: asked here, on the driver, a
    missing grant fails the plan in one line every time. librdkafka does not answer ``committed()`` with the
    refusal (it times out) but serves it to ``poll()``: so asked in steps of a second, polling between them.
    Only a refusal matters; any other error (the coordinator moving) is not one and is left to the reads.
    """
    from confluent_kafka import KafkaException, TopicPartition

    deadline = time.monotonic() + options.timeout
    while True:
        step = max(0.1, min(1.0, deadline - time.monotonic()))
        try:
            asked = consumer.committed([TopicPartition(options.topic, partition)], timeout=step)
        except KafkaException as e:
            _refused(options, e.args[0])
            while (served := consumer.poll(0)) is not None:  # no partition is assigned: only client errors
                if served.error() is not None:
                    _refused(options, served.error())
            if time.monotonic() >= deadline:
                return
            continue
        for tp in asked:
            if tp.error is not None:
                _refused(options, tp.error)
        return


def _watermarks(options: SourceOptions) -> dict[int, tuple[int, int]]:
    """{partition: (low, high)} of the topic now."""
    from confluent_kafka import KafkaException

    from hivewire.data._offsets import _Reader

    errors: list[Any] = []
    consumer = _consumer(options, errors)
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
                    _refused(options, error)
                if time.monotonic() >= deadline:
                    _refused(options, e.args[0])
                    raise
        metadata = found.topics.get(options.topic)
        if metadata is not None and metadata.error is not None:
            _refused(options, metadata.error)
        try:
            # the metadata just read names the partitions; asking again only to raise its error when it has none
            ok = metadata is not None and metadata.error is None and metadata.partitions
            partitions = sorted(metadata.partitions) if ok else reader.partitions()
            _check_group(consumer, options, partitions[0])
            return {p: reader.watermarks(p) for p in partitions}
        except KafkaException as e:
            _refused(options, e.args[0])
            raise
    finally:
        consumer.close()


def _positions(spec: str, marks: dict[int, tuple[int, int]], default: int, what: str) -> dict[int, int]:
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


def _time_offsets(options: SourceOptions, marks: dict[int, tuple[int, int]], ms: int) -> dict[int, int]:
    """The first offset of each partition whose timestamp is at or after ``ms`` (the partition's end if none)."""
    from hivewire.data._offsets import _Reader

    consumer = _consumer(options)
    try:
        reader = _Reader(consumer, options.topic, options.timeout)
        return {p: reader.offset_for_time(p, ms, low, high) for p, (low, high) in marks.items()}
    finally:
        consumer.close()


def _split(options: SourceOptions, ranges: dict[int, tuple[int, int]], *, timed: bool) -> list[KafkaRange]:
    """One KafkaRange per non-empty partition range, split into pieces of at most ``maxEventsPerSplit``;
    ``timed``: keep only the messages within the time bounds (a batch read's, not a stream's)."""
    out = []
    size = options.max_events_per_split
    since, until = (options.starting_timestamp, options.ending_timestamp) if timed else (None, None)
    for p, (start, end) in sorted(ranges.items()):
        for piece in range(start, end, size):
            out.append(
                KafkaRange(
                    options.topic,
                    p,
                    piece,
                    min(piece + size, end),
                    since,
                    until,
                )
            )
    return out


def _ranges_text(topic: str, lost: Mapping[int, tuple[int, int]]) -> str:
    """``topic/0 offsets 10-19 (10 records), ...`` for {partition: (first, last)}."""
    return ", ".join(f"{topic}/{p} offsets {a}-{b} ({b - a + 1} records)" for p, (a, b) in sorted(lost.items()))


def _report_loss(options: SourceOptions, lost: Mapping[int, tuple[int, int]], when: str) -> None:
    """Raise (failOnDataLoss) or warn, once, about {partition: (first, last)} missing offsets."""
    if not lost:
        return
    detail = _ranges_text(options.topic, lost)
    if options.fail_on_data_loss:
        raise HivewireError(
            f"records to read were deleted by the broker (retention) {when}: {detail}. Lengthen the topic's "
            'retention.ms or read sooner; .option("failOnDataLoss", "false") reads what remains'
        )
    log.warning(
        "records lost to retention %s, skipped (failOnDataLoss=false): %s; their events are not in the result",
        when,
        detail,
    )


def _check_loss(options: SourceOptions, starts: dict[int, int], marks: dict[int, tuple[int, int]]) -> None:
    """Offsets to read below the first one the broker holds: the exact range per partition, reported."""
    lost = {p: (start, marks[p][0] - 1) for p, start in starts.items() if p in marks and start < marks[p][0]}
    _report_loss(options, lost, "before this query read them")


def _check_range_start(options: SourceOptions, consumer: Any, part: KafkaRange, resumed: int) -> None:
    """Executor side: reading ``part`` resumed at ``resumed`` > its start; report the deleted start, if any."""
    from confluent_kafka import TopicPartition

    def first_retained() -> int:
        low, _high = consumer.get_watermark_offsets(
            TopicPartition(part.topic, part.partition), timeout=options.timeout, cached=False
        )
        return int(low)

    deleted = deleted_range(part.start, resumed, first_retained, part.end)
    if deleted is not None:
        _report_loss(options, {part.partition: deleted}, "after this query was planned")


def _records(options: SourceOptions, part: KafkaRange) -> Iterator[list[Any]]:
    """Executor side: the records of ``part`` (confluent-kafka messages) in offset order, in lists of at most
    :data:`BATCH_ROWS`, within its time bounds; a start the broker deleted meanwhile is reported."""
    from confluent_kafka import KafkaError, TopicPartition

    if part.end <= part.start:
        return
    consumer = _consumer(options)
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
            records = consumer.consume(min(BATCH_ROWS, max(1, part.end - next_offset)), timeout=1.0)
            if not records and time.monotonic() - last_progress > options.timeout:
                raise HivewireError(
                    f"{part.topic}/{part.partition}: no message for {options.timeout:g} s while reading "
                    f"[{part.start}, {part.end}); raise the timeoutSeconds option if the brokers are slow"
                )
            out = []
            for msg in records:
                err = msg.error()
                if err is not None:
                    _refused(options, err)
                    if err.code() == KafkaError._PARTITION_EOF:
                        # The rest of the range holds no message (compaction, transaction markers, retention).
                        if not checked:
                            checked = True
                            _check_range_start(options, consumer, part, part.end)
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
                        _check_range_start(options, consumer, part, offset)
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
    """Executor side: the messages of ``part`` as Arrow record batches of hivewire.arrow.SCHEMA (only
    ``columns`` when given: the others are not decoded), in offset order."""
    values: list[bytes | None] = []
    origins: list[Origin | None] = []
    topic, partition = part.topic, part.partition

    def decoded(n: int) -> Any:  # the first n messages' batch; a message the native decoder refuses is a Message
        head, where = values[:n], origins[:n]
        with paused_gc():
            return decode(head, where, lambda i: message_row(Message(where[i], head[i]), "record"), columns)

    for records in _records(options, part):
        with paused_gc():
            for msg in records:
                kind, ts = msg.timestamp()
                values.append(msg.value())
                origins.append(Origin(topic, partition, msg.offset(), ts if kind else None))
        while len(values) >= BATCH_ROWS:
            yield decoded(BATCH_ROWS)
            del values[:BATCH_ROWS], origins[:BATCH_ROWS]
    if values:
        yield decoded(len(values))


def read_raw_range(options: SourceOptions, part: KafkaRange) -> Iterator[Any]:
    """Executor side: the records of ``part`` as Arrow record batches of :data:`RAW_SCHEMA`, nothing decoded."""
    import pyarrow as pa

    types = (pa.binary(), pa.binary(), pa.string(), pa.int32(), pa.int64(), pa.timestamp("us", tz="UTC"), pa.int32())
    names = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")
    for records in _records(options, part):
        n = len(records)
        stamps: list[int | None] = []
        kinds: list[int | None] = []
        for msg in records:
            kind, ts = msg.timestamp()
            # confluent-kafka: 0 none, 1 create time, 2 log append time; Spark's Kafka source: 0 and 1
            stamps.append(ts * 1000 if kind else None)
            kinds.append(kind - 1 if kind else None)
        columns = (
            [msg.key() for msg in records],
            [msg.value() for msg in records],
            [part.topic] * n,
            [part.partition] * n,
            [msg.offset() for msg in records],
            stamps,
            kinds,
        )
        arrays = [pa.array(values, type=t) for values, t in zip(columns, types, strict=True)]
        yield pa.RecordBatch.from_arrays(arrays, names=list(names))


def _read(options: SourceOptions, partition: InputPartition, *, raw: bool, columns: list[str] | None) -> Iterator[Any]:
    """The batches of ``partition``; none for the one partition Spark plans, without ours, when there is nothing
    to read (an empty topic or range: :meth:`BatchReader.partitions` returned no range)."""
    if not isinstance(partition, KafkaRange):
        return iter(())
    if raw:
        return read_raw_range(options, partition)
    return read_range(options, partition, columns)


class BatchReader(DataSourceReader):
    """``spark.read.format("hivewire")``: the range is fixed when the query is planned."""

    def __init__(self, options: SourceOptions, raw: bool = False, columns: list[str] | None = None) -> None:
        self.source = options
        self.raw = raw
        self.columns = columns

    def partitions(self) -> list[KafkaRange]:
        options = self.source
        marks = _watermarks(options)
        if options.starting_timestamp is not None:
            starts = _time_offsets(options, marks, options.starting_timestamp)
        else:
            starts = _positions(options.starting_offsets, marks, 0, "startingOffsets")
            _check_loss(options, starts, marks)
        if options.ending_timestamp is not None:
            ends = _time_offsets(options, marks, options.ending_timestamp)
        else:
            ends = _positions(options.ending_offsets, marks, 1, "endingOffsets")
        ranges = {p: (max(starts[p], marks[p][0]), min(ends[p], marks[p][1])) for p in marks}
        return _split(options, ranges, timed=True)

    def read(self, partition: KafkaRange) -> Iterator[Any]:
        return _read(self.source, partition, raw=self.raw, columns=self.columns)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("hivewire")``: offsets are ``{"<partition>": next offset}`` (JSON keys are strings)."""

    def __init__(self, options: SourceOptions, raw: bool = False, columns: list[str] | None = None) -> None:
        self.source = options
        self.raw = raw
        self.columns = columns
        self.target: dict[str, int] | None = None

    def initialOffset(self) -> dict[str, int]:
        options = self.source
        marks = _watermarks(options)
        if options.starting_timestamp is not None:
            starts = _time_offsets(options, marks, options.starting_timestamp)
        else:
            starts = _positions(options.starting_offsets, marks, 0, "startingOffsets")
        return {str(p): max(o, marks[p][0]) for p, o in starts.items()}

    def getDefaultReadLimit(self) -> ReadLimit:
        n = self.source.max_events_per_trigger
        return ReadAllAvailable() if n is None else ReadMaxRows(n)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = {str(p): high for p, (_, high) in _watermarks(self.source).items()}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        marks = _watermarks(self.source)
        latest = {str(p): high for p, (_, high) in marks.items()}
        if self.target is not None:  # Trigger.AvailableNow: stop at what was there when the query started
            latest = {p: min(high, self.target.get(p, high)) for p, high in latest.items()}
        # A partition new since the last batch starts at its earliest offset.
        begin = {str(p): int(start.get(str(p), low)) for p, (low, _) in marks.items()}
        if not isinstance(limit, ReadMaxRows):
            return {p: max(begin[p], latest[p]) for p in latest}
        return _admit(begin, latest, limit.max_rows)

    def reportLatestOffset(self) -> dict[str, int]:
        return {str(p): high for p, (_, high) in _watermarks(self.source).items()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[KafkaRange]:
        options = self.source
        marks = _watermarks(options)
        starts = {int(p): int(start.get(p, marks.get(int(p), (0, 0))[0])) for p in end}
        _check_loss(options, starts, marks)
        ranges = {int(p): (max(starts[int(p)], marks.get(int(p), (0, 0))[0]), int(e)) for p, e in end.items()}
        # The starting time only chose the first offsets: a late message with an older timestamp is still read.
        return _split(options, ranges, timed=False)

    def read(self, partition: KafkaRange) -> Iterator[Any]:
        return _read(self.source, partition, raw=self.raw, columns=self.columns)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to do: the checkpoint is the truth, and the source never commits to Kafka."""


def _admit(begin: dict[str, int], latest: dict[str, int], budget: int) -> dict[str, int]:
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


class HivewireDataSource(DataSource):
    """Metastore events from an Apiary Kafka topic; the schema is hivewire.arrow.SCHEMA in Spark types."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        from hivewire.data._spark_schema import _events_schema

        return _events_schema()

    def reader(self, schema: Any) -> BatchReader:
        return BatchReader(SourceOptions.parse(self.options), columns=requested_columns(schema))

    def streamReader(self, schema: Any) -> StreamReader:
        return StreamReader(SourceOptions.parse(self.options), columns=requested_columns(schema))


def requested_columns(schema: Any) -> list[str] | None:
    """The columns a schema given to the reader asks for (``spark.read.format("hivewire").schema(...)``): None
    for all of them; only those are decoded. Each must be a column of hivewire.arrow.SCHEMA, with its type."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from hivewire.data._schema import SCHEMA

    asked = to_arrow_schema(schema, timezone="UTC")
    if asked.equals(SCHEMA):
        return None
    wrong = [f"{f.name} {f.type}" for f in asked if f.name not in SCHEMA.names or SCHEMA.field(f.name).type != f.type]
    if wrong or list(asked.names) != [n for n in SCHEMA.names if n in set(asked.names)]:
        raise ConfigError(
            "schema",
            f"format('{NAME}').schema(...) names columns of hivewire.arrow.SCHEMA, with their types, in the "
            f"schema's order; these are not: {wrong or list(asked.names)}. Leave the schema out to read every "
            "column, or select() the columns you need from the full schema",
        )
    return list(asked.names)


class HivewireRawDataSource(HivewireDataSource):
    """The records of an Apiary topic, undecoded, in the columns of Spark's Kafka source (:data:`RAW_SCHEMA`):
    :func:`hivewire.spark.read` projects them onto SPARK_SCHEMA in the JVM. Same options as ``hivewire``."""

    @classmethod
    def name(cls) -> str:
        return RAW_NAME

    def schema(self) -> Any:
        return RAW_SCHEMA

    def reader(self, schema: Any) -> BatchReader:
        return BatchReader(SourceOptions.parse(self.options), raw=True)

    def streamReader(self, schema: Any) -> StreamReader:
        return StreamReader(SourceOptions.parse(self.options), raw=True)
