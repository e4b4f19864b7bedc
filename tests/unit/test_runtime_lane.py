"""A listener's lane under the watchdog and rebalances, driven step by step (no watchdog thread, no timing).

The tests call ``Lane.check_timeout`` themselves with a clock far past the timeout, and hold listener calls
on events, so each interleaving the runtime must survive happens every run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from waiting import wait_for

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.runtime._item import Item
from hivewire.runtime._lane import Lane, Watchdog
from hivewire.runtime._listener import EventFilter, Listener, RetryPolicy
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._services import LaneServices
from hivewire.runtime._share import Share
from hivewire.runtime._source import MemorySource
from hivewire.runtime._tracker import Batch, CommitTracker
from hivewire.runtime._worker import Worker
from hivewire.tools._testing import create_table_event

TOPIC = "apiary"
LATER = 1e9  # a "now" far past any timeout


def item(partition: int, offset: int, table: str = "t") -> Item:
    value = apiary.encode(create_table_event("db", table))
    return Item(value, TOPIC, partition, offset, None, decoded=apiary.read(value))


@dataclass
class Calls:
    """A listener whose calls can be held: call ``n`` (1-based) blocks until ``release(n)``."""

    hold: set[int] = field(default_factory=set)
    fail: bool = False
    on_call: Callable[[int], None] | None = None
    count: int = 0
    _started: dict[int, threading.Event] = field(default_factory=dict)
    _released: dict[int, threading.Event] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _event(self, table: dict[int, threading.Event], n: int) -> threading.Event:
        with self._lock:
            return table.setdefault(n, threading.Event())

    def __call__(self, event: hw.ListenerEvent) -> None:
        with self._lock:
            self.count += 1
            n = self.count
        self._event(self._started, n).set()
        if self.on_call is not None:
            self.on_call(n)
        if n in self.hold:
            assert self._event(self._released, n).wait(60), f"call {n} was never released"
        if self.fail:
            raise RuntimeError(f"call {n} fails")

    def started(self, n: int) -> None:
        assert self._event(self._started, n).wait(30), f"call {n} never started"

    def release(self, n: int) -> None:
        self._event(self._released, n).set()

    def release_all(self) -> None:
        for n in range(1, self.count + 50):
            self.release(n)


class Rig:
    """Lanes over one tracker and one MemorySource, fed batches the way the runner feeds them."""

    def __init__(
        self, retry: RetryPolicy, max_abandoned: int = 8, queue_events: int = 1000, source: MemorySource | None = None
    ) -> None:
        self.tracker = CommitTracker()
        self.tracker.assign([(TOPIC, p) for p in range(4)])
        self.source = source or MemorySource(topic=TOPIC)
        self.metrics = Metrics()
        self.stopping = threading.Event()
        self.services = LaneServices(
            tracker=self.tracker,
            source=self.source,
            metrics=self.metrics,
            retry=retry,
            timeout=60.0,
            queue_events=queue_events,
            queue_bytes=10**9,
            app_name="rig",
            stopping=self.stopping,
            metastore=lambda: None,
            fatal=self._fatal,
            max_abandoned=max_abandoned,
        )
        self.lanes: list[Lane] = []
        self.fatal: list[BaseException] = []

    def _fatal(self, error: BaseException) -> None:
        self.fatal.append(error)

    def lane(self, name: str, fn: Callable[[Any], object]) -> Lane:
        types = frozenset({hw.EventType.CREATE_TABLE})
        listener = Listener(name=name, target=fn, types=types, filter=EventFilter(types=types))
        listener.bind(hw.Config())
        lane = Lane(listener, self.services)
        lane.start()
        self.lanes.append(lane)
        return lane

    def dispatch(self, items: list[Item]) -> list[Batch]:
        """Open a batch per partition and give every lane all of each, as the runner does for listeners that
        accept everything."""
        by_partition: dict[int, list[Item]] = {}
        for it in items:
            by_partition.setdefault(it.partition(), []).append(it)
        batches = []
        for partition, share in by_partition.items():
            batch = self.tracker.open((TOPIC, partition), share[-1].offset() + 1)
            size = sum(len(it.value()) for it in share)
            for lane in self.lanes:
                lane.submit(Share.hand_out(self.tracker, batch, list(share), size))
            Share.dispatched(self.tracker, batch)
            batches.append(batch)
        return batches

    def value(self, metric: Any, name: str) -> float:
        return float(metric.labels(name)._value.get())

    def close(self) -> None:
        self.stopping.set()
        for lane in self.lanes:
            lane.wake()
            assert lane.join(30)
        assert not self.fatal


@pytest.fixture
def rig() -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(**kwargs: Any) -> Rig:
        made.append(Rig(**kwargs))
        return made[-1]

    yield make
    for r in made:
        r.close()


def thread_of(lane: Lane) -> threading.Thread | None:
    """The thread that owns ``lane``'s current share (a plain lane's executor is one :class:`Worker`)."""
    worker = lane.executor
    assert isinstance(worker, Worker)
    return worker._thread


NO_WAIT = RetryPolicy(max_attempts=3, initial_delay=0, multiplier=1, max_delay=0)


def test_a_call_returning_as_the_watchdog_gives_up_is_released_once(rig: Callable[..., Rig]) -> None:
    r = rig(retry=NO_WAIT)
    racy_calls = Calls(hold={1})
    gated_calls = Calls(hold={1})
    racy = r.lane("racy", racy_calls)
    r.lane("gated", gated_calls)
    (batch,) = r.dispatch([item(0, 0)])
    racy_calls.started(1)
    gated_calls.started(1)
    hung = thread_of(racy)
    assert hung is not None

    # The hung call returns while the watchdog is busy giving it up (inside its bookkeeping): the worst
    # moment. Exactly one thread may then own the share: the one the watchdog starts.
    counter = racy.metrics.timeouts

    class ReturnsMeanwhile:
        def inc(self, amount: float = 1) -> None:
            racy_calls.release(1)
            hung.join(10)  # the abandoned thread runs to wherever it stops
            counter.inc(amount)

    racy.metrics.timeouts = ReturnsMeanwhile()  # type: ignore[assignment]
    racy.check_timeout(LATER)
    assert not hung.is_alive(), "the abandoned thread carried on after its call returned"
    wait_for(lambda: racy.depth == 0, "the new thread to finish the share")
    assert racy_calls.count == 2  # the abandoned call, then its retry in the new thread
    # The gated listener has not handled offset 0: nothing may be committed, the batch holds its share only.
    assert batch.pending == 1
    assert r.tracker.take_commits() == {}
    assert r.tracker.pending_batches == 1
    gated_calls.release(1)
    wait_for(lambda: r.tracker.pending_batches == 0, "the gated listener to finish")
    assert batch.pending == 0  # not negative: every share was released exactly once
    assert r.tracker.take_commits() == {(TOPIC, 0): 1}
    assert r.value(r.metrics.handled, "racy") == 1  # only the owner counts its call
    assert r.value(r.metrics.timeouts, "racy") == 1
    assert r.source.dead_letters == []


def test_a_returning_abandoned_call_does_not_hide_a_second_hang(rig: Callable[..., Rig]) -> None:
    r = rig(retry=RetryPolicy(max_attempts=2, initial_delay=0, multiplier=1, max_delay=0))
    calls = Calls(hold={1, 2})
    lane = r.lane("hangs", calls)
    r.dispatch([item(1, 0)])
    calls.started(1)
    first = thread_of(lane)
    assert first is not None
    lane.check_timeout(LATER)  # gives up call 1; a new thread retries
    calls.started(2)
    calls.release(1)  # the abandoned call finally returns ...
    first.join(30)
    assert not first.is_alive()
    assert lane.busy_since is not None, "the abandoned thread wiped the new thread's marker"
    lane.check_timeout(LATER)  # ... and the retry, hung too, is still seen
    assert lane.timeouts == 2
    wait_for(lambda: r.tracker.pending_batches == 0, "the dead letter")
    (letter,) = r.source.dead_letters
    assert letter.headers["hivewire.attempts"] == "2"
    assert letter.headers["hivewire.error"].startswith("ListenerTimeout")
    assert (
        letter.headers["hivewire.source.partition"],
        letter.headers["hivewire.source.offset"],
        letter.headers["hivewire.source.timestamp"],
    ) == ("1", "0", "")  # the item has no timestamp
    assert letter.record.value() == apiary.encode(create_table_event("db", "t"))
    assert r.tracker.take_commits() == {(TOPIC, 1): 1}
    assert lane.abandoned_threads == 1  # call 2 is still inside the listener
    calls.release_all()
    wait_for(lambda: lane.prune_abandoned() == 0, "the last abandoned call to return")


@pytest.mark.parametrize("max_attempts", [2, 5], ids=["before-dead-lettering", "before-retrying"])
def test_a_record_revoked_during_retries_is_left_to_its_new_owner(rig: Callable[..., Rig], max_attempts: int) -> None:
    r = rig(retry=RetryPolicy(max_attempts=max_attempts, initial_delay=0, multiplier=1, max_delay=0))
    revoked: list[dict[tuple[str, int], int]] = []

    def revoke_on_second_call(n: int) -> None:
        if n == 2:  # a rebalance takes the partition away while the listener is failing
            revoked.append(r.tracker.revoke([(TOPIC, 2)]))

    calls = Calls(fail=True, on_call=revoke_on_second_call)
    lane = r.lane("failing", calls)
    r.dispatch([item(2, 0)])
    wait_for(lambda: lane.depth == 0, "the share to be released")
    assert revoked == [{}]
    assert calls.count == 2  # no attempt after the revocation
    assert r.source.dead_letters == []  # the new owner decides; this instance must not dead-letter it
    assert r.value(r.metrics.dead_lettered, "failing") == 0
    assert r.tracker.pending_batches == 0
    assert r.tracker.take_commits() == {}  # a revoked partition is never committed by its old owner


def test_a_resumed_call_on_a_revoked_partition_does_not_leak_its_error_to_the_next_event(
    rig: Callable[..., Rig],
) -> None:
    r = rig(retry=RetryPolicy(max_attempts=1, initial_delay=0, multiplier=1, max_delay=0))
    calls = Calls(hold={1})
    lane = r.lane("hangs-once", calls)
    r.dispatch([item(0, 0), item(3, 0, table="other")])
    calls.started(1)
    r.tracker.revoke([(TOPIC, 0)])
    lane.check_timeout(LATER)  # the new thread resumes offset 0 of partition 0, which is no longer ours
    wait_for(lambda: lane.depth == 0, "the share to be released")
    assert calls.count == 2  # partition 3's event was called, not dead-lettered with partition 0's timeout
    assert r.source.dead_letters == []
    assert r.value(r.metrics.handled, "hangs-once") == 1
    assert r.tracker.take_commits() == {(TOPIC, 3): 1}
    calls.release_all()


def test_the_watchdog_counts_abandoned_threads_and_reports_too_many(
    rig: Callable[..., Rig], caplog: pytest.LogCaptureFixture
) -> None:
    r = rig(retry=RetryPolicy(max_attempts=10, initial_delay=0, multiplier=1, max_delay=0), max_abandoned=1)
    calls = Calls(hold=set(range(1, 11)))
    lane = r.lane("hangs", calls)
    watchdog = Watchdog(r.lanes, r.stopping)
    r.dispatch([item(0, 0)])
    for n in (1, 2):
        calls.started(n)
        watchdog.check(LATER)
    calls.started(3)
    assert lane.abandoned_threads == 2
    assert r.value(r.metrics.abandoned, "hangs") == 2
    critical = [rec for rec in caplog.records if rec.levelname == "CRITICAL"]
    assert len(critical) == 1 and "hangs" in critical[0].getMessage()
    calls.release(1)
    wait_for(lambda: lane.abandoned_threads == 1, "the first abandoned call to return")
    watchdog.check(0.0)  # a clock before any timeout: only the counting happens
    assert r.value(r.metrics.abandoned, "hangs") == 1
    calls.release_all()
    wait_for(lambda: lane.depth == 0, "the share to be released")


class UnacknowledgedDeadLetters(MemorySource):
    """A dead-letter topic that takes letters but acknowledges them only when the test says so."""

    def __init__(self) -> None:
        super().__init__(topic=TOPIC)
        self.unacknowledged: list[Callable[[], None]] = []

    def dead_letter(self, record: Any, headers: Any, on_delivered: Callable[[], None]) -> None:
        super().dead_letter(record, headers, lambda: None)
        self.unacknowledged.append(on_delivered)

    def acknowledge(self) -> None:
        while self.unacknowledged:
            self.unacknowledged.pop(0)()


def test_dead_letters_not_yet_acknowledged_stay_in_the_backlog(rig: Callable[..., Rig]) -> None:
    source = UnacknowledgedDeadLetters()
    r = rig(
        retry=RetryPolicy(max_attempts=1, initial_delay=0, multiplier=1, max_delay=0), queue_events=3, source=source
    )
    lane = r.lane("failing", Calls(fail=True))
    items = [item(1, offset) for offset in range(3)]
    (batch,) = r.dispatch(items)
    wait_for(lambda: batch.pending == 3, "the share to be released, its three dead letters still out")
    assert len(source.unacknowledged) == 3 and lane.depth == 3
    # Handled (given up on), but not done: the records wait in memory for the broker, so they still count
    # against the lane's bounds (backpressure), and nothing is committed.
    assert lane.bytes == sum(len(it.value()) for it in items)
    assert lane.letters.full and not lane.letters.drained
    assert r.tracker.take_commits() == {}
    source.acknowledge()
    assert (lane.depth, lane.bytes) == (0, 0)
    assert r.tracker.take_commits() == {(TOPIC, 1): 3}


def test_an_item_is_the_record_dead_letters_are_made_of_and_makes_each_listener_its_own_event() -> None:
    value = apiary.encode(create_table_event("db", "t"))
    stamped = Item(value, TOPIC, 3, 41, 1700000000000, b"key", decoded=apiary.read(value))
    assert (
        stamped.value(),
        stamped.key(),
        stamped.topic(),
        stamped.partition(),
        stamped.offset(),
        stamped.timestamp(),
    ) == (value, b"key", TOPIC, 3, 41, (1, 1700000000000))
    assert item(0, 0).timestamp() == (0, 0)  # no timestamp: TIMESTAMP_NOT_AVAILABLE, as Message says
    first, second = stamped.event(None), stamped.event(None)
    assert first == second and first is not second and first.table is not second.table
    assert first.origin == hw.Origin(TOPIC, 3, 41, 1700000000000)
    assert repr(stamped) == "CREATE_TABLE db.t at apiary/3@41"
