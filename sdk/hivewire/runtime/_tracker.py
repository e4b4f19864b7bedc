"""Which Kafka offsets may be committed: the at-least-once bookkeeping of the runtime.

Records are dispatched in batches: one per partition per ``poll``. A batch is *pending* while any part of
it is out: the share each listener worker received, and every dead letter not yet acknowledged by the
broker. Each partition keeps its own FIFO of batches; batches finish in any order, but a partition's offset
advances only over a prefix of its finished batches, so an offset is committed only when every listener
has handled or dead-lettered every record of that partition before it. A slow event holds back the commits
of its own partition only, never those of the others. Tracking whole batches instead of records keeps the
cost per record at zero.

Partition ownership changes (rebalances) bump a generation: records of a partition that was revoked are
skipped by the workers and never committed by this instance; its new owner reads them again. The batches
of a revoked generation leave the partition's FIFO, so they cannot hold up the next generation either.

A paused listener holds back its partitions' commits without holding their batches: it sets a *cap* per
partition (:meth:`CommitTracker.cap`), the first offset it has not handled, and raises it as it catches up by
reading those offsets again in *detached* batches (:meth:`CommitTracker.detached`: outside the FIFO, a
callback when done). Commits never pass the lowest cap of a partition.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable

from hivewire.runtime._source import TopicPartition


class Batch:
    """One partition's records of one poll: where they end, and how many parts of the batch are still out."""

    __slots__ = ("done", "end", "generation", "pending", "seq", "started", "tp")

    def __init__(
        self, seq: int, tp: TopicPartition, end: int, generation: int, done: Callable[[], None] | None = None
    ) -> None:
        self.seq = seq
        self.tp = tp
        self.end = end
        self.generation = generation
        self.pending = 1  # the dispatcher's own hold, released once every part is handed out
        self.started = time.monotonic()
        self.done = done  # called once when every part is released (detached batches only)

    def __repr__(self) -> str:
        return f"Batch(#{self.seq} {self.tp[0]}/{self.tp[1]} ..{self.end}, pending={self.pending})"


