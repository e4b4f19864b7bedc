"""Faults only a real Kafka cluster has, on three Apache Kafka brokers (replication factor 3, min.insync.replicas 2).

One broker is killed with SIGKILL under load and restarted; ``hivewire run`` (at least once, per-table order),
the shim's Kafka sink (no change without its event, the spool drains) and ``hivewire archive`` (exactly once by
offset) lose nothing. The figures (events, duplicates, time to recover) are printed with the test's output
(``pytest -s``), never asserted: these machines are shared and noisy.
"""

from __future__ import annotations

import collections
import itertools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import deltalake
import pytest
from confluent_kafka import Producer
from runtime_harness import PARTITIONS, read_to_end, stream
from waiting import wait_for

import hivewire as hw
from hivewire.data._archive_table import txn_app_id
from hivewire.events import _apiary as apiary
from hivewire.tools._kafka_broker import KafkaBroker, KafkaCluster, create_topic
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import KafkaSink, Shim

HIVEWIRE = str(Path(sys.executable).with_name("hivewire"))

LISTENERS = textwrap.dedent('''
    """Every call leaves a line in a file (line-buffered: survives kill -9 of the process)."""
    import os
    import hivewire as hw

    OUT = open(os.environ["HW_OUT"], "a", buffering=1)
    app = hw.App("faults")

    @app.on_add_partition
    def record(event):
        OUT.write(f"{time_ms()}\\t{event.table_name}\\t{event.partitions[0].values[0]}\\n")

    def time_ms():
        import time
        return int(time.time() * 1000)

    if os.environ.get("HW_FAIL"):
        @app.on_add_partition
        def failing(event):
            raise RuntimeError(f"always fails on {event.qualified_name}")
''')


def producer_for(bootstrap: str) -> Producer:
    # What the Apiary listener's producer guarantees: every replica in sync acknowledges; retries keep order.
    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})


def leader_of(cluster: KafkaCluster, topic: str, partition: int = 0) -> KafkaBroker:
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics(topic, timeout=10)
    leader = metadata.topics[topic].partitions[partition].leader
    return next(b for b in cluster.brokers if b.node_id == leader)


def kill_and_restart(broker: KafkaBroker, down: float = 5.0) -> None:
    """SIGKILL ``broker``, keep it down ``down`` seconds, start it again (same ports, same log directory)."""
    broker.stop(kill=True)
    time.sleep(down)
    broker.start()


@pytest.fixture(scope="module")
def cluster(kafka_cluster: KafkaCluster) -> KafkaCluster:
    return kafka_cluster


