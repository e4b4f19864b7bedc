"""The listeners' switches and sidelines as coordination says them (:class:`Switches`): with coordination
configured, the polling thread pauses or resumes the lanes (``hivewire listener pause|resume``) and follows
each lane's sidelines between two polls.

Before the first poll it waits (up to 30 s) for the switches and sidelines to be known, so that a paused
listener stays paused and a sideline keeps its order across restarts.

Invariants: only the polling thread calls :meth:`Switches.follow`, :meth:`Switches.obey`,
:meth:`Switches.assigned` and :meth:`Switches.revoked`; :attr:`Switches.skipping` holds only the lanes whose
sidelines are active (empty: the dispatch pays nothing for sidelines).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from hivewire.runtime._lane import Lane
from hivewire.runtime._membership import Membership
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._sidelining import Sidelining
from hivewire.runtime._source import TopicPartition
from hivewire.runtime._tracker import CommitTracker

log = logging.getLogger("hivewire.runtime.runner")


class Switches:
    """What ``membership`` says of the switches and sidelines of ``lanes``; a sideline's replay is read in
    chunks of ``chunk`` offsets."""

    def __init__(
        self,
        membership: Membership,
        lanes: Sequence[Lane],
        tracker: CommitTracker,
        metrics: Metrics,
        chunk: int,
    ) -> None:
        self.membership = membership
        self.lanes = lanes
        self.metrics = metrics
        #: Each lane's sidelines.
        self.sidelinings = {lane: Sidelining(lane, tracker, membership, chunk, metrics) for lane in lanes}
        for lane, sidelining in self.sidelinings.items():
            lane.skipped = sidelining.skipped
        #: The lanes with active sidelines, and those.
        self.skipping: dict[Lane, Sidelining] = {}

    def follow(self, held: Callable[[], dict[TopicPartition, int]], positions: dict[TopicPartition, int]) -> None:
        """Before the first poll: wait up to 30 seconds for the switches and sidelines, then obey them (an
        unreachable coordinator delays the start by that much, never more: they are obeyed once it answers).

        Starting without them would hand a paused listener events, and a sidelined table's live events ahead of
        its replay; a ZooKeeper that answers at all answers well within this, even on a loaded machine."""
        wait = 30.0
        if not self.membership.followed.wait(wait):
            log.warning(
                "starting without knowing which listeners are paused or sidelined: coordination did not answer "
                "within %g s (they are obeyed as soon as it does)",
                wait,
            )
        self.obey(held, positions)

    def obey(self, held: Callable[[], dict[TopicPartition, int]], positions: dict[TopicPartition, int]) -> None:
        """Pause or resume each lane as its listener's switch says (polling thread, between dispatches).

        A sideline's replay runs up to the next offset to dispatch of each partition: ``positions`` (what was
        dispatched), or ``held()`` once a sideline is past its start (see ``Runner._held_positions``)."""
        membership = self.membership
        membership.switched.clear()
        reached: dict[TopicPartition, int] | None = None
        for lane in self.lanes:
            paused = membership.paused(lane.name)
            lane.metrics.paused.set(1 if paused else 0)
            sidelining = self.sidelinings.get(lane)
            if sidelining is not None:
                sidelines = membership.sidelines(lane.name)
                if reached is None and any(s.state != "started" for s in sidelines):
                    reached = held()
                sidelining.update(sidelines, positions if reached is None else reached)
            if paused == lane.paused:
                continue
            if paused:
                lane.pause()
                log.info("listener %s paused: what arrives for it is read again when it resumes", lane.name)
            else:
                waiting = lane.parked
                lane.resume()
                log.info("listener %s resumed: %d event(s) to catch up on", lane.name, waiting)
        self.skipping = {lane: s for lane, s in self.sidelinings.items() if s.active}
        if self.sidelinings:
            states = {s.id: s.state for sidelining in self.sidelinings.values() for s in sidelining.sidelines}
            for state in ("started", "resumed", "resolved"):
                self.metrics.sidelines.labels(state).set(sum(1 for found in states.values() if found == state))

    def assigned(
        self, partitions: Iterable[TopicPartition], next_offset: Callable[[TopicPartition], int | None]
    ) -> None:
        """``partitions`` were assigned: replays due on them start now, not when something new arrives."""
        for sidelining in self.skipping.values():
            if any(s.state != "started" for s in sidelining.sidelines):
                for tp in partitions:
                    start = next_offset(tp)
                    if start is not None:
                        sidelining.dispatching(tp, start)

    def revoked(self, partitions: list[TopicPartition]) -> None:
        for sidelining in self.sidelinings.values():
            sidelining.revoked(partitions)

    def report(self) -> None:
        """The replays' remaining offsets, per listener and sideline, in the metrics."""
        for lane, sidelining in self.sidelinings.items():
            for sideline, offsets in sidelining.remaining.items():
                self.metrics.replay_remaining.labels(lane.name, sideline).set(offsets)
