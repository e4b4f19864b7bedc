"""The runtime's promises, tested against a model (hypothesis's stateful testing) over the in-memory coordinator
and an in-memory Kafka (``runtime_model.py``): random interleavings of producing, delivering, listener
failures, pause and resume, sidelines (started, resumed, resolved, with filters), singleton leadership
changes, rebalances, clean stops, ``kill -9`` of instances and restarts.

The model is simple because the promises are: every listener must, in the end, have handled every event (or
dead-lettered it). What it checks:

- **nothing lost**: once every listener is resumed, every sideline resolved and an instance runs, each listener
  handles (or dead-letters) every event produced, and every sideline finishes;
- **order**: per listener and table, an event is never taken for the first time after a later event of its
  table was (redeliveries aside), for every table no sideline of the listener covered;
- **a paused listener receives nothing**, from the moment every live instance has obeyed the pause until it is
  resumed;
- **a started sideline skips**: while it is started, no event it covers, produced after every live instance
  follows it, reaches its listener;
- no instance fails.

The normal run tries ``HIVEWIRE_MODEL_EXAMPLES`` interleavings (default 16, a second or two each) of at most
``HIVEWIRE_MODEL_STEPS`` steps (default 20); a longer search: ``HIVEWIRE_MODEL_EXAMPLES=300
HIVEWIRE_MODEL_STEPS=40 pytest tests/integration/test_runtime_model.py``. An interleaving it finds failing is
written down below as a plain regression test (``test_regression_*``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import msgspec
import waiting
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from runtime_model import RETRY, SWITCHABLE, TABLES, Broker, Call, Instance, Journal, payload

import hivewire as hw
from hivewire.config import Config
from hivewire.coordination import AppState, InMemoryCoordinator, Sideline
from hivewire.events import _apiary as apiary
from hivewire.runtime._lane import Lane, LaneServices
from hivewire.runtime._listener import EventFilter, Listener
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._source import MemorySource
from hivewire.runtime._tracker import CommitTracker

PARTITIONS = 3
MAX_LIVE = 3
FILTERS = [("tenant_b", "*"), ("tenant_*", "t1"), ("tenant_a", "t[02]")]


class Cluster:
    """The broker, the coordinator, the instances, and what was produced and done: the system under test."""

    def __init__(self) -> None:
        self.broker = Broker(PARTITIONS)
        self.ensemble = InMemoryCoordinator()
        self.state = AppState(self.ensemble.connect(), "orders")  # the operator's CLI session
        self.journal = Journal()
        self.instances: list[Instance] = []
        self.produced: list[tuple[int, str]] = []  # (seq, db.table), seq = index
        self.names = 0

    @property
    def live(self) -> list[Instance]:
        return [i for i in self.instances if not i.dead and i.thread.is_alive()]

    def start(self) -> Instance:
        self.names += 1
        instance = Instance(f"i{self.names}", self.broker, self.ensemble, self.journal).start()
        self.instances.append(instance)
        waiting.wait_for(lambda: instance.runner.started, f"instance {instance.name} to start", 30)
        return instance

    def produce(self, count: int, stride: int) -> None:
        for _ in range(count):
            seq = len(self.produced)
            db, table = TABLES[(seq * stride) % len(TABLES)]
            self.produced.append((seq, f"{db}.{table}"))
            self.broker.send(payload(seq, (db, table)), TABLES.index((db, table)) % PARTITIONS)

    def done(self, listener: str) -> set[int]:
        """The events ``listener`` handled, or dead-lettered."""
        with self.broker.lock:
            letters = [(r, h) for r, h in self.broker.dead_letters if h["hivewire.listener"] == listener]
        dead = set()
        for record, _ in letters:
            event = apiary.decode(record.value() or b"")
            dead.add(int(event.partitions[0].values[0]))  # type: ignore[attr-defined]
        return self.journal.handled_by(listener) | dead

    def missing(self, listener: str) -> list[int]:
        return sorted(set(range(len(self.produced))) - self.done(listener))

    def quiet(self, timeout: float) -> None:
        """Wait (up to ``timeout`` s, no assertion) until nothing more happens: no call, no commit."""
        deadline = time.monotonic() + timeout
        before = None
        while time.monotonic() < deadline:
            with self.journal.lock, self.broker.lock:
                now = (len(self.journal.started), dict(self.broker.committed), len(self.broker.dead_letters))
            if now == before:
                return
            before = now
            time.sleep(0.15)

    def close(self) -> None:
        for instance in self.instances:
            if not instance.dead:
                instance.runner.stop()
        for instance in self.instances:
            instance.thread.join(30)
        for instance in self.instances:
            instance.membership.close(5)


def examples() -> int:
    return int(os.environ.get("HIVEWIRE_MODEL_EXAMPLES", "16"))


def steps() -> int:
    return int(os.environ.get("HIVEWIRE_MODEL_STEPS", "20"))


class RuntimeModel(RuleBasedStateMachine):
    """The state machine: rules act on the cluster, invariants and the final check judge it (see above)."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster = Cluster()
        self.cluster.start()
        self.paused: dict[str, int] = {}  # listener -> journal step from which it must receive nothing
        self.pausing: set[str] = set()
        self.sidelines: dict[str, Sideline] = {}  # by id, unfinished as far as the model knows
        self.skipping: dict[str, int] = {}  # started sideline id -> first seq it must skip
        self.covered: dict[str, set[str]] = {name: set() for name in SWITCHABLE}  # tables ever sidelined

    # -- rules ---------------------------------------------------------------------------------------------

    @rule(count=st.integers(1, 60), stride=st.sampled_from([1, 3, 5]))
    def produce(self, count: int, stride: int) -> None:
        self.cluster.produce(count, stride)

    @rule()
    def deliver(self) -> None:
        """Let the instances catch up on what they can."""
        self.cluster.quiet(10)

    @precondition(lambda self: len(self.cluster.live) < MAX_LIVE)
    @rule()
    def start_instance(self) -> None:
        self.cluster.start()

    @precondition(lambda self: bool(self.cluster.live))
    @rule(which=st.integers(0, MAX_LIVE - 1))
    def stop_instance(self, which: int) -> None:
        live = self.cluster.live
        live[which % len(live)].stop()

    @precondition(lambda self: bool(self.cluster.live))
    @rule(which=st.integers(0, MAX_LIVE - 1))
    def kill_instance(self, which: int) -> None:
        live = self.cluster.live
        live[which % len(live)].kill()

    @precondition(lambda self: len(self.cluster.live) > 1)
    @rule()
    def rebalance(self) -> None:
        self.cluster.broker.rebalance()

    @precondition(lambda self: any(i.singleton.leading for i in self.cluster.live))
    @rule()
    def change_leader(self) -> None:
        """The singleton's leader loses its session (and stands again, behind the others)."""
        leader = next(i for i in self.cluster.live if i.singleton.leading)
        assert leader.session is not None
        leader.session.expire_session()

    @rule(listener=st.sampled_from(SWITCHABLE), count=st.integers(1, 4))
    def fail(self, listener: str, count: int) -> None:
        """The listener's next ``count`` calls raise (three in a row dead-letter an event)."""
        with self.cluster.journal.lock:
            self.cluster.journal.failures[listener] = self.cluster.journal.failures.get(listener, 0) + count

    @rule(listener=st.sampled_from(SWITCHABLE))
    def pause(self, listener: str) -> None:
        self.cluster.state.pause(listener, by="model")
        self.pausing.add(listener)
        self.paused.pop(listener, None)
        live = self.cluster.live

        def obeyed() -> bool:
            lanes = [i.lane(listener) for i in live]
            return all(isinstance(lane, Lane) and lane.paused and lane.busy_since is None for lane in lanes)

        if waiting.wait_for(lambda: obeyed() or not all(i.thread.is_alive() for i in live), "the pause", 30):
            with self.cluster.journal.lock:
                self.paused[listener] = len(self.cluster.journal.started)

    @rule(listener=st.sampled_from(SWITCHABLE))
    def resume(self, listener: str) -> None:
        self.cluster.state.resume(listener, by="model")
        self.pausing.discard(listener)
        self.paused.pop(listener, None)

    @rule(listener=st.sampled_from(SWITCHABLE), where=st.sampled_from(FILTERS))
    def start_sideline(self, listener: str, where: tuple[str, str]) -> None:
        if any(
            s.listener == listener and (s.db, s.table) == where and not s.finished
            for s in self.cluster.state.sidelines()
        ):
            return  # the CLI refuses a second one while the first is unfinished (tested elsewhere)
        sideline = self.cluster.state.start_sideline(listener, db=where[0], table=where[1])
        self.sidelines[sideline.id] = sideline
        self.covered[listener] |= {f"{db}.{t}" for db, t in TABLES if sideline.matches(db, t, "ADD_PARTITION")}
        live = self.cluster.live

        def followed() -> bool:
            return all(
                any(s.id == sideline.id for sl in i.runner.sidelinings.values() for s in sl.sidelines) for i in live
            )

        if waiting.wait_for(lambda: followed() or not all(i.thread.is_alive() for i in live), "the sideline", 30):
            self.skipping[sideline.id] = len(self.cluster.produced)

    @precondition(lambda self: any(s.state == "started" for s in self.sidelines.values()))
    @rule(data=st.data())
    def resume_sideline(self, data: st.DataObject) -> None:
        ids = sorted(i for i, s in self.sidelines.items() if s.state == "started")
        chosen = data.draw(st.sampled_from(ids))
        self.sidelines[chosen] = self.cluster.state.resume_sideline(chosen)
        self.skipping.pop(chosen, None)

    @precondition(lambda self: bool(self.sidelines))
    @rule(data=st.data())
    def resolve_sideline(self, data: st.DataObject) -> None:
        chosen = data.draw(st.sampled_from(sorted(self.sidelines)))
        self.cluster.state.resolve_sideline(chosen)
        del self.sidelines[chosen]
        self.skipping.pop(chosen, None)

    # -- invariants ----------------------------------------------------------------------------------------

    @invariant()
    def no_instance_failed(self) -> None:
        errors = [(i.name, e) for i in self.cluster.instances if not i.dead for e in i.errors]
        assert not errors, f"instances failed: {errors}"

    @invariant()
    def a_paused_listener_receives_nothing(self) -> None:
        with self.cluster.journal.lock:
            started = list(self.cluster.journal.started)
        for listener, since in self.paused.items():
            late = [c for c in started[since:] if c.listener == listener]
            assert not late, f"{listener} is paused, yet received {late[:5]}"

    @invariant()
    def a_started_sideline_skips(self) -> None:
        with self.cluster.journal.lock:
            started = list(self.cluster.journal.started)
        for sid, first in self.skipping.items():
            sideline = self.cluster.state.sideline(sid)
            leaked = [
                c
                for c in started
                if c.listener == sideline.listener
                and c.seq >= first
                and sideline.matches(*c.table.split("."), "ADD_PARTITION")
            ]
            assert not leaked, f"sideline {sid} ({sideline.describe()}) is started, yet {leaked[:5]} went through"

    @invariant()
    def each_table_in_order(self) -> None:
        with self.cluster.journal.lock:
            started = list(self.cluster.journal.started)
        check_order(started, self.covered)

    # -- the end -------------------------------------------------------------------------------------------

    def teardown(self) -> None:
        cluster = self.cluster
        try:
            check_everything_arrives(cluster, self.pausing, set(self.sidelines))
        finally:
            cluster.close()


