"""Issue 4's acceptance, end to end: ``hivewire run`` in its own process against Kafka (librdkafka's mock cluster)."""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from runtime_harness import PARTITIONS, stream, wait_for

from hivewire import apiary
from hivewire.local import free_port

LISTENERS = textwrap.dedent('''
    """Listeners for the process tests: every call leaves a line in a file (line-buffered: kill -9 safe)."""
    import os, threading
    import hivewire as hw

    OUT = os.environ["HW_OUT"]
    N = int(os.environ.get("HW_N", "0"))
    _lock = threading.Lock()
    _files = {}
    _count = {"healthy": 0}

    def write(name, line):
        with _lock:
            f = _files.get(name)
            if f is None:
                f = _files[name] = open(f"{OUT}/{name}.log", "a", buffering=1)
            f.write(line + "\\n")

    def seq(event):
        return int(event.partitions[0].values[0])

    app = hw.App("acceptance")

    @app.on_add_partition(name="healthy")
    def healthy(event):
        o = event.origin
        write("healthy", f"{os.getpid()}\\t{event.qualified_name}\\t{seq(event)}\\t{o.partition}\\t{o.offset}")
        with _lock:
            _count["healthy"] += 1
            done = _count["healthy"] == N
        if done:
            write("timeline", "healthy-done")

    if os.environ.get("HW_AUDIT"):
        @app.on_add_partition(name="audit")
        def audit(event):
            write("audit", f"{os.getpid()}\\t{seq(event)}\\t{event.origin.partition}\\t{event.origin.offset}")

    if os.environ.get("HW_FAILING"):
        @app.on_add_partition(name="failing")
        def failing(event):
            raise RuntimeError(f"always fails on {event.qualified_name}")

    if os.environ.get("HW_SLEEPER_SEQ"):
        import time

        @app.on_add_partition(name="sleeper")
        def sleeper(event):
            if seq(event) == int(os.environ["HW_SLEEPER_SEQ"]):
                write("timeline", "sleeper-asleep")
                time.sleep(10)
                write("timeline", "sleeper-woke")

    class Audit(hw.MetaStoreEventListener):
        """Drone Fly style: named in apiary.listener.list, constructed with the configuration."""

        def __init__(self, config):
            super().__init__(config)
            self.tag = config.get("audit.tag", "none")

        def on_add_partition(self, event):
            write("dronefly", f"{self.tag}\\t{seq(event)}")
''')


def produce(bootstrap: str, topic: str, payloads: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "zstd",
                         "batch.size": 2_000_000})
    for payload in payloads:
        try:
            partition = apiary.partition_for(json.loads(payload).get("qualifiedTableName") or "", PARTITIONS)
        except (ValueError, AttributeError):
            partition = random.randrange(PARTITIONS)
        while True:
            try:
                producer.produce(topic, payload, partition=partition)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0


def committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
        return {tp.partition: tp.offset for tp in tps if tp.offset >= 0}
    finally:
        consumer.close()


def dead_letters(bootstrap: str, topic: str, expected: int, timeout: float = 120) -> list[tuple[bytes, dict[str, str]]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"dlq-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})
    out: list[tuple[bytes, dict[str, str]]] = []
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.5):
                if m.error() is None:
                    out.append((m.value(), {k: v.decode() for k, v in (m.headers() or [])}))
        return out
    finally:
        consumer.close()


def lines(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    return [line.split("\t") for line in path.read_text().splitlines() if line]


class Runner:
    """A ``hivewire run`` process in a temporary working directory that holds the listener module."""

    def __init__(self, workdir: Path, args: list[str], env: dict[str, str]) -> None:
        self.workdir = workdir
        self.log = workdir / "runner.log"
        self.args = args
        self.env = {**os.environ, "HW_OUT": str(workdir), **env}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "hivewire", "--log-level", "INFO", "run",
                                          *self.args], cwd=self.workdir, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(30)

    def terminate(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(120)

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:]) if self.log.exists() else ""


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "acceptance_listeners.py").write_text(LISTENERS)
    yield tmp_path


def base_args(bootstrap: str, topic: str, group_name: str, port: int = 0) -> list[str]:
    return ["acceptance_listeners:app", "--bootstrap-servers", bootstrap, "--topic", topic,
            "--instance-name", group_name, "--endpoint-port", str(port),
            "--set", "apiary.messaging.consumer.auto.offset.reset=earliest",
            "--set", "hivewire.commit.interval.ms=200"]


def metric(port: int, name: str, listener: str | None = None) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    label = f'{{listener="{listener}"}}' if listener else ""
    for line in text.splitlines():
        if line.startswith(f"{name}{label} "):
            return float(line.split()[-1])
    raise AssertionError(f"{name}{label} not in /metrics")


