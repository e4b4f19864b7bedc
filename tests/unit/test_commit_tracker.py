"""The at-least-once bookkeeping: offsets advance only over finished batches, in order."""

from __future__ import annotations

from hivewire.runtime.tracker import CommitTracker
from hivewire.source import MemoryRecord


def records(partition: int, first: int, last: int, topic: str = "t") -> list[MemoryRecord]:
    return [MemoryRecord(b"{}", topic, partition, o) for o in range(first, last + 1)]


def test_offsets_advance_only_over_a_prefix_of_finished_batches() -> None:
    tracker = CommitTracker()
    tracker.assign([("t", 0), ("t", 1)])
    b1 = tracker.open(records(0, 0, 9) + records(1, 0, 4))
    b2 = tracker.open(records(0, 10, 19))
    tracker.hold(b1)       # a listener's share of b1
    tracker.release(b1)    # the dispatcher's hold
    tracker.hold(b2)
    tracker.release(b2)
    tracker.release(b2)    # b2 is done before b1: nothing may be committed yet
    assert tracker.take_commits() == {}
    tracker.release(b1)
    assert tracker.take_commits() == {("t", 0): 20, ("t", 1): 5}
    assert tracker.take_commits() == {}  # only what advanced since the last call
    assert tracker.take_commits(everything=True) == {("t", 0): 20, ("t", 1): 5}
    assert tracker.wait_idle(0.1)


def test_a_dead_letter_in_flight_holds_the_commit() -> None:
    tracker = CommitTracker()
    tracker.assign([("t", 0)])
    batch = tracker.open(records(0, 0, 2))
    tracker.hold(batch)  # dead letter sent, not yet acknowledged
    tracker.release(batch)
    assert tracker.take_commits() == {}
    assert not tracker.wait_idle(0.05)
    tracker.release(batch)  # acknowledged
    assert tracker.take_commits() == {("t", 0): 3}


def test_revoked_partitions_are_skipped_and_never_committed_again() -> None:
    tracker = CommitTracker()
    tracker.assign([("t", 0), ("t", 1)])
    done = tracker.open(records(0, 0, 4))
    tracker.release(done)
    in_flight = tracker.open(records(0, 5, 9) + records(1, 0, 4))
    tracker.hold(in_flight)
    tracker.release(in_flight)
    final = tracker.revoke([("t", 0)])
    assert final == {("t", 0): 5}  # committed on revocation; 5..9 belong to the next owner
    assert not tracker.is_current(in_flight, ("t", 0))
    assert tracker.is_current(in_flight, ("t", 1))
    tracker.release(in_flight)
    assert tracker.take_commits() == {("t", 1): 5}
    # Getting the partition back starts a new generation: the old batch still does not count.
    tracker.assign([("t", 0)])
    assert not tracker.is_current(in_flight, ("t", 0))
    fresh = tracker.open(records(0, 5, 6))
    assert tracker.is_current(fresh, ("t", 0))
    tracker.release(fresh)
    assert tracker.take_commits() == {("t", 0): 7}


def test_commit_progress_is_the_age_of_the_oldest_unfinished_batch() -> None:
    tracker = CommitTracker()
    tracker.assign([("t", 0)])
    assert tracker.oldest_pending_age() == 0.0
    old = tracker.open(records(0, 0, 4))
    new = tracker.open(records(0, 5, 9))
    old.started -= 1000  # as if polled long ago (the clock is not the point here)
    tracker.release(new)
    assert tracker.oldest_pending_age() >= 1000  # the newer batch finished first: still held up by the old one
    tracker.release(old)
    assert tracker.oldest_pending_age() == 0.0
    assert tracker.take_commits() == {("t", 0): 10}
