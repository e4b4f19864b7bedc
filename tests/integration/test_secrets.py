"""Secrets never reach a log line, at any level: ``register``, the shim and ``run`` at DEBUG, given their
passwords through files and environment variables (``file:PATH``, ``env:NAME``)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from waiting import wait_for

import hivewire as hw
from hivewire.metastore._acl import parse_acl
from hivewire.tools._local import LocalMetastore, LocalZooKeeper, free_port

ZK_PASSWORD = "Zk-s3cret-pw"
KAFKA_PASSWORD = "Kafka-s3cret-pw"


def hivewire(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "hivewire", "--log-level", "DEBUG", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=log.parent,
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def registered(zookeeper: LocalZooKeeper, namespace: str) -> list[str]:
    zk = KazooClient(hosts=zookeeper.quorum, timeout=10)
    zk.start(timeout=30)
    try:
        return list(zk.get_children(f"/{namespace}")) if zk.exists(f"/{namespace}") else []
    finally:
        zk.stop()
        zk.close()


def test_debug_logs_of_register_the_shim_and_run_hold_no_secret(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, kafka: str, tmp_path: Path
) -> None:
    auth_file = tmp_path / "zk-auth"
    auth_file.write_text(f"digest:hivewire:{ZK_PASSWORD}\n")
    acl_file = tmp_path / "zk-acl"
    acl_file.write_text(f"digest:hivewire:{ZK_PASSWORD}:cdrwa,world:anyone:r\n")
    kafka_password = tmp_path / "kafka-password"
    kafka_password.write_text(KAFKA_PASSWORD)
    namespace = f"secrets-{uuid.uuid4().hex[:8]}"
    logs = {name: tmp_path / f"{name}.log" for name in ("register", "shim", "run")}

    register = hivewire(
        [
            *("register", "--metastore", metastore.uri.removeprefix("thrift://"), "--zookeeper", zookeeper.quorum),
            *("--namespace", namespace, "--interval", "1", "--acl", f"file:{acl_file}"),
            *("--set", f"hivewire.zookeeper.auth=file:{auth_file}"),
        ],
        logs["register"],
    )
    port = free_port()
    site = tmp_path / "hive-site.xml"
    site.write_text(
        "<configuration><property><name>hivewire.zookeeper.auth</name><value>env:HW_TEST_ZK_AUTH</value>"
        "</property></configuration>"
    )
    shim = hivewire(
        [
            *("shim", "--upstream-zookeeper", zookeeper.quorum, "--upstream-namespace", namespace),
            *("--bind", "127.0.0.1", "--port", str(port), "--kafka-bootstrap-servers", kafka),
            *("--topic", f"secrets-{namespace}", "--spool-dir", str(tmp_path / "spool")),
            *("--zookeeper", zookeeper.quorum, "--namespace", f"{namespace}-shims"),
            # The shim reads ZooKeeper credentials from a hive-site.xml (here naming an environment variable).
            *("--upstream-hive-site", str(site), "--hive-site", str(site)),
        ],
        logs["shim"],
        env={"HW_TEST_ZK_AUTH": f"digest:hivewire:{ZK_PASSWORD}"},
    )
    (tmp_path / "secret_listeners.py").write_text(
        "import hivewire as hw\napp = hw.App('secrets')\n\n@app.on_create_table\ndef created(event):\n    pass\n"
    )
    run = hivewire(
        [
            *("run", "secret_listeners:app", "--bootstrap-servers", kafka, "--topic", f"secrets-{namespace}"),
            *("--endpoint-port", "0", "--set", "hivewire.startup.timeout.ms=15000"),
            *("--set", "apiary.messaging.consumer.security.protocol=SASL_PLAINTEXT"),
            *("--set", "apiary.messaging.consumer.sasl.mechanism=PLAIN"),
            *("--set", "apiary.messaging.consumer.sasl.username=hivewire"),
            *("--set", f"apiary.messaging.consumer.sasl.password=file:{kafka_password}"),
        ],
        logs["run"],
    )
    try:
        wait_for(lambda: registered(zookeeper, namespace) or register.poll() is not None, "the registration", 120)
        assert register.poll() is None, logs["register"].read_text()

        def shim_serves() -> bool:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
            return shim.poll() is not None

        wait_for(shim_serves, "the shim to listen", 120)
        assert shim.poll() is None, logs["shim"].read_text()
        wait_for(lambda: registered(zookeeper, f"{namespace}-shims"), "the shim's registration", 120)
        wait_for(lambda: "Sending request" in logs["register"].read_text(), "kazoo's DEBUG lines", 120)
        time.sleep(3)  # a few more health checks and ZooKeeper requests at DEBUG
    finally:
        for proc in (register, shim, run):
            stop(proc)
    for name, log in logs.items():
        text = log.read_text(errors="replace")
        assert " DEBUG " in text, f"{name} logged nothing at DEBUG"
        for secret in (ZK_PASSWORD, KAFKA_PASSWORD):
            assert secret not in text, f"{name}'s log shows a secret:\n" + "\n".join(
                line for line in text.splitlines() if secret in line
            )
    # kazoo's Auth packets were logged, masked.
    assert "Auth(auth_type=0, scheme='digest', auth='***')" in logs["register"].read_text()
    assert "Auth(auth_type=0, scheme='digest', auth='***')" in logs["shim"].read_text()


@pytest.mark.parametrize(
    "entry",
    [f"digest:hivewire:{ZK_PASSWORD}", f"digest:hivewire:{ZK_PASSWORD}:xyz", f"digest::{ZK_PASSWORD}:cdrwa"],
)
def test_a_malformed_acl_entry_is_not_echoed_with_its_password(entry: str) -> None:
    with pytest.raises(hw.ConfigError) as e:
        parse_acl(entry)
    assert ZK_PASSWORD not in str(e.value) and "digest:" in str(e.value)
