"""The in-process App sink (with a stand-in for an App), the Kafka partitioning key, and the Kafka sink's
handling of refused events, a full disk and a missing topic (with a stand-in for the producer)."""

from __future__ import annotations

import errno
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

import hivewire as hw
from hivewire import apiary
from hivewire.errors import ConfigError
from hivewire.events import AlterTableEvent, CreateTableEvent, ListenerEvent
from hivewire.testing import make_table
from hivewire_shim.sinks import PRODUCER_DEFAULTS, AppSink, KafkaSink, fan_out, partition_key, replay_rejected
from hivewire_shim.spool import Spool

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


# -- the Kafka sink, with a stand-in for the producer ---------------------------------------------------------

class FakeKafka:
    """Stands in for a Kafka cluster behind ``confluent_kafka.Producer``: a topic of two partitions that
    takes what it is given on ``poll`` (``report`` may answer a delivery with an error instead)."""

    def __init__(self, *, topic_error: Any = None) -> None:
        self.messages: list[bytes] = []
        self.report: Callable[[bytes], KafkaError | None] = lambda value: None
        self.topic_error = topic_error
        self.metadata_calls = 0
        self.producers = 0

    def producer(self, config: dict[str, Any]) -> FakeProducer:
        self.producers += 1
        return FakeProducer(self, config)


class FakeProducer:
    def __init__(self, kafka: FakeKafka, config: dict[str, Any]) -> None:
        self.kafka = kafka
        self.max_bytes = int(config["message.max.bytes"])
        self.queue: list[tuple[bytes, Callable[[Any, Any], None]]] = []

    def list_topics(self, topic: str, timeout: float) -> Any:
        self.kafka.metadata_calls += 1
        partitions = {} if self.kafka.topic_error else {0: 0, 1: 1}
        return SimpleNamespace(topics={topic: SimpleNamespace(error=self.kafka.topic_error, partitions=partitions)})

    def produce(self, topic: str, value: bytes, *, partition: int, timestamp: int,
                on_delivery: Callable[[Any, Any], None]) -> None:
        if len(value) > self.max_bytes:  # librdkafka checks message.max.bytes before queueing
            raise KafkaException(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE,
                                            "Unable to produce message: Broker: Message size too large"))
        self.queue.append((value, on_delivery))

    def poll(self, timeout: float = 0) -> int:
        queue, self.queue = self.queue, []
        for value, report in queue:
            error = self.kafka.report(value)
            if error is None:
                self.kafka.messages.append(value)
            report(error, None)
        if not queue and timeout:
            time.sleep(min(timeout, 0.01))
        return len(queue)

    def flush(self, timeout: float | None = None) -> int:
        self.poll(0)
        return 0

    def purge(self) -> None:
        self.queue.clear()


def table_event(name: str, padding: int = 0) -> CreateTableEvent:
    table = make_table("db", name)
    if padding:
        table.parameters = {"comment": "x" * padding}
    return CreateTableEvent(table=table, parameters=PARAMS)


def names_of(messages: list[bytes]) -> list[str]:
    return [str(json.loads(m)["tableName"]) for m in messages]


def kafka_sink(tmp_path: Path, kafka: FakeKafka, **kw: Any) -> KafkaSink:
    return KafkaSink("kafka.invalid:9092", "apiary", tmp_path / "spool", producer_factory=kafka.producer, **kw)


def test_the_producer_takes_events_far_bigger_than_librdkafkas_default_limit() -> None:
    # A Spark INSERT adding ~1,500 partitions makes an event of a few MB of JSON (lz4 shrinks it on the wire).
    assert PRODUCER_DEFAULTS["message.max.bytes"] >= 32 << 20


