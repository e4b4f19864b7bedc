"""A cluster of app instances in one process, for the model-based test of the runtime (test_runtime_model.py).

- :class:`Broker` is an in-memory Kafka: one topic, one consumer group, the group's committed offsets and a
  dead-letter topic. Its partitions are spread over the live members; a partition changes hands as a
  cooperative rebalance does it: the old owner revokes it first (its ``on_revoke`` may commit), then the new
  owner is assigned it and reads from the committed offset. A member's commit of a partition it no longer
  holds is refused (the group's generation fences it), and a killed member's partitions are free at once.
- :class:`MemberSource` is one instance's consumer on it, a :class:`~hivewire.runtime._source.Source` with a
  ``tail()`` for singleton listeners.
- :class:`Instance` is one ``hivewire run`` of the app ``orders``, built as ``App.run`` builds it (a runner,
  its membership on its own session of the in-memory coordinator, the singleton listener), with three
  listeners: ``audit`` (one thread), ``report`` (three in flight, ordered per table) and ``leader``
  (``singleton=True``). :meth:`Instance.kill` is ``kill -9``: from that moment the instance does nothing
  anyone can see (its commits, dead letters and coordination writes are lost, its calls are not counted,
  its session ends), though its threads are wound down in the background.
- :class:`Journal` records what every listener call did, for the model to judge.

Only Kafka is replaced (by :class:`Broker`); coordination is hivewire's own in-memory backend, the runtime is
the real one.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from runtime_settings import runtime_settings

import hivewire as hw
from hivewire.config import Config
from hivewire.coordination import Coordinator, InMemoryCoordinator
from hivewire.events import _apiary as apiary
from hivewire.runtime._lane import Lane
from hivewire.runtime._listener import Listener, RetryPolicy
from hivewire.runtime._membership import Membership
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._singleton import Singleton
from hivewire.runtime._source import Assigned, Delivered, MemoryRecord, Reader, Record, Source, Tail, TopicPartition
from hivewire.tools._testing import make_partition, make_table

TOPIC = "apiary"
APP = "orders"
LISTENERS = ("audit", "report", "leader")
SWITCHABLE = ("audit", "report")  # a singleton cannot be paused or sidelined
TABLES = [(db, f"t{i}") for db in ("tenant_a", "tenant_b") for i in range(4)]


def payload(seq: int, table: tuple[str, str]) -> bytes:
    """An ADD_PARTITION event of ``table`` whose partition's value is ``seq``."""
    shape = make_table(table[0], table[1], partition_keys={"seq": "string"})
    return apiary.encode(hw.AddPartitionEvent(table=shape, partitions=[make_partition(shape, [str(seq)])]))


class Broker:
    """One topic of ``partitions`` partitions, one consumer group, and its dead-letter topic, in memory."""

    def __init__(self, partitions: int) -> None:
        self.lock = threading.Condition()
        self.logs: list[list[MemoryRecord]] = [[] for _ in range(partitions)]
        self.committed: dict[TopicPartition, int] = {}
        self.dead_letters: list[tuple[MemoryRecord, dict[str, str]]] = []
        self.members: list[MemberSource] = []
        self.owner: dict[TopicPartition, MemberSource] = {}
        self.shift = 0  # turned by rebalance(): the spread of partitions over the members

    @property
    def partitions(self) -> list[TopicPartition]:
        return [(TOPIC, p) for p in range(len(self.logs))]

    def send(self, value: bytes, partition: int) -> None:
        with self.lock:
            log = self.logs[partition]
            log.append(MemoryRecord(value, TOPIC, partition, len(log), 0))
            self.lock.notify_all()

    def ends(self) -> dict[TopicPartition, int]:
        with self.lock:
            return {(TOPIC, p): len(log) for p, log in enumerate(self.logs)}

    def target(self, tp: TopicPartition) -> MemberSource | None:
        """Who should hold ``tp`` now (the members in joining order, the partitions spread round-robin)."""
        live = self.members
        return live[(tp[1] + self.shift) % len(live)] if live else None

    def join(self, member: MemberSource) -> None:
        with self.lock:
            self.members.append(member)
            self.lock.notify_all()

    def leave(self, member: MemberSource) -> None:
        """``member`` is gone without revoking (a killed process whose session timed out)."""
        with self.lock:
            if member in self.members:
                self.members.remove(member)
            for tp in [tp for tp, owner in self.owner.items() if owner is member]:
                del self.owner[tp]
            self.lock.notify_all()

    def rebalance(self) -> None:
        """Move partitions between the members (as a member joining or a consumer restarting would)."""
        with self.lock:
            self.shift += 1
            self.lock.notify_all()


