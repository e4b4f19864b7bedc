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

The source in modules, one idea each: its options (:mod:`~hivewire.data._spark_options`), its Kafka consumers
(:mod:`~hivewire.data._spark_consumer`), the plan of a read on the driver (:mod:`~hivewire.data._spark_plan`),
the records of a range on an executor (:mod:`~hivewire.data._spark_records`) and what the broker deleted before
it was read (:mod:`~hivewire.data._spark_loss`); this module adapts them to Spark's classes.

Invariant: the classes Spark pickles (the readers, :class:`~hivewire.data._spark_plan.KafkaRange`, the options)
are importable under their module path in the Python workers, and hold no consumer.

Importing this module imports pyspark and pyarrow; :func:`hivewire.spark.register` does that on first use.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from hivewire.data._spark_loss import check_planned
from hivewire.data._spark_options import SourceOptions
from hivewire.data._spark_plan import KafkaRange, admit, positions, split, time_offsets, watermarks
from hivewire.data._spark_records import RAW_SCHEMA, read
from hivewire.errors import ConfigError

#: The format name: ``spark.read.format(NAME)``.
NAME = "hivewire"
#: The raw source's name: Kafka records only, in the columns of Spark's Kafka source.
RAW_NAME = "hivewire_raw"


class BatchReader(DataSourceReader):
    """``spark.read.format("hivewire")``: the range is fixed when the query is planned."""

    def __init__(self, options: SourceOptions, raw: bool = False, columns: list[str] | None = None) -> None:
        self.source = options
        self.raw = raw
        self.columns = columns

    def partitions(self) -> list[KafkaRange]:
        options = self.source
        marks = watermarks(options)
        if options.starting_timestamp is not None:
            starts = time_offsets(options, marks, options.starting_timestamp)
        else:
            starts = positions(options.starting_offsets, marks, 0, "startingOffsets")
            check_planned(options, starts, marks)
        if options.ending_timestamp is not None:
            ends = time_offsets(options, marks, options.ending_timestamp)
        else:
            ends = positions(options.ending_offsets, marks, 1, "endingOffsets")
        ranges = {p: (max(starts[p], marks[p][0]), min(ends[p], marks[p][1])) for p in marks}
        return split(options, ranges, timed=True)

    def read(self, partition: KafkaRange) -> Iterator[Any]:
        return read(self.source, partition, raw=self.raw, columns=self.columns)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("hivewire")``: offsets are ``{"<partition>": next offset}`` (JSON keys are strings)."""

    def __init__(self, options: SourceOptions, raw: bool = False, columns: list[str] | None = None) -> None:
        self.source = options
        self.raw = raw
        self.columns = columns
        self.target: dict[str, int] | None = None

    def initialOffset(self) -> dict[str, int]:
        options = self.source
        marks = watermarks(options)
        if options.starting_timestamp is not None:
            starts = time_offsets(options, marks, options.starting_timestamp)
        else:
            starts = positions(options.starting_offsets, marks, 0, "startingOffsets")
        return {str(p): max(o, marks[p][0]) for p, o in starts.items()}

    def getDefaultReadLimit(self) -> ReadLimit:
        n = self.source.max_events_per_trigger
        return ReadAllAvailable() if n is None else ReadMaxRows(n)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = {str(p): high for p, (_, high) in watermarks(self.source).items()}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        marks = watermarks(self.source)
        latest = {str(p): high for p, (_, high) in marks.items()}
        if self.target is not None:  # Trigger.AvailableNow: stop at what was there when the query started
            latest = {p: min(high, self.target.get(p, high)) for p, high in latest.items()}
        # A partition new since the last batch starts at its earliest offset.
        begin = {str(p): int(start.get(str(p), low)) for p, (low, _) in marks.items()}
        if not isinstance(limit, ReadMaxRows):
            return {p: max(begin[p], latest[p]) for p in latest}
        return admit(begin, latest, limit.max_rows)

    def reportLatestOffset(self) -> dict[str, int]:
        return {str(p): high for p, (_, high) in watermarks(self.source).items()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[KafkaRange]:
        options = self.source
        marks = watermarks(options)
        starts = {int(p): int(start.get(p, marks.get(int(p), (0, 0))[0])) for p in end}
        check_planned(options, starts, marks)
        ranges = {int(p): (max(starts[int(p)], marks.get(int(p), (0, 0))[0]), int(e)) for p, e in end.items()}
        # The starting time only chose the first offsets: a late message with an older timestamp is still read.
        return split(options, ranges, timed=False)

    def read(self, partition: KafkaRange) -> Iterator[Any]:
        return read(self.source, partition, raw=self.raw, columns=self.columns)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to do: the checkpoint is the truth, and the source never commits to Kafka."""


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
