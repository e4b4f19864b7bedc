"""``hivewire run`` meets a broken edge: dead letters too large for the broker, Kafka unreachable or hung.

Each runs ``hivewire run`` in its own process against a real Apache Kafka broker (or against nothing).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from proxy import TcpProxy
from runtime_harness import read_to_end
from test_runtime_process import committed
from waiting import wait_for

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.tools._kafka_broker import create_topic
from hivewire.tools._local import LocalMetastore, LocalZooKeeper, free_port
from hivewire.tools._testing import make_partition, make_table

LISTENERS = textwrap.dedent("""
    import os
    import hivewire as hw

    app = hw.App("outages")

    @app.on_add_partition(name="healthy")
    def healthy(event):
        with open(os.path.join(os.environ["HW_OUT"], "healthy.log"), "a") as f:
            f.write(event.partitions[0].values[0] + "\\n")

    @app.on_add_partition(name="failing")
    def failing(event):
        raise RuntimeError("fails on every partition")
""")


class Process:
    """A ``hivewire run`` process whose output goes to a file."""

    def __init__(self, workdir: Path, args: list[str], level: str = "INFO") -> None:
        (workdir / "outage_listeners.py").write_text(LISTENERS)
        self.log = workdir / "run.log"
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "hivewire", "--log-level", level, "run", "outage_listeners:app", *args],
                cwd=workdir,
                env={**os.environ, "HW_OUT": str(workdir)},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(120)


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in started:
        if process.alive():
            process.proc.kill()
            process.proc.wait(30)


def get(port: int, path: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def answers(port: int) -> bool:
    try:
        get(port, "/health")
        return True
    except OSError:
        return False


def test_dead_letters_too_large_for_the_broker_are_stored_truncated_and_the_process_keeps_running(
    kafka: str, tmp_path: Path, processes: list[Process]
) -> None:
    topic = f"large-{uuid.uuid4().hex[:8]}"
    table = make_table("db", "big", partition_keys={"seq": "string"})
    malformed = b'{"protocolVersion": "1.0", "eventType": ' + b"x" * 3_000_000
    large = apiary.encode(
        hw.AddPartitionEvent(
            table=table, partitions=[make_partition(table, ["1"])], parameters={"big": "y" * 2_700_000}
        )
    )
    small = apiary.encode(hw.AddPartitionEvent(table=table, partitions=[make_partition(table, ["2"])]))
    assert len(malformed) > 3_000_000 and len(large) > 2_700_000
    # The Apiary topic takes them (it and its producer allow 10 MB); the dead-letter producer keeps librdkafka's
    # default limit of 1000000 bytes, which the dead-letter topic's (the broker's default) also is.
    create_topic(kafka, topic, 2, 1, {"max.message.bytes": "10000000"})
    producer = Producer({"bootstrap.servers": kafka, "message.max.bytes": 10_000_000})
    for value, partition in ((malformed, 0), (large, 1), (small, 1)):
        producer.produce(topic, value, partition=partition)
    assert producer.flush(30) == 0
    group = f"large-{topic}"
    processes.append(
        process := Process(
            tmp_path,
            [
                *("--bootstrap-servers", kafka, "--topic", topic, "--instance-name", group, "--endpoint-port", "0"),
                *("--set", "apiary.messaging.consumer.auto.offset.reset=earliest"),
                *("--set", "hivewire.retry.max.attempts=1", "--set", "hivewire.commit.interval.ms=200"),
            ],
        )
    )
    group = f"apiary-kafka-metastore-receiver-{group}"
    wait_for(
        lambda: committed(kafka, group, topic) == {0: 1, 1: 2} or not process.alive(),
        "the three records' commits",
        180,
    )
    assert process.alive(), process.text()
    letters = read_to_end(kafka, f"{topic}.dlq")
    origins = [
        {"size": len(v), **{k: h[k] for k in h if k.startswith(("hivewire.source.", "hivewire.original."))}}
        for v, h in letters
    ]
    assert len(letters) == 3, f"{origins}\n{process.text()}"  # a str: pytest shows it whole
    by_origin = {
        (headers["hivewire.source.partition"], headers["hivewire.source.offset"]): (value, headers)
        for value, headers in letters
    }
    for origin, original, listener in ((("0", "0"), malformed, "hivewire.decoder"), (("1", "0"), large, "failing")):
        value, headers = by_origin[origin]
        assert headers["hivewire.listener"] == listener
        assert headers["hivewire.original.stored"] == "truncated"
        assert headers["hivewire.original.size"] == str(len(original))
        assert headers["hivewire.original.sha256"] == hashlib.sha256(original).hexdigest()
        assert 500_000 < len(value) < 1_000_000 and original.startswith(value)
    value, headers = by_origin[("1", "1")]
    assert value == small and "hivewire.original.stored" not in headers
    assert (tmp_path / "healthy.log").read_text().split() == ["1", "2"]
    # The only tracebacks are the failing listener's own, once per event it gave up on (docs/runtime.md);
    # none of the dead-letter producer's refusals.
    text = process.text()
    assert text.count("Traceback") == text.count("RuntimeError: fails on every partition") == 2, text


def test_an_unreachable_broker_gives_a_few_lines_readiness_down_and_a_clean_failure_after_the_startup_timeout(
    tmp_path: Path, processes: list[Process]
) -> None:
    port = free_port()
    started = time.monotonic()
    processes.append(
        process := Process(
            tmp_path,
            [
                *("--bootstrap-servers", "localhost:1", "--topic", "apiary", "--endpoint-port", str(port)),
                *("--endpoint-address", "127.0.0.1", "--set", "hivewire.startup.timeout.ms=20000"),
            ],
        )
    )
    wait_for(lambda: answers(port) or not process.alive(), "the health endpoint", 60)
    status, body = get(port, "/health")
    assert status == 503 and body["status"] == "DOWN" and body["reachable"] is False, body
    assert get(port, "/health/readiness")[0] == 503
    assert get(port, "/health/liveness") == (200, {"status": "UP"})
    assert f"metrics and health on http://127.0.0.1:{port}/metrics" in process.text()
    assert process.proc.wait(120) == 1
    # The timing is the behaviour here (hivewire.startup.timeout.ms honoured, not cut short), so it is a lower
    # bound only: a loaded machine makes the run longer, never shorter, and cannot fail it.
    assert time.monotonic() - started >= 20
    lines = process.text().splitlines()
    assert any("could not reach Kafka at localhost:1 within 20 s" in line for line in lines), lines
    assert sum("Kafka at localhost:1 is unreachable" in line for line in lines) == 1, lines
    # 20 s of refused connections: the outage line, the failure, and the app's own few lines.
    assert len(lines) <= 8, lines
    assert "Traceback" not in process.text() and "rdkafka" not in process.text()


def test_kafka_coming_up_later_is_told_once_and_readiness_follows(
    kafka: str, tmp_path: Path, processes: list[Process]
) -> None:
    topic = f"later-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": kafka})
    producer.produce(topic, b"not json", partition=0)  # creates the topic
    assert producer.flush(30) == 0
    bootstrap, endpoint = free_port(), free_port()
    processes.append(
        process := Process(
            tmp_path,
            [
                *("--bootstrap-servers", f"127.0.0.1:{bootstrap}", "--topic", topic),
                *("--endpoint-port", str(endpoint), "--set", "hivewire.startup.timeout.ms=0"),
                *("--set", "apiary.messaging.consumer.auto.offset.reset=earliest"),
            ],
        )
    )
    wait_for(lambda: "is unreachable" in process.text() or not process.alive(), "the outage line", 60)
    assert get(endpoint, "/health")[0] == 503
    host, port = kafka.split(",")[0].rsplit(":", 1)
    forwarder = TcpProxy((host, int(port)), bootstrap)
    try:
        wait_for(lambda: get(endpoint, "/health")[0] == 200 or not process.alive(), "readiness UP", 120)
        assert process.alive(), process.text()
        text = process.text()
        assert text.count("is unreachable") == 1 and text.count("is reachable again") == 1, text
    finally:
        process.stop()
        forwarder.close()


def test_archive_against_an_unreachable_broker_fails_cleanly_after_the_startup_timeout(tmp_path: Path) -> None:
    log = tmp_path / "archive.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "hivewire", "--log-level", "INFO", "archive"),
                *("--bootstrap-servers", "localhost:1", "--topic", "apiary", "--table", str(tmp_path / "events")),
                *("--set", "hivewire.startup.timeout.ms=10000"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    assert proc.wait(120) == 1
    lines = log.read_text().splitlines()
    assert any("could not reach Kafka at localhost:1 within 10 s" in line for line in lines), lines
    assert sum("is unreachable" in line for line in lines) == 1, lines
    assert len(lines) <= 6 and "Traceback" not in log.read_text() and "rdkafka" not in log.read_text(), lines


def test_read_events_from_an_unreachable_broker_raises_one_hivewire_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with pytest.raises(hw.HivewireError, match=r"could not read 'apiary' from Kafka at localhost:1: .*check") as e:
        hw.read_events(bootstrap_servers="localhost:1", topic="apiary", timeout=3, progress=False)
    assert "Connection refused" in str(e.value)
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert [r for r in caplog.records if r.levelno >= logging.INFO] == []


def test_register_says_once_that_its_metastore_is_down_and_once_that_it_is_back(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, tmp_path: Path
) -> None:
    port, namespace = free_port(), f"outage-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "register.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "hivewire", "--log-level", "INFO", "register"),
                *("--metastore", f"127.0.0.1:{port}", "--zookeeper", zookeeper.quorum),
                *("--namespace", namespace, "--interval", "0.5"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    forwarder = None
    try:
        wait_for(lambda: "is unreachable" in log.read_text() or proc.poll() is not None, "the outage line", 60)
        time.sleep(5)  # ten failed checks
        host, hms_port = metastore.uri.removeprefix("thrift://").rsplit(":", 1)
        forwarder = TcpProxy((host, int(hms_port)), port)
        wait_for(lambda: "registered metastore" in log.read_text() or proc.poll() is not None, "registration", 60)
        assert proc.poll() is None, log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        if forwarder is not None:
            forwarder.close()
    text = log.read_text()
    assert text.count("is unreachable") == 1 and text.count("is reachable again") == 1, text
    assert "Traceback" not in text and "ERROR" not in text, text
    assert len(text.splitlines()) <= 8, text


MOCK_CLUSTER = textwrap.dedent("""
    import sys, time
    from hivewire.tools._testing import mock_kafka
    with mock_kafka(num_brokers=1) as bootstrap:
        print(bootstrap, flush=True)
        while True:
            time.sleep(1)
