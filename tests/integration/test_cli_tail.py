"""``hivewire tail`` against a real Apache Kafka broker: filters, JSON, from the beginning or the end.

(tail assigns partitions and joins no consumer group.)
"""

from __future__ import annotations

import json
import threading
import time

from click.testing import CliRunner
from confluent_kafka import Producer

import hivewire as hw
from hivewire.tools import _testing as testing
from hivewire.tools._cli import main
from hivewire.tools._tail import tail


def _events() -> list[hw.ListenerEvent]:
    return [
        testing.make_event(hw.CreateTableEvent, "sales", "orders"),
        testing.make_event(hw.AddPartitionEvent, "sales", "orders"),
        testing.make_event(hw.CreateTableEvent, "hr", "people"),
        testing.make_event(hw.DropTableEvent, "sales", "returns"),
    ]


def test_tail_prints_filters_and_exits_at_the_end(kafka: str, unique: str) -> None:
    assert testing.produce(kafka, unique, _events()) == 4
    producer = Producer({"bootstrap.servers": kafka, "enable.idempotence": True})
    producer.produce(unique, b"not json", partition=0)  # reported, skipped
    assert producer.flush(30) == 0
    del producer
    common = ["tail", "--bootstrap-servers", kafka, "--topic", unique, "--from-beginning", "-e"]
    runner = CliRunner()

    everything = runner.invoke(main, common)
    assert everything.exit_code == 0, everything.output
    lines = everything.stdout.splitlines()
    assert sorted(line.split()[2] for line in lines) == sorted(
        ["CREATE_TABLE", "ADD_PARTITION", "CREATE_TABLE", "DROP_TABLE"]
    )
    assert any("sales.orders" in line and "dt=2024-01-01" in line for line in lines)
    assert "not an Apiary event" in everything.stderr

    tables = runner.invoke(main, [*common, "--type", "create_table", "--db", "sal*"])
    assert [line.split()[2:4] for line in tables.stdout.splitlines()] == [["CREATE_TABLE", "sales.orders"]]
    by_table = runner.invoke(main, [*common, "--table", "*.returns"])
    assert [line.split()[3] for line in by_table.stdout.splitlines()] == ["sales.returns"]

    as_json = runner.invoke(main, [*common, "--json", "--db", "hr"])
    (message,) = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert message["eventType"] == "ON_CREATE_TABLE" and message["table"]["dbName"] == "hr"

    bad = runner.invoke(main, [*common, "--type", "CREATE_TABEL"])
    assert bad.exit_code == 2 and "no event type 'CREATE_TABEL'" in bad.output


def test_tail_follows_new_events_from_the_end(kafka: str, unique: str) -> None:
    testing.produce(kafka, unique, _events()[:1])  # before the tail starts: not shown without --from-beginning
    stop = threading.Event()
    seen: list[str] = []

    def follow() -> None:
        for record in tail(kafka, unique, stop=stop):
            assert record.event is not None
            seen.append(record.event.qualified_name)
            stop.set()

    reader = threading.Thread(target=follow)
    reader.start()
    deadline = time.monotonic() + 60
    while not seen and time.monotonic() < deadline:  # the tail starts at the end: publish until it sees one
        testing.produce(kafka, unique, [testing.make_event(hw.DropTableEvent, "late", "arrival")])
        time.sleep(1)
    stop.set()
    reader.join(60)
    assert seen == ["late.arrival"]


def test_tail_says_what_to_check_when_kafka_is_not_there(unique: str) -> None:
    result = CliRunner().invoke(main, ["tail", "--bootstrap-servers", "127.0.0.1:1", "--topic", unique, "-e"])
    assert result.exit_code == 1 and "cannot reach Kafka at 127.0.0.1:1" in result.output


def test_tail_names_a_missing_topic(kafka: str, unique: str) -> None:
    result = CliRunner().invoke(main, ["tail", "--bootstrap-servers", kafka, "--topic", unique + "x", "-e"])
    assert result.exit_code == 1 and "does not exist" in result.output
