"""``hivewire local`` keeps real services up from a shell; the other commands work against them."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import hivewire as hw
from hivewire.testing import make_database
from hivewire.tools._jvm import classpath
from hivewire.tools._local import find_java


def _hivewire(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hivewire", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_local_serves_until_interrupted_and_the_commands_use_it(tmp_path: Path, unique: str) -> None:
    env_file = tmp_path / "local.env"
    banner: list[str] = []
    local = subprocess.Popen(
        [sys.executable, "-m", "hivewire", "local", "--env-file", str(env_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert local.stdout is not None
    try:
        deadline = time.monotonic() + 300
        while not env_file.exists() and local.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert env_file.exists(), local.communicate(timeout=60)
        exports = dict(item.split("=", 1) for item in shlex.split(env_file.read_text())[1:])
        assert set(exports) == {"APIARY_BOOTSTRAP_SERVERS", "APIARY_KAFKA_TOPIC_NAME", "METASTORE_THRIFT_URIS"}
        env = {**os.environ, **exports}
        banner.append(local.stdout.readline())
        while not banner[-1].startswith("Changes made through"):
            banner.append(local.stdout.readline())
        services = {line.split()[0]: line.split()[1] for line in banner[1:5]}
        assert any("export APIARY_BOOTSTRAP_SERVERS=" in line for line in banner)
        assert any("hivewire run" in line for line in banner)
        # Issue 33: what a restart of `hivewire run` waits for on this Kafka (a real broker: a stop leaves the group).
        assert any(
            line.rstrip().endswith("# your listeners; Ctrl-C and run again: resumes in seconds") for line in banner
        )
        assert services["shim"] == exports["METASTORE_THRIFT_URIS"]
        # a real Apache Kafka broker (the jars `make jvm` cached), which any Kafka client uses as it is
        assert banner[5].strip().startswith("Apache Kafka 4."), banner
        from confluent_kafka.admin import AdminClient

        topics = AdminClient({"bootstrap.servers": services["kafka"]}).list_topics("apiary", timeout=30).topics
        assert len(topics["apiary"].partitions) == 4

        # a change through the shim is an event on the topic: hivewire tail prints it. The shim sends from its
        # spool after the call returns (as Apiary's listener does), so tail waits for the event (-n 1), not -e.
        with hw.MetastoreClient(exports["METASTORE_THRIFT_URIS"]) as client:
            client.create_database(make_database(unique))
        tailed = _hivewire("tail", "--from-beginning", "-n", "1", "--db", unique, env=env)
        assert tailed.returncode == 0, tailed.stderr
        assert [line.split()[2:4] for line in tailed.stdout.splitlines()] == [["CREATE_DATABASE", unique]]

        # and Kafka's own Java client (kafka-console-consumer, from the same release) reads it at that address
        console = subprocess.run(
            [
                find_java(),
                "-cp",
                classpath("kafka"),
                "org.apache.kafka.tools.consumer.ConsoleConsumer",
                "--bootstrap-server",
                services["kafka"],
                "--topic",
                "apiary",
                "--from-beginning",
                "--max-messages",
                "1",
                "--timeout-ms",
                "60000",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert console.returncode == 0, console.stderr[-2000:]
        message = json.loads(console.stdout.strip().splitlines()[-1])
        assert message["eventType"].endswith("CREATE_DATABASE") and message["databaseName"] == unique, message

        # the shim is registered in ZooKeeper: hivewire discover finds it, without ZooKeeper client chatter
        found = _hivewire("discover", "--zookeeper", services["zookeeper"], env=env)
        assert found.returncode == 0 and found.stdout.split() == [services["shim"]] and found.stderr == ""

        checked = _hivewire("check-config", env=env)
        origin = r"apiary\.bootstrap\.servers\s+\S+\s+environment variable APIARY_BOOTSTRAP_SERVERS"
        assert re.search(origin, checked.stdout), checked.stdout
    finally:
        local.send_signal(signal.SIGINT)
        out, err = local.communicate(timeout=120)
    assert local.returncode == 0, err
    assert not env_file.exists()  # removed on exit
    # Issue 40: a healthy start, a change and a stop say nothing at WARNING (librdkafka's idempotent producer
    # retries "Coordinator load in progress" on a new broker: that is at DEBUG).
    warnings = [line for line in [*banner, *out.splitlines(), *err.splitlines()] if re.search(r"\bWARN(ING)?\b", line)]
    assert not warnings, warnings
