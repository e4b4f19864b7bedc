"""The in-process App sink (with a stand-in for an App) and the Kafka partitioning key."""

from __future__ import annotations

import logging
import threading
import time

import pytest

import hivewire as hw
from hivewire.events import AlterTableEvent, CreateTableEvent, ListenerEvent
from hivewire.testing import make_table
from hivewire_shim.sinks import AppSink, fan_out, partition_key

PARAMS = {"hive.version": "2.3.10"}


class Recorder:
    """Stands in for ``hivewire.App``: records what ``dispatch`` gets, and can be slow or fail."""

    def __init__(self, fail_on: str | None = None, delay: float = 0.0) -> None:
        self.events: list[ListenerEvent] = []
        self.threads: set[str] = set()
        self.fail_on = fail_on
        self.delay = delay

    def dispatch(self, event: ListenerEvent) -> list[str]:
        time.sleep(self.delay)
        self.threads.add(threading.current_thread().name)
        self.events.append(event)
        if event.table_name == self.fail_on:
            raise hw.ListenerError({"audit": RuntimeError("boom")})
        return ["audit"]


def created(name: str) -> CreateTableEvent:
    return CreateTableEvent(table=make_table("db", name), parameters=PARAMS)


def test_events_reach_the_app_in_order_as_kafka_would_deliver_them() -> None:
    app = Recorder(delay=0.001)
    sink = AppSink(app)
    sent = [created(f"t{i}") for i in range(50)]
    started = time.monotonic()
    for event in sent:
        sink.publish(event)
    assert time.monotonic() - started < 0.05 * len(sent)  # publish only enqueues
    assert sink.wait_idle(30)
    assert app.events == sent
    assert all(e.raw is not None for e in app.events)  # decoded from Apiary JSON, like a Kafka record
    assert threading.current_thread().name not in app.threads
    sink.close(5)


def test_a_failing_listener_is_logged_and_later_events_still_arrive(caplog: pytest.LogCaptureFixture) -> None:
    app = Recorder(fail_on="bad")
    sink = AppSink(app, name="audit")
    with caplog.at_level(logging.ERROR, logger="hivewire_shim.sinks"):
        for name in ("ok1", "bad", "ok2"):
            sink.publish(created(name))
        assert sink.wait_idle(30)
    assert [e.table_name for e in app.events] == ["ok1", "bad", "ok2"]
    assert (sink.dispatched, sink.failed) == (2, 1)
    assert "dispatching CreateTableEvent(db.bad) failed" in caplog.text
    sink.close(5)


def test_fan_out_isolates_a_broken_sink(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def publish(self, event: ListenerEvent) -> None:
            raise OSError("disk full")

        def close(self, timeout: float | None = None) -> None:
            pass

    app = Recorder()
    good = AppSink(app)
    publish = fan_out([Broken(), good])
    with caplog.at_level(logging.ERROR):
        publish(created("t"))
    assert good.wait_idle(10) and len(app.events) == 1
    assert "disk full" in caplog.text
    good.close(5)


def test_partition_key_of_a_rename_is_the_new_name_unless_asked_for_the_old() -> None:
    old, new = make_table("db", "old"), make_table("db", "new")
    rename = AlterTableEvent(old_table=old, new_table=new, parameters=PARAMS)
    assert partition_key(rename) == "db.new"
    assert partition_key(rename, alter_by_old_name=True) == "db.old"
    assert partition_key(created("t")) == "db.t"
    assert partition_key(hw.CreateDatabaseEvent(database=hw.testing.make_database("db"))) == "db"