def check_order(started: list[Call], covered: dict[str, set[str]]) -> None:
    """Per listener and table (not covered by a sideline of it), first takes in increasing sequence."""
    seen: set[tuple[str, int]] = set()
    last: dict[tuple[str, str], int] = {}
    for call in started:
        if call.table in covered.get(call.listener, set()) or (call.listener, call.seq) in seen:
            continue
        seen.add((call.listener, call.seq))
        key = (call.listener, call.table)
        assert call.seq > last.get(key, -1), (
            f"{call.listener} took {call.table} #{call.seq} (on {call.instance}) after #{last[key]}: out of order"
        )
        last[key] = call.seq


def check_everything_arrives(cluster: Cluster, paused: set[str], sidelines: set[str]) -> None:
    """Resume what is paused, resolve what is sidelined, have an instance run: every listener gets everything."""
    with cluster.journal.lock:
        cluster.journal.failures.clear()
    for listener in paused:
        cluster.state.resume(listener)
    for sid in sorted(sidelines):
        cluster.state.resolve_sideline(sid)
    if not cluster.live:
        cluster.start()
    listeners = ("audit", "report", "leader")
    try:
        waiting.wait_for(lambda: not any(cluster.missing(name) for name in listeners), "every event", 60)
    except AssertionError:
        missing = {name: cluster.missing(name) for name in listeners}
        raise AssertionError(
            "events never handled nor dead-lettered, of "
            f"{len(cluster.produced)}: "
            + "; ".join(f"{name}: {len(seqs)} {seqs[:20]}" for name, seqs in missing.items() if seqs)
        ) from None
    unfinished = lambda: [s for s in cluster.state.sidelines() if not s.finished]  # noqa: E731
    try:
        waiting.wait_for(lambda: not unfinished(), "every sideline to finish", 30)
    except AssertionError:
        left = [(s.id, s.state, s.starts, s.ends, s.replayed) for s in unfinished()]
        raise AssertionError(f"sidelines never finished (id, state, starts, ends, replayed): {left}") from None


