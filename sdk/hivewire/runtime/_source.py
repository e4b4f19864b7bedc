"""Where the runtime's records come from: the :class:`Source` protocol and the in-memory :class:`MemorySource`.

A source delivers records (Kafka-message-like objects) in batches, takes commits of processed offsets,
pauses and resumes for backpressure, publishes dead letters, and gives listeners that fell behind a
:class:`Reader` of their own, to read again what was not kept in memory for them.
:class:`~hivewire.runtime.KafkaSource` is the real one; :class:`MemorySource` runs the same runtime with no
broker, for users' tests (as FastStream's test broker does) and for hivewire's own contract tests, which run
against both.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import msgspec

from hivewire.events._apiary import partition_for

if TYPE_CHECKING:
    from hivewire._reachability import Reachability
    from hivewire.runtime._metrics import Metrics

TopicPartition = tuple[str, int]


def partition_name(tp: TopicPartition) -> str:
    """``topic:partition``, as the coordination state records partitions."""
    return f"{tp[0]}:{tp[1]}"


Delivered = Callable[[], None]
Assigned = Callable[[list[TopicPartition]], None]


class Record(Protocol):
    """What the runtime reads from a record; confluent-kafka's ``Message`` satisfies it."""

    def value(self) -> bytes | None: ...
    def key(self) -> bytes | None: ...
    def topic(self) -> str | None: ...
    def partition(self) -> int | None: ...
    def offset(self) -> int | None: ...
    def timestamp(self) -> tuple[int, int]: ...


class Reader(Protocol):
    """Reads a range of one partition again, for a listener too far behind to have it kept in memory."""

    def read(self, tp: TopicPartition, start: int, end: int, timeout: float) -> Sequence[Record]:
        """The records of ``tp`` at offsets ``start`` up to (not including) ``end``, in order.

        Raises :class:`~hivewire.errors.SourceError` if they cannot be read within ``timeout`` seconds, and
        :class:`~hivewire.errors.RecordsGoneError` if the topic no longer has them.
        """

    def close(self) -> None: ...


class Tail(Protocol):
    """Reads every partition of a topic by assignment, never as a member of the consumer group and never
    committing: a singleton listener's reader of its own (``Source.tail()``)."""

    def partitions(self) -> list[TopicPartition]:
        """The topic's partitions now (none while the topic does not exist)."""

    def add(self, positions: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int | None]:
        """Start reading these partitions at these offsets (None: at the group's committed offset, or where the
        consumer's ``auto.offset.reset`` says when the group has none); where each starts (None: not known,
        the group having no offset). Raises :class:`~hivewire.errors.SourceError`, having added nothing, when
        the group's offsets cannot be read now."""

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...

    def lag(self) -> dict[TopicPartition, int]:
        """Messages behind the end of each partition read (best effort)."""

    def close(self) -> None: ...


