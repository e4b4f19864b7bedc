"""Two apps sharing a consumer group on Kafka (a real Apache Kafka broker) while one joins or leaves, with
backpressure in force: nothing is lost, offsets end at the partitions' ends, and pausing covers exactly
the current assignment, with the eager (range) and the incremental (cooperative-sticky) protocols; a member's
``/health`` stays ready through the rebalances (docs/runtime.md, "Operations")."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Sequence

import pytest
from runtime_harness import KafkaHarness, seq_of, stream
from waiting import wait_for

import hivewire as hw
from hivewire.runtime._source import Assigned, Record, TopicPartition

STRATEGIES = ["range", "cooperative-sticky"]


class CountingSource(hw.KafkaSource):
    """A KafkaSource that counts polls, so a test can let the runner poll a while without timing it, and
    calls :attr:`after_revoke` once the runner has handled a revocation."""

    polls = 0
    after_revoke: Callable[[], None] = staticmethod(lambda: None)

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        self.polls += 1
        return super().poll(max_records, timeout)

    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        def revoked(partitions: list[TopicPartition]) -> None:
            on_revoke(partitions)
            self.after_revoke()

        super().open(on_assign, revoked)


class Member:
    """One app of the group, run in a thread.

    With ``gated``, its listener waits for ``gate`` once it has handled events of ``hold_after`` partitions.
    """

    def __init__(
        self,
        harness: KafkaHarness,
        name: str,
        strategy: str,
        *,
        gated: bool,
        hold_after: int = 0,
        settings: dict[str, str] | None = None,
        bystander: bool = False,
    ) -> None:
        self.name = name
        self.gate = threading.Event()
        if not gated:
            self.gate.set()
        self.hold_after = hold_after
        self.seen: list[tuple[int, int, int]] = []  # (partition, offset, seq)
        self._partitions: set[int] = set()
        self._lock = threading.Lock()
        self.app = hw.App(name, config={"endpoint.port": "0", "hivewire.commit.interval.ms": "100", **(settings or {})})
        self.app.add_listener(self._handle, name="record", types=[hw.EventType.ADD_PARTITION])
        if bystander:  # a listener that keeps up, so that the gated one spills rather than pauses everyone
            self.app.add_listener(lambda event: None, name="bystander", types=[hw.EventType.ADD_PARTITION])
        self.source = CountingSource(
            harness.bootstrap,
            harness.topic,
            group_id=harness.group,
            consumer_config={
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                "partition.assignment.strategy": strategy,
            },
        )
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"member-{name}")
        self.thread.start()

    def _handle(self, event: hw.AddPartitionEvent) -> None:
        if len(self._partitions) >= self.hold_after:
            assert self.gate.wait(120), "the test never opened the gate"
        assert event.origin is not None
        with self._lock:
            self.seen.append((event.origin.partition, event.origin.offset, seq_of(event)))
            self._partitions.add(event.origin.partition)

    def _run(self) -> None:
        try:
            self.app.run(self.source, handle_signals=False)
        except BaseException as e:  # re-raised by stop(), in the test's thread
            self.errors.append(e)

    def paused(self) -> bool:
        runner = self.app._runner
        return runner is not None and bool(runner.paused)

    def assigned(self) -> set[int]:
        runner = self.app._runner
        return {p for _, p in runner.assigned} if runner is not None else set()

    def consumed(self) -> float:
        assert self.app.metrics is not None
        return float(self.app.metrics.consumed._value.get())

    def lag_partitions(self) -> set[int]:
        assert self.app.metrics is not None
        return {int(s.labels["partition"]) for m in self.app.metrics.lag.collect() for s in m.samples}

    def stop(self) -> None:
        self.gate.set()
        self.app.stop()
        self.thread.join(60)
        assert not self.thread.is_alive(), f"{self.name} did not stop"
        if self.errors:
            raise self.errors[0]


def ends(payloads: Sequence[bytes]) -> dict[int, int]:
    return dict(collections.Counter(KafkaHarness.partition_for(p) for p in payloads))


BACKPRESSURE = {
    "hivewire.listener.queue.size": "20",
    "hivewire.listener.overflow": "pause",
    "hivewire.consumer.batch.size": "10",
}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_partitions_gained_while_paused_stay_paused(kafka: str, strategy: str) -> None:
    harness = KafkaHarness(kafka)
    payloads = stream(800, tables=40)
    harness.send(payloads)
    b = Member(harness, "b", strategy, gated=True, settings=BACKPRESSURE)
    a: Member | None = None
    try:
        wait_for(lambda: b.assigned() == {0, 1, 2, 3} and b.paused(), "b to own everything and pause", 60)
        a = Member(harness, "a", strategy, gated=True, settings=BACKPRESSURE)
        wait_for(lambda: len(a.assigned()) == 2 and a.paused(), "a to join, fill its queue and pause", 60)
        b.stop()  # b leaves: a gains b's partitions while it is paused
        wait_for(lambda: a.assigned() == {0, 1, 2, 3}, "a to take over b's partitions", 60)
        consumed, polls = a.consumed(), a.source.polls
        wait_for(lambda: a.source.polls >= polls + 25, "a to poll a while", 60)
        assert a.paused()
        assert a.consumed() == consumed, "a read partitions it gained while paused"
        a.gate.set()
        wait_for(lambda: harness.committed() == ends(payloads), "a to finish the stream", 120)
    finally:
        b.stop()
        if a is not None:
            a.stop()
    assert {s for _, _, s in a.seen + b.seen} == set(range(len(payloads)))  # nothing lost
    assert harness.committed() == ends(payloads)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_partitions_revoked_while_paused_are_read_again_when_they_come_back(kafka: str, strategy: str) -> None:
    harness = KafkaHarness(kafka)
    first = stream(600, tables=40)
    harness.send(first)
    # a reads every partition before its listener stops, so it knows (and reports) the lag of each.
    a = Member(harness, "a", strategy, gated=True, hold_after=4, settings=BACKPRESSURE)
    b: Member | None = None
    try:
        wait_for(
            lambda: a.paused() and a.lag_partitions() == {0, 1, 2, 3},
            "a to pause with all four partitions (and report their lag)",
            60,
        )
        b = Member(harness, "b", strategy, gated=False)
        wait_for(lambda: len(b.assigned()) == 2 and len(a.assigned()) == 2, "b to join", 60)
        mine = a.assigned()
        wait_for(lambda: a.lag_partitions() <= mine, "a to drop the lag of partitions it lost", 30)
        a.gate.set()
        first_ends = ends(first)
        # Drained with nothing left to read: no later pause and resume may tidy up what follows.
        wait_for(
            lambda: not a.paused() and all(harness.committed().get(p) == first_ends[p] for p in mine),
            "a to resume and finish its partitions",
            60,
        )
        b.stop()  # a gets back the partitions that were revoked from it while paused
        wait_for(lambda: a.assigned() == {0, 1, 2, 3}, "a to take over b's partitions", 60)
        # Fewer than a queue's worth, across all four partitions: no pause and resume of the whole
        # assignment happens to clear the stale pause of the partitions that came back.
        second = stream(612, tables=40)[600:]
        harness.send(second)
        wait_for(lambda: harness.committed() == ends(first + second), "a to read every partition", 120)
    finally:
        a.stop()
        if b is not None:
            b.stop()
    assert {s for _, _, s in a.seen + b.seen} == set(range(612))
    assert {p for p, _, s in a.seen if s >= 600} == {0, 1, 2, 3}
    assert harness.committed() == ends(first + second)
    for member in (a, b):
        assert member.app.metrics is not None
        assert member.app.metrics.dead_lettered.labels("record")._value.get() == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_spilled_records_of_revoked_partitions_are_left_to_their_new_owner(kafka: str, strategy: str) -> None:
    harness = KafkaHarness(kafka)
    payloads = stream(800, tables=40)
    harness.send(payloads)
    # The default overflow: a stuck beyond its bounds spills (keeps offsets, reads them again later).
    a = Member(
        harness,
        "a",
        strategy,
        gated=True,
        bystander=True,
        settings={"hivewire.listener.queue.size": "20", "hivewire.consumer.batch.size": "10"},
    )
    b: Member | None = None
    try:
        wait_for(
            lambda: a.assigned() == {0, 1, 2, 3} and a.app._runner is not None and a.app._runner.lanes[0].spilled > 100,
            "a to own everything and spill",
            60,
        )
        b = Member(harness, "b", strategy, gated=False)
        wait_for(lambda: len(b.assigned()) == 2 and len(a.assigned()) == 2, "b to join", 60)
        mine = a.assigned()
        a.gate.set()
        wait_for(lambda: harness.committed() == ends(payloads), "both to finish the stream", 120)
    finally:
        a.stop()
        if b is not None:
            b.stop()
    assert {s for _, _, s in a.seen + b.seen} == set(range(len(payloads)))  # nothing lost
    # a read again only what it still owned: of the partitions it lost, at most the event it was stuck in.
    assert len([p for p, _, _ in a.seen if p not in mine]) <= 1
    assert harness.committed() == ends(payloads)


def test_a_member_stays_ready_while_the_group_rebalances(kafka: str) -> None:
    # The eager protocol takes every partition of every member at each join and leave (a rolling deploy):
    # the member that had them is rejoining, not unready. /health asked every 10 ms throughout.
    harness = KafkaHarness(kafka)
    harness.send(stream(200, tables=20))
    a = Member(harness, "a", "range", gated=False)
    b: Member | None = None
    answers: list[dict[str, object]] = []
    asking = threading.Event()

    def ask() -> None:
        while not asking.wait(0.01):
            runner = a.app._runner
            if runner is not None:
                answers.append(runner.health())

    def after_revoke() -> None:  # on a's polling thread, inside the rebalance: certainly seen
        assert a.app._runner is not None
        answers.append(a.app._runner.health())

    poller = threading.Thread(target=ask, daemon=True)
    try:
        wait_for(lambda: a.assigned() == {0, 1, 2, 3}, "a to own every partition", 60)
        a.source.after_revoke = after_revoke
        poller.start()
        b = Member(harness, "b", "range", gated=False)
        wait_for(lambda: len(a.assigned()) == 2 and len(b.assigned()) == 2, "b to join", 60)
        b.stop()
        wait_for(lambda: a.assigned() == {0, 1, 2, 3}, "a to take b's partitions back", 60)
    finally:
        asking.set()
        poller.join(10)
        a.source.after_revoke = lambda: None  # stopping revokes too, and is DOWN
        a.stop()
        if b is not None:
            b.stop()
    rebalancing = [h for h in answers if h["rebalancing_s"] is not None]
    assert len(rebalancing) >= 2, f"{len(rebalancing)} of {len(answers)} answers inside the two rebalances"
    assert all(h["status"] == "UP" and h["assigned"] == [] for h in rebalancing), rebalancing[:3]
    assert [h for h in answers if h["status"] != "UP"] == []