RuntimeModel.TestCase.settings = settings(
    max_examples=examples(),
    stateful_step_count=steps(),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
test_runtime_model = RuntimeModel.TestCase


# -- regressions: interleavings the model found, written down -------------------------------------------------


@contextmanager
def cluster() -> Iterator[Cluster]:
    made = Cluster()
    try:
        yield made
    finally:
        made.close()


def settle(made: Cluster, check: Callable[[], bool], what: str) -> None:
    waiting.wait_for(check, what, 60)


def test_regression_a_sideline_resumed_then_both_instances_killed_before_any_replay() -> None:
    """Issue 31: resumed, then ``kill -9`` of every instance before any replay began; restarted; resolved with
    nothing new arriving. The skipped events were never replayed (the restarted instances knew no position
    for partitions they had dispatched nothing of, so no replay was queued up to there)."""
    with cluster() as made:
        made.start(), made.start()
        sideline = made.state.start_sideline("audit", db="tenant_b")
        settle(made, lambda: all(len(i.runner.skipping) == 1 for i in made.live), "the sideline followed")
        made.produce(200, 1)
        tenant_a = {seq for seq, table in made.produced if table.startswith("tenant_a.")}
        settle(made, lambda: made.done("audit") == tenant_a, "tenant_a's events")
        settle(made, lambda: made.broker.committed == made.broker.ends(), "everything committed")
        made.state.resume_sideline(sideline.id)
        for instance in made.live:
            instance.kill()
        made.start(), made.start()
        made.state.resolve_sideline(sideline.id)
        settle(made, lambda: not made.missing("audit"), "tenant_b's events replayed")
        settle(made, lambda: made.state.sideline(sideline.id).finished, "the sideline finished")


def test_regression_a_new_leader_starts_where_the_last_one_began_not_where_the_group_got() -> None:
    """Found by the model (a singleton's events lost across a leadership change): the first leader read each
    partition from the group's committed offset, as it had no progress yet; while it was still busy with its
    first event, the group's listeners handled the rest and the group committed past them; the leader lost
    its session, and the next leader, finding no progress either, started from the group's new offset. The
    first leader's starting offsets are now its progress from the start."""
    with cluster() as made:
        gate = made.journal.gates["leader"] = threading.Event()
        first, second = made.start(), made.start()
        settle(made, lambda: first.singleton.leading, "the first instance to lead")
        made.produce(3, 1)  # one event on each partition
        settle(made, lambda: made.done("audit") == made.done("report") == {0, 1, 2}, "the group's listeners")
        settle(made, lambda: made.broker.committed == made.broker.ends(), "the group's commits")
        settle(made, lambda: made.journal.started_by("leader"), "the leader in its first call")
        assert first.session is not None
        first.session.expire_session()
        settle(made, lambda: second.singleton.leading, "the second instance to lead")
        gate.set()
        settle(made, lambda: not made.missing("leader"), "every event to reach the singleton")


def test_regression_a_replay_queued_behind_a_later_range_of_its_partition_is_read() -> None:
    """Found by the model (a sideline resolved right after its events arrived lost one): the lane reads queued
    ranges of one partition together, from the first's start to the last's end; a replay queued behind a
    range further on (the live events a lane behind had spilled) made that one read end before it began, and
    both ranges were let go unread. Ranges are read together only in offset order now."""
    source = MemorySource(partitions=1, stop_when_idle=False)
    tp = (source.topic, 0)
    for seq in range(10):
        source.send(payload(seq, TABLES[0]), partition=0)
    tracker = CommitTracker()
    tracker.assign([tp])
    stopping = threading.Event()
    services = LaneServices(
        tracker=tracker,
        source=source,
        metrics=Metrics(),
        retry=RETRY,
        timeout=30,
        queue_events=100,
        queue_bytes=10**9,
        app_name="orders",
        stopping=stopping,
        metastore=lambda: None,
        fatal=lambda e: None,
    )
    seen: list[int] = []
    types = frozenset({hw.EventType.ADD_PARTITION})
    listener = Listener(
        name="audit",
        target=lambda e: seen.append(int(e.partitions[0].values[0])),
        types=types,
        filter=EventFilter(types=types),
    )
    listener.bind(Config())
    lane = Lane(listener, services)
    everything = lambda decoded: True  # noqa: E731
    lane.replay([(tracker.detached(tp, 10, lambda: None), 6, 10, 4)], everything)  # the later range first
    lane.replay([(tracker.detached(tp, 6, lambda: None), 0, 6, 6)], everything)
    lane.start()
    try:
        waiting.wait_for(lambda: len(seen) == 10, "both ranges read", 30)
    finally:
        stopping.set()
        lane.wake()
        assert lane.join(30)
    assert sorted(seen) == list(range(10))


class _Recorded:
    """A membership that keeps what a Sidelining records, in order."""

    def __init__(self) -> None:
        self.records: list[dict[str, object]] = []

    def record(self, sideline: str, **offsets: object) -> None:
        self.records.append({"sideline": sideline, **{k: v for k, v in offsets.items() if v}})


class _Lane:
    name = "report"

    def __init__(self) -> None:
        self.replays: list[object] = []

    def replay(self, chunks: object, keep: object) -> None:
        self.replays.append(chunks)


def test_regression_a_sideline_finishes_when_the_partition_changed_hands_before_its_end_was_known() -> None:
    """Found by the model (a sideline that never finished, every event handled): an instance resolved a
    sideline, recorded where it stopped skipping a partition and lost the partition (a rebalance) before
    replaying it; the next owner, whose copy of the sideline did not have that end yet, took its own (where it
    started reading, nothing left to replay) and replayed nothing, and the store kept the first end. This
    instance dispatched everything past its own end live, so the replay has reached the stored end too."""
    from hivewire.runtime._sidelining import Sidelining

    tracker = CommitTracker()
    tp = ("apiary", 2)
    tracker.assign([tp])
    membership, lane = _Recorded(), _Lane()
    sidelining = Sidelining(lane, tracker, membership, 10, Metrics())  # type: ignore[arg-type]
    base = Sideline(id="s1", listener="report", db="tenant_a", created_at=0, changed_at=0)
    stale = msgspec.structs.replace(base, state="resolved", starts={"apiary:2": 1})
    sidelining.update((stale,), {tp: 1})  # reads the partition from offset 1: nothing to replay here
    stored = msgspec.structs.replace(stale, ends={"apiary:2": 6}, replayed={"apiary:2": 1})  # the first end won
    sidelining.update((stored,), {tp: 1})
    assert lane.replays == []
    assert {"sideline": "s1", "replayed": {"apiary:2": 6}} in membership.records
    assert msgspec.structs.replace(stored, replayed={"apiary:2": 6}).finished
