"""A lane's share of one batch (:class:`Share`): the one owner of the commit rule for the events in it.

The rule, for one event: its batch (one partition's records of one poll, see
:class:`~hivewire.runtime._tracker.Batch`) is finished, and the offset past it may be committed, only when
every part of the batch handed out is given back. Every hold and release of a batch is made here, under the
name of what it means:

- the polling thread opens the batch with a hold of its own and gives it back (:meth:`Share.dispatched`) once
  every lane has its share, so a batch no lane wants is finished at once;
- each lane given events of the batch takes one part (:meth:`Share.hand_out`); the part goes with the share
  while it is queued, spilled (the :class:`~hivewire.runtime._intake.Spill` carries it), read again or in hand;
- the lane gives it back exactly once: when the share's last event is handled or dead-lettered
  (:meth:`Share.done`), or when nothing of it is left to handle (:meth:`Share.let_go`: parked while its
  listener is paused, whose range's cap then holds the commits; revoked; compacted away when read again);
- a failed event is done with only once it is dead-lettered, and a dead letter takes a part of its own until
  the broker acknowledges it (:meth:`Share.letter`): a dead letter in flight holds the batch.

Invariant: a share holds one partition's records of one poll, in offset order.
"""

from __future__ import annotations

from collections.abc import Callable

from hivewire.runtime._item import Item
from hivewire.runtime._tracker import Batch, CommitTracker


class Share:
    """A lane's share of ``batch``: its ``items`` in offset order and the bytes of their record values
    (``size``); ``remaining`` counts the events not yet done with (an executor handling several at once)."""

    __slots__ = ("batch", "items", "remaining", "size", "tracker")

    def __init__(self, tracker: CommitTracker, batch: Batch, items: list[Item], size: int) -> None:
        """A share that carries a part of ``batch`` already held (see :meth:`hand_out`)."""
        self.tracker = tracker
        self.batch = batch
        self.items = items
        self.size = size
        self.remaining = len(items)

    @classmethod
    def hand_out(cls, tracker: CommitTracker, batch: Batch, items: list[Item], size: int) -> Share:
        """The share of a lane given ``items`` of ``batch``: it holds a part of the batch until :meth:`done`."""
        tracker.hold(batch)
        return cls(tracker, batch, items, size)

    def done(self) -> None:
        """Every event of the share is handled or dead-lettered: its part of the batch is given back."""
        self.tracker.release(self.batch)

    @staticmethod
    def let_go(tracker: CommitTracker, batch: Batch) -> None:
        """A lane's part of ``batch`` ends with nothing left for it to handle: parked (its range's cap holds
        the commits instead), revoked, or found compacted away when read again."""
        tracker.release(batch)

    @staticmethod
    def dispatched(tracker: CommitTracker, batch: Batch) -> None:
        """The polling thread has handed out every share of ``batch``: its own hold is given back."""
        tracker.release(batch)

    @staticmethod
    def letter(tracker: CommitTracker, batch: Batch) -> Callable[[], None]:
        """A dead letter of an event of ``batch`` is in flight: it holds the batch until the call returned
        (made when the broker acknowledges the letter)."""
        tracker.hold(batch)
        return lambda: tracker.release(batch)

    def __repr__(self) -> str:
        return f"Share({self.batch!r}, {len(self.items)} events)"
