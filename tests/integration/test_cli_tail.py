"""``hivewire tail`` against a real Apache Kafka broker: filters, JSON, from the beginning or the end.

(tail assigns partitions and joins no consumer group.)
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time

import pytest
from click.testing import CliRunner
from confluent_kafka import ConsumerGroupTopicPartitions, Producer
from confluent_kafka.admin import AdminClient
from waiting import wait_for

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


def test_tail_says_when_it_reached_the_end_and_its_help_speaks_of_no_group(
    kafka: str, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 33, item 9: kcat says it reached the end of a topic; tail joins no group (the broker's own group
    list, read while it reads, shows none reading or committing the topic), and its help says so."""
    assert testing.produce(kafka, unique, _events()) == 4
    groups_before = _groups(kafka)
    stop = threading.Event()
    seen: list[str] = []

    def follow() -> None:
        for record in tail(kafka, unique, from_beginning=True, stop=stop):
            seen.append(str(record.origin))

    caplog.set_level(logging.INFO, logger="hivewire.tail")
    reader = threading.Thread(target=follow)
    reader.start()
    try:
        wait_for(lambda: any("reached the end" in r.getMessage() for r in caplog.records), "the end of the topic", 60)
        # While it reads: no group the broker knows of has a member reading the topic or offsets committed on it.
        new_groups = _groups(kafka) - groups_before
        assert _groups_on(kafka, new_groups, unique) == [], "tail joined or committed as a consumer group"
    finally:
        stop.set()
        reader.join(60)
    assert _groups_on(kafka, _groups(kafka) - groups_before, unique) == []
    (end,) = [r.getMessage() for r in caplog.records if "reached the end" in r.getMessage()]
    expected = rf"reached the end of {unique} \(\d+ partition\(s\), 4 message\(s\) read\); waiting for new events"
    assert re.fullmatch(expected + r" \(Ctrl-C stops\)", end), end
    assert len(seen) == 4
    help_text = " ".join(CliRunner().invoke(main, ["tail", "--help"]).output.split())
    assert "committed offset" not in help_text and "the group" not in help_text
    assert "Start from each partition's oldest retained message instead of its end." in help_text


def _groups(kafka: str) -> set[str]:
    """The consumer groups the broker knows of (its own list, as kafka-consumer-groups.sh --list shows)."""
    admin = AdminClient({"bootstrap.servers": kafka})  # kept until the answer is in (else it is destroyed)
    listed = admin.list_consumer_groups(request_timeout=30).result()
    assert not listed.errors, listed.errors
    return {g.group_id for g in listed.valid}


def _groups_on(kafka: str, groups: set[str], topic: str) -> list[str]:
    """Those of ``groups`` with a member assigned ``topic`` or offsets committed on it."""
    if not groups:
        return []
    admin = AdminClient({"bootstrap.servers": kafka})
    found = []
    for group_id, future in admin.describe_consumer_groups(sorted(groups), request_timeout=30).items():
        members = future.result().members
        if any(tp.topic == topic for m in members for tp in (m.assignment.topic_partitions if m.assignment else [])):
            found.append(f"{group_id} (a member reads {topic})")
    for group_id in sorted(groups):
        request = [ConsumerGroupTopicPartitions(group_id)]
        committed = admin.list_consumer_group_offsets(request, request_timeout=30)[group_id].result()
        if any(tp.topic == topic and tp.offset >= 0 for tp in committed.topic_partitions or []):
            found.append(f"{group_id} (offsets committed on {topic})")
    return found
