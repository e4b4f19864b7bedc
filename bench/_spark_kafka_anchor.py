"""The anchor of bench_spark_source.py: what a Spark user writes without hivewire, and no hivewire code in it.

A plain PySpark Python data source (``bench_values``) that yields only the Kafka values (confluent-kafka on the
executors, Arrow record batches of one binary column, the same offset ranges as the ``hivewire`` source), then
Spark's own ``from_json`` with the schema Spark infers from the values (``spark.read.json``, once, outside the
timed reads). Every per-event step after the bytes is in the JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

NAME = "bench_values"


@dataclass(frozen=True)
class Range(InputPartition):
    topic: str
    partition: int
    start: int
    end: int


class ValueSource(DataSource):
    """``spark.read.format("bench_values").option("bootstrap", ...).option("topic", ...).option("splits", n)``."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return "value binary"

    def reader(self, schema: Any) -> ValueReader:
        return ValueReader(dict(self.options))


class ValueReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.options = options

    def partitions(self) -> list[Range]:
        from confluent_kafka import Consumer, TopicPartition

        topic, splits = self.options["topic"], int(self.options["splits"])
        consumer = Consumer({"bootstrap.servers": self.options["bootstrap"], "group.id": "bench-values"})
        try:
            parts = consumer.list_topics(topic, timeout=30).topics[topic].partitions
            marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30) for p in parts}
        finally:
            consumer.close()
        per = max(1, splits // len(marks))
        out = []
        for p, (low, high) in sorted(marks.items()):
            step = max(1, -(-(high - low) // per))
            out += [Range(topic, p, s, min(s + step, high)) for s in range(low, high, step)]
        return out

    def read(self, partition: Range) -> Iterator[Any]:  # type: ignore[override]
        import pyarrow as pa
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(
            {"bootstrap.servers": self.options["bootstrap"], "group.id": "bench-values", "enable.auto.commit": False}
        )
        try:
            consumer.assign([TopicPartition(partition.topic, partition.partition, partition.start)])
            offset = partition.start
            while offset < partition.end:
                # no more than the range holds: consume() waits for as many as it is asked for
                records = consumer.consume(min(10_000, partition.end - offset), timeout=10)
                values = []
                for msg in records:
                    if msg.error() or msg.offset() >= partition.end:
                        continue
                    values.append(msg.value())
                    offset = msg.offset() + 1
                if values:
                    yield pa.RecordBatch.from_arrays([pa.array(values, pa.binary())], names=["value"])
        finally:
            consumer.close()


def anchor_frame(spark: Any, bootstrap: str, topic: str, splits: int, schema: Any) -> Any:
    """The values, decoded by Spark's ``from_json`` with ``schema``: one column per top-level field."""
    from pyspark.sql import functions as F

    values = (
        spark.read.format(NAME).option("bootstrap", bootstrap).option("topic", topic).option("splits", splits).load()
    )
    return values.select(F.from_json(F.col("value").cast("string"), schema).alias("e")).select("e.*")


def inferred_schema(spark: Any, bootstrap: str, topic: str, splits: int) -> Any:
    """The schema Spark infers from the topic's values (what ``spark.read.json`` of them gives)."""
    values = (
        spark.read.format(NAME).option("bootstrap", bootstrap).option("topic", topic).option("splits", splits).load()
    )
    return spark.read.json(values.selectExpr("CAST(value AS STRING) AS v").rdd.map(lambda r: r.v)).schema
