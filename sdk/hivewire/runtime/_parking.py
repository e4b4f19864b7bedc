"""Ranges of offsets a lane reads again in chunks: what a paused listener let pass, and a sideline's replay.

A listener paused with ``hivewire listener pause`` (see :mod:`hivewire.runtime._membership`) keeps nothing in
memory for the records that arrive meanwhile: its lane keeps one :class:`Parked` range per partition, from the
first offset it let pass to the end of the last poll, however long the pause. The range caps the partition's
commits at its start (:meth:`~hivewire.runtime._tracker.CommitTracker.cap`), so nothing it has not handled is
committed and a restart (``kill -9`` included) reads it again. On resuming, the range becomes the lane's
ordinary spills (:class:`~hivewire.runtime._intake.Spill`), chunk by chunk (:class:`Chunks`), read again with
the lane's :class:`~hivewire.runtime._source.Reader` behind what was queued before the pause and ahead of what comes
after, which keeps each table's order; the cap rises as the chunks are done, and goes when the last one is.
A sideline's replay (:mod:`hivewire.runtime._sidelining`) is queued the same way, its progress recorded in
the sideline instead of a cap.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from hivewire.runtime._source import TopicPartition
from hivewire.runtime._tracker import Batch, CommitTracker

Chunk = tuple[Batch, int, int, int]  # a detached batch, the first offset, one past the last, events (at most)


class Chunks:
    """Offsets ``start`` up to ``end`` of ``tp`` cut into chunks of at most ``size``, each a detached batch of
    ``tracker``; ``progress(reached, finished)`` is called (any thread) as chunks are done, in offset order:
    every offset below ``reached`` is done with. Nothing is called for a partition that changed hands since."""

    def __init__(
        self,
        tracker: CommitTracker,
        tp: TopicPartition,
        start: int,
        end: int,
        size: int,
        events: int,
        progress: Callable[[int, bool], None],
    ) -> None:
        self._tracker = tracker
        self._progress = progress
        self._lock = threading.Lock()
        self._pending: deque[Batch] = deque()
        self.chunks: list[Chunk] = []
        remaining = events
        with self._lock:  # a chunk may be done (and call back) as soon as it is queued
            for first in range(start, end, max(1, size)):
                last = min(end, first + size)
                count = min(remaining, last - first)
                remaining -= count
                batch = tracker.detached(tp, last, self._chunk_done)
                self._pending.append(batch)
                self.chunks.append((batch, first, last, count))

    def _chunk_done(self) -> None:
        with self._lock:
            reached = None
            while self._pending and self._pending[0].pending <= 0:
                batch = self._pending.popleft()
                reached = batch.end
            finished = not self._pending
        if reached is not None and self._tracker.is_current(batch):
            self._progress(reached, finished)


class Parked:
    """Offsets ``start`` up to ``end`` of ``tp`` that a paused lane let pass (``events`` of them were its own).

    ``marker`` is the first batch parked: the range is of that batch's generation of the partition, and is
    dropped when the partition changed hands since (its new owner reads it again from the committed offset).
    """

    def __init__(self, tracker: CommitTracker, marker: Batch, start: int) -> None:
        self.tracker = tracker
        self.tp: TopicPartition = marker.tp
        self.marker = marker
        self.start = start
        self.end = start
        self.events = 0
        tracker.cap(self.tp, self, start)

    @property
    def current(self) -> bool:
        """Whether the partition is still held by the generation that parked this range."""
        return self.tracker.is_current(self.marker)

    def add(self, end: int, events: int) -> None:
        """A later poll of the partition, up to ``end``, with ``events`` of the lane's, passed too."""
        self.end = max(self.end, end)
        self.events += events

    def chunks(self, size: int) -> list[Chunk]:
        """The range as chunks of at most ``size`` offsets; the cap rises as they are done."""
        chunks = Chunks(self.tracker, self.tp, self.start, self.end, size, self.events, self._progress).chunks
        if not chunks:
            self.tracker.uncap(self.tp, self)
        return chunks

    def _progress(self, reached: int, finished: bool) -> None:
        if finished:
            self.tracker.uncap(self.tp, self)
        else:
            self.tracker.cap(self.tp, self, reached)
