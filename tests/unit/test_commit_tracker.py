"""The at-least-once bookkeeping: each partition's offset advances only over a prefix of its finished batches."""

from __future__ import annotations

from hivewire.runtime._tracker import Batch, CommitTracker

T0, T1, T2 = ("t", 0), ("t", 1), ("t", 2)


def finish(tracker: CommitTracker, *batches: Batch) -> None:
    """Release the dispatcher's hold of each batch (no other part is out)."""
    for batch in batches:
        tracker.release(batch)


def test_offsets_advance_only_over_a_prefix_of_each_partitions_finished_batches() -> None:
    tracker = CommitTracker()
    tracker.assign([T0, T1])
    p0_first, p1_first = tracker.open(T0, 10), tracker.open(T1, 5)
    p0_second = tracker.open(T0, 20)
    for batch in (p0_first, p1_first, p0_second):
        tracker.hold(batch)  # a listener's share
    finish(tracker, p0_first, p1_first, p0_second)  # the dispatcher's holds
    tracker.release(p0_second)  # done before p0_first: nothing of partition 0 may be committed yet
    assert tracker.take_commits() == {}
    tracker.release(p1_first)
    assert tracker.take_commits() == {T1: 5}
    tracker.release(p0_first)
    assert tracker.take_commits() == {T0: 20}
    assert tracker.take_commits() == {}  # only what advanced since the last call
    assert tracker.take_commits(everything=True) == {T0: 20, T1: 5}
    assert tracker.pending_batches == 0
    assert tracker.wait_idle(0.1)


def test_an_unfinished_batch_holds_back_its_own_partition_only() -> None:
    tracker = CommitTracker()
    tracker.assign([T0, T1, T2])
    slow = tracker.open(T0, 3)  # a listener is stuck on one of these records
    tracker.hold(slow)
    finish(tracker, slow)
    later = [tracker.open(tp, end) for end in (100, 200) for tp in (T0, T1, T2)]
    finish(tracker, *later)
    # Partitions 1 and 2 commit everything polled after the slow batch; partition 0 waits for it.
    assert tracker.take_commits() == {T1: 200, T2: 200}
    assert tracker.pending_batches == 3  # the slow batch and the two finished behind it
    assert not tracker.wait_idle(0.01)
    tracker.release(slow)
    assert tracker.take_commits() == {T0: 200}
    assert tracker.pending_batches == 0


def test_a_dead_letter_in_flight_holds_the_commit() -> None:
    tracker = CommitTracker()
    tracker.assign([T0])
    batch = tracker.open(T0, 3)
    tracker.hold(batch)  # dead letter sent, not yet acknowledged
    tracker.release(batch)
    assert tracker.take_commits() == {}
    assert not tracker.wait_idle(0.05)
    tracker.release(batch)  # acknowledged
    assert tracker.take_commits() == {T0: 3}


def test_revoked_partitions_are_skipped_and_never_committed_again() -> None:
    tracker = CommitTracker()
    tracker.assign([T0, T1])
    finish(tracker, tracker.open(T0, 5))
    in_flight_0, in_flight_1 = tracker.open(T0, 10), tracker.open(T1, 5)
    for batch in (in_flight_0, in_flight_1):
        tracker.hold(batch)
    finish(tracker, in_flight_0, in_flight_1)
    final = tracker.revoke([T0])
    assert final == {T0: 5}  # committed on revocation; 5..9 belong to the next owner
    assert not tracker.is_current(in_flight_0)
    assert tracker.is_current(in_flight_1)
    assert tracker.pending_batches == 1  # the revoked generation's batches hold up nothing any more
    tracker.release(in_flight_0)
    tracker.release(in_flight_1)
    assert tracker.take_commits() == {T1: 5}
    # Getting the partition back starts a new generation: the old batch still does not count.
    tracker.assign([T0])
    assert not tracker.is_current(in_flight_0)
    fresh = tracker.open(T0, 7)
    assert tracker.is_current(fresh)
    finish(tracker, fresh)
    assert tracker.take_commits() == {T0: 7}


def test_a_batch_left_unfinished_by_a_revocation_does_not_hold_up_the_next_generation() -> None:
    tracker = CommitTracker()
    tracker.assign([T0])
    hung = tracker.open(T0, 10)
    tracker.hold(hung)  # a listener hangs in a call on one of its records
    finish(tracker, hung)
    tracker.revoke([T0])
    tracker.assign([T0])  # back again (a rebalance that gave it back), read again from the committed offset
    again = tracker.open(T0, 10)
    finish(tracker, again)
    assert tracker.take_commits() == {T0: 10}
    tracker.release(hung)  # the hung call finally returns: nothing changes
    assert tracker.take_commits() == {}
    assert tracker.pending_batches == 0


def test_records_of_a_partition_not_owned_are_never_committed() -> None:
    tracker = CommitTracker()
    tracker.assign([T0])
    stray = tracker.open(T1, 4)  # polled as the partition was being taken away
    assert not tracker.is_current(stray)
    finish(tracker, stray)
    assert tracker.take_commits(everything=True) == {}
    assert tracker.pending_batches == 0


def test_commit_progress_is_the_age_of_the_oldest_unfinished_batch() -> None:
    tracker = CommitTracker()
    tracker.assign([T0, T1])
    assert tracker.oldest_pending_age() == 0.0
    old = tracker.open(T0, 5)
    new = tracker.open(T0, 10)
    other = tracker.open(T1, 5)
    old.started -= 1000  # as if polled long ago (the clock is not the point here)
    finish(tracker, new, other)
    assert tracker.oldest_pending_age() >= 1000  # the newer batch finished first: still held up by the old one
    finish(tracker, old)
    assert tracker.oldest_pending_age() == 0.0
    assert tracker.take_commits() == {T0: 10, T1: 5}


def test_caps_hold_a_partitions_commits_and_detached_batches_call_back_without_moving_them() -> None:
    tracker = CommitTracker()
    tracker.assign([T0, T1])
    paused, sideline = object(), object()
    tracker.cap(T0, paused, 4)  # a paused listener stopped before offset 4
    tracker.cap(T0, sideline, 7)
    finish(tracker, tracker.open(T0, 10), tracker.open(T1, 10))
    assert tracker.take_commits() == {T0: 4, T1: 10}  # the lowest cap of T0; T1 has none
    done: list[int] = []
    chunk = tracker.detached(T0, 8, lambda: done.append(8))  # part of what the paused listener reads again
    tracker.hold(chunk)  # a dead letter of the chunk in flight
    tracker.release(chunk)
    assert done == []
    tracker.release(chunk)
    assert done == [8] and tracker.take_commits() == {}  # a detached batch never moves the offset itself
    tracker.cap(T0, paused, 8)  # its owner raises the cap instead
    assert tracker.take_commits() == {T0: 7}
    tracker.uncap(T0, paused)
    tracker.uncap(T0, sideline)
    assert tracker.take_commits() == {T0: 10}
    tracker.cap(T1, paused, 0)
    assert tracker.revoke([T1]) == {T1: 0}  # a revoked partition's final commit keeps to its caps
    tracker.assign([T1])
    finish(tracker, later := tracker.open(T1, 12))
    assert tracker.is_current(later) and tracker.take_commits() == {T1: 12}  # the caps went with the generation