def test_run_loses_nothing_when_a_broker_dies_under_load(cluster: KafkaCluster, tmp_path: Path) -> None:
    topic = f"faults-run-{uuid.uuid4().hex[:8]}"
    create_topic(cluster.bootstrap_servers, topic, PARTITIONS, 3)
    (tmp_path / "faultlisteners.py").write_text(LISTENERS)
    out = tmp_path / "handled.tsv"
    env = {**os.environ, "HW_OUT": str(out), "PYTHONPATH": str(tmp_path)}
    log = (tmp_path / "run.log").open("ab")
    run = subprocess.Popen(
        [HIVEWIRE, "run", "faultlisteners:app", "--bootstrap-servers", cluster.bootstrap_servers, "--topic", topic,
         "--group", f"g-{topic}", "--from-beginning", "--endpoint-port", "0",
         "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500"],
        env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    n = 3_000
    payloads = stream(n, tables=30)
    producer = producer_for(cluster.bootstrap_servers)
    failures: list[Any] = []
    kill_at = n // 3
    try:
        for i, payload in enumerate(payloads):
            producer.produce(
                topic,
                payload,
                partition=apiary.partition_for(f"sales.t{i % 30:02d}", PARTITIONS),
                on_delivery=lambda err, _m: err is None or failures.append(err),
            )
            producer.poll(0)
            if i % 100 == 0:
                time.sleep(0.05)
            if i == kill_at:
                victim = leader_of(cluster, topic)
                print(f"killing broker {victim.node_id} (leader of partition 0) after {i} events")
                kill_and_restart(victim)
        assert producer.flush(120) == 0 and not failures, failures

        def handled() -> list[tuple[int, str, int]]:
            lines = out.read_text().splitlines() if out.exists() else []
            return [(int(t), table, int(seq)) for t, table, seq in (line.split("\t") for line in lines)]

        wait_for(lambda: len({seq for _, _, seq in handled()}) == n, f"all {n} events handled", 240)
    finally:
        run.send_signal(signal.SIGTERM)
        code = run.wait(90)
        log.close()
    assert code == 0, (tmp_path / "run.log").read_text()[-3000:]
    seen = handled()
    firsts: dict[str, list[int]] = collections.defaultdict(list)
    done: set[int] = set()
    for _, table, seq in seen:
        if seq not in done:
            done.add(seq)
            firsts[table].append(seq)
    for table, seqs in firsts.items():
        assert seqs == sorted(seqs), f"{table}: first deliveries out of order: {seqs[:20]}"
    assert done == set(range(n))
    times = sorted(t for t, _, _ in seen)
    stall = max(b - a for a, b in itertools.pairwise(times)) / 1000
    print(f"run: {n} events, {len(seen) - n} duplicates, longest pause in handling {stall:.1f} s (the broker was "
          "down 5 s)")  # fmt: skip


def test_the_shim_loses_no_change_when_a_broker_dies(
    cluster: KafkaCluster, metastore: LocalMetastore, tmp_path: Path, unique: str
) -> None:
    topic = f"faults-shim-{uuid.uuid4().hex[:8]}"
    create_topic(cluster.bootstrap_servers, topic, PARTITIONS, 3)
    sink = KafkaSink(cluster.bootstrap_servers, topic, tmp_path / "spool")
    shim = Shim(metastore.uri, sinks=[sink]).start()
    tables, per_table = 4, 60
    try:
        with hw.MetastoreClient(shim.uri) as client:
            location = (metastore.warehouse / f"{unique}.db").as_uri()
            client.create_database(make_database(unique, location=location))
            shapes = [make_table(unique, f"t{i}", partition_keys={"n": "int"}) for i in range(tables)]
            for table in shapes:
                client.create_table(table)
            killed_at = 0.0
            for n in range(per_table):
                for table in shapes:
                    client.add_partitions([make_partition(table, [str(n)])])
                if n == per_table // 3:
                    victim = leader_of(cluster, topic)
                    print(f"killing broker {victim.node_id} while the shim publishes")
                    threading.Thread(target=kill_and_restart, args=(victim,), daemon=True).start()
                    killed_at = time.monotonic()
        assert sink.wait_delivered(180), f"{sink.pending()} events still spooled 180 s after the last change"
        drained = time.monotonic() - killed_at
        messages = read_to_end(cluster.bootstrap_servers, topic)
    finally:
        shim.stop(10)
    adds: dict[str, list[int]] = collections.defaultdict(list)
    for value, _headers in messages:
        event = apiary.decode(value)
        if isinstance(event, hw.AddPartitionEvent):
            adds[event.table_name or ""] += [int(p.values[0]) for p in event.partitions]
    for i in range(tables):
        got = adds[f"t{i}"]
        assert sorted(set(got)) == list(range(per_table)), f"t{i}: missing {set(range(per_table)) - set(got)}"
        firsts = list(dict.fromkeys(got))
        assert firsts == list(range(per_table)), f"t{i}: out of order {firsts[:20]}"
    total = sum(len(v) for v in adds.values())
    print(f"shim: {tables * per_table} changes, {total - tables * per_table} duplicates, spool drained {drained:.1f} s "
          "after the kill")  # fmt: skip


@pytest.fixture
def archive_topic(cluster: KafkaCluster) -> Iterator[str]:
    topic = f"faults-archive-{uuid.uuid4().hex[:8]}"
    create_topic(cluster.bootstrap_servers, topic, PARTITIONS, 3)
    yield topic


def test_archive_is_exactly_once_when_a_broker_dies(cluster: KafkaCluster, archive_topic: str, tmp_path: Path) -> None:
    topic, table = archive_topic, tmp_path / "events"
    log = (tmp_path / "archive.log").open("ab")
    archiver = subprocess.Popen(
        [HIVEWIRE, "archive", "--bootstrap-servers", cluster.bootstrap_servers, "--topic", topic, "--table", str(table),
         "--group", f"g-{topic}", "--from-beginning", "--flush-events", "500", "--flush-seconds", "1",
         "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    n = 4_000
    payloads = stream(n, tables=40)
    coordinates: set[tuple[int, int]] = set()
    producer = producer_for(cluster.bootstrap_servers)
    try:
        for i, payload in enumerate(payloads):

            def delivered(err: Any, msg: Any) -> None:
                assert err is None, err
                coordinates.add((msg.partition(), msg.offset()))

            producer.produce(topic, payload, partition=i % PARTITIONS, on_delivery=delivered)
            producer.poll(0)
            if i % 200 == 0:
                time.sleep(0.05)
            if i == n // 2:
                victim = leader_of(cluster, topic)
                print(f"killing broker {victim.node_id} while the archive streams")
                kill_and_restart(victim)
        assert producer.flush(120) == 0
        last = {p: max(o for q, o in coordinates if q == p) for p in range(PARTITIONS)}

        def caught_up() -> bool:
            if not (table / "_delta_log").exists():
                return False
            dt = deltalake.DeltaTable(str(table))
            return [dt.transaction_version(txn_app_id(topic, p)) for p in range(PARTITIONS)] == [
                last[p] for p in range(PARTITIONS)
            ]

        wait_for(caught_up, "the archive to commit every offset", 240)
    finally:
        archiver.send_signal(signal.SIGTERM)
        code = archiver.wait(90)
        log.close()
    assert code == 0, (tmp_path / "archive.log").read_text()[-3000:]
    rows = deltalake.DeltaTable(str(table)).to_pyarrow_table(columns=["kafka_partition", "kafka_offset"])
    got = list(zip(rows["kafka_partition"].to_pylist(), rows["kafka_offset"].to_pylist(), strict=True))
    assert len(got) == len(set(got)), f"{len(got) - len(set(got))} duplicate rows"
    assert set(got) == coordinates
    print(f"archive: {n} events, 0 duplicates, every offset once")


def set_topic_config(bootstrap: str, topic: str, **settings: str) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entries = [
        ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET) for k, v in settings.items()
    ]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.incremental_alter_configs(
        [ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries)]
    ).values():
        future.result(30)


def test_run_reports_the_exact_range_retention_deleted_while_it_was_stopped(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    from confluent_kafka import Consumer, TopicPartition

    bootstrap = kafka_broker.bootstrap_servers
    topic, group = f"faults-retention-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 2, 1, {"segment.ms": "500"})
    (tmp_path / "faultlisteners.py").write_text(LISTENERS)
    out = tmp_path / "handled.tsv"
    env = {**os.environ, "HW_OUT": str(out), "PYTHONPATH": str(tmp_path)}
    logfile = tmp_path / "run.log"

    def start() -> subprocess.Popen[bytes]:
        with logfile.open("ab") as log:
            return subprocess.Popen(
                [HIVEWIRE, "run", "faultlisteners:app", "--bootstrap-servers", bootstrap, "--topic", topic,
                 "--group", group, "--from-beginning", "--endpoint-port", "0"],
                env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def handled() -> set[int]:
        return {int(line.split("\t")[2]) for line in out.read_text().splitlines()} if out.exists() else set()

    payloads = stream(600, tables=10)
    producer = producer_for(bootstrap)

    def send(batch: range) -> None:
        for i in batch:
            producer.produce(topic, payloads[i], partition=i % 2)
        assert producer.flush(60) == 0

    run = start()
    send(range(100))
    wait_for(lambda: handled() == set(range(100)), "the first 100 events handled", 120)
    run.send_signal(signal.SIGTERM)
    assert run.wait(90) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    committed = {tp.partition: tp.offset for tp in consumer.committed([TopicPartition(topic, p) for p in (0, 1)])}
    assert committed == {0: 50, 1: 50}

    # While the group is stopped: 300 more events, then retention deletes the segments holding most of them.
    send(range(100, 400))
    set_topic_config(bootstrap, topic, retention_ms="2000")
    time.sleep(2.5)
    send(range(400, 500))  # rolls the segments (segment.ms), so the older ones can be deleted

    def first_retained() -> dict[int, int]:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[0] for p in (0, 1)
        }

    wait_for(lambda: all(first_retained()[p] > committed[p] for p in (0, 1)), "retention to delete records", 120)
    set_topic_config(bootstrap, topic, retention_ms="-1")
    lost = first_retained()
    consumer.close()
    run = start()
    try:
        send(range(500, 600))
        # every record still retained is handled, and what was deleted is reported, exactly
        retained = {i for i in range(100, 600) if i // 2 >= lost[i % 2]}
        wait_for(lambda: retained <= handled(), "every retained event handled", 120)
    finally:
        run.send_signal(signal.SIGTERM)
        assert run.wait(90) == 0
    lines = [line for line in logfile.read_text().splitlines() if "records lost to retention" in line]
    expected = {f"{topic}/{p} offsets {committed[p]}-{lost[p] - 1} ({lost[p] - committed[p]} records)" for p in (0, 1)}
    assert {next(e for e in expected if e in line) for line in lines} == expected and len(lines) == 2, lines
    missing = sum(lost[p] - committed[p] for p in (0, 1))
    assert not handled() & {i for i in range(100, 600) if i // 2 < lost[i % 2]}
    print(f"retention: {missing} records deleted before the group read them, reported as {len(lines)} ranges")


def test_a_dead_letter_too_large_for_the_topic_is_shrunk_and_arrives(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    topic = f"faults-large-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1, 1)
    # The dead-letter topic takes at most 20,000 bytes a record: far below the dead-letter producer's own limit
    # (librdkafka's default, 1,000,000), so only the broker can refuse. Random hex: compression cannot shrink
    # the 200 KB letter below the topic's limit (the limit applies to the compressed batch).
    create_topic(bootstrap, f"{topic}.dlq", 1, 1, {"max.message.bytes": "20000"})
    table = make_table("db", "big", partition_keys={"seq": "string"})
    large = apiary.encode(
        hw.AddPartitionEvent(
            table=table, partitions=[make_partition(table, ["0"])], parameters={"big": os.urandom(100_000).hex()}
        )
    )
    small = apiary.encode(hw.AddPartitionEvent(table=table, partitions=[make_partition(table, ["1"])]))
    producer = producer_for(bootstrap)
    for value in (large, small):
        producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0
    (tmp_path / "faultlisteners.py").write_text(LISTENERS)
    env = {**os.environ, "HW_OUT": str(tmp_path / "handled.tsv"), "PYTHONPATH": str(tmp_path), "HW_FAIL": "1"}
    log = tmp_path / "run.log"
    with log.open("ab") as out:
        run = subprocess.Popen(
            [HIVEWIRE, "run", "faultlisteners:app", "--bootstrap-servers", bootstrap, "--topic", topic,
             "--group", f"g-{topic}", "--from-beginning", "--endpoint-port", "0",
             "--set", "hivewire.retry.max.attempts=1", "--set", "hivewire.commit.interval.ms=200"],
            env=env, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for(lambda: len(read_to_end(bootstrap, f"{topic}.dlq")) >= 2, "both dead letters", 120)
    finally:
        run.send_signal(signal.SIGTERM)
        assert run.wait(90) == 0
    letters = {h["hivewire.source.offset"]: (v, h) for v, h in read_to_end(bootstrap, f"{topic}.dlq")}
    assert sorted(letters) == ["0", "1"]
    value, headers = letters["0"]
    assert headers["hivewire.listener"] == "failing"
    assert headers["hivewire.original.size"] == str(len(large))
    assert headers["hivewire.original.stored"] in ("truncated", "reference")
    # halved until the broker took it (the limit is on the compressed batch, so the stored prefix may exceed it)
    assert len(value or b"") <= len(large) // 2 and large.startswith(value or b"")
    assert letters["1"][0] == small and "hivewire.original.stored" not in letters["1"][1], sorted(
        letters["1"][1].items()
    )
    assert "the broker refused 1 dead letter(s)" in log.read_text()
    print(f"dead letter: {len(large)} bytes refused by the topic's 20,000-byte limit, stored "
          f"{headers['hivewire.original.stored']} as {len(value or b'')} bytes")  # fmt: skip


def test_a_consumer_group_storm_loses_nothing_and_leaves_no_partition_unowned(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    import random

    from confluent_kafka.admin import AdminClient

    bootstrap = kafka_broker.bootstrap_servers
    topic, group = f"faults-storm-{uuid.uuid4().hex[:8]}", f"g-storm-{uuid.uuid4().hex[:8]}"
    partitions = 6
    create_topic(bootstrap, topic, partitions, 1)
    (tmp_path / "faultlisteners.py").write_text(LISTENERS)
    out = tmp_path / "handled.tsv"
    env = {**os.environ, "HW_OUT": str(out), "PYTHONPATH": str(tmp_path)}
    logs: dict[int, Path] = {}

    def start() -> subprocess.Popen[bytes]:
        logfile = tmp_path / f"instance-{len(logs)}.log"
        with logfile.open("ab") as log:
            proc = subprocess.Popen(
                [HIVEWIRE, "run", "faultlisteners:app", "--bootstrap-servers", bootstrap, "--topic", topic,
                 "--group", group, "--from-beginning", "--endpoint-port", "0",
                 "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500"],
                env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            logs[proc.pid] = logfile
            return proc

    def running(proc: subprocess.Popen[bytes]) -> bool:
        return "running 1 listener(s)" in logs[proc.pid].read_text()

    n = 3_000
    payloads = stream(n, tables=60)
    producing = threading.Event()

    def produce() -> None:
        producer = producer_for(bootstrap)
        for i, payload in enumerate(payloads):
            producer.produce(topic, payload, partition=apiary.partition_for(f"sales.t{i % 60:02d}", partitions))
            producer.poll(0)
            if i % 50 == 0:
                time.sleep(0.05)
        assert producer.flush(60) == 0
        producing.set()

    rng = random.Random(int(os.environ.get("HIVEWIRE_TEST_SEED", "28")))
    instances = [start() for _ in range(3)]
    streaming = threading.Thread(target=produce)
    streaming.start()
    kills = starts = 0
    try:
        storm_ends = time.monotonic() + 60
        while time.monotonic() < storm_ends:
            time.sleep(rng.uniform(2, 5))
            victim = instances.pop(rng.randrange(len(instances)))
            victim.send_signal(signal.SIGKILL)
            victim.wait(30)
            kills += 1
            if len(instances) < 2 or rng.random() < 0.7:
                instances.append(start())
                starts += 1
        streaming.join()

        def handled() -> set[int]:
            lines = out.read_text().splitlines() if out.exists() else []
            return {int(line.split("\t")[2]) for line in lines}

        wait_for(lambda: handled() == set(range(n)), f"all {n} events handled after the storm", 240)

        admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: its futures resolve while it lives

        def owned() -> set[int]:
            description = admin.describe_consumer_groups([group])[group].result(30)
            return {tp.partition for m in description.members for tp in m.assignment.topic_partitions}

        wait_for(lambda: owned() == set(range(partitions)), "every partition owned by a live instance", 120)
        # an instance started at the storm's last moment may still be importing: SIGTERM before its handlers
        # are installed would end it with the default action, which is not what this test is about
        wait_for(lambda: all(running(proc) for proc in instances), "the last instances to be running", 120)
    finally:
        for proc in instances:
            proc.send_signal(signal.SIGTERM)
        codes = [proc.wait(90) for proc in instances]
    assert codes == [0] * len(instances), [logs[proc.pid].read_text()[-2000:] for proc in instances]
    lines = out.read_text().splitlines()
    print(f"storm: {kills} kill -9 and {starts} starts in 60 s; {n} events, {len(lines) - n} duplicates; "
          f"{len(instances)} instances own all {partitions} partitions after it")  # fmt: skip
