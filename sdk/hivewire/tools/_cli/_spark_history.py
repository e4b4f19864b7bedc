"""``hivewire spark-history``: the topic's events into a metastore table on Spark, exactly once."""

from __future__ import annotations

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, stop_on_signals, usage

FLAGS: tuple[Flag, ...] = (
    *kafka_flags(consumer=False),  # no consumer group: the checkpoint holds the offsets
    Flag("--table", keys.SPARK_HISTORY_TABLE, metavar="DB.TABLE"),
    Flag("--checkpoint", keys.SPARK_HISTORY_CHECKPOINT, metavar="PATH"),
    Flag("--max-events-per-trigger", keys.SPARK_HISTORY_MAX_EVENTS, metavar="N"),
    Flag("--trigger-interval", keys.SPARK_HISTORY_INTERVAL, metavar="SECONDS"),
    Flag("--available-now", keys.SPARK_HISTORY_AVAILABLE_NOW, switch="true"),
    Flag("--master", keys.SPARK_MASTER, metavar="URL"),
    Flag("--zookeeper", keys.SPARK_ZOOKEEPER, metavar="HOST:PORT,..."),
    Flag("--namespace", keys.SPARK_NAMESPACE),
    Flag("--metastore-uris", keys.METASTORE_URIS, metavar="thrift://HOST:PORT,..."),
    Flag("--metastore-version", keys.SPARK_METASTORE_VERSION, metavar="RELEASE"),
    Flag("--conf", prefix=keys.SPARK_CONF_PREFIX, metavar="KEY=VALUE"),
)


@click.command("spark-history")
@options(FLAGS)
def spark_history(**params: object) -> None:
    """Stream the topic's events into a metastore table with Spark, exactly once (Spark's checkpoint).

    Starts a SparkSession on the metastores (found in ZooKeeper with --zookeeper, or --metastore-uris), then
    appends every message of the topic to --table, partitioned by event_date. Runs until SIGTERM or SIGINT,
    or with --available-now until it has written what the topic held at the start. Restart it on the same
    --checkpoint to resume. See docs/data.md.
    """
    try:
        from hivewire.data._spark import session
        from hivewire.data._spark_history import HistorySettings, run_history

        config = load(FLAGS, params)
        settings = HistorySettings.from_config(config)
        zookeeper = config.optional(keys.SPARK_ZOOKEEPER)
        uris = None if zookeeper is not None else config.optional(keys.METASTORE_URIS)
        if zookeeper is None and uris is None:
            raise ConfigError(keys.SPARK_ZOOKEEPER.name, f"set it or {keys.METASTORE_URIS.name} to find the metastore")
        # before Spark starts (tens of seconds): a SIGINT or SIGTERM meanwhile stops the command once it is up
        stop = stop_on_signals("hivewire.spark.history", "stopping the query")
        spark = session(
            zookeeper=zookeeper,
            namespace=config.read(keys.SPARK_NAMESPACE) if zookeeper is not None else None,
            uris=uris,
            app_name=f"hivewire-history-{settings.table}",
            master=config.optional(keys.SPARK_MASTER),
            conf=config.with_prefix(keys.SPARK_CONF_PREFIX.name),
            metastore_version=config.optional(keys.SPARK_METASTORE_VERSION),
        )
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    try:
        if not stop.is_set():
            run_history(spark, settings, stop)
    finally:
        spark.stop()
