"""Issue 21's live switches, end to end: ``hivewire run`` processes of one app (real ZooKeeper, librdkafka's mock
Kafka cluster) obey ``hivewire listener pause|resume`` without a restart, and survive ``kill -9`` meanwhile."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from runtime_harness import stream, wait_for
from test_runtime_process import LISTENERS, Runner, base_args, committed, lines, metric, produce

from hivewire.tools._cli import main as cli
from hivewire.tools._local import LocalZooKeeper, free_port

TABLES = 40  # stream()'s tables: event ``seq`` is of table ``seq % TABLES``


class App:
    """``hivewire run`` instances of one app on one topic, each with the listeners ``healthy`` and ``audit``."""

    def __init__(self, root: Path, kafka: str, zookeeper: LocalZooKeeper, zk_root: str) -> None:
        self.root, self.kafka, self.zookeeper, self.zk_root = root, kafka, zookeeper, zk_root
        self.topic, self.name = f"switch-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:6]}"
        self.runners: list[Runner] = []

    def instance(self, name: str) -> Runner:
        workdir = self.root / name
        workdir.mkdir(exist_ok=True)
        (workdir / "acceptance_listeners.py").write_text(LISTENERS)
        args = [
            *base_args(self.kafka, self.topic, self.name, free_port()),
            "--zookeeper",
            self.zookeeper.quorum,
            "--root",
            self.zk_root,
            "--set",
            "hivewire.coordination.session.timeout=4s",
            "--set",
            "apiary.messaging.consumer.session.timeout.ms=6000",
            "--set",
            "apiary.messaging.consumer.heartbeat.interval.ms=500",
            "--set",
            "hivewire.listener.queue.size=1000",  # a paused range is read again in several chunks
        ]
        runner = Runner(workdir, args, {"HW_AUDIT": "1"})
        runner.start()
        self.runners.append(runner)
        return runner

    def cli(self, *args: str) -> str:
        out = CliRunner().invoke(cli, [*args, "--zookeeper", self.zookeeper.quorum, "--root", self.zk_root])
        assert out.exit_code == 0, out.output
        return out.output

    def seqs(self, listener: str) -> list[int]:
        """Every event ``listener`` handled, over every instance's log, in each log's order."""
        column = 2 if listener == "healthy" else 1
        return [int(row[column]) for r in self.runners for row in lines(r.workdir / f"{listener}.log")]

    def alive(self) -> bool:
        return all(r.alive() for r in self.runners if r.proc is not None and r.proc.returncode is None)

    def tails(self) -> str:
        return "\n\n".join(r.tail() for r in self.runners)


@pytest.fixture
def app(tmp_path: Path, kafka: str, zookeeper: LocalZooKeeper, unique: str) -> Iterator[App]:
    found = App(tmp_path, kafka, zookeeper, unique)
    yield found
    for runner in found.runners:
        if runner.alive():
            runner.kill9()


def in_table_order(seqs: list[int]) -> bool:
    by_table: dict[int, list[int]] = {}
    for seq in seqs:
        by_table.setdefault(seq % TABLES, []).append(seq)
    return all(found == sorted(found) for found in by_table.values())


def test_a_paused_listener_gets_everything_in_order_on_resuming_even_across_kill_9(app: App) -> None:
    events = stream(5200, tables=TABLES)
    produce(app.kafka, app.topic, events[:200])
    a, b = app.instance("a"), app.instance("b")
    wait_for(lambda: len(set(app.seqs("audit"))) == 200 or not app.alive(), 120, "the first events")
    group = f"apiary-kafka-metastore-receiver-{app.name}"
    wait_for(lambda: sum(committed(app.kafka, group, app.topic).values()) == 200, 60, "them committed")
    before = len(app.seqs("audit"))

    assert app.cli("listener", "pause", app.name, "audit") == f"{app.name}: audit paused\n"
    wait_for(lambda: all("listener audit paused" in r.text() for r in (a, b)), 60, "both instances to obey")
    assert all(metric(int(r.args[r.args.index("--endpoint-port") + 1]), "hivewire_listener_paused", "audit") == 1
               for r in (a, b))  # fmt: skip

    # Events flow; the other listener keeps going while audit stays where it stopped.
    produce(app.kafka, app.topic, events[200:2700])
    wait_for(lambda: set(app.seqs("healthy")) >= set(range(2700)) or not app.alive(), 120, "healthy meanwhile")
    assert len(app.seqs("audit")) == before

    # kill -9 one instance mid-pause and start it again: the survivor takes its partitions, still paused, and
    # the restarted one starts paused (it follows the switch before its first poll).
    a.kill9()
    produce(app.kafka, app.topic, events[2700:])
    app.instance("a2")
    wait_for(lambda: set(app.seqs("healthy")) >= set(range(5200)) or not app.alive(), 180, "healthy through it all")
    assert len(app.seqs("audit")) == before, app.tails()
    assert sum(committed(app.kafka, group, app.topic).values()) == 200  # commits wait for audit

    assert app.cli("listener", "resume", app.name, "audit") == f"{app.name}: audit running\n"
    wait_for(lambda: set(app.seqs("audit")) >= set(range(5200)) or not app.alive(), 180, "audit to catch up")
    assert app.alive(), app.tails()
    caught_up = app.seqs("audit")[before:]
    assert sorted(caught_up) == list(range(200, 5200))  # the 5,000 of the pause, each exactly once
    for runner in app.runners:  # each table's events, on whichever instance handled them, in order
        assert in_table_order([int(row[1]) for row in lines(runner.workdir / "audit.log")])
    wait_for(lambda: sum(committed(app.kafka, group, app.topic).values()) == 5200, 60, "everything committed")
