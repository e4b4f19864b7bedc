"""Singleton listeners (runtime/_singleton.py) on the in-memory coordinator and source: exactly one instance runs
the listener, over every partition; when its session is lost another takes over from the committed progress
(nothing skipped); the option, the class attribute, and the clear error without coordination."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

import pytest
import waiting
from runtime_settings import runtime_settings

import hivewire as hw
from hivewire.config import Config
from hivewire.coordination import AppState, Coordinator, InMemoryCoordinator
from hivewire.errors import ConfigError, SourceError
from hivewire.events import _apiary as apiary
from hivewire.runtime._listener import RetryPolicy
from hivewire.runtime._membership import Membership
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._singleton import Singleton, SingletonSource
from hivewire.runtime._source import MemorySource, Record, Source, Tail, TopicPartition, partition_name


def events(first: int, n: int) -> list[bytes]:
    return [apiary.encode(hw.testing.add_partition_event("sales", f"t{i % 10}", [[str(i)]])) for i in range(first, n)]


class Instance:
    """One instance of the app ``orders``: its own session on the ensemble, metrics and singleton."""

    def __init__(self, name: str, ensemble: InMemoryCoordinator, source: MemorySource, seen: list[tuple[str, int]]):
        self.name = name
        self.metrics = Metrics()
        self.session: InMemoryCoordinator | None = None
        self.errors: list[BaseException] = []

        def handle(event: hw.AddPartitionEvent) -> None:
            seen.append((name, int(event.partitions[0].values[0])))

        app = hw.App("orders")
        app.on_add_partition(name="compaction", singleton=True)(handle)
        self.listener = app.listeners[0]
        self.listener.bind(Config())

        def connect() -> Coordinator:
            self.session = ensemble.connect()
            return self.session

        self.singleton = Singleton(self.listener, source, self.runner, self.metrics, self.errors.append)
        self.membership = Membership(
            connect, "orders", ["compaction"], metrics=self.metrics, singletons=[self.singleton]
        )

    def runner(self, tail: Source) -> Runner:
        settings = runtime_settings(
            RetryPolicy(1, 0, 1, 0),
            listener_timeout=10,
            queue_size=1000,
            queue_bytes=1 << 20,
            batch_size=50,
            commit_interval=0.05,
            shutdown_timeout=5,
            tune_gc=False,
        )
        return Runner("orders", [self.listener], tail, settings, self.metrics.for_singleton(), lambda: None)

    def metric(self, name: str, **labels: str) -> float:
        value = self.metrics.registry.get_sample_value(name, labels)
        return 0.0 if value is None else value


def wait(predicate: Callable[[], bool], what: str) -> None:
    waiting.wait_for(predicate, what, 60)


def test_one_instance_runs_a_singleton_and_another_takes_over_from_its_progress() -> None:
    ensemble = InMemoryCoordinator()
    state = AppState(ensemble, "orders")
    source = MemorySource(partitions=4, stop_when_idle=False)
    source.send_all(events(0, 200))
    seen: list[tuple[str, int]] = []
    a, b = Instance("a", ensemble, source, seen), Instance("b", ensemble, source, seen)
    try:
        a.membership.start()
        wait(lambda: a.singleton.leading, "a to lead")
        b.membership.start()
        wait(lambda: len({seq for _, seq in seen}) == 200, "the first 200 events")
        assert {who for who, _ in seen} == {"a"}
        assert not b.singleton.leading
        wait(lambda: sum(state.progress("compaction").values()) == 200, "a's progress committed")
        assert state.progress("compaction") == {f"apiary:{p}": len(source._logs[p]) for p in range(4)}
        wait(lambda: a.metric("hivewire_coordination_instances", app="orders") == 2, "two instances counted")
        leading = {m: i.leading for m, i in state.instances().items()}
        assert sorted(leading.values()) == [(), ("compaction",)]

        # a's session is lost: b takes over and resumes from a's progress; a stands again behind b.
        assert a.session is not None
        a.session.expire_session()
        wait(lambda: b.singleton.leading, "b to lead")
        before = len(seen)
        source.send_all(events(200, 400))
        wait(lambda: len({seq for _, seq in seen}) == 400, "every event")
        assert {seq for _, seq in seen} == set(range(400))
        assert {who for who, _ in seen[before:]} == {"b"}
        assert not a.singleton.leading
        assert a.metric("hivewire_singleton_leadership_changes_total", listener="compaction", change="gained") == 1
        assert a.metric("hivewire_singleton_leadership_changes_total", listener="compaction", change="lost") == 1
        assert b.metric("hivewire_singleton_leading", listener="compaction") == 1
        assert a.metric("hivewire_singleton_leading", listener="compaction") == 0
        wait(lambda: sum(state.progress("compaction").values()) == 400, "b's progress committed")
        wait(lambda: b.metric("hivewire_singleton_lag", listener="compaction") == 0, "b's lag")
    finally:
        a.membership.close()
        b.membership.close()
    assert a.errors == b.errors == []
    assert state.instances() == {}


def test_progress_only_moves_forward() -> None:
    state = AppState(InMemoryCoordinator(), "orders")
    assert state.progress("compaction") == {}
    state.advance_progress("compaction", {"apiary:0": 10, "apiary:1": 3})
    # A former leader's late write: it cannot move a partition back.
    assert state.advance_progress("compaction", {"apiary:0": 7, "apiary:2": 1}) == {
        "apiary:0": 10,
        "apiary:1": 3,
        "apiary:2": 1,
    }


class Compaction(hw.MetaStoreEventListener):
    singleton = True

    def on_drop_table(self, event: hw.DropTableEvent) -> None:
        pass


def test_the_option_and_the_class_attribute() -> None:
    app = hw.App("orders")
    assert app.add_listener(Compaction).singleton
    assert not app.add_listener(Compaction, name="local", singleton=False).singleton
    assert app.add_listener(lambda event: None, name="fn", singleton=True).singleton
    assert not app.add_listener(lambda event: None, name="plain").singleton


def test_a_singleton_without_coordination_is_refused_at_start() -> None:
    app = hw.App("orders")
    app.add_listener(Compaction)
    with pytest.raises(ConfigError) as e:
        app.run(MemorySource(), handle_signals=False)
    assert "hivewire.coordination.zookeeper" in str(e.value)
    assert "Compaction" in str(e.value)
    # dispatch() (tests, notebooks) still calls it
    assert app.dispatch(hw.testing.drop_table_event("sales", "orders")) == ["Compaction"]


def test_a_leader_reads_nothing_until_the_groups_offsets_are_known() -> None:
    """A partition without progress starts at the group's committed offset *as read when the leader adds it*:
    when that read fails (the group's coordinator moving, say), nothing is assigned and the leader asks again,
    rather than leaving librdkafka to look the offset up later, after the group may have committed past it."""
    source = MemorySource(partitions=2, stop_when_idle=False)
    source.send_all(events(0, 20))
    source.committed[(source.topic, 0)] = 3

    class Unreachable:
        """The memory tail, whose first two ``add`` calls fail as KafkaTail's does without the offsets."""

        def __init__(self, tail: Tail) -> None:
            self.tail, self.failures = tail, 2

        def add(self, positions: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int | None]:
            if self.failures:
                self.failures -= 1
                raise SourceError("could not read the committed offsets of apiary: Broker: Not coordinator")
            return self.tail.add(positions)

        def __getattr__(self, name: str) -> object:
            return getattr(self.tail, name)

    tail = Unreachable(source.tail())
    state = AppState(InMemoryCoordinator(), "orders")
    single = SingletonSource(source, cast(Tail, tail), state, "compaction")
    assigned: list[TopicPartition] = []
    single.open(assigned.extend, lambda tps: None)
    assert assigned == [] and single.poll(100, 0) == [] and tail.failures == 1
    records: list[Record] = []
    wait(lambda: bool(records.extend(single.poll(100, 0.1)) or len(records) >= 17), "the retried assignment")
    assert tail.failures == 0 and sorted(assigned) == [(source.topic, 0), (source.topic, 1)]
    # Partition 0 from the group's offset 3, partition 1 (no offset) from its start; the starts became progress.
    assert sorted((r.partition(), r.offset()) for r in records)[0] == (0, 3)
    assert state.progress("compaction") == {partition_name((source.topic, 0)): 3, partition_name((source.topic, 1)): 0}