""")


def test_liveness_stays_up_through_a_60_s_hung_broker(tmp_path: Path, processes: list[Process]) -> None:
    # A broker of its own in a process of its own: SIGSTOP hangs it (connections stay open, nothing answers).
    broker = subprocess.Popen([sys.executable, "-c", MOCK_CLUSTER], stdout=subprocess.PIPE, text=True)
    try:
        assert broker.stdout is not None
        bootstrap = broker.stdout.readline().strip()
        topic = f"hung-{uuid.uuid4().hex[:8]}"
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce(topic, b"not json", partition=0)
        assert producer.flush(30) == 0
        port = free_port()
        processes.append(
            process := Process(
                tmp_path,
                [
                    *("--bootstrap-servers", bootstrap, "--topic", topic, "--endpoint-port", str(port)),
                    *("--set", "apiary.messaging.consumer.auto.offset.reset=earliest"),
                ],
            )
        )
        wait_for(lambda: (answers(port) and get(port, "/health")[0] == 200) or not process.alive(), "ready", 120)
        os.kill(broker.pid, signal.SIGSTOP)
        liveness, readiness = [], []
        try:
            end = time.monotonic() + 60
            while time.monotonic() < end:
                liveness.append(get(port, "/health/liveness")[0])
                readiness.append(get(port, "/health/readiness")[0])
                time.sleep(2)
        finally:
            os.kill(broker.pid, signal.SIGCONT)
        assert process.alive(), process.text()
        assert set(liveness) == {200}, (liveness, process.text())
        # Readiness goes DOWN once the consumer's session times out (45 s) and its partitions are lost.
        assert readiness[0] == 200 and 503 in readiness, readiness
        wait_for(lambda: get(port, "/health")[0] == 200 or not process.alive(), "ready again", 180)
        assert "Traceback" not in process.text(), process.text()
    finally:
        broker.kill()
        broker.wait(30)
