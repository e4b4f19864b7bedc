"""A listener's lane: its :class:`~hivewire.runtime._intake.Intake` (the records waiting for it), its
:class:`~hivewire.runtime._delivery.Delivery` (retries and dead letters) and one executor that runs its calls,
so a listener that raises, hangs or is slow does not hold up the others.

The executor is a :class:`~hivewire.runtime._worker.Worker` (one thread, events one at a time: a sync listener
of concurrency 1) or a :class:`~hivewire.runtime._scheduler.Scheduler` (N events at once, ordered per table, on
the app's :class:`~hivewire.runtime._event_loop.EventLoop`: ``concurrency`` > 1, or an ``async def`` listener,
whose sync calls run on a :class:`~hivewire.runtime._pool.Pool` of threads). Every executor takes from the
intake in the same way, so bounds, spills, parked ranges and replays behave the same whatever runs the calls.

A lane keeps its backlog in memory up to its bounds (``hivewire.listener.queue.size`` events or
``hivewire.listener.queue.bytes``). Beyond them, while another lane is keeping up
(``hivewire.listener.overflow=reread``, the default), it keeps only a :class:`~hivewire.runtime._intake.Spill`
per share, the share's batch and offsets, and reads those records again from the source with a
:class:`~hivewire.runtime._source.Reader` of its own when it gets to them, until its backlog has drained to
half of both bounds. So a listener far behind neither holds memory nor holds up the others; only the commits
wait for it. When every lane is over its bounds (or with ``overflow=pause``, when any is) the runner pauses
consumption instead: reading ahead for nobody would only be read twice. Within a lane the events of one
table are handled in the order they were polled, spilled or not.

A paused lane (:meth:`Lane.pause`, a listener switched off with ``hivewire listener pause``) finishes the
calls it is in and starts nothing more; what arrives for it meanwhile is kept as one
:class:`~hivewire.runtime._parking.Parked` range of offsets per partition, which holds back those partitions'
commits and becomes spills again on :meth:`Lane.resume`.

A call that raises is retried on the listener's policy, then the record is dead-lettered with the error; the
lane's share of the batch is released only after that, and the dead letter holds the batch (and stays in the
lane's ``letters`` backlog, against its bounds) until the broker acknowledges it, so nothing is committed
before it is handled or dead-lettered. A share holds one partition's records of one poll.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from hivewire.events._apiary import Decoded
from hivewire.runtime._delivery import Delivery
from hivewire.runtime._event_loop import EventLoop
from hivewire.runtime._intake import Backlog, Intake
from hivewire.runtime._listener import Listener
from hivewire.runtime._scheduler import Scheduler
from hivewire.runtime._services import LaneServices
from hivewire.runtime._share import Share
from hivewire.runtime._source import TopicPartition
from hivewire.runtime._tracker import Batch
from hivewire.runtime._worker import Worker

log = logging.getLogger("hivewire.runtime.lane")


class Executor(Protocol):
    """What runs a lane's calls: a :class:`~hivewire.runtime._worker.Worker` or a
    :class:`~hivewire.runtime._scheduler.Scheduler`."""

    timeouts: int

    def start(self) -> None: ...
    def wake(self) -> None:
        """Wake what waits for work (the app is stopping)."""

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the calls in progress; whether they all finished."""

    @property
    def busy_since(self) -> float | None: ...
    @property
    def current(self) -> str | None: ...
    @property
    def abandoned_threads(self) -> int: ...
    @property
    def done_in_hand(self) -> int: ...
    def prune_abandoned(self) -> int: ...


