"""Issue 21's membership, end to end: two ``hivewire run`` processes of one app join its group in a real ZooKeeper
(against a real Apache Kafka broker), ``hivewire status`` lists them with the partitions each holds, and an
instance killed with ``kill -9`` leaves the group when its session times out."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from proxy import TcpProxy
from runtime_harness import PARTITIONS, stream
from test_runtime_process import LISTENERS, Runner, base_args, lines, produce
from waiting import wait_for

from hivewire.tools._cli import main as cli
from hivewire.tools._local import LocalZooKeeper


def status(zookeeper: LocalZooKeeper, root: str, app: str) -> dict[str, Any]:
    out = CliRunner().invoke(cli, ["status", app, "--json", "--zookeeper", zookeeper.quorum, "--root", root])
    assert out.exit_code == 0, out.output
    found: dict[str, Any] = json.loads(out.output)
    return found


def everything(topic: str) -> list[str]:
    return sorted(f"{topic}:{p}" for p in range(PARTITIONS))


def held(found: dict[str, Any]) -> dict[int, list[str]]:
    """The partitions each live instance announces, by pid."""
    return {i["pid"]: i["partitions"] for i in found["instances"].values()}


def instance(workdir: Path, kafka: str, topic: str, app: str, quorum: str, root: str) -> Runner:
    """A ``hivewire run`` of ``app`` in its own directory, coordinated by ``quorum``, quick to leave when killed."""
    workdir.mkdir()
    (workdir / "acceptance_listeners.py").write_text(LISTENERS)
    args = [
        *base_args(kafka, topic, app),
        "--zookeeper",
        quorum,
        "--root",
        root,
        "--set",
        "hivewire.coordination.session.timeout=4s",  # ZooKeeper's least (2 ticks)
        "--set",
        "apiary.messaging.consumer.session.timeout.ms=6000",
        "--set",
        "apiary.messaging.consumer.heartbeat.interval.ms=500",
    ]
    return Runner(workdir, args, {})


def test_two_instances_are_listed_with_their_partitions_and_a_killed_one_leaves(
    kafka: str, zookeeper: LocalZooKeeper, unique: str, tmp_path: Path
) -> None:
    topic, app = f"members-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:6]}"
    produce(kafka, topic, stream(400, tables=40))
    all_partitions = everything(topic)
    runners = [instance(tmp_path / name, kafka, topic, app, zookeeper.quorum, unique) for name in ("a", "b")]
    try:
        for runner in runners:
            runner.start()
        pids = {runner.proc.pid for runner in runners if runner.proc is not None}

        def shared() -> bool:
            now = held(status(zookeeper, unique, app))
            parts = [p for partitions in now.values() for p in partitions]
            return set(now) == pids and all(now.values()) and sorted(parts) == all_partitions

        wait_for(lambda: shared() or not all(r.alive() for r in runners), "both instances holding partitions", 120)
        assert all(r.alive() for r in runners), "\n".join(r.tail() for r in runners)
        found = status(zookeeper, unique, app)
        assert {tuple(i["listeners"]) for i in found["instances"].values()} == {("healthy",)}
        assert found["listeners"]["healthy"]["state"] == "running"
        assert len(found["listeners"]["healthy"]["instances"]) == 2
        wait_for(lambda: sum(len(lines(r.workdir / "healthy.log")) for r in runners) >= 400, "every event handled", 120)

        killed, survivor = runners
        assert killed.proc is not None and survivor.proc is not None
        killed.kill9()
        wait_for(
            lambda: held(status(zookeeper, unique, app)) == {survivor.proc.pid: all_partitions} or not survivor.alive(),
            "the killed instance gone (its session timed out) and the survivor holding every partition",
            120,
        )
        assert survivor.alive(), survivor.tail()
        assert "joined app" in survivor.text()

        # A clean stop leaves at once.
        assert survivor.terminate() == 0, survivor.tail()
        assert status(zookeeper, unique, app)["instances"] == {}
    finally:
        for runner in runners:
            if runner.alive():
                runner.kill9()


def test_a_zookeeper_outage_never_stops_the_data_path(
    kafka: str, zookeeper: LocalZooKeeper, unique: str, tmp_path: Path
) -> None:
    topic, app = f"outage-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:6]}"
    produce(kafka, topic, stream(200, tables=40))
    proxy = TcpProxy(("127.0.0.1", zookeeper.port))
    runner = instance(tmp_path / "a", kafka, topic, app, f"127.0.0.1:{proxy.port}", unique)
    healthy = runner.workdir / "healthy.log"
    try:
        runner.start()
        assert runner.proc is not None
        pid = runner.proc.pid
        wait_for(lambda: len(lines(healthy)) >= 200 or not runner.alive(), "the first events", 120)
        wait_for(lambda: held(status(zookeeper, unique, app)) == {pid: everything(topic)}, "the instance listed", 120)

        # ZooKeeper unreachable for longer than the session: the instance leaves the group, and keeps working.
        proxy.cut()
        wait_for(lambda: status(zookeeper, unique, app)["instances"] == {}, "the session to expire", 120)
        produce(kafka, topic, stream(400, tables=40)[200:])
        wait_for(lambda: len(lines(healthy)) >= 400 or not runner.alive(), "events during the outage", 120)
        assert runner.alive(), runner.tail()
        # Told once (by the ZooKeeper client's own reachability), not once per retry.
        assert runner.text().count(f"ZooKeeper at 127.0.0.1:{proxy.port} is unreachable") == 1, runner.tail()

        # Back: it joins again on its own, with what it holds.
        proxy.restore()
        wait_for(lambda: held(status(zookeeper, unique, app)) == {pid: everything(topic)}, "the instance back", 120)
        assert runner.terminate() == 0, runner.tail()
    finally:
        if runner.alive():
            runner.kill9()
        proxy.close()
