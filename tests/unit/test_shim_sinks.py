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
from confluent_kafka import OFFSET_INVALID, KafkaError, KafkaException, Message

import hivewire as hw
from hivewire.errors import ConfigError
from hivewire.events import _apiary as apiary
from hivewire.events._model import AlterTableEvent, CreateTableEvent, ListenerEvent
from hivewire.tools._testing import make_table
from hivewire_shim.kafka_sink import PRODUCER_DEFAULTS, KafkaSink, replay_rejected
from hivewire_shim.sinks import AppSink, fan_out, partition_key
from hivewire_shim.spool import Spool

PARAMS = {"hive.version": "2.3.10"}


class Recorder:
    """Stands in for ``hivewire.App``: records what ``dispatch`` gets, can fail, and can be held up: while
    ``gate`` is closed, dispatch waits for it (a listener far slower than the changes)."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.events: list[ListenerEvent] = []
        self.threads: set[str] = set()
        self.fail_on = fail_on
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()  # set once a dispatch waits at the closed gate

    def dispatch(self, event: ListenerEvent) -> list[str]:
        if not self.gate.is_set():
            self.waiting.set()
            assert self.gate.wait(30)
        self.threads.add(threading.current_thread().name)
        self.events.append(event)
        if event.table_name == self.fail_on:
            raise hw.ListenerError({"audit": RuntimeError("boom")})
        return ["audit"]


def created(name: str) -> CreateTableEvent:
    return CreateTableEvent(table=make_table("db", name), parameters=PARAMS)


def test_events_reach_the_app_in_order_as_kafka_would_deliver_them() -> None:
    app = Recorder()
    app.gate.clear()  # the listener is stuck until the end of the test
    sink = AppSink(app)
    sent = [created(f"t{i}") for i in range(50)]
    for event in sent:
        sink.publish(event)
    # Every publish returned while the listener could not take a single event: publishing does not wait
    # for dispatch. (Nothing was dispatched yet: the first event waits at the gate.)
    assert app.waiting.wait(30) and app.events == [] and sink.pending == 50
    app.gate.set()
    assert sink.wait_idle(30)
    assert app.events == sent
    assert all(e.raw is not None for e in app.events)  # decoded from Apiary JSON, like a Kafka record
    assert threading.current_thread().name not in app.threads
    sink.close(5)


def test_a_listener_far_behind_makes_events_spill_to_disk_in_order_and_memory_stays_bounded(tmp_path: Path) -> None:
    app = Recorder()
    app.gate.clear()
    sink = AppSink(app, max_memory_bytes=3 * len(apiary.encode(created("t00"))), spill_dir=tmp_path)
    sent = [created(f"t{i:02d}") for i in range(40)]
    sink.publish(sent[0])
    assert app.waiting.wait(30)  # the dispatcher holds the first event, stuck in the listener
    for event in sent[1:20]:
        sink.publish(event)  # returns although the listener is stuck: three fit in memory, the rest spill
    assert app.events == [] and sink.memory_bytes <= sink.max_memory_bytes and sink.spilled == 16
    (spill,) = tmp_path.iterdir()
    app.gate.set()
    for event in sent[20:]:  # published while the dispatcher works through memory and the spill
        sink.publish(event)
    assert sink.wait_idle(30)
    assert app.events == sent and sink.lost == 0
    sink.close(5)
    assert not spill.exists()  # the spill is gone with the sink


def test_an_event_that_can_be_neither_held_nor_spilled_is_counted_and_logged_as_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = Recorder()
    app.gate.clear()
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    sink = AppSink(app, max_memory_bytes=0, spill_dir=blocked)
    with caplog.at_level(logging.ERROR, logger="hivewire_shim"):
        sink.publish(created("t"))  # must not raise into the client's call
    assert sink.lost == 1 and "LOST" in caplog.text and str(blocked) in caplog.text
    app.gate.set()
    sink.close(5)


def test_a_failing_listener_is_logged_and_later_events_still_arrive(caplog: pytest.LogCaptureFixture) -> None:
    app = Recorder(fail_on="bad")
    sink = AppSink(app, name="audit")
    with caplog.at_level(logging.ERROR, logger="hivewire_shim"):
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

#: What a ``FakeKafka.judge`` returns for a record the cluster does not answer (yet): it stays queued.
NO_ANSWER = object()
#: What a ``FakeKafka.judge`` returns for a record acknowledged without an offset and never written
#: (librdkafka issue 3712, :mod:`hivewire.runtime._kafka_acks`).
UNWRITTEN_ACK = object()


class FakeKafka:
    """Stands in for a Kafka cluster behind ``confluent_kafka.Producer``: a topic of ``partitions``
    partitions that takes what it is given on ``poll``. ``report(value)`` may answer a delivery with an
    error instead; ``judge(producer, partition, value)``, when set, decides instead (an error, None for
    delivered, :data:`NO_ANSWER` or :data:`UNWRITTEN_ACK`)."""

    def __init__(self, *, topic_error: Any = None, partitions: int = 2) -> None:
        self.messages: list[bytes] = []
        self.arrived: list[tuple[int, bytes]] = []  # (partition, value) in arrival order
        self.report: Callable[[bytes], KafkaError | None] = lambda value: None
        self.judge: Callable[[FakeProducer, int, bytes], Any] | None = None
        self.topic_error = topic_error
        self.partitions = partitions
        self.metadata_calls = 0
        self.producers = 0
        self.configs: list[dict[str, Any]] = []

    def producer(self, config: dict[str, Any]) -> FakeProducer:
        self.producers += 1
        self.configs.append(config)
        return FakeProducer(self, config, self.producers)


class FakeProducer:
    def __init__(self, kafka: FakeKafka, config: dict[str, Any], number: int) -> None:
        self.kafka = kafka
        self.number = number  # 1 for the sink's first producer, 2 for the one after a restart, ...
        self.max_bytes = int(config["message.max.bytes"])
        self.queue: list[tuple[bytes, int, Callable[[Any, Any], None]]] = []
        self.failed_partitions: set[int] = set()

    def list_topics(self, topic: str, timeout: float) -> Any:
        self.kafka.metadata_calls += 1
        partitions = {} if self.kafka.topic_error else {p: p for p in range(self.kafka.partitions)}
        return SimpleNamespace(topics={topic: SimpleNamespace(error=self.kafka.topic_error, partitions=partitions)})

    def produce(
        self,
        topic: str,
        value: bytes,
        key: bytes | None = None,
        *,
        partition: int,
        timestamp: int,
        on_delivery: Callable[[Any, Any], None],
    ) -> None:
        # Apiary's key: the event time as an 8-byte big-endian long, the record's timestamp.
        assert key == timestamp.to_bytes(8, "big", signed=True)
        if len(value) > self.max_bytes:  # librdkafka checks message.max.bytes before queueing
            raise KafkaException(
                KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "Unable to produce message: Broker: Message size too large")
            )
        self.queue.append((value, partition, on_delivery))

    def poll(self, timeout: float = 0) -> int:
        queue, self.queue = self.queue, []
        served = 0
        for value, partition, report in queue:
            judge = self.kafka.judge
            error = judge(self, partition, value) if judge is not None else self.kafka.report(value)
            if error is NO_ANSWER:
                self.queue.append((value, partition, report))
                continue
            offset = OFFSET_INVALID
            if error is UNWRITTEN_ACK:
                error = None
            elif error is None:
                offset = len(self.kafka.messages)
                self.kafka.messages.append(value)
                self.kafka.arrived.append((partition, value))
            report(error, Message(topic="apiary", partition=partition, offset=offset, error=error))
            served += 1
        if not served and timeout:
            time.sleep(min(timeout, 0.01))
        return served

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
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kafka = FakeKafka()
    sink = kafka_sink(tmp_path, kafka, producer_config={"message.max.bytes": 5000})
    big = table_event("big", padding=20_000)
    with caplog.at_level(logging.ERROR, logger="hivewire_shim"):
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
    kafka.report = lambda value: (
        KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "Broker: Message size too large") if b'"big"' in value else None
    )
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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kafka = FakeKafka()
    sink = kafka_sink(tmp_path, kafka)
    sink.publish(table_event("t0"))
    assert sink.wait_delivered(30)
    real_write = os.write
    disk_full = threading.Event()
    disk_full.set()

    def write(fd: int, data: Any) -> int:
        if disk_full.is_set() and fd == sink.spool._fd:
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    with caplog.at_level(logging.ERROR, logger="hivewire_shim"):
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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kafka = FakeKafka()
    sink = kafka_sink(tmp_path, kafka, max_overflow_bytes=2000)
    real_write = os.write
    monkeypatch.setattr(
        os,
        "write",
        lambda fd, data: (
            (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")) if fd == sink.spool._fd else real_write(fd, data)
        ),
    )
    with caplog.at_level(logging.ERROR, logger="hivewire_shim"):
        for i in range(10):
            sink.publish(table_event(f"t{i}"))
    assert 0 < sink.lost < 10 and sink.pending == 10 - sink.lost
    assert "LOST" in caplog.text
    monkeypatch.undo()
    assert sink.wait_delivered(30)
    sink.close(5)


def test_a_missing_topic_is_a_warning_naming_topic_and_bootstrap_once_a_minute(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kafka = FakeKafka(topic_error=KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART))
    with caplog.at_level(logging.WARNING, logger="hivewire_shim"):
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
    with pytest.raises(ConfigError, match="kafka-property"):
        KafkaSink("kafka.invalid:9092", "apiary", tmp_path / "spool", producer_config={"no.such.setting": 1})


# -- a producer that fails, and the one after it ----------------------------------------------------------------
# The mock cluster cannot fail one delivery in the middle of a stream (librdkafka follows the brokers'
# advertised addresses, so a broker cannot be made to die under it), hence the stand-in producer.


def spool_events(directory: Path, names: list[str]) -> None:
    """Put events for ``names`` in the spool before the sink starts, so its first producer gets one batch."""
    with Spool(directory) as spool:
        for name in names:
            event = table_event(name)
            spool.append(partition_key(event), apiary.encode(event), 1_700_000_000_000)


def arrivals(kafka: FakeKafka) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for partition, value in kafka.arrived:
        out.setdefault(partition, []).append(str(json.loads(value)["tableName"]))
    return out


# With two partitions: db.x0, db.b, db.d go to partition 0; db.a, db.c, db.e to partition 1.
BATCH = ["x0", "a", "b", "c", "d", "e"]


def test_after_a_producer_fails_mid_batch_each_event_arrives_once_in_order(tmp_path: Path) -> None:
    assert [apiary.partition_for(f"db.{n}", 2) for n in BATCH] == [0, 1, 0, 1, 0, 1]
    kafka = FakeKafka()

    def gapless(producer: FakeProducer, partition: int, value: bytes) -> Any:
        """The first producer: "a" fails for good; like librdkafka with enable.gapless.guarantee, that is fatal
        for what follows it in its partition, while the other partition's records are delivered."""
        if producer.number > 1:
            return None
        if b'"tableName":"a"' in value:
            producer.failed_partitions.add(partition)
            return KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)
        if partition in producer.failed_partitions:
            return KafkaError(KafkaError._FATAL)
        return None

    kafka.judge = gapless
    spool_events(tmp_path / "spool", BATCH)
    sink = kafka_sink(tmp_path, kafka)
    assert sink.wait_delivered(30)
    assert kafka.producers >= 2  # the first failed, a new one resent
    # Partition 0's records were delivered by the first producer and not sent again; partition 1's were
    # resent from the failed one, in order. (Resending from the acknowledged prefix would send b and d twice.)
    assert arrivals(kafka) == {0: ["x0", "b", "d"], 1: ["a", "c", "e"]}
    assert len(kafka.messages) == len(BATCH) and sink.skipped == 2 and sink.overtaken == 0
    assert sink.spool.acked == len(BATCH) and sink.spool.done_beyond == frozenset()
    sink.close(5)