class Source(Protocol):
    """A stream of Apiary records the runtime consumes.

    What a source may do besides is declared by the protocols below it (:class:`SupportsMetrics`,
    :class:`SupportsReachability`, :class:`SupportsWaiting`, :class:`SupportsTail`); the runtime asks a source
    for one with ``isinstance`` and uses it only when the source has it.
    """

    topic: str
    dead_letter_topic: str

    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        """Connect; call ``on_assign``/``on_revoke`` (on the polling thread) as partitions come and go."""

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        """Up to ``max_records`` records, waiting at most ``timeout`` seconds for the first."""

    def commit(self, offsets: Mapping[TopicPartition, int], *, wait: bool) -> None:
        """Commit the next offset to read for each partition."""

    def pause(self) -> None: ...
    def resume(self) -> None: ...

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        """Publish ``record`` with ``headers`` to the dead-letter topic; call ``on_delivered`` once stored."""

    def lag(self) -> dict[TopicPartition, int]:
        """Messages behind the end of each assigned partition (best effort, from cached watermarks)."""

    def next_offset(self, tp: TopicPartition) -> int | None:
        """The next offset this consumer reads of the assigned ``tp`` (before anything is read: the group's
        committed offset), or None when it is not known (nothing committed). The runtime asks only for partitions
        it has dispatched nothing of yet, and only while a sideline is being replayed."""

    def finished(self) -> bool:
        """True when there is nothing more to read and the runtime should stop (never, for Kafka)."""

    def drain(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for dead letters in flight to be acknowledged."""

    def reader(self) -> Reader:
        """A new reader, used by one listener worker's thread at a time."""

    def close(self) -> None: ...


@runtime_checkable
class SupportsMetrics(Protocol):
    """A source that counts its own failures (failed commits, dead-letter sends) in the runtime's metrics."""

    def attach_metrics(self, metrics: Metrics) -> None:
        """Called once by the runtime with its :class:`~hivewire.runtime._metrics.Metrics`, before ``open``."""


@runtime_checkable
class SupportsReachability(Protocol):
    """A source that says whether its service answers (``/health`` is DOWN while it does not)."""

    @property
    def reachability(self) -> Reachability: ...


@runtime_checkable
class SupportsWaiting(Protocol):
    """A source that joins a group and may wait for partitions: how long it has waited (for ``/health``)."""

    @property
    def waiting_for(self) -> float | None:
        """Seconds waited for the first assignment since ``open``; None once assigned."""

    @property
    def waiting_reason(self) -> str | None:
        """Why it still waits, when known (``topic X does not exist on ...``); None otherwise."""


@runtime_checkable
class SupportsLoss(Protocol):
    """A source that tells a lost assignment from a revoked one: while it hands the runtime partitions that
    the group took from this member without a rebalance (its session timed out: the coordinator did not hear
    from it), :attr:`losing` is True."""

    @property
    def losing(self) -> bool: ...


@runtime_checkable
class SupportsTail(Protocol):
    """A source that singleton listeners can read: a new :class:`Tail` over every partition of its topic."""

    def tail(self) -> Tail: ...


class MemoryRecord(msgspec.Struct, frozen=True, gc=False):
    """An in-memory record with the ``Message`` accessors the runtime uses (``timestamp`` None: it has none).

    Never tracked by the cyclic garbage collector (it holds only bytes, strings and numbers), so records held
    in memory in bulk cost the collector nothing.
    """

    _value: bytes | None
    _topic: str
    _partition: int
    _offset: int
    _timestamp: int | None = 0
    _key: bytes | None = None
    _headers: tuple[tuple[str, bytes], ...] = ()

    def value(self) -> bytes | None:
        return self._value

    def key(self) -> bytes | None:
        return self._key

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        # As confluent-kafka's Message: (TIMESTAMP_CREATE_TIME, ms), or (TIMESTAMP_NOT_AVAILABLE, 0).
        return (0, 0) if self._timestamp is None else (1, self._timestamp)

    def headers(self) -> list[tuple[str, bytes]]:
        return list(self._headers)


@dataclass(frozen=True)
class DeadLetter:
    """A record published to the dead-letter topic, with hivewire's headers."""

    record: MemoryRecord
    headers: dict[str, str]


@dataclass
class MemorySource:
    """An in-memory topic: append records with :meth:`send`, run the app on it, inspect what happened.

    Records are partitioned like the Apiary producer (by ``partition_for`` of the qualified table name)
    unless a partition is given. ``committed`` holds the committed offsets; ``dead_letters`` what the runtime
    dead-lettered. With ``stop_when_idle=True`` (the default), polling reports the end of input once every
    record was delivered and everything delivered was committed, and the app's ``run`` returns.
    """

    topic: str = "apiary"
    partitions: int = 4
    stop_when_idle: bool = True
    dead_letter_topic: str = ""
    committed: dict[TopicPartition, int] = field(default_factory=dict)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    _logs: list[list[MemoryRecord]] = field(default_factory=list, repr=False)
    _positions: list[int] = field(default_factory=list, repr=False)
    _lock: threading.Condition = field(default_factory=threading.Condition, repr=False)
    _paused: bool = False
    _closed: bool = False
    _cursor: int = 0

    def __post_init__(self) -> None:
        self.dead_letter_topic = self.dead_letter_topic or f"{self.topic}.dlq"
        self._logs = [[] for _ in range(self.partitions)]
        self._positions = [0] * self.partitions

    # -- producing ------------------------------------------------------------------------------------
    def send(
        self, value: bytes, *, partition: int | None = None, key: bytes | None = None, timestamp: int = 0
    ) -> MemoryRecord:
        """Append one message (raw Apiary JSON bytes) and return its record."""
        if partition is None:
            partition = self._partition_of(value)
        with self._lock:
            log = self._logs[partition]
            record = MemoryRecord(value, self.topic, partition, len(log), timestamp, key)
            log.append(record)
            self._lock.notify_all()
            return record

    def send_all(self, values: Iterable[bytes]) -> list[MemoryRecord]:
        return [self.send(v) for v in values]

    def _partition_of(self, value: bytes) -> int:
        try:
            qualified = json.loads(value).get("qualifiedTableName") or ""
        except (ValueError, AttributeError):
            qualified = ""
        return partition_for(str(qualified), self.partitions)

    # -- Source ---------------------------------------------------------------------------------------
    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        self._positions = [self.committed.get((self.topic, p), 0) for p in range(self.partitions)]
        on_assign([(self.topic, p) for p in range(self.partitions)])

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        with self._lock:
            if not self._paused:
                batch = self._take(max_records)
                if batch:
                    return batch
            self._lock.wait(timeout)
            return [] if self._paused else self._take(max_records)

    def _take(self, max_records: int) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        # Round-robin over partitions, like a broker interleaving fetches.
        for _ in range(self.partitions):
            p = self._cursor
            self._cursor = (self._cursor + 1) % self.partitions
            log, pos = self._logs[p], self._positions[p]
            chunk = log[pos : pos + max_records - len(out)]
            out.extend(chunk)
            self._positions[p] = pos + len(chunk)
            if len(out) >= max_records:
                break
        return out

    def finished(self) -> bool:
        """With ``stop_when_idle``: every record was delivered and committed."""
        with self._lock:
            return self.stop_when_idle and all(
                self.committed.get((self.topic, p), 0) >= len(log) for p, log in enumerate(self._logs)
            )

    def commit(self, offsets: Mapping[TopicPartition, int], *, wait: bool) -> None:
        with self._lock:
            for tp, offset in offsets.items():
                self.committed[tp] = max(offset, self.committed.get(tp, 0))
            self._lock.notify_all()

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        with self._lock:
            self._paused = False
            self._lock.notify_all()

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        value = record.value()
        dead = MemoryRecord(value, self.dead_letter_topic, 0, len(self.dead_letters), 0, record.key())
        self.dead_letters.append(DeadLetter(dead, dict(headers)))
        on_delivered()

    def lag(self) -> dict[TopicPartition, int]:
        with self._lock:
            return {(self.topic, p): len(log) - self._positions[p] for p, log in enumerate(self._logs)}

    def next_offset(self, tp: TopicPartition) -> int | None:
        with self._lock:
            return self._positions[tp[1]] if tp[0] == self.topic and 0 <= tp[1] < self.partitions else None

    def drain(self, timeout: float) -> None:
        """Dead letters are stored at once here; nothing to wait for."""

    def reader(self) -> Reader:
        return _MemoryReader(self)

    def tail(self) -> Tail:
        """A reader of every partition from given offsets (a singleton listener's)."""
        return _MemoryTail(self)

    def close(self) -> None:
        self._closed = True

    def reset(self) -> None:
        """Rewind to the committed offsets, as a restarted consumer would."""
        with self._lock:
            self._positions = [self.committed.get((self.topic, p), 0) for p in range(self.partitions)]

    def all_records(self) -> list[MemoryRecord]:
        with self._lock:
            return [r for log in self._logs for r in log]


class _MemoryReader:
    """Reads a :class:`MemorySource`'s records again (``reads`` counts the calls, for tests)."""

    def __init__(self, source: MemorySource) -> None:
        self._source = source
        self.reads = 0

    def read(self, tp: TopicPartition, start: int, end: int, timeout: float) -> Sequence[Record]:
        self.reads += 1
        with self._source._lock:
            return self._source._logs[tp[1]][start:end]

    def close(self) -> None:
        pass


class _MemoryTail:
    """Reads a :class:`MemorySource`'s partitions from given offsets, apart from its consumer."""

    def __init__(self, source: MemorySource) -> None:
        self._source = source
        self._positions: dict[TopicPartition, int] = {}
        self._paused = False

    def partitions(self) -> list[TopicPartition]:
        return [(self._source.topic, p) for p in range(self._source.partitions)]

    def add(self, positions: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int | None]:
        with self._source._lock:
            for tp, offset in positions.items():
                self._positions[tp] = self._source.committed.get(tp, 0) if offset is None else offset
            return {tp: self._positions[tp] for tp in positions}

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        source = self._source
        with source._lock:
            if not self._paused and (batch := self._take(max_records)):
                return batch
            source._lock.wait(timeout)
            return [] if self._paused else self._take(max_records)

    def _take(self, max_records: int) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        for tp, position in self._positions.items():
            chunk = self._source._logs[tp[1]][position : position + max_records - len(out)]
            out.extend(chunk)
            self._positions[tp] = position + len(chunk)
        return out

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False

    def lag(self) -> dict[TopicPartition, int]:
        with self._source._lock:
            return {tp: len(self._source._logs[tp[1]]) - position for tp, position in self._positions.items()}

    def close(self) -> None:
        pass
