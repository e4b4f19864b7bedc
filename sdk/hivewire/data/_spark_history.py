"""The history on Spark: the ``hivewire`` streaming source written into a metastore table, exactly once.

The query's checkpoint holds the Kafka offsets of every micro-batch and the file sink's log lists the files of
every committed one, so a driver killed at any moment and restarted on the same checkpoint writes each message
exactly once, as Spark and every reader of the table through the metastore and Spark see it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

log = logging.getLogger("hivewire.spark.history")


@dataclass(frozen=True)
class HistorySettings:
    """What ``hivewire spark-history`` needs (docs/configuration.md, "History on Spark")."""

    bootstrap_servers: str
    topic: str
    table: str
    checkpoint: str
    consumer_config: dict[str, str] = field(default_factory=dict)
    max_events_per_trigger: int | None = None
    trigger_seconds: float = 10.0
    available_now: bool = False

    @classmethod
    def from_config(cls, config: Config) -> HistorySettings:
        """Validate and read the keys; raises :class:`~hivewire.errors.ConfigError` naming the key."""
        config.check_keys()
        table = config.read(keys.SPARK_HISTORY_TABLE)
        if table.count(".") != 1 or not all(table.split(".")):
            raise ConfigError(
                keys.SPARK_HISTORY_TABLE.name, f"must name a database and a table (db.table), not {table!r}"
            )
        return cls(
            bootstrap_servers=config.read(keys.BOOTSTRAP_SERVERS),
            topic=config.read(keys.TOPIC),
            table=table,
            checkpoint=config.read(keys.SPARK_HISTORY_CHECKPOINT),
            consumer_config=config.with_prefix(keys.CONSUMER_PREFIX.name),
            max_events_per_trigger=config.optional(keys.SPARK_HISTORY_MAX_EVENTS),
            trigger_seconds=config.read(keys.SPARK_HISTORY_INTERVAL),
            available_now=config.read(keys.SPARK_HISTORY_AVAILABLE_NOW),
        )


def start_history(spark: SparkSession, settings: HistorySettings) -> StreamingQuery:
    """Start the streaming query that appends the topic's events to ``settings.table``; returns it running.

    The table is created in the session's catalog when missing (parquet, partitioned by ``event_date``); a
    query restarted on the same checkpoint resumes after the last batch it committed.
    """
    from hivewire.data._spark import register

    register(spark)
    reader = (
        spark.readStream.format("hivewire")
        .option("kafka.bootstrap.servers", settings.bootstrap_servers)
        .option("topic", settings.topic)
    )
    for key, value in settings.consumer_config.items():
        reader = reader.option(f"kafka.{key}", value)
    if settings.max_events_per_trigger is not None:
        reader = reader.option("maxEventsPerTrigger", str(settings.max_events_per_trigger))
    writer = (
        reader.load()
        .writeStream.format("parquet")
        .partitionBy("event_date")
        .option("checkpointLocation", settings.checkpoint)
        .queryName(f"hivewire-history-{settings.table}")
    )
    if settings.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{settings.trigger_seconds:g} seconds")
    query = writer.toTable(settings.table)
    log.info("writing %s to %s (checkpoint %s)", settings.topic, settings.table, settings.checkpoint)
    return query


def run_history(spark: SparkSession, settings: HistorySettings, stop: threading.Event | None = None) -> None:
    """Run :func:`start_history` until ``stop`` is set (then stop the query) or, with ``available_now``, it ends.

    A query that fails raises here (Spark's ``StreamingQueryException``).
    """
    query = start_history(spark, settings)
    stop = stop or threading.Event()
    while query.isActive and not stop.is_set():
        query.awaitTermination(1.0)
    if query.isActive:
        query.stop()
    error = query.exception()
    if error is not None:
        raise error
