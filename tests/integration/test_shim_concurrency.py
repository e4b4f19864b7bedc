"""50 clients reading and writing through one shim process: no error, and every successful write has its event.

The duration is HIVEWIRE_SHIM_SOAK_SECONDS (default 60, as the issue asks; CI may lower it). The shim runs as
``hivewire shim`` in its own process, so the 50 client threads here do not share its interpreter.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

import hivewire as hw
from hivewire import apiary
from hivewire.events import AddPartitionEvent, AlterTableEvent
from hivewire.local import LocalMetastore, free_port
from hivewire.testing import make_database, make_partition, make_table

CLIENTS = 50
SECONDS = float(os.environ.get("HIVEWIRE_SHIM_SOAK_SECONDS", "60"))
PARTITIONS = 4


@pytest.fixture
def shim_process(metastore: LocalMetastore, kafka: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    topic, port = f"soak-{uuid.uuid4().hex[:8]}", free_port()
    Producer({"bootstrap.servers": kafka}).list_topics(topic, timeout=10)  # the mock creates it
    log = tmp_path / "shim.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hivewire", "shim", "--upstream", metastore.uri, "--bind", "127.0.0.1",
             "--port", str(port), "--kafka-bootstrap-servers", kafka, "--topic", topic,
             "--spool-dir", str(tmp_path / "spool")], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield f"thrift://127.0.0.1:{port}", topic
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(120) == 0, log.read_text()[-5000:]
    assert "Traceback" not in log.read_text(), log.read_text()[-5000:]


class Collector(threading.Thread):
    """Consumes the topic while the load runs (the mock cluster keeps only a few MB per partition)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"soak-{uuid.uuid4().hex}",
                                  "enable.auto.commit": False})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        self.messages: list[Any] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.messages += [m for m in self.consumer.consume(1000, 0.2) if m.error() is None]
        self.consumer.close()


def client_loop(uri: str, table: Any, until: float, writes: list[tuple[str, int]], errors: list[str]) -> None:
    """Three reads, then one write (alternately an alter and an add_partition), until ``until``."""
    try:
        with hw.MetastoreClient(uri, timeout=120) as client:
            step = 0
            while time.monotonic() < until:
                assert client.get_table(table.dbName, table.tableName).tableName == table.tableName
                client.get_partition_names(table.dbName, table.tableName)
                client.get_all_databases()
                if step % 2:
                    stored = client.get_table(table.dbName, table.tableName)
                    stored.parameters["step"] = str(step)
                    client.alter_table(table.dbName, table.tableName, stored)
                    writes.append(("alter", step))
                else:
                    client.add_partition(make_partition(table, [str(step)]))
                    writes.append(("add", step))
                step += 1
    except Exception as e:
        errors.append(f"{table.tableName}: {type(e).__name__}: {e}")


def test_50_clients_for_a_while_no_error_no_lost_event(shim_process: tuple[str, str], metastore: LocalMetastore,
                                                       kafka: str, unique: str) -> None:
    uri, topic = shim_process
    with hw.MetastoreClient(metastore.uri) as direct:
        direct.create_database(make_database(unique, location=(metastore.warehouse / f"{unique}.db").as_uri()))
        tables = [make_table(unique, f"c{i:02d}", partition_keys={"n": "int"},
                             location=(metastore.warehouse / unique / f"c{i:02d}").as_uri()) for i in range(CLIENTS)]
        for t in tables:
            direct.create_table(t)
    collector = Collector(kafka, topic)
    collector.start()
    writes: dict[str, list[tuple[str, int]]] = {t.tableName: [] for t in tables}
    errors: list[str] = []
    until = time.monotonic() + SECONDS
    threads = [threading.Thread(target=client_loop, args=(uri, t, until, writes[t.tableName], errors))
               for t in tables]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SECONDS + 300)
    assert errors == []
    total = sum(len(w) for w in writes.values())
    assert total >= CLIENTS  # every client got writes in
    deadline = time.monotonic() + 120
    while len(collector.messages) < total and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    collector.stop.set()
    collector.join(10)
    got: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
    for m in sorted(collector.messages, key=lambda m: (m.partition(), m.offset())):
        event = apiary.decode(m.value())
        assert m.partition() == apiary.partition_for(event.qualified_name, PARTITIONS)
        if isinstance(event, AlterTableEvent):
            got[event.table_name or ""].append(("alter", int(event.new_table.parameters["step"])))
        elif isinstance(event, AddPartitionEvent):
            got[event.table_name or ""].append(("add", int(event.partitions[0].values[0])))
    for name, expected in writes.items():
        assert got[name] == expected, f"{name}: {len(expected)} writes, events differ"
    with hw.MetastoreClient(metastore.uri, timeout=300) as direct:
        direct.drop_database(unique, True, True)