def test_an_event_acknowledged_without_an_offset_is_sent_again_and_arrives_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # librdkafka's idempotent producer can report a record delivered that the broker never wrote (issue 3712):
    # the report has no offset. The record stays in the spool and the next producer sends it. A record of the
    # same partition already in flight behind it is written first: said, as any overtaking is.
    kafka = FakeKafka()
    kafka.judge = lambda producer, partition, value: (
        UNWRITTEN_ACK if producer.number == 1 and b'"tableName":"c"' in value else None
    )
    spool_events(tmp_path / "spool", BATCH)
    with caplog.at_level(logging.WARNING, logger="hivewire_shim"):
        sink = kafka_sink(tmp_path, kafka)
        assert sink.wait_delivered(30)
    assert kafka.producers == 2
    assert arrivals(kafka) == {0: ["x0", "b", "d"], 1: ["a", "e", "c"]}
    assert sink.spool.acked == len(BATCH) and sink.spool.done_beyond == frozenset() and sink.overtaken == 1
    assert "acknowledged without being written (librdkafka issue 3712)" in caplog.text
    assert "the earlier event was sent again" in caplog.text and "do not override them" not in caplog.text
    sink.close(5)


def test_events_delivered_past_an_undelivered_one_are_not_sent_again_after_a_shim_restart(tmp_path: Path) -> None:
    first = FakeKafka()
    first.judge = lambda producer, partition, value: NO_ANSWER if partition == 1 else None  # its leader is away
    spool_events(tmp_path / "spool", BATCH)
    sink = kafka_sink(tmp_path, first)
    _until(lambda: len(first.messages) == 3)
    sink.close(1)  # partition 1's records stay in the spool; the spool knows partition 0's were delivered
    assert arrivals(first) == {0: ["x0", "b", "d"]}
    second = FakeKafka()
    again = kafka_sink(tmp_path, second)
    assert again.wait_delivered(30)
    assert arrivals(second) == {1: ["a", "c", "e"]} and again.skipped == 2
    again.close(5)