def test_20000_events_healthy_failing_and_sleeping_listeners(kafka: str, workdir: Path) -> None:
    n = 20_000
    topic, instance = f"accept-{uuid.uuid4().hex[:8]}", f"inst-{uuid.uuid4().hex[:6]}"
    produce(kafka, topic, stream(n, tables=40))
    port = free_port()
    # Only the retries are configured (as the issue says): the default backlog bounds must be enough for
    # the sleeper and the failing listener to fall 20,000 events behind without holding up the healthy one.
    runner = Runner(workdir, [*base_args(kafka, topic, instance, port),
                              "--set", "hivewire.retry.max.attempts=3",
                              "--set", "hivewire.retry.initial.delay.ms=0"],
                    {"HW_N": str(n), "HW_FAILING": "1", "HW_SLEEPER_SEQ": "777"})
    runner.start()
    group = f"apiary-kafka-metastore-receiver-{instance}"
    try:
        wait_for(lambda: len(lines(workdir / "healthy.log")) >= n or not runner.alive(), 300, "the healthy listener")
        wait_for(lambda: sum(committed(kafka, group, topic).values()) >= n or not runner.alive(), 300,
                 "every offset to be committed (after the failing listener dead-lettered everything)")
        assert runner.alive(), runner.tail()
        healthy = lines(workdir / "healthy.log")
        by_table: dict[str, list[int]] = collections.defaultdict(list)
        for _pid, table, seq, _p, _o in healthy:
            by_table[table].append(int(seq))
        assert len(healthy) == n
        for table, seqs in by_table.items():
            index = int(table.rsplit("t", 1)[1])
            assert seqs == list(range(index, n, 40)), f"{table} not exactly once in order"
        letters = dead_letters(kafka, f"{topic}.dlq", n)
        assert len(letters) == n
        assert {h["hivewire.listener"] for _, h in letters} == {"failing"}
        assert {h["hivewire.attempts"] for _, h in letters} == {"3"}
        assert len({(h["hivewire.source.partition"], h["hivewire.source.offset"]) for _, h in letters}) == n
        # The sleeper slept 10 s on one event; everyone else finished while it slept.
        wait_for(lambda: "sleeper-woke" in (workdir / "timeline.log").read_text(), 60, "the sleeper to wake")
        timeline = (workdir / "timeline.log").read_text().split()
        assert timeline.index("sleeper-asleep") < timeline.index("healthy-done") < timeline.index("sleeper-woke")
        assert metric(port, "hivewire_listener_events_handled_total", "healthy") == n
        assert metric(port, "hivewire_listener_events_dead_lettered_total", "failing") == n
        assert metric(port, "hivewire_events_consumed_total") == n
        assert runner.terminate() == 0, runner.tail()
    finally:
        if runner.alive():
            runner.kill9()


def test_kill_9_loses_nothing_and_repeats_only_the_uncommitted_tail(kafka: str, workdir: Path) -> None:
    n = 20_000
    topic, instance = f"kill-{uuid.uuid4().hex[:8]}", f"inst-{uuid.uuid4().hex[:6]}"
    group = f"apiary-kafka-metastore-receiver-{instance}"
    produce(kafka, topic, stream(n, tables=40))
    rng = random.Random(20240601)
    committed_at_kill: list[dict[int, int]] = []
    pids: list[int] = []
    # A killed member keeps its partitions until its session times out (librdkafka's default is 45 s);
    # production deployments shorten it the same way, through Drone Fly's consumer-property prefix.
    runner = Runner(workdir, [*base_args(kafka, topic, instance),
                              "--set", "apiary.messaging.consumer.session.timeout.ms=6000",
                              "--set", "apiary.messaging.consumer.heartbeat.interval.ms=500"], {"HW_AUDIT": "1"})
    for kill in range(4):
        runner.start()
        assert runner.proc is not None
        pids.append(runner.proc.pid)
        if kill == 3:
            break  # the last run finishes the stream
        target = len(lines(workdir / "healthy.log")) + rng.randrange(1500, 4500)
        wait_for(lambda t=target: len(lines(workdir / "healthy.log")) >= t or not runner.alive(), 300,
                 "progress before the kill")
        assert runner.alive(), runner.tail()
        runner.kill9()
        committed_at_kill.append(committed(kafka, group, topic))
    try:
        wait_for(lambda: sum(committed(kafka, group, topic).values()) >= n or not runner.alive(), 300,
                 "the last run to finish the stream")
        assert runner.terminate() == 0, runner.tail()
    finally:
        if runner.alive():
            runner.kill9()
    for name, cols in (("healthy", (2, 3, 4)), ("audit", (1, 2, 3))):
        rows = lines(workdir / f"{name}.log")
        seqs = {int(r[cols[0]]) for r in rows}
        assert seqs == set(range(n)), f"{name} missed {len(set(range(n)) - seqs)} events"
        by_run: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
        for r in rows:
            by_run[r[0]].append((int(r[cols[1]]), int(r[cols[2]])))
        for k, offsets in enumerate(committed_at_kill):
            # Run k+1 starts each partition exactly at what run k committed: the only repeats are the
            # records run k handled after its last commit (its uncommitted tail).
            next_run = by_run[str(pids[k + 1])]
            for partition, first_offset in offsets.items():
                mine = [o for p, o in next_run if p == partition]
                if mine:
                    assert min(mine) == first_offset, f"{name}: run {k + 2} partition {partition}"
        total_repeats = len(rows) - n
        assert total_repeats >= 0


