"""When a client learns its change succeeded (only once the event is published), and the order of the events of
changes several clients make to one table at the same time (the order the metastore applied them)."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events._model import AddPartitionEvent, AlterPartitionEvent, AlterTableEvent, EventType, ListenerEvent
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import KafkaSink, Shim


@pytest.fixture
def db(metastore: LocalMetastore, unique: str) -> Iterator[str]:
    with hw.MetastoreClient(metastore.uri) as client:
        client.create_database(make_database(unique, location=(metastore.warehouse / f"{unique}.db").as_uri()))
    yield unique
    with hw.MetastoreClient(metastore.uri, timeout=300) as client:
        client.drop_database(unique, True, True)


class Gate:
    """A sink whose publish waits until the test lets it go."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.events: list[ListenerEvent] = []

    def publish(self, event: ListenerEvent) -> None:
        self.entered.set()
        self.release.wait(60)
        self.events.append(event)

    def close(self, timeout: float | None = None) -> None:
        self.release.set()


def test_a_client_sees_its_change_succeed_only_once_its_event_is_published(metastore: LocalMetastore, db: str) -> None:
    gate = Gate()
    table = make_table(db, "gated", location=(metastore.warehouse / db / "gated").as_uri())
    replied = threading.Event()
    order: list[str] = []  # "replied" (the client thread) and "released" (the test), as they happen
    errors: list[BaseException] = []

    def create() -> None:
        try:
            with hw.MetastoreClient(shim.uri, timeout=120) as client:
                client.create_table(table)
            order.append("replied")
            replied.set()
        except BaseException as e:
            errors.append(e)

    with Shim(metastore.uri, sinks=[gate]) as shim:
        thread = threading.Thread(target=create)
        thread.start()
        try:
            assert gate.entered.wait(60), "no event was published"
            # The metastore made the change and the event is being published: the reply must wait for it.
            with hw.MetastoreClient(metastore.uri) as direct:
                assert direct.get_table(db, "gated").tableName == "gated"
            # Not a time assertion: the publication is held for a moment (so that a reply relayed too early
            # has the time to reach the client), and what is asserted is the order. A loaded machine can only
            # make a wrong reply arrive later, never make a right one look early.
            replied.wait(1.0)
        finally:
            order.append("released")
            gate.release.set()
            thread.join(60)
    assert errors == [] and replied.is_set()
    assert order == ["released", "replied"], "the client got its reply before the event was published"
    assert [e.event_type for e in gate.events] == [EventType.CREATE_TABLE]


WRITERS = 5
ROUNDS = 8


def writer(uri: str, table: Any, w: int, errors: list[BaseException]) -> None:
    """Alter the table, add a partition, alter partition n=0: each change made on top of whatever is there."""
    try:
        with hw.MetastoreClient(uri, timeout=120) as client:
            for i in range(ROUNDS):
                stored = client.get_table(table.dbName, table.tableName)
                stored.parameters["writer"] = f"{w}-{i}"
                client.alter_table(table.dbName, table.tableName, stored)
                client.add_partition(make_partition(table, [str(1000 * (w + 1) + i)]))
                part = client.get_partition(table.dbName, table.tableName, ["0"])
                part.parameters = {**(part.parameters or {}), "writer": f"{w}-{i}"}
                client.alter_partition(table.dbName, table.tableName, part)
    except BaseException as e:
        errors.append(e)


def all_messages(bootstrap: str, topic: str, expected: int, timeout: float = 120) -> list[Any]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex}", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(4)])
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            out += [m for m in consumer.consume(1000, 0.5) if m.error() is None]
        out += [m for m in consumer.consume(1000, 1.0) if m.error() is None]  # nothing more should come
        return out
    finally:
        consumer.close()


def test_concurrent_changes_to_one_table_are_published_in_the_order_the_metastore_made_them(
    metastore: LocalMetastore, kafka: str, db: str, tmp_path: Path
) -> None:
    table = make_table(
        db, "shared", partition_keys={"n": "int"}, location=(metastore.warehouse / db / "shared").as_uri()
    )
    with hw.MetastoreClient(metastore.uri) as direct:
        direct.create_table(table)
        direct.add_partition(make_partition(table, ["0"]))
        start_table, start_part = direct.get_table(db, "shared"), direct.get_partition(db, "shared", ["0"])
    topic = f"order-{uuid.uuid4().hex[:8]}"
    sink = KafkaSink(kafka, topic, tmp_path / "spool")
    errors: list[BaseException] = []
    with Shim(metastore.uri, sinks=[sink]) as shim:
        threads = [threading.Thread(target=writer, args=(shim.uri, table, w, errors)) for w in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        assert errors == []
        assert sink.wait_delivered(120)
    with hw.MetastoreClient(metastore.uri) as direct:
        end_table, end_part = direct.get_table(db, "shared"), direct.get_partition(db, "shared", ["0"])
    messages = all_messages(kafka, topic, WRITERS * ROUNDS * 3)
    assert len({m.partition() for m in messages}) == 1  # one table: one partition, one order
    events = [apiary.decode(m.value()) for m in sorted(messages, key=lambda m: m.offset())]
    assert len(events) == WRITERS * ROUNDS * 3
    # Each alter's "before" is the previous alter's "after", exactly as stored: the events are in the order
    # the metastore applied the changes (an event out of place breaks the chain).
    alters = [e for e in events if isinstance(e, AlterTableEvent)]
    assert alters[0].old_table.parameters == start_table.parameters
    for previous, current in itertools.pairwise(alters):
        assert current.old_table.parameters == previous.new_table.parameters
    assert alters[-1].new_table.parameters == end_table.parameters
    part_alters = [e for e in events if isinstance(e, AlterPartitionEvent)]
    assert part_alters[0].old_partition.parameters == start_part.parameters
    for previous_part, current_part in itertools.pairwise(part_alters):
        assert current_part.old_partition.parameters == previous_part.new_partition.parameters
    assert part_alters[-1].new_partition.parameters == end_part.parameters
    # And each writer's own changes in the order it made them.
    for w in range(WRITERS):
        mine = [
            e
            for e in events
            if (isinstance(e, AlterTableEvent) and e.new_table.parameters["writer"].startswith(f"{w}-"))
            or (isinstance(e, AddPartitionEvent) and e.partitions[0].values[0].startswith(str(w + 1)))
        ]
        assert [e.event_type for e in mine] == [EventType.ALTER_TABLE, EventType.ADD_PARTITION] * ROUNDS
        adds = [int(e.partitions[0].values[0]) for e in mine if isinstance(e, AddPartitionEvent)]
        assert adds == [1000 * (w + 1) + i for i in range(ROUNDS)]