class MemberSource:
    """One instance's consumer in the group of :class:`Broker` (see the module's docstring)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.topic = TOPIC
        self.dead_letter_topic = f"{TOPIC}.dlq"
        self.dead = False
        self.held: dict[TopicPartition, int] = {}  # the partitions held, and the next offset to read
        self._on_assign: Assigned | None = None
        self._on_revoke: Assigned | None = None
        self._paused = False

    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        self._on_assign, self._on_revoke = on_assign, on_revoke
        self.broker.join(self)

    def _rebalance(self) -> None:
        """Give up what moved away (revoking it), then take what is free and ours (polling thread)."""
        broker = self.broker
        with broker.lock:
            leaving = [tp for tp in self.held if broker.target(tp) is not self]
        if leaving and self._on_revoke is not None:
            self._on_revoke(leaving)  # still the owner: its final commit goes through
        with broker.lock:
            for tp in leaving:
                del self.held[tp]
                if broker.owner.get(tp) is self:
                    del broker.owner[tp]
            taking = [tp for tp in broker.partitions if broker.target(tp) is self and tp not in broker.owner]
            for tp in taking:
                broker.owner[tp] = self
                self.held[tp] = broker.committed.get(tp, 0)
        if taking and self._on_assign is not None:
            self._on_assign(taking)

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        if self.dead:
            with self.broker.lock:
                self.broker.lock.wait(timeout)
            return []
        self._rebalance()
        with self.broker.lock:
            if not self._paused and (batch := self._take(max_records)):
                return batch
            self.broker.lock.wait(timeout)
            return [] if self._paused or self.dead else self._take(max_records)

    def _take(self, max_records: int) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        for tp, position in self.held.items():
            chunk = self.broker.logs[tp[1]][position : position + max_records - len(out)]
            out.extend(chunk)
            self.held[tp] = position + len(chunk)
        return out

    def commit(self, offsets: Mapping[TopicPartition, int], *, wait: bool) -> None:
        with self.broker.lock:
            if self.dead:
                return
            for tp, offset in offsets.items():
                if self.broker.owner.get(tp) is self:  # fenced otherwise
                    self.broker.committed[tp] = max(offset, self.broker.committed.get(tp, 0))

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        with self.broker.lock:
            if not self.dead:
                value = record.value()
                letter = MemoryRecord(value, self.dead_letter_topic, 0, len(self.broker.dead_letters), 0)
                self.broker.dead_letters.append((letter, dict(headers)))
        on_delivered()

    def lag(self) -> dict[TopicPartition, int]:
        with self.broker.lock:
            return {tp: len(self.broker.logs[tp[1]]) - position for tp, position in self.held.items()}

    def finished(self) -> bool:
        return False

    def next_offset(self, tp: TopicPartition) -> int | None:
        with self.broker.lock:
            return self.held.get(tp)

    def drain(self, timeout: float) -> None:
        pass

    def reader(self) -> Reader:
        return _Reader(self.broker)

    def tail(self) -> Tail:
        return _Tail(self)

    def close(self) -> None:
        """Leave the group (after the runner's final commit); the others take the partitions."""
        self.broker.leave(self)


class _Reader:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def read(self, tp: TopicPartition, start: int, end: int, timeout: float) -> Sequence[Record]:
        with self.broker.lock:
            return self.broker.logs[tp[1]][start:end]

    def close(self) -> None:
        pass


class _Tail:
    """Every partition by assignment, from given offsets (None: the group's committed offset)."""

    def __init__(self, member: MemberSource) -> None:
        self.member = member
        self.broker = member.broker
        self.positions: dict[TopicPartition, int] = {}
        self.paused = False

    def partitions(self) -> list[TopicPartition]:
        return self.broker.partitions

    def add(self, positions: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int | None]:
        with self.broker.lock:
            for tp, offset in positions.items():
                self.positions[tp] = self.broker.committed.get(tp, 0) if offset is None else offset
            return {tp: self.positions[tp] for tp in positions}

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        with self.broker.lock:
            if not (self.paused or self.member.dead) and (batch := self._take(max_records)):
                return batch
            self.broker.lock.wait(timeout)
            return [] if self.paused or self.member.dead else self._take(max_records)

    def _take(self, max_records: int) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        for tp, position in self.positions.items():
            chunk = self.broker.logs[tp[1]][position : position + max_records - len(out)]
            out.extend(chunk)
            self.positions[tp] = position + len(chunk)
        return out

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False

    def lag(self) -> dict[TopicPartition, int]:
        with self.broker.lock:
            return {tp: len(self.broker.logs[tp[1]]) - position for tp, position in self.positions.items()}

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class Call:
    """One listener call: its place in the journal, who made it, and the event (table and sequence number)."""

    step: int
    instance: str
    listener: str
    table: str
    seq: int


@dataclass
class Journal:
    """Every listener call as it began (``started``) and as it returned (``handled``), in one order."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    started: list[Call] = field(default_factory=list)
    handled: list[Call] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)  # per listener: calls still to fail
    gates: dict[str, threading.Event] = field(default_factory=dict)  # per listener: calls wait until it is set
    _steps: itertools.count[int] = field(default_factory=itertools.count)

    def call(self, instance: Instance, listener: str, event: hw.ListenerEvent) -> None:
        assert isinstance(event, hw.AddPartitionEvent)
        seq = int(event.partitions[0].values[0])
        with self.lock:
            if instance.dead:
                raise RuntimeError("killed")  # never seen: a killed instance's calls count for nothing
            self.started.append(Call(next(self._steps), instance.name, listener, event.qualified_name, seq))
            failing = self.failures.get(listener, 0)
            if failing:
                self.failures[listener] = failing - 1
        gate = self.gates.get(listener)
        if gate is not None:
            gate.wait(60)
        if failing:
            raise RuntimeError(f"{listener} fails (as told)")
        with self.lock:
            if not instance.dead:
                self.handled.append(Call(next(self._steps), instance.name, listener, event.qualified_name, seq))

    def started_by(self, listener: str) -> set[int]:
        with self.lock:
            return {c.seq for c in self.started if c.listener == listener}

    def handled_by(self, listener: str) -> set[int]:
        with self.lock:
            return {c.seq for c in self.handled if c.listener == listener}


RETRY = RetryPolicy(3, 0.005, 1, 0.005)


class Instance:
    """One ``hivewire run`` of the app (see the module's docstring); :meth:`start`, :meth:`stop`, :meth:`kill`."""

    def __init__(self, name: str, broker: Broker, ensemble: InMemoryCoordinator, journal: Journal) -> None:
        self.name = name
        self.dead = False
        self.session: InMemoryCoordinator | None = None
        self.errors: list[BaseException] = []
        self.metrics = Metrics()
        self.source = MemberSource(broker)
        app = hw.App(APP)

        def handler(listener: str) -> Callable[[hw.ListenerEvent], None]:
            return lambda event: journal.call(self, listener, event)

        app.on_add_partition(name="audit")(handler("audit"))
        app.on_add_partition(name="report", concurrency=3)(handler("report"))
        app.on_add_partition(name="leader", singleton=True)(handler("leader"))
        for listener in app.listeners:
            listener.bind(Config())
        plain = [listener for listener in app.listeners if not listener.singleton]
        single = next(listener for listener in app.listeners if listener.singleton)

        def connect() -> Coordinator:
            self.session = ensemble.connect()
            return self.session

        self.singleton = Singleton(single, self.source, self._singleton_runner, self.metrics, self.errors.append)
        self.membership = Membership(
            connect, APP, LISTENERS, metrics=self.metrics, singletons=[self.singleton], retry_every=0.2
        )
        self.runner = self._runner(plain, self.source, self.metrics, self.membership)
        self.thread = threading.Thread(target=self._run, name=f"instance-{name}", daemon=True)

    def _runner(
        self, listeners: Sequence[Listener], source: Source, metrics: Metrics, membership: Membership | None
    ) -> Runner:
        settings = runtime_settings(
            RETRY,
            listener_timeout=30,
            queue_size=40,  # small bounds: spills, parked ranges and replays are read in several chunks
            queue_bytes=10_000_000,
            batch_size=16,
            commit_interval=0.02,
            shutdown_timeout=10,
            tune_gc=False,
        )
        return Runner(APP, listeners, source, settings, metrics, lambda: None, membership)

    def _singleton_runner(self, tail: Source) -> Runner:
        return self._runner([self.singleton.listener], tail, self.metrics.for_singleton(), None)

    def _run(self) -> None:
        try:
            self.runner.run()
        except BaseException as e:  # the model reports it
            self.errors.append(e)

    def start(self) -> Instance:
        self.thread.start()
        return self

    def lane(self, listener: str) -> Lane:
        return next(lane for lane in self.runner.lanes if lane.name == listener)

    def stop(self) -> None:
        """A clean stop (SIGTERM)."""
        self.runner.stop()
        self.thread.join(30)
        assert not self.thread.is_alive(), f"instance {self.name} did not stop"

    def kill(self) -> None:
        """``kill -9``: nothing it does from now on is seen (see the module's docstring)."""
        with self.source.broker.lock:
            self.dead = self.source.dead = True
        self.source.broker.leave(self.source)
        session = self.session
        if session is not None:
            session.close()  # its members leave, its candidacies end, its writes fail
        self.runner.stop()  # winds its threads down (nothing they do is seen)

    def reap(self) -> None:
        self.thread.join(30)
