"""Issue 31's sideline that lost events, end to end on real ZooKeeper and Kafka with ``hivewire run`` processes:
a sideline resumed, every instance killed with ``kill -9`` before any replay began, two instances started
again, the sideline resolved with nothing new arriving. The skipped events must all be replayed.

Before the fix the restarted instances logged "resumed" and "resolved" and then nothing: they had dispatched
nothing of their partitions since starting, so they knew no position to replay up to (see
``Runner._held_positions``). The model-based test (``test_runtime_model.py``) finds the same interleaving in
memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_coordination_switches import App, events
from test_runtime_process import committed, produce
from waiting import wait_for

from hivewire.coordination import AppState, ZooKeeperCoordinator
from hivewire.tools._local import LocalZooKeeper


@pytest.fixture
def app(tmp_path: Path, kafka: str, zookeeper: LocalZooKeeper, unique: str) -> Iterator[App]:
    found = App(tmp_path, kafka, zookeeper, unique)
    yield found
    for runner in found.runners:
        if runner.alive():
            runner.kill9()


def test_a_resumed_sideline_replays_everything_after_every_instance_was_killed_before_the_replay(
    app: App,
) -> None:
    produced = events(0, 2200)  # tenant_a: even seq, tenant_b: odd
    tenant_b = {seq for seq in range(len(produced)) if seq % 2 == 1}
    produce(app.kafka, app.topic, produced[:200])
    first = [app.instance("a"), app.instance("b")]
    wait_for(lambda: len(set(app.seqs("audit"))) == 200 or not app.alive(), "the first events", 120)

    assert "sideline s1 started" in app.cli("sideline", "start", app.name, "--listener", "audit", "--db", "tenant_b")
    started = "sideline s1 (db=tenant_b table=* types=*) is started"
    wait_for(lambda: all(started in r.text() for r in first), "both instances to obey", 60)
    produce(app.kafka, app.topic, produced[200:])  # about 1,000 of them tenant_b's, skipped
    wait_for(lambda: set(app.seqs("healthy")) >= set(range(len(produced))) or not app.alive(), "every event", 180)
    wait_for(lambda: sum(committed(app.kafka, app.group, app.topic).values()) == len(produced), "committed", 60)
    assert app.alive(), app.tails()
    assert not tenant_b & {seq for seq in app.seqs("audit") if seq >= 200}  # skipped, so far

    # Every instance killed before any replay began: killed first, then resumed while none runs, which leaves
    # ZooKeeper and Kafka as a kill right after `sideline resume` does when it beats the replay.
    for runner in first:
        runner.kill9()
    app.cli("sideline", "resume", app.name, "s1")
    restarted = [app.instance("a2"), app.instance("b2")]
    wait_for(lambda: all("is resumed" in r.text() for r in restarted) or not app.alive(), "the restart", 120)
    app.cli("sideline", "resolve", app.name, "s1")  # nothing new arrives from here on

    wait_for(lambda: tenant_b <= set(app.seqs("audit")) or not app.alive(), "tenant_b's events replayed", 120)
    assert app.alive(), app.tails()
    coordinator = ZooKeeperCoordinator(app.zookeeper.quorum, root=app.zk_root, connection_timeout=30)
    try:
        state = AppState(coordinator, app.name)
        wait_for(lambda: state.sideline("s1").finished, "the sideline to finish", 60)
    finally:
        coordinator.close()
    assert set(app.seqs("audit")) == set(range(len(produced)))