def test_without_idempotence_one_request_is_in_flight_and_an_overtaking_event_is_reported_not_resent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kafka = FakeKafka()
    # No gapless guarantee: after "a" failed, "c" (same partition) is delivered all the same.
    kafka.judge = lambda producer, partition, value: (
        KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)
        if producer.number == 1 and b'"tableName":"a"' in value
        else None
    )
    spool_events(tmp_path / "spool", BATCH)
    with caplog.at_level(logging.WARNING, logger="hivewire_shim"):
        sink = kafka_sink(tmp_path, kafka, producer_config={"enable.idempotence": "false"})
        assert sink.wait_delivered(30)
    config = kafka.configs[0]
    assert config["max.in.flight.requests.per.connection"] == 1 and "enable.gapless.guarantee" not in config
    assert arrivals(kafka) == {0: ["x0", "b", "d"], 1: ["c", "e", "a"]}  # each once; "a" overtaken
    assert sink.overtaken == 2
    assert "without enable.idempotence" in caplog.text and "out of order" in caplog.text
    sink.close(5)


def test_the_default_producer_keeps_a_partition_gapless_and_quiets_librdkafkas_notice_about_it() -> None:
    assert PRODUCER_DEFAULTS["enable.idempotence"] is True and PRODUCER_DEFAULTS["enable.gapless.guarantee"] is True
    record = logging.LogRecord(
        "hivewire_shim.kafka",
        logging.WARNING,
        __file__,
        1,
        "%s [%s] %s",
        ("CONFWARN", "rdkafka#producer-1", "Configuration property enable.gapless.guarantee is experimental: ..."),
        None,
    )
    assert not logging.getLogger("hivewire_shim.kafka").filter(record)


def test_a_topic_that_grows_gets_its_events_spread_over_the_new_partitions(tmp_path: Path) -> None:
    # The mock cluster cannot add partitions to a topic (CreatePartitions is refused), hence the stand-in.
    kafka = FakeKafka(partitions=2)
    sink = kafka_sink(tmp_path, kafka, metadata_refresh=0.05)
    names = ["b", "c", "f", "g"]  # partitions 0, 1, 0, 1 of two; 2, 3, 2, 3 of four
    for name in names:
        sink.publish(table_event(name))
    assert sink.wait_delivered(30)
    kafka.partitions = 4
    _until(lambda: sink.partitions == 4)
    for name in names:
        sink.publish(table_event(name))
    assert sink.wait_delivered(30)
    assert [p for p, _ in kafka.arrived] == [0, 1, 0, 1, 2, 3, 2, 3]
    assert [p for p, _ in kafka.arrived[4:]] == [apiary.partition_for(f"db.{n}", 4) for n in names]
    sink.close(5)


def _until(condition: Callable[[], bool]) -> None:
    """Wait for a state the sink's thread reaches; fail if it never does."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)
