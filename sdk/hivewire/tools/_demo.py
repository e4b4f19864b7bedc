"""The embedded demo: a local metastore, the hivewire shim in front of it, and an App listening in process.

``hivewire demo`` starts a Hive Metastore from pyspark's jars (Derby in a temp dir), puts the shim in
front of it with an in-process App as its sink, makes a few changes through the shim with
:class:`~hivewire.metastore.MetastoreClient`, and prints each change and each event as the listener
receives it. It fails, naming the event, if one never arrives.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from hivewire.errors import HivewireError
from hivewire.events._model import EventType, ListenerEvent
from hivewire.metastore import MetastoreClient
from hivewire.runtime._app import App
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

#: Seconds to wait for the event of a change before calling the demo failed.
EVENT_TIMEOUT = 30.0


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
    """Keep the shim's and client's INFO chatter out of the demo's output (warnings still show)."""
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def run_demo(echo: Callable[[str], None] = print) -> None:
    """Run the demo (see the module docstring). Raises :class:`HivewireError` if an event never arrives."""
    from hivewire_shim import AppSink, Shim  # the shim is layer 7: imported where it is used

    received: list[ListenerEvent] = []
    arrived = threading.Condition()
    app = build_app(echo, received, arrived)
    echo("starting a local Hive Metastore (pyspark's jars, Derby in a temp dir) ...")
    with (
        _quiet("hivewire_shim", "hivewire.metastore"),
        LocalMetastore() as metastore,
        Shim(metastore.uri, sinks=[AppSink(app, name="demo")]) as shim,
        MetastoreClient(shim.uri) as client,
    ):
        echo(f"metastore at {metastore.uri}; the hivewire shim in front of it at {shim.uri}")
        echo("changes go through the shim; the App's listeners print what they receive:")
        expected: list[tuple[EventType, str]] = []

        def change(what: str, kind: EventType, name: str, fn: Callable[[], object]) -> None:
            echo(f"-> {what}")
            fn()
            expected.append((kind, name))
            with arrived:
                if not arrived.wait_for(lambda: len(received) >= len(expected), EVENT_TIMEOUT):
                    raise HivewireError(
                        f"the listener never received the {kind.value} event of {name} "
                        f"(waited {EVENT_TIMEOUT:.0f} s after '{what}')"
                    )
            got = received[len(expected) - 1]
            if (got.event_type, got.qualified_name) != (kind, name):
                raise HivewireError(f"expected {kind.value} {name}, the listener received {got!r}")

        db_location = (metastore.warehouse / "demo.db").as_uri()
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
        echo(f"done: {len(expected)} changes, {len(received)} events, in order")
