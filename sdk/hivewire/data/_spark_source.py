"""The ``hivewire`` PySpark data source: an Apiary topic as a DataFrame, in batch and as a stream.

Spark 4's Python Data Source API (``pyspark.sql.datasource``). Each Spark input partition is an offset range of
one Kafka partition (:class:`KafkaRange`, split when large), read on an executor by a confluent-kafka consumer
that is assigned the range (no group is joined, nothing is committed), decoded by the Apiary codec and handed
to Spark as Arrow record batches of :data:`hivewire.arrow.SCHEMA` by the columnar decoder
(:mod:`hivewire.data._columnar`: no event or Thrift object per message). A message that does not decode
becomes a row with ``decode_error`` and ``raw``, never a failed task.

Streaming offsets are ``{"<partition>": next offset}``: Spark stores them in its checkpoint, so a restarted
query re-reads exactly the ranges of its unfinished batch, and a sink that is exactly-once in Spark is
exactly-once here. Where each method runs matters: the DataSource and the readers are pickled between
Python processes, so a consumer is only ever created inside a call and closed before it returns.

Importing this module imports pyspark and pyarrow; :func:`hivewire.spark.register` does that on first use.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from hivewire.data._columnar import BATCH_ROWS as COLUMNAR_BATCH_ROWS
from hivewire.data._columnar import batch, message_row
from hivewire.data._rows import Message, paused_gc
from hivewire.errors import ConfigError, HivewireError
from hivewire.events._event import Origin

#: The format name: ``spark.read.format(NAME)``.
NAME = "hivewire"

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


def _consumer(options: SourceOptions) -> Any:
    from confluent_kafka import Consumer

    conf: dict[str, str | bool] = {"group.id": "hivewire-spark", **options.consumer}
    # confluent-kafka wants a group id even for assign(); these make sure it is never used: no subscribe(),
    # no commits, no stored offsets.
    conf.update({"enable.auto.commit": False, "enable.auto.offset.store": False, "enable.partition.eof": True})
    return Consumer(conf)


def _watermarks(options: SourceOptions) -> dict[int, tuple[int, int]]:
    """{partition: (low, high)} of the topic now."""
    from hivewire.data._offsets import _Reader

    consumer = _consumer(options)
    try:
        reader = _Reader(consumer, options.topic, options.timeout)
        return {p: reader.watermarks(p) for p in reader.partitions()}
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


def _check_loss(options: SourceOptions, starts: dict[int, int], marks: dict[int, tuple[int, int]]) -> None:
    lost = {p: (start, marks[p][0]) for p, start in starts.items() if p in marks and start < marks[p][0]}
    if lost and options.fail_on_data_loss:
        detail = ", ".join(f"partition {p} from {s} (earliest now {low})" for p, (s, low) in sorted(lost.items()))
        raise HivewireError(
            f"{options.topic}: messages to read are gone from Kafka (retention): {detail}. "
            'Set .option("failOnDataLoss", "false") to read what remains'
        )


def read_range(options: SourceOptions, part: KafkaRange) -> Iterator[Any]:
    """Executor side: the messages of ``part`` as Arrow record batches of hivewire.arrow.SCHEMA, in offset order."""
    from confluent_kafka import KafkaError, TopicPartition

    if part.end <= part.start:
        return
    consumer = _consumer(options)
    rows: list[tuple[object, ...]] = []
    try:
        consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
        last_progress = time.monotonic()
        done = False
        while not done:
            with paused_gc():
                records = consumer.consume(min(BATCH_ROWS, part.end - part.start), timeout=1.0)
                if not records and time.monotonic() - last_progress > options.timeout:
                    raise HivewireError(
                        f"{part.topic}/{part.partition}: no message for {options.timeout:g} s while reading "
                        f"[{part.start}, {part.end}); raise the timeoutSeconds option if the brokers are slow"
                    )
                for msg in records:
                    err = msg.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            # The rest of the range holds no message (compaction, transaction markers, retention).
                            done = True
                            break
                        if not err.retriable():
                            raise HivewireError(f"{part.topic}/{part.partition}: {err.str()}")
                        continue
                    last_progress = time.monotonic()
                    offset = msg.offset()
                    if offset < part.start:
                        continue
                    if offset >= part.end:
                        done = True
                        break
                    kind, ts = msg.timestamp()
                    ts = ts if kind else None
                    if offset == part.end - 1:
                        done = True
                    if (part.since_ms is not None or part.until_ms is not None) and (
                        ts is None
                        or (part.since_ms is not None and ts < part.since_ms)
                        or (part.until_ms is not None and ts >= part.until_ms)
                    ):
                        continue
                    rows.append(
                        message_row(Message(Origin(part.topic, part.partition, offset, ts), msg.value()), "record")
                    )
                    if done:
                        break
            if len(rows) >= BATCH_ROWS or (done and rows):
                yield batch(rows)
                rows = []
    finally:
        consumer.close()


class BatchReader(DataSourceReader):
    """``spark.read.format("hivewire")``: the range is fixed when the query is planned."""

    def __init__(self, options: SourceOptions) -> None:
        self.source = options

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
        return read_range(self.source, partition)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("hivewire")``: offsets are ``{"<partition>": next offset}`` (JSON keys are strings)."""

    def __init__(self, options: SourceOptions) -> None:
        self.source = options
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
        return read_range(self.source, partition)

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
        return BatchReader(SourceOptions.parse(self.options))

    def streamReader(self, schema: Any) -> StreamReader:
        return StreamReader(SourceOptions.parse(self.options))
