"""The demo: the whole chain of a deployment, on local services, in one command.

``hivewire demo`` starts a :class:`~hivewire.tools._stack.LocalStack`: a Hive Metastore and ZooKeeper from
pyspark's jars, Kafka (an Apache Kafka broker from Maven Central's jars; librdkafka's mock cluster where Maven
cannot fetch them, which the demo says) and the hivewire shim in front of the metastore, publishing every
change to the Apiary topic and registered in ZooKeeper. It finds the metastore through ZooKeeper, makes a few
changes through it with :class:`~hivewire.metastore.MetastoreClient`, and an App whose listeners consume the
topic through :class:`~hivewire.runtime.KafkaSource` prints each event as it arrives. At the end it reads the
topic into a DataFrame (Spark when pyspark is installed, else pandas, else Arrow) and prints the next steps.
It fails, naming the event, if one never arrives.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from hivewire.errors import HivewireError
from hivewire.events._model import EventType, ListenerEvent
from hivewire.metastore import MetastoreClient
from hivewire.runtime._app import App
from hivewire.runtime._kafka import KafkaSource
from hivewire.tools._local import _LOG4J2
from hivewire.tools._stack import NAMESPACE, LocalStack
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

#: Seconds to wait for the event of a change before calling the demo failed (Kafka and a loaded machine).
EVENT_TIMEOUT = 120.0

NEXT_STEPS = """\
next steps:
  hivewire local                 keep these services up, and print how to point the commands at them
  hivewire tail --from-beginning print the topic's events as they arrive (filters: --type, --db, --table)
  hivewire run listeners:app     run your own listeners (docs/runtime.md); check-config shows their settings
  docs/data.md                   read_events() in a notebook; hivewire archive into a Delta table
  deploy/                        a container image and a Kubernetes example with probes on /health"""


def _describe(event: Any) -> str:
    """One line about an event: the object and what the listener can see of it."""
    kind = event.event_type
    if kind == EventType.CREATE_TABLE:
        t = event.table
        cols = ", ".join(f"{c.name} {c.type}" for c in t.sd.cols)
        keys = ", ".join(k.name for k in t.partitionKeys)
        return f"{event.qualified_name} ({cols}) partitioned by {keys}"
    if kind == EventType.ALTER_TABLE:
        old = {c.name for c in event.old_table.sd.cols}
        added = [f"{c.name} {c.type}" for c in event.new_table.sd.cols if c.name not in old]
        return f"{event.qualified_name}: added column(s) {', '.join(added) or 'none'}"
    if kind in (EventType.ADD_PARTITION, EventType.DROP_PARTITION):
        key_names = [k.name for k in event.table.partitionKeys]
        names = ", ".join(
            "/".join(f"{k}={v}" for k, v in zip(key_names, p.values, strict=False)) for p in event.partitions
        )
        suffix = f" (delete data: {event.delete_data})" if kind == EventType.DROP_PARTITION else ""
        return f"{event.qualified_name}: {names}{suffix}"
    if kind == EventType.DROP_TABLE:
        return f"{event.qualified_name} (delete data: {event.delete_data})"
    return event.qualified_name  # type: ignore[no-any-return]


def build_app(echo: Callable[[str], None], received: list[ListenerEvent], arrived: threading.Condition) -> App:
    """The example App: one decorated function per event type, each printing what it received."""
    app = App("demo")

    def show(event: ListenerEvent) -> None:
        echo(f"   listener <- {event.event_type.value:<16} {_describe(event)}")
        with arrived:
            received.append(event)
            arrived.notify_all()

    @app.on_create_database
    def database_created(event: ListenerEvent) -> None:
        show(event)

    @app.on_create_table
    def table_created(event: ListenerEvent) -> None:
        show(event)

    @app.on_add_partition
    def partitions_added(event: ListenerEvent) -> None:
        show(event)

    @app.on_alter_table
    def table_altered(event: ListenerEvent) -> None:
        show(event)

    @app.on_drop_partition
    def partition_dropped(event: ListenerEvent) -> None:
        show(event)

    @app.on_drop_table
    def table_dropped(event: ListenerEvent) -> None:
        show(event)

    @app.on_drop_database
    def database_dropped(event: ListenerEvent) -> None:
        show(event)

    return app


@contextlib.contextmanager
def _quiet(*names: str) -> Iterator[None]:
    """Keep the services' INFO chatter out of the demo's output (warnings still show)."""
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


_CHATTY = ("hivewire_shim", "hivewire.metastore", "hivewire.registration", "hivewire.runtime", "hivewire.kafka",
           "hivewire.app", "hivewire.notebook", "kazoo")  # fmt: skip


def _find_metastore(stack: LocalStack, echo: Callable[[str], None]) -> str:
    """The metastore as a client finds it: through ZooKeeper (the shim registers itself there)."""
    from hivewire.errors import DiscoveryError
    from hivewire.metastore._discovery import discover_metastores

    deadline = time.monotonic() + EVENT_TIMEOUT
    while True:
        try:
            uris = discover_metastores(stack.zookeeper.quorum, NAMESPACE)
            break
        except DiscoveryError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)  # the registration follows the shim's start by a moment
    echo(f"found in ZooKeeper {stack.zookeeper.quorum} (/{NAMESPACE}): {', '.join(uris)} (the shim)")
    return uris[0]


def run_demo(echo: Callable[[str], None] = print) -> None:
    """Run the demo (see the module docstring). Raises :class:`HivewireError` if an event never arrives."""
    received: list[ListenerEvent] = []
    arrived = threading.Condition()
    app = build_app(echo, received, arrived)
    echo("starting a Hive Metastore, ZooKeeper, Kafka and the hivewire shim (about a minute) ...")
    with _quiet(*_CHATTY), LocalStack(topic="apiary") as stack:
        echo(f"metastore {stack.metastore.uri}; shim {stack.metastore_uri} publishing to Kafka "
             f"{stack.bootstrap_servers} topic {stack.topic}")  # fmt: skip
        echo(f"Kafka: {stack.kafka_description}")
        uri = _find_metastore(stack, echo)
        source = KafkaSource(
            stack.bootstrap_servers,
            stack.topic,
            group_id="hivewire-demo",
            consumer_config={"auto.offset.reset": "earliest"},
        )
        app.config = app.config.merged({"endpoint.port": "0"}, source="code")
        failed: list[BaseException] = []

        def consume() -> None:
            try:
                app.run(source, handle_signals=False)
            except BaseException as e:  # reported in the demo's thread
                failed.append(e)
                with arrived:
                    arrived.notify_all()

        consumer = threading.Thread(target=consume, name="hivewire-demo-app")
        consumer.start()
        try:
            echo("changes go through the shim; the App's listeners, consuming the topic, print what they receive:")
            with MetastoreClient(uri) as client:
                _changes(stack, client, echo, received, arrived, failed)
        finally:
            app.stop()
            consumer.join(60)
        echo(f"done: {len(received)} changes, {len(received)} events through Kafka, in order")
        _dataframe(stack, echo)
    echo(NEXT_STEPS)


def _changes(
    stack: LocalStack,
    client: MetastoreClient,
    echo: Callable[[str], None],
    received: list[ListenerEvent],
    arrived: threading.Condition,
    failed: list[BaseException],
) -> None:
    expected: list[tuple[EventType, str]] = []

    def change(what: str, kind: EventType, name: str, fn: Callable[[], object]) -> None:
        echo(f"-> {what}")
        fn()
        expected.append((kind, name))
        with arrived:
            if not arrived.wait_for(lambda: failed or len(received) >= len(expected), EVENT_TIMEOUT):
                raise HivewireError(
                    f"the listener never received the {kind.value} event of {name} "
                    f"(waited {EVENT_TIMEOUT:.0f} s after '{what}')"
                )
        if failed:
            raise HivewireError(f"the demo's App stopped: {failed[0]}") from failed[0]
        got = received[len(expected) - 1]
        if (got.event_type, got.qualified_name) != (kind, name):
            raise HivewireError(f"expected {kind.value} {name}, the listener received {got!r}")

    db_location = (stack.metastore.warehouse / "demo.db").as_uri()
    table = make_table(
        "demo",
        "orders",
        columns={"id": "bigint", "amount": "double"},
        partition_keys={"dt": "string"},
        location=f"{db_location}/orders",
    )
    days = ["2024-01-01", "2024-01-02", "2024-01-03"]
    change(
        "create database demo",
        EventType.CREATE_DATABASE,
        "demo",
        lambda: client.create_database(make_database("demo", location=db_location)),
    )
    change("create table demo.orders", EventType.CREATE_TABLE, "demo.orders", lambda: client.create_table(table))
    change(
        f"add partitions dt={', dt='.join(days)}",
        EventType.ADD_PARTITION,
        "demo.orders",
        lambda: client.add_partitions([make_partition(table, [d]) for d in days]),
    )

    def add_column() -> None:
        stored = client.get_table("demo", "orders")
        assert stored.sd is not None and stored.sd.cols is not None  # created above with columns
        stored.sd.cols.append(hms.FieldSchema(name="note", type="string", comment=None))
        client.alter_table("demo", "orders", stored)

    change("alter table demo.orders add column note", EventType.ALTER_TABLE, "demo.orders", add_column)
    change(
        f"drop partition dt={days[0]}",
        EventType.DROP_PARTITION,
        "demo.orders",
        lambda: client.drop_partition("demo", "orders", [days[0]], True),
    )
    change(
        "drop table demo.orders",
        EventType.DROP_TABLE,
        "demo.orders",
        lambda: client.drop_table("demo", "orders", True),
    )
    change("drop database demo", EventType.DROP_DATABASE, "demo", lambda: client.drop_database("demo", True, False))


_SHOWN = ["event_type", "qualified_name", "kafka_partition", "kafka_offset", "partition_values"]


def _dataframe(stack: LocalStack, echo: Callable[[str], None]) -> None:
    """The topic read back as a table: a Spark DataFrame when pyspark is installed, else pandas, else Arrow."""
    from hivewire.data._notebook import read_events

    events = read_events(bootstrap_servers=stack.bootstrap_servers, topic=stack.topic, progress=False)
    # pyspark's createDataFrame from Arrow checks for pandas too
    if importlib.util.find_spec("pyspark") is not None and importlib.util.find_spec("pandas") is not None:
        from pyspark.sql import SparkSession

        echo("the topic as a Spark DataFrame: hw.read_events(...).to_spark(spark)")
        log_config = stack.workdir / "spark-log4j2.properties"  # Spark's start-up warnings are not the demo's
        log_config.write_text(_LOG4J2.format(level="ERROR"))
        logging.getLogger("py4j").setLevel(logging.WARNING)  # it logs its shutdown at exit, after the demo
        spark = (
            SparkSession.builder.master("local[1]")
            .appName("hivewire-demo")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_config}")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            frame = events.to_spark(spark).select(*_SHOWN).orderBy("kafka_partition", "kafka_offset")
            shown = io.StringIO()
            with contextlib.redirect_stdout(shown):
                frame.show(20, 40)
            echo(shown.getvalue().rstrip())
        finally:
            spark.stop()
    elif importlib.util.find_spec("pandas") is not None:
        echo("the topic as a pandas DataFrame: hw.read_events(...).to_pandas()")
        echo(events.to_pandas()[_SHOWN].to_string(index=False))
    else:
        echo("the topic as an Arrow table: hw.read_events(...).to_arrow()")
        echo(str(events.to_arrow().select(_SHOWN)))
