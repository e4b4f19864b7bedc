"""Live pause and resume (issue 21) on the in-memory coordinator and source: a paused listener takes nothing
more, keeps nothing in memory for what arrives (one parked range per partition), holds back the commits of
its partitions only up to where it stopped, and on resuming gets everything it missed, in each table's order,
while the other listeners never stopped."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import waiting
from runtime_settings import runtime_settings

import hivewire as hw
from hivewire.coordination import AppState, InMemoryCoordinator
from hivewire.events import _apiary as apiary
from hivewire.runtime._listener import RetryPolicy
from hivewire.runtime._membership import Membership
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._source import MemorySource
from hivewire.tools._testing import make_partition, make_table

PARTITIONS = 4
TABLES = 12


def payloads(first: int, count: int) -> list[bytes]:
    """ADD_PARTITION events of ``TABLES`` tables round-robin; the partition's value is the sequence number."""
    shapes = [make_table("sales", f"t{i:02d}", partition_keys={"seq": "string"}) for i in range(TABLES)]
    out = []
    for seq in range(first, first + count):
        table = shapes[seq % TABLES]
        event = hw.AddPartitionEvent(table=table, partitions=[make_partition(table, [str(seq)])])
        out.append(apiary.encode(event))
    return out


class Seen:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_listener: dict[str, list[tuple[str, int]]] = {"audit": [], "report": []}

    def record(self, name: str, event: hw.ListenerEvent) -> None:
        assert isinstance(event, hw.AddPartitionEvent)
        with self.lock:
            self.by_listener[name].append((event.qualified_name, int(event.partitions[0].values[0])))

    def count(self, name: str) -> int:
        with self.lock:
            return len(self.by_listener[name])


@contextmanager
def running(concurrency: int) -> Iterator[tuple[MemorySource, AppState, Seen, Runner]]:
    memory = InMemoryCoordinator()
    state = AppState(memory, "orders")
    seen = Seen()
    app = hw.App("orders")
    app.on_add_partition(name="audit", concurrency=concurrency)(lambda e: seen.record("audit", e))
    app.on_add_partition(name="report")(lambda e: seen.record("report", e))
    for listener in app.listeners:
        listener.bind(app.config)
    source = MemorySource(partitions=PARTITIONS, stop_when_idle=False)
    settings = runtime_settings(
        RetryPolicy(1, 0, 1, 0),
        listener_timeout=30,
        queue_size=100,  # small bounds: a parked range is read again in several chunks
        queue_bytes=10_000_000,
        batch_size=50,
        commit_interval=0.05,
        shutdown_timeout=10,
        tune_gc=False,
    )
    runner = Runner(
        "orders",
        app.listeners,
        source,
        settings,
        Metrics(),
        lambda: None,
        membership=Membership(memory.connect, "orders", ["audit", "report"]),
    )
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        yield source, state, seen, runner
    finally:
        runner.stop()
        thread.join(30)
    assert not thread.is_alive()


def committed_total(source: MemorySource) -> int:
    return sum(source.committed.values())


@pytest.mark.parametrize("concurrency", [1, 4], ids=["lane", "scheduled"])
def test_a_paused_listener_resumes_where_it_stopped_and_the_others_never_stop(concurrency: int) -> None:
    with running(concurrency) as (source, state, seen, runner):
        source.send_all(payloads(0, 200))
        waiting.wait_for(lambda: seen.count("audit") == 200 and committed_total(source) == 200, "the first", 30)

        state.pause("audit", by="test")
        waiting.wait_for(lambda: runner.lanes[0].paused, "the pause obeyed", 30)
        source.send_all(payloads(200, 1000))
        waiting.wait_for(lambda: seen.count("report") == 1200, "the other listener meanwhile", 30)
        waiting.wait_for(lambda: runner.lanes[0].parked == 1000, "everything parked", 30)
        assert seen.count("audit") == 200
        assert runner.lanes[0].depth == 0  # nothing of it held in memory
        assert committed_total(source) == 200  # commits wait at where it stopped
        health = runner.health()["listeners"]["audit"]
        assert (health["paused"], health["parked"]) == (True, 1000)

        state.resume("audit")
        source.send_all(payloads(1200, 300))  # arriving while it catches up
        waiting.wait_for(lambda: seen.count("audit") == 1500 and committed_total(source) == 1500, "caught up", 30)
        assert seen.count("report") == 1500

    audit = seen.by_listener["audit"]
    assert sorted(seq for _, seq in audit) == list(range(1500))  # each once, nothing lost
    by_table: dict[str, list[int]] = {}
    for table, seq in audit:
        by_table.setdefault(table, []).append(seq)
    assert all(seqs == sorted(seqs) for seqs in by_table.values())  # each table's order


