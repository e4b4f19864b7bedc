"""``hivewire spark-history``: the topic's events into a metastore table on Spark, exactly once.

Invariant: SIGINT and SIGTERM only ask the query to stop, from the start on. The SparkSession is made on a
thread of its own: PySpark puts a SIGINT handler of its own in place when a SparkContext is made on the main
thread, and that handler makes a Py4J call from inside the signal (a "reentrant call" error while the main
thread waits on Py4J) and raises KeyboardInterrupt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

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
        spark = _off_the_main_thread(
            lambda: session(
                zookeeper=zookeeper,
                namespace=config.read(keys.SPARK_NAMESPACE) if zookeeper is not None else None,
                uris=uris,
                app_name=f"hivewire-history-{settings.table}",
                master=config.optional(keys.SPARK_MASTER),
                conf=config.with_prefix(keys.SPARK_CONF_PREFIX.name),
                metastore_version=config.optional(keys.SPARK_METASTORE_VERSION),
            )
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


_T = TypeVar("_T")


def _off_the_main_thread(make: Callable[[], _T]) -> _T:
    """``make()`` run on a thread of its own (the main thread keeps taking signals meanwhile); its exception,
    if any, raised here."""
    made: list[_T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            made.append(make())
        except BaseException as e:  # raised again on the main thread
            failed.append(e)

    thread = threading.Thread(target=run, name="hivewire-spark-session", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if failed:
        raise failed[0]
    return made[0]