def test_malformed_messages_are_dead_lettered_and_the_process_keeps_running(kafka: str, workdir: Path) -> None:
    good = stream(2000, tables=20)
    bad = [b"", b"\xff\xfe binary", b"{", b"null", b'{"eventType": 42}', b'{"eventType": "ON_ADD_PARTITION"}',
           b'{"eventType": "ON_NOPE", "databaseName": "d"}', good[5].replace(b'"status":true', b'"status":"yes"')]
    mixed: list[bytes] = []
    for i, payload in enumerate(good):
        mixed.append(payload)
        if i % 20 == 0:
            mixed.append(bad[(i // 20) % len(bad)])
    topic, instance = f"bad-{uuid.uuid4().hex[:8]}", f"inst-{uuid.uuid4().hex[:6]}"
    produce(kafka, topic, mixed)
    port = free_port()
    runner = Runner(workdir, base_args(kafka, topic, instance, port), {})
    runner.start()
    group = f"apiary-kafka-metastore-receiver-{instance}"
    try:
        wait_for(lambda: sum(committed(kafka, group, topic).values()) >= len(mixed) or not runner.alive(), 300,
                 "every message to be handled or dead-lettered")
        assert runner.alive(), runner.tail()
        assert sorted(int(r[2]) for r in lines(workdir / "healthy.log")) == list(range(2000))
        letters = dead_letters(kafka, f"{topic}.dlq", 100)
        assert len(letters) == 100
        assert {h["hivewire.listener"] for _, h in letters} == {"hivewire.decoder"}
        assert all(h["hivewire.error"] for _, h in letters)
        assert collections.Counter(v for v, _ in letters) == collections.Counter(m for m in mixed if m not in good)
        health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10).read())
        assert health["status"] == "UP"
        assert metric(port, "hivewire_events_undecodable_total") == 100
    finally:
        assert runner.alive(), runner.tail()
        runner.kill9()


def test_a_drone_fly_properties_file_runs_unchanged(kafka: str, workdir: Path) -> None:
    n = 500
    topic, instance = f"df-{uuid.uuid4().hex[:8]}", f"dronefly-{uuid.uuid4().hex[:6]}"
    produce(kafka, topic, stream(n, tables=5))
    port = free_port()
    (workdir / "drone-fly.properties").write_text(textwrap.dedent(f"""\
        apiary.bootstrap.servers={kafka}
        apiary.kafka.topic.name={topic}
        apiary.listener.list=acceptance_listeners.Audit
        instance.name={instance}
        endpoint.port={port}
        apiary.messaging.consumer.auto.offset.reset=earliest
        audit.tag=from-properties
        """))
    runner = Runner(workdir, [], {})
    runner.args = ["--config", "drone-fly.properties"]
    runner.start()
    try:
        wait_for(lambda: len(lines(workdir / "dronefly.log")) >= n or not runner.alive(), 120, "the listener")
        assert runner.alive(), runner.tail()
        rows = lines(workdir / "dronefly.log")
        assert {tag for tag, _ in rows} == {"from-properties"}
        assert sorted(int(s) for _, s in rows) == list(range(n))
        health = urllib.request.urlopen(f"http://127.0.0.1:{port}/actuator/health", timeout=10)
        assert json.loads(health.read())["status"] == "UP"
        liveness = urllib.request.urlopen(f"http://127.0.0.1:{port}/actuator/health/liveness", timeout=10)
        assert liveness.status == 200
        assert metric(port, "hivewire_listener_events_handled_total", "Audit") == n
        assert metric(port, "hivewire_events_consumed_total") == n
        wait_for(lambda: sum(committed(kafka, f"apiary-kafka-metastore-receiver-{instance}", topic).values()) == n,
                 60, "Drone Fly's consumer group to commit")
        assert runner.terminate() == 0, runner.tail()
    finally:
        if runner.alive():
            runner.kill9()