class Lane:
    """One listener's lane: an intake, a delivery and an executor, chosen here: a :class:`Worker` for a sync
    listener of ``concurrency`` 1 (or without a ``loop``), else a :class:`Scheduler` of ``concurrency`` events
    in flight on the event loop ``loop()`` gives."""

    def __init__(
        self,
        listener: Listener,
        services: LaneServices,
        loop: Callable[[], EventLoop] | None = None,
        concurrency: int = 1,
    ) -> None:
        self.listener = listener
        self.name = listener.name
        self.services = services
        self.timeout = listener.timeout or services.timeout
        self.metrics = services.metrics.for_listener(listener.name)
        self.intake = Intake(listener, services)
        self.backlog = self.intake.backlog  # queued in memory
        self.letters = Backlog(self.name, services.queue_events, services.queue_bytes)  # dead letters in flight
        self.delivery = Delivery(listener, services, self.metrics, self.letters)
        parts = (listener, services, self.intake, self.delivery, self.metrics, self.timeout)
        self.executor: Executor
        # What the executor must be told: a worker, of a call overrunning its timeout (a scheduler times its
        # calls out itself); a scheduler, of a pause or resume (a worker sees it in the intake).
        self._overran: Callable[[float], None] | None = None
        self._switched: Callable[[], None] | None = None
        if loop is None or (concurrency == 1 and not listener.async_types):
            worker = Worker(*parts)
            self.executor, self._overran = worker, worker.check_timeout
        else:
            scheduler = Scheduler(*parts, loop(), concurrency)
            self.executor, self._switched = scheduler, scheduler.follow_pause

    # -- feeding (the polling thread) -----------------------------------------------------------------
    def submit(self, share: Share, may_spill: bool = False) -> None:
        """Queue a share; with ``may_spill``, as a spill while this lane is over its bounds."""
        self.intake.submit(share, may_spill)

    def replay(self, chunks: Sequence[tuple[Batch, int, int, int]], keep: Callable[[Decoded], bool]) -> None:
        """Queue ``chunks`` of a partition to read again (what ``keep`` says of them), behind what is queued."""
        self.intake.replay(chunks, keep)

    @property
    def skipped(self) -> Callable[[TopicPartition, int, Decoded], bool] | None:
        """With sidelines: whether the live stream skipped an event (partition, offset); set by the runner."""
        return self.intake.skipped

    @skipped.setter
    def skipped(self, skipped: Callable[[TopicPartition, int, Decoded], bool] | None) -> None:
        self.intake.skipped = skipped

    # -- switches -------------------------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self.intake.paused

    def pause(self) -> None:
        """Finish the calls in progress, then start nothing more until :meth:`resume` (what arrives meanwhile
        is parked: offsets only)."""
        self.intake.pause()
        if self._switched is not None:
            self._switched()

    def resume(self) -> None:
        """Go on: first what was queued before the pause, then what was parked (read again), then the rest."""
        self.intake.resume()
        if self._switched is not None:
            self._switched()

    # -- threads --------------------------------------------------------------------------------------
    def start(self) -> None:
        self.executor.start()

    def wake(self) -> None:
        self.executor.wake()

    def join(self, timeout: float) -> bool:
        """Wait for the calls in progress to finish; abandoned (timed-out) threads are not waited for."""
        return self.executor.join(timeout)

    def check_timeout(self, now: float) -> None:
        """Called by the watchdog: give up a call that overran the timeout."""
        if self._overran is not None:
            self._overran(now)

    def prune_abandoned(self) -> int:
        """Forget abandoned threads whose call finally returned; the number still running."""
        return self.executor.prune_abandoned()

    # -- what the runner, the health check and the metrics read ---------------------------------------
    @property
    def failing(self) -> bool:
        """Whether its last event failed (then it holds at most one poll's worth in memory before spilling)."""
        return self.intake.failing

    @property
    def spilling(self) -> bool:
        return self.intake.spilling

    @property
    def behind(self) -> bool:
        return self.intake.behind

    @property
    def spilled(self) -> int:
        """Events queued as spills, to be read again."""
        return self.intake.spilled

    @property
    def parked(self) -> int:
        """Events let pass while paused, to be read again on resuming."""
        return self.intake.parked

    @property
    def outstanding(self) -> int:
        """Events routed to this listener and not yet done with: queued (in memory or spilled), in hand, or
        dead letters not yet acknowledged."""
        intake = self.intake
        pending = intake.backlog.depth + self.letters.depth + intake.spilled + intake.parked
        return max(0, pending - self.executor.done_in_hand)

    @property
    def depth(self) -> int:
        """Events queued in memory, and dead letters not yet acknowledged."""
        return self.backlog.depth + self.letters.depth

    @property
    def bytes(self) -> int:
        return self.backlog.bytes + self.letters.bytes

    @property
    def busy_since(self) -> float | None:
        return self.executor.busy_since

    @property
    def current(self) -> str | None:
        """The event the listener's call is in (``CREATE_TABLE db.t at topic/partition@offset``), if one."""
        return self.executor.current

    @property
    def timeouts(self) -> int:
        return self.executor.timeouts

    @property
    def abandoned_threads(self) -> int:
        """Threads given up after a timeout whose listener call still has not returned."""
        return self.executor.abandoned_threads

    def health(self, now: float) -> dict[str, object]:
        """This lane in ``/health``: its queue, pause, parked ranges and calls; ``stuck`` while a call overruns
        its timeout or a thread given up after a timeout is still inside its call."""
        busy = self.busy_since
        threads = self.abandoned_threads
        return {
            "queued": self.depth,
            "queued_bytes": self.bytes,
            "spilled": self.spilled,
            "paused": self.paused,
            "parked": self.parked,
            "busy_for_s": round(now - busy, 3) if busy else 0,
            "timeouts": self.timeouts,
            "abandoned_threads": threads,
            "stuck": threads > 0 or (busy is not None and now - busy > self.timeout),
        }


class Watchdog(threading.Thread):
    """Checks every lane for calls that overran their timeout, and counts the threads abandoned per listener.

    Python cannot kill a thread, so every timeout leaves one behind until its call returns (if ever). Their
    number is the ``hivewire_listener_abandoned_threads`` gauge; above ``max_abandoned`` for one listener it
    is logged at CRITICAL and ``/health`` reports the app DOWN (only a restart reclaims them).
    """

    def __init__(self, lanes: Sequence[Lane], stopping: threading.Event, interval: float = 0.2) -> None:
        super().__init__(name="hivewire-watchdog", daemon=True)
        self._lanes = list(lanes)
        self._stopping = stopping
        self._interval = interval
        self._over_cap: set[str] = set()

    @property
    def over_cap(self) -> frozenset[str]:
        """The listeners with more abandoned threads still running than ``max_abandoned`` (at the last check)."""
        return frozenset(self._over_cap)

    def run(self) -> None:
        while not self._stopping.wait(self._interval):
            self.check(time.monotonic())

    def check(self, now: float) -> None:
        abandoned: dict[str, int] = {}
        for lane in self._lanes:
            lane.check_timeout(now)
            abandoned[lane.listener.name] = abandoned.get(lane.listener.name, 0) + lane.prune_abandoned()
        for lane in self._lanes:
            name = lane.listener.name
            if name not in abandoned:
                continue  # a listener with several lanes: done at its first
            count, cap = abandoned.pop(name), lane.services.max_abandoned
            lane.metrics.abandoned.set(count)
            if count > cap and name not in self._over_cap:
                self._over_cap.add(name)
                log.critical(
                    "listener %s has %d abandoned threads still stuck in calls (more than %d): the "
                    "process leaks threads; /health reports DOWN. Restart it, and find out why the "
                    "listener hangs (a call without a timeout of its own?)",
                    name,
                    count,
                    cap,
                )
            elif count <= cap:
                self._over_cap.discard(name)
