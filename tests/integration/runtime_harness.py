"""One test harness, three backends: the runtime contract tests run on MemorySource, the mock and real Kafka.

Like FastStream's broker-agnostic test suites: every behaviour the runtime promises is checked against the
in-memory source users test with, librdkafka's mock cluster and a real Apache Kafka broker.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import waiting
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.runtime._source import MemorySource, Source
from hivewire.tools._testing import make_partition, make_table

PARTITIONS = 4  # what a topic gets on first use (mock and broker alike), and what MemorySource is given


def stream(n: int, tables: int = 40, db: str = "sales") -> list[bytes]:
    """``n`` ON_ADD_PARTITION messages round-robin over ``tables`` tables; partition value = sequence number."""
    shapes = [make_table(db, f"t{i:02d}", partition_keys={"seq": "string"}) for i in range(tables)]
    return [
        apiary.encode(
            hw.AddPartitionEvent(
                table=shapes[i % tables],
                partitions=[make_partition(shapes[i % tables], [str(i)])],
                parameters={"hive.version": "2.3.10"},
            )
        )
        for i in range(n)
    ]


def seq_of(event: hw.ListenerEvent) -> int:
    assert isinstance(event, hw.AddPartitionEvent)
    return int(event.partitions[0].values[0])


def read_to_end(bootstrap: str, topic: str, timeout: float = 120) -> list[tuple[bytes, dict[str, str]]]:
    """Every message of ``topic`` (value, headers) up to the end of each partition as it is now.

    Reading to the end, not to an expected count, shows duplicates beyond what a test expects.
    """
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}", "enable.auto.commit": False}
    )
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            return []  # never created: nothing was ever written to it
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in metadata.partitions}
        positions = dict.fromkeys(ends, 0)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends if ends[p] > 0])
        out: list[tuple[bytes, dict[str, str]]] = []
        deadline = time.monotonic() + timeout
        while any(positions[p] < ends[p] for p in ends):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out reading {topic} to its end: at {positions}, end {ends}")
            for m in consumer.consume(1000, 0.5):
                if m.error() is not None:
                    raise AssertionError(f"reading {topic}: {m.error()} at {m.partition()}@{m.offset()}")
                if m.offset() < ends[m.partition()]:
                    out.append((m.value() or b"", {k: v.decode() for k, v in (m.headers() or [])}))
                    positions[m.partition()] = m.offset() + 1
        return out
    finally:
        consumer.close()


def topic_size(bootstrap: str, topic: str) -> int:
    """How many messages ``topic`` holds (the sum of its partitions' end offsets); 0 if it does not exist."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"sizer-{uuid.uuid4().hex}"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return 0
        try:
            return sum(
                consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in metadata.partitions
            )
        except KafkaException:  # a topic just created: a broker elects its partitions' leaders a moment later
            return 0
    finally:
        consumer.close()


class Harness:
    """A topic (and its dead-letter topic) plus a way to run an app on it in a background thread."""

    kind = "?"

    def source(self) -> Source:
        raise NotImplementedError

    def send(self, payloads: Sequence[bytes]) -> None:
        raise NotImplementedError

    def dead_letters(self, expected: int, timeout: float = 60) -> list[tuple[bytes, dict[str, str]]]:
        """Every dead letter, once at least ``expected`` are there (or after ``timeout``)."""
        raise NotImplementedError

    def committed(self) -> dict[int, int]:
        raise NotImplementedError

    def run(self, app: hw.App, until: Callable[[], bool], timeout: float = 120) -> None:
        """Run ``app`` until ``until()`` is true (then stop it cleanly); re-raise anything ``run`` raised."""
        errors: list[BaseException] = []

        def target() -> None:
            try:
                app.run(self.source(), handle_signals=False)
            except BaseException as e:  # reported below, in the test's thread
                errors.append(e)

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        try:
            waiting.wait_for(lambda: until() or not thread.is_alive(), "the app to finish its work", timeout)
        finally:
            app.stop()
            thread.join(60)
        if errors:
            raise errors[0]
        assert not thread.is_alive(), "the app did not stop within 60 s of being asked to"

    @staticmethod
    def partition_for(payload: bytes) -> int:
        """The Apiary producer's partition; malformed payloads (the point of some tests) go to partition 0."""
        try:
            return apiary.partition_for(json.loads(payload).get("qualifiedTableName") or "", PARTITIONS)
        except (ValueError, AttributeError):
            return 0


class MemoryHarness(Harness):
    kind = "memory"

    def __init__(self) -> None:
        self.memory = MemorySource(partitions=PARTITIONS, stop_when_idle=False)

    def source(self) -> Source:
        self.memory.reset()
        return self.memory

    def send(self, payloads: Sequence[bytes]) -> None:
        for payload in payloads:
            self.memory.send(payload)

    def dead_letters(self, expected: int, timeout: float = 60) -> list[tuple[bytes, dict[str, str]]]:
        waiting.wait_for(lambda: len(self.memory.dead_letters) >= expected, f"{expected} dead letters", timeout)
        return [(d.record.value() or b"", d.headers) for d in self.memory.dead_letters]

    def committed(self) -> dict[int, int]:
        return {p: o for (_, p), o in self.memory.committed.items()}


class KafkaHarness(Harness):
    kind = "kafka"

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        suffix = uuid.uuid4().hex[:8]
        self.topic = f"contract-{suffix}"
        self.group = f"contract-group-{suffix}"
        self._producer = Producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5, "compression.type": "zstd"}
        )

    def source(self) -> Source:
        return hw.KafkaSource(
            self.bootstrap,
            self.topic,
            group_id=self.group,
            consumer_config={"auto.offset.reset": "earliest", "session.timeout.ms": 6000, "heartbeat.interval.ms": 500},
        )

    def send(self, payloads: Sequence[bytes]) -> None:
        for payload in payloads:
            self._producer.produce(self.topic, payload, partition=self.partition_for(payload))
        assert self._producer.flush(30) == 0

    def _consumer(self, **extra: Any) -> Consumer:
        return Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"reader-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                **extra,
            }
        )

    def dead_letters(self, expected: int, timeout: float = 60) -> list[tuple[bytes, dict[str, str]]]:
        topic = f"{self.topic}.dlq"
        deadline = time.monotonic() + timeout
        while topic_size(self.bootstrap, topic) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        return read_to_end(self.bootstrap, topic)

    def committed(self) -> dict[int, int]:
        consumer = self._consumer(**{"group.id": self.group})
        try:
            tps = consumer.committed([TopicPartition(self.topic, p) for p in range(PARTITIONS)], timeout=10)
            return {tp.partition: tp.offset for tp in tps if tp.offset >= 0}
        finally:
            consumer.close()