class CommitTracker:
    """Turns out-of-order completion of batch parts into in-order commit offsets per partition. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fifos: dict[TopicPartition, deque[Batch]] = {}  # the current generation's unfinished batches
        self._seq = 0
        self._generation: dict[TopicPartition, int] = {}
        self._committable: dict[TopicPartition, int] = {}
        self._dirty: set[TopicPartition] = set()
        self._owned: frozenset[TopicPartition] = frozenset()
        self._caps: dict[TopicPartition, dict[object, int]] = {}  # per partition, per holder: commit no further
        self._epoch = 0
        self._idle = threading.Condition(self._lock)

    # -- batches --------------------------------------------------------------------------------------
    def open(self, tp: TopicPartition, end: int) -> Batch:
        """A new batch of ``tp``'s records, up to (not including) offset ``end``."""
        with self._lock:
            self._seq += 1
            batch = Batch(self._seq, tp, end, self._generation.get(tp, 0))
            if tp not in self._owned:
                return batch  # polled as its partition was taken away: never committed here, holds up nothing
            fifo = self._fifos.get(tp)
            if fifo is None:
                self._fifos[tp] = fifo = deque()
            fifo.append(batch)
        return batch

    def detached(self, tp: TopicPartition, end: int, done: Callable[[], None]) -> Batch:
        """A batch of ``tp`` outside its FIFO (it never moves the committed offset): ``done`` is called once
        every part of it is released. :meth:`is_current` says whether ``tp`` changed hands since."""
        with self._lock:
            self._seq += 1
            return Batch(self._seq, tp, end, self._generation.get(tp, 0), done)

    def hold(self, batch: Batch, parts: int = 1) -> None:
        """``parts`` more pieces of ``batch`` are out (a worker's share, a dead letter in flight)."""
        with self._lock:
            batch.pending += parts

    def release(self, batch: Batch, parts: int = 1) -> None:
        """``parts`` pieces of ``batch`` are done; advance its partition's offset over finished batches."""
        if batch.done is not None:
            self._release_detached(batch, parts)
            return
        with self._lock:
            batch.pending -= parts
            if batch.pending > 0:
                return
            tp = batch.tp
            fifo = self._fifos.get(tp)
            if not fifo or fifo[0] is not batch:
                return  # an earlier batch of the partition is still out (or the batch's generation is gone)
            end = -1
            while fifo and fifo[0].pending <= 0:
                end = fifo.popleft().end
            if not fifo:
                del self._fifos[tp]
                if not self._fifos:
                    self._idle.notify_all()
            # Only the batches of an owned partition's current generation are in its FIFO.
            if end > self._committable.get(tp, -1):
                self._committable[tp] = end
                self._dirty.add(tp)

    def _release_detached(self, batch: Batch, parts: int) -> None:
        with self._lock:
            batch.pending -= parts
            done = batch.done if batch.pending <= 0 else None
            batch.done = None if done is not None else batch.done
        if done is not None:
            done()  # outside the lock: its owner may cap or uncap

    def cap(self, tp: TopicPartition, holder: object, offset: int) -> None:
        """Commit nothing of ``tp`` past ``offset`` for ``holder`` (until :meth:`uncap`; raising it is allowed).
        Caps end with the partition's generation (revoked, they are of no use)."""
        with self._lock:
            if tp in self._owned:
                self._caps.setdefault(tp, {})[holder] = offset
                self._dirty.add(tp)

    def uncap(self, tp: TopicPartition, holder: object) -> None:
        with self._lock:
            caps = self._caps.get(tp)
            if caps is not None and caps.pop(holder, None) is not None:
                if not caps:
                    del self._caps[tp]
                self._dirty.add(tp)

    def _committable_now(self, tp: TopicPartition) -> int | None:
        """What may be committed of ``tp``: its finished prefix, under its caps (lock held)."""
        end = self._committable.get(tp)
        caps = self._caps.get(tp)
        if end is None or not caps:
            return end
        return min(end, *caps.values())

    def is_current(self, batch: Batch) -> bool:
        """False when the batch's partition was revoked after it was polled (its records must be skipped)."""
        return batch.generation == self._generation.get(batch.tp, 0) and batch.tp in self._owned

    @property
    def epoch(self) -> int:
        """Changes whenever partition ownership does, so workers can cache :meth:`is_current` between changes."""
        return self._epoch

    # -- ownership ------------------------------------------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            new = set(partitions)
            for tp in new - self._owned:
                self._new_generation(tp)
            self._owned = frozenset(self._owned | new)
            self._epoch += 1

    def revoke(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Give up ``partitions``; returns their last committable offsets, to commit before letting go."""
        with self._lock:
            gone = set(partitions) & self._owned
            final = {tp: offset for tp in gone if (offset := self._committable_now(tp)) is not None}
            for tp in gone:
                self._new_generation(tp)
                self._dirty.discard(tp)
            self._owned = frozenset(self._owned - gone)
            self._epoch += 1
            return final

    def _new_generation(self, tp: TopicPartition) -> None:
        """The partition changes hands: its pending batches will never be committed here (lock held)."""
        self._generation[tp] = self._generation.get(tp, 0) + 1
        self._committable.pop(tp, None)
        self._caps.pop(tp, None)
        if self._fifos.pop(tp, None) is not None and not self._fifos:
            self._idle.notify_all()

    # -- commits --------------------------------------------------------------------------------------
    def take_commits(self, everything: bool = False) -> dict[TopicPartition, int]:
        """Offsets that advanced since the last call (or all owned ones with ``everything``)."""
        with self._lock:
            keys = set(self._committable) if everything else self._dirty
            out = {tp: offset for tp in keys if (offset := self._committable_now(tp)) is not None}
            self._dirty = set()
            return out

    @property
    def pending_batches(self) -> int:
        """Batches of owned partitions not yet finished, or finished behind an unfinished one."""
        with self._lock:
            return sum(len(fifo) for fifo in self._fifos.values())

    def oldest_pending_age(self) -> float:
        """Seconds since the oldest batch not yet finished was polled (0 when none): how far commits lag.

        A partition's offset advances only over its finished batches, so while this grows nothing new is
        committed for the partition of that batch.
        """
        with self._lock:
            if not self._fifos:
                return 0.0
            return time.monotonic() - min(fifo[0].started for fifo in self._fifos.values())

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every batch has finished; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._fifos:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
            return True
