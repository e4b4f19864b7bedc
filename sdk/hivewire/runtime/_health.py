"""What a runner says of itself in ``/health`` (:func:`health`): readiness, liveness, and each listener's lane.

Invariants: ``alive`` (liveness) asks only whether the process works: the polling loop turns (a poll within
the last 30 s) and no listener leaks threads, whatever Kafka does; ``status`` (readiness) is UP only when it
is alive, the source is reachable and partitions are assigned, or were until at most :data:`REJOIN_GRACE`
seconds ago (a rebalance: the group takes partitions back before it hands them out again).
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any

from hivewire.runtime._lane import Lane, Watchdog
from hivewire.runtime._source import Source, SupportsReachability, SupportsWaiting, TopicPartition
from hivewire.runtime._tracker import CommitTracker

#: Seconds a member that had partitions stays ready once a rebalance took them all: the eager protocol takes
#: every member's partitions at each join or leave (a rolling deploy) before it hands them out again. A
#: member left with none for longer (more members than partitions, a group that cannot rebalance) is DOWN,
#: and so is one whose partitions were lost (the group dropped it: its session timed out) until it has some.
REJOIN_GRACE = 60.0


def health(
    *,
    polling: bool,
    paused: bool,
    source: Source,
    lanes: Sequence[Lane],
    watchdog: Watchdog,
    tracker: CommitTracker,
    assigned: Set[TopicPartition],
    unassigned_for: float | None,
    now: float,
) -> dict[str, Any]:
    """``/health`` of a runner: UP while ``polling`` with partitions ``assigned`` (or, having had some, without
    any for ``unassigned_for`` seconds, at most :data:`REJOIN_GRACE`) and ``source`` reachable, unless a
    listener left more hung threads behind than allowed. Each listener as :meth:`Lane.health` says;
    ``oldest_pending_batch_s``: how long commits have been waiting."""
    reachable = not isinstance(source, SupportsReachability) or source.reachability.reachable
    listeners = {lane.name: lane.health(now) for lane in lanes}
    stuck_names = [name for name, lane in listeners.items() if lane["stuck"]]
    leaking = sorted(watchdog.over_cap)
    alive = polling and not leaking
    rejoining = not assigned and unassigned_for is not None and unassigned_for <= REJOIN_GRACE
    ready = alive and reachable and (bool(assigned) or rejoining)
    waiting = source.waiting_for if isinstance(source, SupportsWaiting) else None
    reason = source.waiting_reason if isinstance(source, SupportsWaiting) else None
    return {
        "status": "UP" if ready else "DOWN",
        "alive": alive,
        "reachable": reachable,
        "paused": paused,
        "assigned": sorted(f"{t}/{p}" for t, p in assigned),
        "rebalancing_s": round(unassigned_for, 1) if unassigned_for is not None and not assigned else None,
        "waiting_for_assignment_s": round(waiting, 1) if waiting is not None else None,
        "waiting_reason": reason,
        "pending_batches": tracker.pending_batches,
        "oldest_pending_batch_s": round(tracker.oldest_pending_age(), 3),
        "stuck_listeners": stuck_names,
        "too_many_abandoned_threads": leaking,
        "listeners": listeners,
    }