def test_an_event_librdkafka_refuses_is_moved_aside_and_later_events_still_go(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    kafka = FakeKafka()
    sink = kafka_sink(tmp_path, kafka, producer_config={"message.max.bytes": 5000})
    big = table_event("big", padding=20_000)
    with caplog.at_level(logging.ERROR, logger="hivewire_shim.sinks"):
        for event in (table_event("before"), big, table_event("after")):
            sink.publish(event)
        assert sink.wait_delivered(30), f"{sink.pending} event(s) stuck behind the big one"
    assert names_of(kafka.messages) == ["before", "after"]
    assert (sink.delivered, sink.rejected) == (2, 1)
    (entry,) = [json.loads(line) for line in sink.rejected_path.read_text().splitlines()]
    assert entry["payload"].encode() == apiary.encode(big) and entry["key"] == "db.big"
    assert "MSG_SIZE_TOO_LARGE" in entry["error"] and entry["topic"] == "apiary"
    assert "message.max.bytes" in caplog.text and "hivewire replay-rejected" in caplog.text
    sink.close(5)
    # The operator raised the limits: the event goes back into the spool, to be sent on the next start.
    assert replay_rejected(tmp_path / "spool") == 1
    assert not sink.rejected_path.exists()
    with Spool(tmp_path / "spool") as spool:
        (record,) = spool.cursor().read()
        assert record.payload == apiary.encode(big) and record.key == "db.big"


def test_an_event_the_broker_refuses_in_its_delivery_report_is_moved_aside(tmp_path: Path) -> None:
    kafka = FakeKafka()
    kafka.report = lambda value: (KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "Broker: Message size too large")
                                  if b'"big"' in value else None)
    sink = kafka_sink(tmp_path, kafka)
    for name in ("a", "big", "b", "c"):
        sink.publish(table_event(name))
    assert sink.wait_delivered(30)
    assert names_of(kafka.messages) == ["a", "b", "c"] and sink.rejected == 1
    assert [json.loads(line)["key"] for line in sink.rejected_path.read_text().splitlines()] == ["db.big"]
    sink.close(5)


def test_other_delivery_errors_are_retried_never_moved_aside(tmp_path: Path) -> None:
    kafka = FakeKafka()
    # Not allowed to write until the ACL is fixed, which happens while the first producer is failing.
    kafka.report = lambda value: KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED) if kafka.producers < 2 else None
    sink = kafka_sink(tmp_path, kafka)
    for name in ("a", "b", "c"):
        sink.publish(table_event(name))
    assert sink.wait_delivered(30)
    assert names_of(kafka.messages) == ["a", "b", "c"]  # in order, after a new producer resent them
    assert sink.rejected == 0 and not sink.rejected_path.exists() and kafka.producers >= 2
    sink.close(5)


def test_a_full_disk_keeps_events_in_memory_in_order_until_the_spool_takes_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    kafka = FakeKafka()
    sink = kafka_sink(tmp_path, kafka)
    sink.publish(table_event("t0"))
    assert sink.wait_delivered(30)
    real_write = os.write
    disk_full = threading.Event()
    disk_full.set()

    def write(fd: int, data: Any) -> int:
        if disk_full.is_set() and fd == sink.spool._fd:
            real_write(fd, bytes(data[:len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)
    monkeypatch.setattr(os, "write", write)
    with caplog.at_level(logging.ERROR, logger="hivewire_shim.sinks"):
        for i in range(1, 6):
            sink.publish(table_event(f"t{i}"))  # must not raise into the client's call
    assert sink.pending == 5 and sink.spool.last_seq == 1
    assert "cannot write events to the spool" in caplog.text and "free space" in caplog.text
    assert sink.spool.segments()[-1].read_bytes().endswith(b"\n")  # no torn record left behind
    disk_full.clear()  # space again: the sender writes them without waiting for another publish
    assert sink.wait_delivered(30)
    sink.publish(table_event("t6"))
    assert sink.wait_delivered(30)
    assert names_of(kafka.messages) == [f"t{i}" for i in range(7)]
    assert sink.lost == 0
    sink.close(5)


def test_beyond_the_memory_bound_events_are_counted_and_logged_as_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    kafka = FakeKafka()
    sink = kafka_sink(tmp_path, kafka, max_overflow_bytes=2000)
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))
                        if fd == sink.spool._fd else real_write(fd, data))
    with caplog.at_level(logging.ERROR, logger="hivewire_shim.sinks"):
        for i in range(10):
            sink.publish(table_event(f"t{i}"))
    assert 0 < sink.lost < 10 and sink.pending == 10 - sink.lost
    assert "LOST" in caplog.text
    monkeypatch.undo()
    assert sink.wait_delivered(30)
    sink.close(5)


def test_a_missing_topic_is_a_warning_naming_topic_and_bootstrap_once_a_minute(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    kafka = FakeKafka(topic_error=KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART))
    with caplog.at_level(logging.WARNING, logger="hivewire_shim.sinks"):
        sink = kafka_sink(tmp_path, kafka)
        sink.publish(table_event("t"))
        deadline = time.monotonic() + 30
        while kafka.metadata_calls < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        sink.close(1)
    warnings = [r.getMessage() for r in caplog.records if "does not exist" in r.getMessage()]
    assert kafka.metadata_calls >= 3 and len(warnings) == 1
    assert "apiary" in warnings[0] and "kafka.invalid:9092" in warnings[0] and "Create the topic" in warnings[0]


def test_a_bad_producer_setting_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="producer-property"):
        KafkaSink("kafka.invalid:9092", "apiary", tmp_path / "spool", producer_config={"no.such.setting": 1})
