"""KafkaSource's own failure reporting on Apache Kafka (one refusal on the mock), and hivewire.testing's example."""

from __future__ import annotations

import collections
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Producer
from runtime_harness import read_to_end
from waiting import wait_for

import hivewire as hw
import hivewire.runtime._kafka_letters as patched_module
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._source import MemoryRecord, Record
from hivewire.tools import _testing as testing


def poll_until(source: hw.KafkaSource, predicate: Callable[[], bool], what: str) -> None:
    """Poll (librdkafka serves its callbacks in poll) until ``predicate()``."""

    def polled() -> bool:
        source.poll(10, 0.2)
        return predicate()

    wait_for(polled, what, 60)


def test_refused_offset_commits_are_counted_and_logged(kafka_mock: str, caplog: pytest.LogCaptureFixture) -> None:
    # librdkafka's mock cluster, on purpose: it refuses offsets of a topic it does not have, a refusal this test can
    # provoke at will; Apache Kafka 4's group coordinator stores such offsets and answers success.
    kafka = kafka_mock
    topic = f"commits-{uuid.uuid4().hex[:8]}"
    testing.produce(kafka, topic, [testing.create_table_event("s", "t")])
    source = hw.KafkaSource(kafka, topic, group_id=f"g-{topic}", consumer_config={"auto.offset.reset": "earliest"})
    metrics = Metrics()
    source.attach_metrics(metrics)
    source.open(lambda partitions: None, lambda partitions: None)
    try:
        records: list[Record] = []

        def got_one() -> bool:
            records.extend(source.poll(10, 0.2))
            return bool(records)

        wait_for(got_one, "the consumer to join and read the record", 60)
        # The broker refuses offsets of a topic it does not have; an asynchronous commit fails in a callback
        # served by the next polls, which is where the failure must be counted.
        source.commit({(f"{topic}-missing", 7): 5}, wait=False)
        poll_until(source, lambda: metrics.commit_failures._value.get() == 1, "the refused commit to be counted")
        source.commit({(f"{topic}-missing", 7): 5}, wait=True)
        assert metrics.commit_failures._value.get() == 2
        source.commit({(topic, 0): 1}, wait=True)  # a good one is not counted
        assert metrics.commit_failures._value.get() == 2
    finally:
        source.close()
    warnings = [r.getMessage() for r in caplog.records if r.name == "hivewire.kafka" and r.levelname == "WARNING"]
    assert len(warnings) == 2 and all("offset commit failed" in w for w in warnings)


def test_dead_letters_the_broker_does_not_take_are_counted_and_sent_again(kafka: str) -> None:
    # A dead-letter producer that reaches no broker: every send times out, and is sent again.
    source = hw.KafkaSource(
        kafka,
        "dlq-failures",
        producer_config={"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": 300, "linger.ms": 0},
    )
    metrics = Metrics()
    source.attach_metrics(metrics)
    letters = 200
    delivered: list[int] = []
    threads_before = threading.active_count()
    most_threads = [threads_before]

    def sent_again() -> bool:
        most_threads.append(threading.active_count())
        return metrics.dead_letter_failures._value.get() >= 3 * letters

    try:
        for offset in range(letters):
            source.dead_letter(
                MemoryRecord(b"{}", "dlq-failures", 0, offset),
                {"hivewire.listener": "x"},
                lambda o=offset: delivered.append(o),
            )
        wait_for(sent_again, "every letter to fail, and fail again when sent again, twice", 120)
        assert delivered == []  # never counted as done: their records are not committed
        # One thread serves the producer and its resends, however many letters fail (not one per letter).
        assert max(most_threads) <= threads_before + 1
        assert [t.name for t in threading.enumerate()].count("hivewire-dlq") == 1
    finally:
        source.close()


def test_dead_letters_from_many_threads_share_one_producer_and_wait_when_its_queue_is_full(
    kafka: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = f"dlq-burst-{uuid.uuid4().hex[:8]}"
    made: list[Producer] = []

    def slow_producer(conf: dict[str, Any]) -> Producer:
        # Fault injection: the only way to make the race of first dead letters (the polling thread's and
        # the workers') happen every run is to widen it.
        time.sleep(0.05)
        made.append(Producer(conf))
        return made[-1]

    monkeypatch.setattr(patched_module, "Producer", slow_producer)
    # A local queue of one message: nearly every send finds it full, and must wait without blocking its caller.
    source = hw.KafkaSource(kafka, topic, producer_config={"queue.buffering.max.messages": 1, "linger.ms": 0})
    workers, each = 8, 50
    start = threading.Barrier(workers)
    delivered: collections.Counter[int] = collections.Counter()
    lock = threading.Lock()

    def deliver(n: int) -> None:
        with lock:
            delivered[n] += 1

    def worker(w: int) -> None:
        start.wait()  # all at once: the first dead letters race to create the producer
        for i in range(each):
            n = w * each + i
            source.dead_letter(
                MemoryRecord(str(n).encode(), topic, 0, n), {"hivewire.listener": "x"}, lambda n=n: deliver(n)
            )

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
    threads_before = set(threading.enumerate())
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(made) == 1
        assert [t.name for t in threading.enumerate() if t not in threads_before].count("hivewire-dlq") == 1
        source.drain(60)  # everything sent, from the one producer (a second one would never be flushed)
        assert delivered == collections.Counter(range(workers * each))
    finally:
        source.close()
    values = sorted(int(v) for v, _ in read_to_end(kafka, f"{topic}.dlq"))
    assert values == list(range(workers * each))


def test_the_mock_kafka_example_in_hivewire_testing_runs() -> None:
    doc = testing.__doc__ or ""
    example = doc.split("run\nit beside the test::\n", 1)[1].split("\nLimits of the mock", 1)[0]
    code = textwrap.dedent(example)
    assert "auto.offset.reset" in code and "earliest" in code
    exec(compile(code, "hivewire.testing docstring", "exec"), {})  # its own asserts check it worked


def test_testing_produce_reports_what_kafka_did_not_take(kafka: str) -> None:
    topic = f"produce-{uuid.uuid4().hex[:8]}"
    event = testing.create_table_event("sales", "orders")
    assert testing.produce(kafka, topic, [event, hw.apiary.encode(event)]) == 2
    assert [hw.apiary.decode(value) for value, _headers in read_to_end(kafka, topic)] == [event, event]
    # Above librdkafka's message.max.bytes (1 MB by default): refused, and said so.
    with pytest.raises(hw.HivewireError, match=f"producing to '{topic}'.*too large"):
        testing.produce(kafka, topic, [b"x" * 2_000_000])