def test_a_listener_paused_before_the_start_takes_nothing_and_the_source_pauses_when_all_are() -> None:
    with running(1) as (source, state, seen, runner):
        state.pause("audit")
        state.pause("report")
        waiting.wait_for(lambda: all(lane.paused for lane in runner.lanes), "both paused", 30)
        source.send_all(payloads(0, 100))
        waiting.wait_for(lambda: runner.paused, "consumption paused: nobody to read for", 30)
        assert seen.count("audit") == seen.count("report") == 0
        state.resume("report")
        waiting.wait_for(lambda: seen.count("report") == 100, "report resumed", 30)
        assert seen.count("audit") == 0
        assert committed_total(source) == 0  # audit has handled nothing: nothing is committed
        state.resume("audit")
        waiting.wait_for(lambda: seen.count("audit") == 100 and committed_total(source) == 100, "audit resumed", 30)


def tenants(first: int, count: int) -> list[bytes]:
    """Events alternating between databases tenant_a and tenant_b, ``TABLES`` tables each."""
    shapes = {
        db: [make_table(db, f"t{i:02d}", partition_keys={"seq": "string"}) for i in range(TABLES)]
        for db in ("tenant_a", "tenant_b")
    }
    out = []
    for seq in range(first, first + count):
        table = shapes["tenant_a" if seq % 2 == 0 else "tenant_b"][(seq // 2) % TABLES]
        out.append(apiary.encode(hw.AddPartitionEvent(table=table, partitions=[make_partition(table, [str(seq)])])))
    return out


@pytest.mark.parametrize("concurrency", [1, 4], ids=["lane", "scheduled"])
def test_a_sidelined_tenant_is_skipped_then_replayed_in_order(concurrency: int) -> None:
    with running(concurrency) as (source, state, seen, runner):
        sideline = state.start_sideline("audit", db="tenant_a")
        waiting.wait_for(lambda: runner.sidelinings[runner.lanes[0]].active, "the sideline followed", 30)
        source.send_all(tenants(0, 400))
        waiting.wait_for(lambda: seen.count("report") == 400 and committed_total(source) == 400, "both tenants", 30)
        assert {seq % 2 for _, seq in seen.by_listener["audit"]} == {1}  # tenant_b only
        assert seen.count("audit") == 200
        assert set(state.sideline(sideline.id).starts) == {f"apiary:{p}" for p in range(PARTITIONS)}
        sample = runner.metrics.registry.get_sample_value
        assert sample("hivewire_sidelines", {"state": "started"}) == 1

        state.resume_sideline(sideline.id)
        source.send_all(tenants(400, 200))  # tenant_a's still skipped live, replayed at the end
        waiting.wait_for(lambda: seen.count("audit") >= 300 + 200, "tenant_a replayed up to the resume", 30)
        state.resolve_sideline(sideline.id)
        source.send_all(tenants(600, 200))  # after resolving: tenant_a live again, after its replay
        waiting.wait_for(lambda: state.sideline(sideline.id).finished, "the sideline finished", 30)
        waiting.wait_for(lambda: seen.count("audit") == 800, "everything", 30)
        waiting.wait_for(lambda: not runner.sidelinings[runner.lanes[0]].active, "the finished sideline let go", 30)
        assert sample("hivewire_sidelines", {"state": "resolved"}) == 0
        replayed = sample("hivewire_sideline_events_replayed_total", {"listener": "audit", "sideline": "s1"})
        assert replayed is not None and 200 <= replayed <= 400  # tenant_a's up to the end, read again
        assert runner.sidelinings[runner.lanes[0]].remaining == {"s1": 0}

    audit = seen.by_listener["audit"]
    assert sorted(seq for _, seq in audit) == list(range(800))  # each once
    by_table: dict[str, list[int]] = {}
    for table, seq in audit:
        by_table.setdefault(table, []).append(seq)
    assert all(seqs == sorted(seqs) for seqs in by_table.values())
