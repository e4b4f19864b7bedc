"""Which Kafka offsets may be committed: the at-least-once bookkeeping of the runtime.

Records are dispatched in batches (one ``poll``). A batch is *pending* while any part of it is out: the
share each listener worker received, and every dead letter not yet acknowledged by the broker. Batches
finish in any order, but offsets advance only over a prefix of finished batches, so an offset is committed
only when every listener has handled or dead-lettered every record before it. Tracking whole batches
instead of records keeps the cost per record at zero.

Partition ownership changes (rebalances) bump a generation: records of a partition that was revoked are
skipped by the workers and never committed by this instance; its new owner reads them again.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence

from hivewire.source import Record, TopicPartition

__all__ = ["Batch", "CommitTracker"]


class Batch:
    """One polled batch: where it ends in each partition, and how many of its parts are still out."""

    __slots__ = ("ends", "generations", "pending", "seq", "started")

    def __init__(self, seq: int, ends: dict[TopicPartition, int], generations: dict[TopicPartition, int]) -> None:
        self.seq = seq
        self.ends = ends
        self.generations = generations
        self.pending = 1  # the dispatcher's own hold, released once every part is handed out
        self.started = time.monotonic()

    def __repr__(self) -> str:
        return f"Batch(#{self.seq}, pending={self.pending}, ends={self.ends})"


class CommitTracker:
    """Turns out-of-order completion of batch parts into in-order commit offsets. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: deque[Batch] = deque()
        self._seq = 0
        self._generation: dict[TopicPartition, int] = {}
        self._committable: dict[TopicPartition, int] = {}
        self._dirty: set[TopicPartition] = set()
        self._owned: frozenset[TopicPartition] = frozenset()
        self._epoch = 0
        self._idle = threading.Condition(self._lock)

    # -- batches --------------------------------------------------------------------------------------
    def open(self, records: Sequence[Record]) -> Batch:
        ends: dict[TopicPartition, int] = {}
        for record in records:
            tp = (record.topic() or "", record.partition() or 0)
            end = (record.offset() or 0) + 1
            if end > ends.get(tp, -1):
                ends[tp] = end
        with self._lock:
            self._seq += 1
            batch = Batch(self._seq, ends, {tp: self._generation.get(tp, 0) for tp in ends})
            self._batches.append(batch)
        return batch

    def hold(self, batch: Batch, parts: int = 1) -> None:
        """``parts`` more pieces of ``batch`` are out (a worker's share, a dead letter in flight)."""
        with self._lock:
            batch.pending += parts

    def release(self, batch: Batch, parts: int = 1) -> None:
        """``parts`` pieces of ``batch`` are done; advance the commit offsets over finished batches."""
        with self._lock:
            batch.pending -= parts
            if batch.pending > 0 or not self._batches or self._batches[0] is not batch:
                return
            while self._batches and self._batches[0].pending <= 0:
                done = self._batches.popleft()
                for tp, end in done.ends.items():
                    # A partition revoked since the batch was polled is someone else's to commit now.
                    current = done.generations[tp] == self._generation.get(tp, 0) and tp in self._owned
                    if current and end > self._committable.get(tp, -1):
                        self._committable[tp] = end
                        self._dirty.add(tp)
            if not self._batches:
                self._idle.notify_all()

    def is_current(self, batch: Batch, tp: TopicPartition) -> bool:
        """False when ``tp`` was revoked after ``batch`` was polled (its records must be skipped)."""
        return batch.generations.get(tp, -1) == self._generation.get(tp, 0) and tp in self._owned

    @property
    def epoch(self) -> int:
        """Changes whenever partition ownership does, so workers can cache :meth:`stale` between changes."""
        return self._epoch

    def stale(self, batch: Batch) -> frozenset[TopicPartition]:
        """The partitions of ``batch`` revoked since it was polled (usually none)."""
        return frozenset(tp for tp in batch.generations if not self.is_current(batch, tp))

    # -- ownership ------------------------------------------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            new = set(partitions)
            for tp in new - self._owned:
                self._generation[tp] = self._generation.get(tp, 0) + 1
                self._committable.pop(tp, None)
            self._owned = frozenset(self._owned | new)
            self._epoch += 1

    def revoke(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Give up ``partitions``; returns their last committable offsets, to commit before letting go."""
        with self._lock:
            gone = set(partitions) & self._owned
            final = {tp: self._committable[tp] for tp in gone if tp in self._committable}
            for tp in gone:
                self._generation[tp] = self._generation.get(tp, 0) + 1
                self._committable.pop(tp, None)
                self._dirty.discard(tp)
            self._owned = frozenset(self._owned - gone)
            self._epoch += 1
            return final

    # -- commits --------------------------------------------------------------------------------------
    def take_commits(self, everything: bool = False) -> dict[TopicPartition, int]:
        """Offsets that advanced since the last call (or all owned ones with ``everything``)."""
        with self._lock:
            keys = set(self._committable) if everything else self._dirty
            out = {tp: self._committable[tp] for tp in keys if tp in self._committable}
            self._dirty = set()
            return out

    @property
    def pending_batches(self) -> int:
        with self._lock:
            return len(self._batches)

    def oldest_pending_age(self) -> float:
        """Seconds since the oldest batch not yet finished was polled (0 when none): how far commits lag.

        Offsets advance only over finished batches, so while this grows nothing new is committed.
        """
        with self._lock:
            return time.monotonic() - self._batches[0].started if self._batches else 0.0

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every batch has finished; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._batches:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
            return True
