"""What the listener runtime promises, checked on the in-memory source, librdkafka's mock cluster and Apache Kafka."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator

import pytest
from runtime_harness import Harness, KafkaHarness, MemoryHarness, seq_of, stream

import hivewire as hw
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_table

FAST = {
    "endpoint.port": "0",
    "hivewire.commit.interval.ms": "100",
    "hivewire.retry.initial.delay.ms": "1",
    "hivewire.retry.multiplier": "1",
}


@pytest.fixture(params=["memory", "kafka_mock", "kafka"])
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """One contract, three backends: the in-memory source users test with, librdkafka's mock cluster (what
    ``hivewire.testing`` offers them without a JVM) and a real Apache Kafka broker."""
    if request.param == "memory":
        yield MemoryHarness()
    else:
        yield KafkaHarness(request.getfixturevalue(request.param))


def record_by_table(seen: dict[str, list[int]], lock: threading.Lock):  # type: ignore[no-untyped-def]
    def listener(event: hw.AddPartitionEvent) -> None:
        with lock:
            seen[event.qualified_name].append(seq_of(event))

    return listener


def test_every_event_once_and_in_order_per_table_for_every_listener(harness: Harness) -> None:
    n = 2000
    harness.send(stream(n))
    app = hw.App("contract", config=FAST)
    lock = threading.Lock()
    a: dict[str, list[int]] = collections.defaultdict(list)
    b: dict[str, list[int]] = collections.defaultdict(list)
    app.add_listener(record_by_table(a, lock), name="a", types=[hw.EventType.ADD_PARTITION])
    app.add_listener(record_by_table(b, lock), name="b", types=[hw.EventType.ADD_PARTITION], concurrency=3)
    harness.run(
        app,
        lambda: (
            sum(map(len, a.values())) + sum(map(len, b.values())) >= 2 * n and sum(harness.committed().values()) >= n
        ),
    )
    for seen in (a, b):
        assert len(seen) == 40
        for table, seqs in seen.items():
            index = int(table.rsplit("t", 1)[1])
            assert seqs == list(range(index, n, 40)), f"{table}: out of order or not exactly once"
    assert sum(harness.committed().values()) == n


def test_failing_listener_is_dead_lettered_after_retries_and_blocks_nobody(harness: Harness) -> None:
    n = 200
    harness.send(stream(n, tables=10))
    config = {**FAST, "hivewire.retry.max.attempts": "3", "hivewire.retry.initial.delay.ms": "5"}
    app = hw.App("contract", config=config)
    healthy: list[int] = []
    failures_when_healthy_done: list[int] = []
    attempts: collections.Counter[int] = collections.Counter()

    @app.on_add_partition(name="healthy")
    def ok(event: hw.AddPartitionEvent) -> None:
        healthy.append(seq_of(event))
        if len(healthy) == n:
            failures_when_healthy_done.append(sum(attempts.values()))

    @app.on_add_partition(name="broken")
    def broken(event: hw.AddPartitionEvent) -> None:
        attempts[seq_of(event)] += 1
        raise RuntimeError(f"cannot sync {event.qualified_name}")

    harness.run(
        app,
        lambda: (
            len(harness.memory.dead_letters) >= n
            if isinstance(harness, MemoryHarness)
            else sum(attempts.values()) >= 3 * n and sum(harness.committed().values()) >= n
        ),
    )
    assert sorted(healthy) == list(range(n))
    # The healthy listener finished long before the broken one had made its 3 x 200 attempts.
    assert failures_when_healthy_done and failures_when_healthy_done[0] < 3 * n
    assert set(attempts.values()) == {3}
    letters = harness.dead_letters(n)
    assert len(letters) == n
    value, headers = letters[0]
    assert headers["hivewire.listener"] == "broken"
    assert headers["hivewire.attempts"] == "3"
    assert headers["hivewire.error"].startswith("RuntimeError: cannot sync sales.t")
    assert headers["hivewire.error.type"] == "builtins.RuntimeError"
    assert "Traceback" in headers["hivewire.traceback"]
    assert hw.apiary.decode(value).event_type is hw.EventType.ADD_PARTITION  # the original bytes
    sources = {(h["hivewire.source.partition"], int(h["hivewire.source.offset"])) for _, h in letters}
    assert len(sources) == n
    assert sum(harness.committed().values()) == n  # dead-lettered counts as done


def test_a_hung_listener_times_out_and_continues_while_others_run(harness: Harness) -> None:
    n = 60
    harness.send(stream(n, tables=3))
    app = hw.App("contract", config={**FAST, "hivewire.retry.max.attempts": "2"})
    release = threading.Event()
    hung_seen: list[int] = []
    others: list[int] = []

    @app.on_add_partition(name="hangs-on-7", timeout=0.5)
    def hangs(event: hw.AddPartitionEvent) -> None:
        seq = seq_of(event)
        hung_seen.append(seq)
        if seq == 7:
            release.wait(600)  # never returns during the test: the watchdog must take over

    @app.on_add_partition(name="other")
    def other(event: hw.AddPartitionEvent) -> None:
        others.append(seq_of(event))

    try:
        harness.run(
            app, lambda: len(others) == n and len(set(hung_seen)) == n and sum(harness.committed().values()) >= n
        )
    finally:
        release.set()
    assert sorted(others) == list(range(n))
    assert hung_seen.count(7) == 2  # the first call and one retry, each abandoned after the timeout
    letters = harness.dead_letters(1)
    assert letters[0][1]["hivewire.listener"] == "hangs-on-7"
    assert letters[0][1]["hivewire.error"].startswith("ListenerTimeout")
    assert app.metrics is not None
    assert app.metrics.timeouts.labels("hangs-on-7")._value.get() == 2


def test_a_slow_event_delays_nobody_else(harness: Harness) -> None:
    n = 300
    harness.send(stream(n, tables=6))
    app = hw.App("contract", config=FAST)
    others_done_while_asleep = threading.Event()
    woke: list[bool] = []
    others: list[int] = []

    @app.on_add_partition(name="sleeper")
    def sleeper(event: hw.AddPartitionEvent) -> None:
        if seq_of(event) == 5:
            # Sleeps until everyone else is done (or 30 s): proves the others did not wait for it.
            woke.append(others_done_while_asleep.wait(30))

    @app.on_add_partition(name="others")
    def other(event: hw.AddPartitionEvent) -> None:
        others.append(seq_of(event))
        if len(others) == n:
            others_done_while_asleep.set()

    harness.run(app, lambda: bool(woke) and sum(harness.committed().values()) >= n)
    assert woke == [True]
    assert sorted(others) == list(range(n))


def test_malformed_messages_are_dead_lettered_with_their_reason(harness: Harness) -> None:
    good = stream(30, tables=3)
    bad = [
        b"not json at all",
        b'{"eventType": "ON_CREATE_TABLE"}',
        b'{"eventType": "ON_TRUNCATE", "x": 1}',
        b"[1, 2, 3]",
        good[0][:-20],
    ]
    mixed = [m for pair in zip(good, bad + [b""] * 25, strict=True) for m in pair if m]
    harness.send(mixed)
    app = hw.App("contract", config=FAST)
    seen: list[int] = []
    app.add_listener(lambda e: seen.append(seq_of(e)), name="good", types=[hw.EventType.ADD_PARTITION])
    harness.run(
        app,
        lambda: (
            len(seen) == 30
            and len(harness.dead_letters(5, timeout=0.1)) >= 5
            and sum(harness.committed().values()) >= len(mixed)
        ),
    )
    assert sorted(seen) == list(range(30))
    letters = harness.dead_letters(5)
    assert sorted(v for v, _ in letters) == sorted(bad)
    reasons = {v: h["hivewire.error"] for v, h in letters}
    assert reasons[b"not json at all"].startswith("not JSON")
    assert "unknown eventType 'ON_TRUNCATE'" in reasons[b'{"eventType": "ON_TRUNCATE", "x": 1}']
    assert "no table" in reasons[b'{"eventType": "ON_CREATE_TABLE"}']
    assert all(h["hivewire.listener"] == "hivewire.decoder" for _, h in letters)


def test_nothing_is_committed_past_an_unfinished_event(harness: Harness) -> None:
    n = 40
    harness.send(stream(n, tables=1))  # one table: one partition
    app = hw.App("contract", config=FAST)
    gate = threading.Event()
    reached: list[int] = []

    @app.on_add_partition(name="gated")
    def gated(event: hw.AddPartitionEvent) -> None:
        reached.append(seq_of(event))
        if seq_of(event) == 10:
            gate.wait(60)

    @app.on_add_partition(name="fast")
    def fast(event: hw.AddPartitionEvent) -> None:
        pass

    observed: list[int] = []

    def until() -> bool:
        if 10 in reached and not gate.is_set():
            time.sleep(0.5)  # several commit intervals pass while event 10 is unfinished
            observed.append(sum(harness.committed().values()))
            gate.set()
        return gate.is_set() and sum(harness.committed().values()) >= n

    harness.run(app, until)
    assert observed and observed[0] <= 10  # nothing at or after the unfinished event was committed
    assert sum(harness.committed().values()) == n


def test_a_listener_far_behind_reads_again_what_was_not_kept_and_loses_nothing(harness: Harness) -> None:
    n = 500
    harness.send(stream(n, tables=5))
    app = hw.App(
        "contract", config={**FAST, "hivewire.listener.queue.size": "20", "hivewire.consumer.batch.size": "10"}
    )
    gate = threading.Event()
    lock = threading.Lock()
    slow: dict[str, list[int]] = collections.defaultdict(list)
    fast: list[int] = []
    queued: list[int] = []
    record = record_by_table(slow, lock)

    @app.on_add_partition(name="slow")
    def stuck_then_slowish(event: hw.AddPartitionEvent) -> None:
        assert gate.wait(60)
        record(event)

    @app.on_add_partition(name="fast")
    def quick(event: hw.AddPartitionEvent) -> None:
        fast.append(seq_of(event))
        runner = app._runner
        if runner is not None:  # (consumption may pause for a moment, whenever this one falls 20 behind too)
            queued.append(runner.lanes[0].backlog.depth)
        if len(fast) == n:
            gate.set()  # the fast listener got everything while the slow one was stuck on its first event

    harness.run(app, lambda: sum(map(len, slow.values())) == n and sum(harness.committed().values()) >= n)
    assert sorted(fast) == list(range(n))
    for table, seqs in slow.items():
        index = int(table.rsplit("t", 1)[1])
        assert seqs == list(range(index, n, 5)), f"{table}: out of order or not exactly once"
    assert max(queued) <= 20 + 10  # held in memory for the slow one: its bound plus one poll's share
    assert sum(harness.committed().values()) == n


def test_with_overflow_pause_backpressure_pauses_and_loses_nothing(harness: Harness) -> None:
    n = 500
    harness.send(stream(n, tables=5))
    app = hw.App(
        "contract",
        config={
            **FAST,
            "hivewire.listener.queue.size": "20",
            "hivewire.listener.overflow": "pause",
            "hivewire.consumer.batch.size": "10",
        },
    )
    seen: list[int] = []
    paused: list[bool] = []

    @app.on_add_partition(name="slowish")
    def slowish(event: hw.AddPartitionEvent) -> None:
        seen.append(seq_of(event))
        runner = app._runner
        if runner is not None and runner.paused:
            paused.append(True)
        threading.Event().wait(0.001)

    harness.run(app, lambda: len(seen) == n and sum(harness.committed().values()) >= n)
    assert sorted(seen) == list(range(n))
    assert paused, "the source was never paused although the listener's queue was full"


class Inventory(hw.MetaStoreEventListener):
    """Looks tables up through the virtual metastore context, like a Java listener's getIHMSHandler()."""

    found: list[tuple[str, str]] = []

    def on_insert(self, event: hw.InsertEvent) -> None:
        assert event.handler is not None
        Inventory.found.append((event.table.tableName, event.handler.get_database(event.db_name).name))


def test_the_handler_is_a_live_metastore_client(harness: Harness, metastore: LocalMetastore, unique: str) -> None:
    with hw.MetastoreClient(metastore.uri) as client:
        client.create_database(make_database(unique))
        client.create_table(make_table(unique, "facts", partition_keys={"dt": "string"}))
    event = hw.InsertEvent(
        db_name=unique,
        table_name="facts",
        partition_key_values={"dt": "2024-01-01"},
        files=["file:/tmp/part-0"],
        file_checksums=["abc"],
    )
    harness.send([hw.apiary.encode(event)])
    Inventory.found = []
    app = hw.App("contract", config={**FAST, "hive.metastore.uris": metastore.uri})
    app.add_listener(Inventory)
    harness.run(app, lambda: len(Inventory.found) == 1)
    assert Inventory.found == [("facts", unique)]
