"""Listeners that wait: async listeners and per-table ordered concurrency, through App.run on the in-memory source.

Every test asserts exactness and order (never speed): each event exactly once, each table's events in
order, never two events of one table in flight at once, and that events of different tables did overlap.
"""

from __future__ import annotations

import asyncio
import logging
import platform
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import pytest
from runtime_settings import runtime_settings
from waiting import wait_for

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._source import MemorySource
from hivewire.tools import _testing as testing

FAST = {
    "endpoint.port": "0",
    "hivewire.retry.max.attempts": "3",
    "hivewire.retry.initial.delay.ms": "5",
    "hivewire.retry.multiplier": "1",
    "hivewire.commit.interval.ms": "20",
}


def events(n: int, tables: int) -> list[hw.ListenerEvent]:
    return [testing.add_partition_event("db", f"t{i % tables}", [[str(i)]]) for i in range(n)]


def seq(event: hw.AddPartitionEvent) -> int:
    return int(event.partitions[0].values[0])


class Tracker:
    """What a listener saw: per table, the sequence numbers in call order; in flight, per table and overall."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[str, list[int]] = defaultdict(list)
        self.inflight: dict[str, int] = defaultdict(int)
        self.now = 0
        self.peak = 0
        self.same_table_overlaps = 0

    def enter(self, event: hw.AddPartitionEvent) -> None:
        with self.lock:
            table = event.table_name or ""
            if self.inflight[table]:
                self.same_table_overlaps += 1
            self.inflight[table] += 1
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self, event: hw.AddPartitionEvent) -> None:
        with self.lock:
            table = event.table_name or ""
            self.inflight[table] -= 1
            self.now -= 1
            self.seen[table].append(seq(event))

    def check(self, n: int, tables: int) -> None:
        assert sorted(s for seqs in self.seen.values() for s in seqs) == list(range(n)), "not exactly once"
        for table, seqs in self.seen.items():
            index = int(table[1:])
            assert seqs == list(range(index, n, tables)), f"{table}: out of order"
        assert self.same_table_overlaps == 0, "two events of one table were in flight at once"
        assert self.peak > 1, "events of different tables never overlapped"


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_concurrency_keeps_each_table_in_order_and_overlaps_tables(kind: str) -> None:
    n, tables = 2000, 200
    app = hw.App("wide")
    track = Tracker()
    if kind == "async":

        @app.on_add_partition(concurrency=32)
        async def waits(event: hw.AddPartitionEvent) -> None:
            track.enter(event)
            await asyncio.sleep(0.002)
            track.leave(event)

    else:

        @app.on_add_partition(concurrency=32)
        def sleeps(event: hw.AddPartitionEvent) -> None:
            track.enter(event)
            time.sleep(0.002)
            track.leave(event)

    source = testing.run_app(app, events(n, tables), config=FAST)
    track.check(n, tables)
    assert source.dead_letters == []
    assert sum(source.committed.values()) == n


def test_the_config_key_sets_the_default_concurrency() -> None:
    n, tables = 400, 40
    app = hw.App("wide")
    track = Tracker()

    @app.on_add_partition
    async def waits(event: hw.AddPartitionEvent) -> None:
        track.enter(event)
        await asyncio.sleep(0.002)
        track.leave(event)

    testing.run_app(app, events(n, tables), config={**FAST, "hivewire.listener.concurrency": "8"})
    track.check(n, tables)
    assert track.peak <= 8


def test_async_listener_of_concurrency_one_handles_events_one_at_a_time_in_order() -> None:
    app = hw.App("narrow")
    track = Tracker()

    @app.on_add_partition
    async def waits(event: hw.AddPartitionEvent) -> None:
        track.enter(event)
        await asyncio.sleep(0)
        track.leave(event)

    testing.run_app(app, events(100, 10), config=FAST)
    assert track.peak == 1
    assert sorted(s for seqs in track.seen.values() for s in seqs) == list(range(100))


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_call_that_never_returns_is_timed_out_retried_and_dead_lettered_while_the_rest_flows(kind: str) -> None:
    n, tables = 300, 10
    app = hw.App("stuck")
    lock = threading.Lock()
    order: list[tuple[str, int]] = []  # ("start"/"done", seq) in the order they happened
    forever = threading.Event()

    def note(what: str, event: hw.AddPartitionEvent) -> None:
        with lock:
            order.append((what, seq(event)))

    if kind == "async":

        @app.on_add_partition(concurrency=4, timeout=0.3)
        async def hangs(event: hw.AddPartitionEvent) -> None:
            note("start", event)
            if seq(event) == 5:
                await asyncio.Future()  # never returns
            note("done", event)

    else:

        @app.on_add_partition(concurrency=4, timeout=0.3)
        def hangs_sync(event: hw.AddPartitionEvent) -> None:
            note("start", event)
            if seq(event) == 5:
                forever.wait(120)  # the thread is abandoned, then released at the end of the test
            note("done", event)

    try:
        source = testing.run_app(app, events(n, tables), config=FAST, raise_errors=False)
        with lock:
            seen = list(order)  # as the run left it: the abandoned calls note "done" once released below
    finally:
        forever.set()
    assert len(source.dead_letters) == 1
    letter = source.dead_letters[0]
    assert letter.headers["hivewire.attempts"] == "3"
    assert letter.headers["hivewire.error.type"].endswith("ListenerTimeout")
    done = [s for what, s in seen if what == "done"]
    assert sorted(done) == [i for i in range(n) if i != 5]
    starts_of_5 = [i for i, (what, s) in enumerate(seen) if what == "start" and s == 5]
    assert len(starts_of_5) == 3
    # Other tables flowed while the first attempt hung, and the stuck table's later events waited for it.
    between = [s for what, s in seen[starts_of_5[0] : starts_of_5[1]] if what == "done"]
    assert any(s % tables != 5 for s in between)
    assert not any(s % tables == 5 and s > 5 for s in between)
    seen_of_table_5 = [s for s in done if s % tables == 5]
    assert seen_of_table_5 == sorted(seen_of_table_5)
    assert sum(source.committed.values()) == n


def test_a_stuck_table_leaves_other_partitions_committing() -> None:
    source = MemorySource(partitions=4, stop_when_idle=False)
    payloads = [apiary.encode(e) for e in events(400, 40)]
    records = source.send_all(payloads)
    gate = threading.Event()
    app = hw.App("stuck", config={**FAST, "hivewire.listener.timeout.ms": "120000"})
    stuck_table = "t7"

    @app.on_add_partition(concurrency=8)
    def blocks(event: hw.AddPartitionEvent) -> None:
        if event.table_name == stuck_table:
            assert gate.wait(60)

    stuck_partition = next(
        (r.topic() or "", r.partition() or 0) for r in records if f'"{stuck_table}"' in (r.value() or b"").decode()
    )
    ends: dict[tuple[str, int], int] = defaultdict(int)
    for record in records:
        tp = (record.topic() or "", record.partition() or 0)
        ends[tp] = max(ends[tp], (record.offset() or 0) + 1)
    thread = threading.Thread(target=app.run, args=(source,), kwargs={"handle_signals": False}, daemon=True)
    thread.start()
    try:
        others = [tp for tp in ends if tp != stuck_partition]
        wait_for(
            lambda: all(source.committed.get(tp) == ends[tp] for tp in others),
            "the other partitions to commit everything while one table is stuck",
        )
        assert source.committed.get(stuck_partition, 0) < ends[stuck_partition]
        gate.set()
        wait_for(lambda: source.committed.get(stuck_partition) == ends[stuck_partition], "the stuck partition")
    finally:
        gate.set()
        app.stop()
        thread.join(60)


def test_a_final_failure_logs_the_traceback_once_naming_the_listeners_line(caplog: pytest.LogCaptureFixture) -> None:
    app = hw.App("fails")

    @app.on_add_partition(concurrency=2)
    def broken(event: hw.AddPartitionEvent) -> None:
        raise ValueError("no such column")  # the line the log must name

    line = broken.__code__.co_firstlineno + 2
    with caplog.at_level(logging.DEBUG, logger="hivewire"):
        source = testing.run_app(app, events(3, 3), config=FAST, raise_errors=False)
    assert len(source.dead_letters) == 3
    finals = [r for r in caplog.records if r.levelno == logging.ERROR and "gave up" in r.getMessage()]
    assert len(finals) == 3
    assert all(f"{__file__}:{line}" in r.getMessage() for r in finals)
    # only the listener's own frames in the message (issue 33); the whole traceback at DEBUG
    assert all('raise ValueError("no such column")' in r.getMessage() and r.exc_info is None for r in finals)
    whole = [r for r in caplog.records if r.levelno == logging.DEBUG and "the whole traceback" in r.getMessage()]
    assert len(whole) == 3 and all(r.exc_info is not None for r in whole)
    retries = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert retries and all(r.levelno == logging.DEBUG for r in retries)


def test_dispatch_chains_listener_error_to_the_listeners_exception_and_runs_async_listeners() -> None:
    app = hw.App("dispatch")
    seen: list[str] = []

    @app.on_create_table
    async def records(event: hw.CreateTableEvent) -> None:
        await asyncio.sleep(0)
        seen.append(event.table_name or "")

    @app.on_create_table
    def fails(event: hw.CreateTableEvent) -> None:
        raise KeyError("owner")

    with pytest.raises(hw.ListenerError) as info:
        app.dispatch(testing.create_table_event("db", "t"))
    assert isinstance(info.value.__cause__, KeyError)
    assert seen == ["t"]


def test_an_unknown_listener_option_is_refused() -> None:
    app = hw.App("options")
    with pytest.raises(TypeError, match="concurency"):
        app.add_listener(lambda e: None, concurency=2)  # type: ignore[call-arg]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_lag_metrics_equal_the_true_backlog_of_a_listener_held_300_events_behind(concurrency: int) -> None:
    source = MemorySource(partitions=4, stop_when_idle=False)
    source.send_all([apiary.encode(e) for e in events(300, 30)])
    gate = threading.Event()
    app = hw.App("lag", config={**FAST, "hivewire.listener.timeout.ms": "120000"})

    @app.on_add_partition(name="held", concurrency=concurrency)
    def held(event: hw.AddPartitionEvent) -> None:
        assert gate.wait(60)

    @app.on_add_partition(name="quick")
    def quick(event: hw.AddPartitionEvent) -> None:
        pass

    def value(name: str, **labels: str) -> float | None:
        metrics = app.metrics  # None until the run has started
        return metrics.registry.get_sample_value(name, labels) if metrics is not None else None

    def committed_lag() -> float:
        return sum(value("hivewire_consumer_committed_lag", topic="apiary", partition=str(p)) or 0 for p in range(4))

    thread = threading.Thread(target=app.run, args=(source,), kwargs={"handle_signals": False}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: value("hivewire_listener_events_behind", listener="quick") == 0, "the quick listener")
        wait_for(lambda: value("hivewire_listener_events_behind", listener="held") == 300, "300 events behind")
        assert committed_lag() == 300  # the held listener holds every commit back
        gate.set()
        wait_for(lambda: value("hivewire_listener_events_behind", listener="held") == 0, "caught up")
        wait_for(lambda: committed_lag() == 0, "everything committed")
        # The latency histogram: one observation per event, not per share.
        assert value("hivewire_listener_latency_seconds_count", listener="held") == 300
        assert value("hivewire_listener_latency_seconds_count", listener="quick") == 300
        assert value("hivewire_events_by_type_total", event_type="ADD_PARTITION") == 300
        assert value("hivewire_build_info", version=hw.__version__, python=platform.python_version()) == 1
    finally:
        gate.set()
        app.stop()
        thread.join(60)


def test_the_docs_example_of_listeners_that_wait_runs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "runtime.md").read_text()
    section = text.split("## Listeners that wait")[1].split("\n## ")[0]
    blocks = [block.split("```")[0] for block in section.split("```python\n")[1:]]
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/runtime.md", "exec"), {})


def test_revoked_partitions_are_committed_without_waiting_on_the_polling_thread() -> None:
    class Recording(MemorySource):
        waits: list[bool]

        def commit(self, offsets: Mapping[tuple[str, int], int], *, wait: bool) -> None:
            self.waits.append(wait)
            super().commit(offsets, wait=wait)

    source = Recording(partitions=1)
    source.waits = []
    app = hw.App("revoke")
    app.add_listener(lambda event: None, name="noop")
    app.listeners[0].bind(app.config)
    settings = runtime_settings(
        hw.RetryPolicy(),
        listener_timeout=60.0,
        queue_size=100,
        queue_bytes=1 << 20,
        batch_size=10,
        commit_interval=1.0,
        shutdown_timeout=5.0,
    )
    runner = Runner("revoke", app.listeners, source, settings, Metrics(), lambda: None)
    tp = ("apiary", 0)
    runner._on_assign([tp])
    batch = runner.tracker.open(tp, 5)
    runner.tracker.release(batch)  # finished: offset 5 is committable
    runner._on_revoke([tp])
    assert source.waits == [False]
    assert source.committed == {tp: 5}
