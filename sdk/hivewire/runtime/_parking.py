"""What a paused listener let pass, per partition: one range of offsets, read again when it resumes.

A listener paused with ``hivewire listener pause`` (see :mod:`hivewire.runtime._membership`) keeps nothing in
memory for the records that arrive meanwhile: its lane keeps one :class:`Parked` range per partition, from the
first offset it let pass to the end of the last poll, however long the pause. The range caps the partition's
commits at its start (:meth:`~hivewire.runtime._tracker.CommitTracker.cap`), so nothing it has not handled is
committed and a restart (``kill -9`` included) reads it again. On resuming, the range becomes the lane's
ordinary spills (:class:`~hivewire.runtime._lane.Spill`), chunk by chunk, read again with the lane's
:class:`~hivewire.source.Reader` behind what was queued before the pause and ahead of what comes after, which
keeps each table's order; the cap rises as the chunks are done, and goes when the last one is.
"""

from __future__ import annotations

import threading
from collections import deque

from hivewire.runtime._source import TopicPartition
from hivewire.runtime._tracker import Batch, CommitTracker


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
        self._chunks: deque[Batch] = deque()
        self._lock = threading.Lock()
        tracker.cap(self.tp, self, start)

    @property
    def current(self) -> bool:
        """Whether the partition is still held by the generation that parked this range."""
        return self.tracker.is_current(self.marker)

    def add(self, end: int, events: int) -> None:
        """A later poll of the partition, up to ``end``, with ``events`` of the lane's, passed too."""
        self.end = max(self.end, end)
        self.events += events

    def chunks(self, size: int) -> list[tuple[Batch, int, int, int]]:
        """The range as chunks of at most ``size`` offsets: ``(batch, start, end, events)``, each batch detached
        (it raises the cap when done). Events are spread over the chunks by offsets (an upper bound each)."""
        out: list[tuple[Batch, int, int, int]] = []
        remaining = self.events
        with self._lock:
            for start in range(self.start, self.end, max(1, size)):
                end = min(self.end, start + size)
                events = min(remaining, end - start)
                remaining -= events
                batch = self.tracker.detached(self.tp, end, self._chunk_done)
                self._chunks.append(batch)
                out.append((batch, start, end, events))
        if not out:
            self.tracker.uncap(self.tp, self)
        return out

    def _chunk_done(self) -> None:
        """A chunk is done (any thread): raise the cap over the chunks done in order, lift it after the last."""
        with self._lock:
            reached = None
            while self._chunks and self._chunks[0].pending <= 0:
                reached = self._chunks.popleft().end
            finished = not self._chunks
        if reached is None or not self.current:
            return
        if finished:
            self.tracker.uncap(self.tp, self)
        else:
            self.tracker.cap(self.tp, self, reached)
