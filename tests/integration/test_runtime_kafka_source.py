"""KafkaSource's own failure reporting on librdkafka's mock cluster, and hivewire.testing's Kafka example."""

from __future__ import annotations

import textwrap
import threading
import uuid
from collections.abc import Callable

import pytest
from runtime_harness import wait_for

import hivewire as hw
from hivewire import testing
from hivewire.metrics import Metrics
from hivewire.source import MemoryRecord, Record


def poll_until(source: hw.KafkaSource, predicate: Callable[[], bool], what: str) -> None:
    """Poll (librdkafka serves its callbacks in poll) until ``predicate()``."""
    def polled() -> bool:
        source.poll(10, 0.2)
        return predicate()
    wait_for(polled, 60, what)


def test_refused_offset_commits_are_counted_and_logged(kafka: str, caplog: pytest.LogCaptureFixture) -> None:
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
        wait_for(got_one, 60, "the consumer to join and read the record")
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
    source = hw.KafkaSource(kafka, "dlq-failures", producer_config={
        "bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": 300, "linger.ms": 0})
    metrics = Metrics()
    source.attach_metrics(metrics)
    delivered = threading.Event()
    try:
        source.dead_letter(MemoryRecord(b"{}", "dlq-failures", 0, 0), {"hivewire.listener": "x"}, delivered.set)
        wait_for(lambda: metrics.dead_letter_failures._value.get() >= 2, 60, "a failed send and a failed retry")
        assert not delivered.is_set()  # never counted as done: its record is not committed
    finally:
        source.close()


def test_the_mock_kafka_example_in_hivewire_testing_runs() -> None:
    doc = testing.__doc__ or ""
    example = doc.split("run\nit beside the test::\n", 1)[1].split("\nLimits of the mock", 1)[0]
    code = textwrap.dedent(example)
    assert "auto.offset.reset" in code and "earliest" in code
    exec(compile(code, "hivewire.testing docstring", "exec"), {})  # its own asserts check it worked
