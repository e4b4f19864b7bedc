"""Issue 21's membership, end to end: two ``hivewire run`` processes of one app join its group in a real ZooKeeper
(against librdkafka's mock Kafka cluster), ``hivewire status`` lists them with the partitions each holds, and an
instance killed with ``kill -9`` leaves the group when its session times out."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from runtime_harness import PARTITIONS, stream, wait_for
from test_runtime_process import LISTENERS, Runner, base_args, lines, produce

from hivewire.tools._cli import main as cli
from hivewire.tools._local import LocalZooKeeper


def status(zookeeper: LocalZooKeeper, root: str, app: str) -> dict[str, Any]:
    out = CliRunner().invoke(cli, ["status", app, "--json", "--zookeeper", zookeeper.quorum, "--root", root])
    assert out.exit_code == 0, out.output
    found: dict[str, Any] = json.loads(out.output)
    return found


def held(found: dict[str, Any]) -> dict[int, list[str]]:
    """The partitions each live instance announces, by pid."""
    return {i["pid"]: i["partitions"] for i in found["instances"].values()}


def test_two_instances_are_listed_with_their_partitions_and_a_killed_one_leaves(
    kafka: str, zookeeper: LocalZooKeeper, unique: str, tmp_path: Path
) -> None:
    topic, app = f"members-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:6]}"
    produce(kafka, topic, stream(400, tables=40))
    everything = sorted(f"{topic}:{p}" for p in range(PARTITIONS))
    runners = []
    for name in ("a", "b"):
        workdir = tmp_path / name
        workdir.mkdir()
        (workdir / "acceptance_listeners.py").write_text(LISTENERS)
        args = [
            *base_args(kafka, topic, app),
            "--zookeeper",
            zookeeper.quorum,
            "--root",
            unique,
            "--set",
            "hivewire.coordination.session.timeout=4s",  # ZooKeeper's least (2 ticks)
            "--set",
            "apiary.messaging.consumer.session.timeout.ms=6000",
            "--set",
            "apiary.messaging.consumer.heartbeat.interval.ms=500",
        ]
        runners.append(Runner(workdir, args, {}))
    try:
        for runner in runners:
            runner.start()
        pids = {runner.proc.pid for runner in runners if runner.proc is not None}

        def shared() -> bool:
            now = held(status(zookeeper, unique, app))
            parts = [p for partitions in now.values() for p in partitions]
            return set(now) == pids and all(now.values()) and sorted(parts) == everything

        wait_for(lambda: shared() or not all(r.alive() for r in runners), 120, "both instances holding partitions")
        assert all(r.alive() for r in runners), "\n".join(r.tail() for r in runners)
        found = status(zookeeper, unique, app)
        assert {tuple(i["listeners"]) for i in found["instances"].values()} == {("healthy",)}
        assert found["listeners"]["healthy"]["state"] == "running"
        assert len(found["listeners"]["healthy"]["instances"]) == 2
        wait_for(lambda: sum(len(lines(r.workdir / "healthy.log")) for r in runners) >= 400, 120, "every event handled")

        killed, survivor = runners
        assert killed.proc is not None and survivor.proc is not None
        killed.kill9()
        wait_for(
            lambda: held(status(zookeeper, unique, app)) == {survivor.proc.pid: everything} or not survivor.alive(),
            120,
            "the killed instance gone (its session timed out) and the survivor holding every partition",
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
