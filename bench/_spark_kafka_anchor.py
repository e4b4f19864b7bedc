"""The anchor of bench_spark_source.py: Spark's own Kafka source plus hivewire's projection in Spark SQL.

What a Spark user writes without hivewire's reader: ``spark.read.format("kafka")`` (spark-sql-kafka-0-10), then
``hivewire.spark.from_kafka`` (``from_json`` with a schema derived from hivewire's own description of the event
types, then one SQL expression per column of ``hivewire.spark.SPARK_SCHEMA``; ``hivewire.data._spark_sql``).
Every value is computed in the JVM: it is the measure of the per-event work on the JVM side, against which the
``hivewire`` sources (which read Kafka with confluent-kafka on the executors) are compared.
"""

from __future__ import annotations

from typing import Any

from hivewire.data._spark_sql import from_kafka, message_schema, projection

__all__ = ["kafka_frame", "message_schema", "projection"]


def kafka_frame(spark: Any, bootstrap: str, topic: str, partitions: int) -> Any:
    """Spark's Kafka source and from_json, projected onto SPARK_SCHEMA (name for name, type for type)."""
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("minPartitions", str(partitions))
        .load()
    )
    return from_kafka(frame)
