"""The runtime's main loop: poll, decode, route to listener lanes, commit, and stop cleanly.

The polling thread splits each poll into one batch per partition, decodes each record once (an undecodable
one is dead-lettered with the reason; until the broker has it, it counts against the backlog bounds too)
and hands every listener that wants them its own share of each batch. It never blocks on a listener: a lane
over its bounds (events, bytes of record values) spills while another lane keeps up, keeping only the
offsets of what it will read again (see :mod:`hivewire.runtime._intake`). Consumption pauses (the consumer
keeps polling, so it keeps its group membership) while every lane is over its bounds (with
``hivewire.listener.overflow=pause``: while any is), or while dead letters the broker has not acknowledged
are; it resumes when those have drained to half of both bounds (and, spilling, one lane has).
Committed offsets come from the :class:`~hivewire.runtime._tracker.CommitTracker`.

With coordination configured, the polling thread also follows the listeners' switches and sidelines between
two polls (:class:`~hivewire.runtime._switches.Switches`).

Stopping (SIGTERM/SIGINT, :meth:`Runner.stop`): polling ends, each listener finishes the call it is in
(:func:`~hivewire.runtime._shutdown.wind_down`), finished batches are committed synchronously.
:meth:`Runner.force` (a second signal) ends that wait at once: the events in hand are not committed. Events not
committed are read again on restart: delivery is at least once, never lost. The last line says what the run
did (:func:`~hivewire.runtime._shutdown.summary`); ``/health`` is :func:`~hivewire.runtime._health.health`'s.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hivewire.errors import DecodeError
from hivewire.events import _apiary as apiary
from hivewire.events._model import EventType
from hivewire.metastore import MetastoreClient
from hivewire.runtime._collector import collector_tuned
from hivewire.runtime._delivery import dead_letter_headers, send_dead_letter
from hivewire.runtime._event_loop import EventLoop
from hivewire.runtime._health import health
from hivewire.runtime._intake import Backlog
from hivewire.runtime._item import Item
from hivewire.runtime._lane import Lane, Watchdog
from hivewire.runtime._listener import Listener
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._services import LaneServices
from hivewire.runtime._settings import RuntimeSettings
from hivewire.runtime._share import Share
from hivewire.runtime._shutdown import summary, wind_down
from hivewire.runtime._source import (
    Record,
    Source,
    SupportsLoss,
    SupportsMetrics,
    TopicPartition,
)
from hivewire.runtime._tracker import Batch, CommitTracker

if TYPE_CHECKING:  # imported only when coordination is configured
    from hivewire.runtime._membership import Membership
    from hivewire.runtime._sidelining import Sidelining

log = logging.getLogger("hivewire.runtime.runner")

DECODER = "hivewire.decoder"  # the "listener" named in dead letters of undecodable records


class Runner:
    """Runs ``listeners`` over ``source`` until stopped (or until a finite source is finished)."""

    def __init__(
        self,
        app_name: str,
        listeners: Sequence[Listener],
        source: Source,
        settings: RuntimeSettings,
        metrics: Metrics,
        metastore: Callable[[], MetastoreClient | None],
        membership: Membership | None = None,
    ) -> None:
        """``settings`` are the run's (read whole: bounds, timeouts, retries, poll size); ``metrics``, the
        factory of metastore clients and, with coordination, the ``membership`` are the services built from
        them."""
        self.app_name = app_name
        self.settings = settings
        self.membership = membership
        self.source = source
        self.metrics = metrics
        self.tracker = CommitTracker()
        self.stopping = threading.Event()
        self.forced = threading.Event()
        #: The listener calls a forced stop left unfinished (their events not committed): ``name (event)``.
        self.abandoned: list[str] = []
        #: The signal that forced the stop (set by the signal handler), for the exit status.
        self.forced_by: int | None = None
        self.fatal_error: BaseException | None = None
        services = LaneServices(
            tracker=self.tracker,
            source=source,
            metrics=metrics,
            retry=settings.retry,
            timeout=settings.listener_timeout,
            queue_events=settings.queue_size,
            queue_bytes=settings.queue_bytes,
            app_name=app_name,
            stopping=self.stopping,
            metastore=metastore,
            fatal=self.fatal,
            max_abandoned=settings.max_abandoned_threads,
            failing_bound=settings.batch_size,
            pace_bound=4 * settings.batch_size,
        )
        self.services = services
        self.room = services.room
        self.failures = services.failures
        self.loop: EventLoop | None = None  # made for the first lane that needs it
        self.routes = [
            (listener, Lane(listener, services, self._loop, listener.concurrency or settings.listener_concurrency))
            for listener in listeners
        ]
        self.lanes = [lane for _, lane in self.routes]
        self.watchdog = Watchdog(self.lanes, self.stopping)
        self.paused = False
        self.last_poll = time.monotonic()
        self.started = False
        self.assigned: set[TopicPartition] = set()
        #: When a rebalance took the last assigned partition (None: some assigned, or none ever).
        self.unassigned_since: float | None = None
        # held while either of those two changes and while /health reads them (another thread)
        self._assignment_lock = threading.Lock()
        self.positions: dict[TopicPartition, int] = {}  # the next offset to read, per partition polled
        self.committed: dict[TopicPartition, int] = {}  # the last offset committed (or read from), per partition
        # Undecodable records dead-lettered and not yet acknowledged: bounded like a listener's backlog.
        self.undelivered = Backlog(DECODER, settings.queue_size, settings.queue_bytes)
        # Any of these full pauses consumption: dead letters in flight (their records are held for resending),
        # and the lanes' queues unless lanes spill beyond their bounds.
        self.pausing = [*(lane.letters for lane in self.lanes), self.undelivered]
        if not settings.reread:
            self.pausing += [lane.backlog for lane in self.lanes]
        self.lane_queues = [lane.backlog for lane in self.lanes]
        # With coordination: the listeners' switches and sidelines (imported only then).
        self.switches: Switches | None = None
        if membership is not None:
            from hivewire.runtime._switches import Switches

            self.switches = Switches(membership, self.lanes, self.tracker, metrics, settings.queue_size // 2)
        metrics.pending_age.set_function(self.tracker.oldest_pending_age)
        if isinstance(source, SupportsMetrics):
            source.attach_metrics(metrics)

    @property
    def sidelinings(self) -> dict[Lane, Sidelining]:
        """With coordination, each lane's sidelines."""
        return self.switches.sidelinings if self.switches is not None else {}

    @property
    def skipping(self) -> dict[Lane, Sidelining]:
        """The lanes whose sidelines are active, and those (empty: the dispatch pays nothing for sidelines)."""
        return self.switches.skipping if self.switches is not None else {}

    def _loop(self) -> EventLoop:
        """The runner's event loop, made on first use (only lanes that schedule their calls need one)."""
        if self.loop is None:
            self.loop = EventLoop()
        return self.loop

    # -- control --------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the runner to stop (safe from signal handlers and other threads)."""
        self.stopping.set()

    def force(self) -> None:
        """Stop without waiting for the listeners' calls in progress (their events are read again on restart)."""
        self.stopping.set()
        self.forced.set()

    def fatal(self, error: BaseException) -> None:
        """Stop the app because of ``error`` (a lane or a singleton cannot go on); :meth:`run` raises it."""
        self.fatal_error = error
        self.stop()

    def run(self) -> None:
        """Poll and dispatch until stopped; then shut down cleanly. Raises the fatal error, if any."""
        with collector_tuned(self.settings.tune_gc):
            self._run()
        if self.fatal_error is not None:
            raise self.fatal_error

    def _run(self) -> None:
        watchdog = self.watchdog
        if self.loop is not None:
            self.loop.start()
        for lane in self.lanes:
            lane.start()
        watchdog.start()
        if self.membership is not None and self.switches is not None:
            self.membership.start()
            self.switches.follow(self._held_positions, self.positions)
        self.source.open(self._on_assign, self._on_revoke)
        self.started = True
        next_commit = next_lag = time.monotonic()
        try:
            while not self.stopping.is_set():
                records = self.source.poll(self.settings.batch_size, 0.2)
                self.last_poll = now = time.monotonic()
                if self.switches is not None and self.switches.membership.switched.is_set():
                    self.switches.obey(self._held_positions, self.positions)
                if records:
                    self._dispatch(records)
                    self._pace()
                self._apply_backpressure()
                if now >= next_commit:
                    self._commit(wait=False)
                    next_commit = now + self.settings.commit_interval
                if now >= next_lag:
                    self._update_lag()
                    next_lag = now + 5.0
                if not records and self.source.finished():
                    break
        finally:
            self._shutdown()

    # -- dispatch -------------------------------------------------------------------------------------
    def _all_behind(self) -> bool:
        """No lane keeps up (each is at its bounds, or failing past its smaller one): nobody would use what is
        read ahead, so nothing is spilled (it would only be read twice); consumption pauses at the queue bounds."""
        return all(lane.behind for lane in self.lanes)

    def _pace(self) -> None:
        """Wait (up to 20 ms) while no listener needs more: each has a few polls queued, or spills.

        Reading ahead of every listener only fills memory: once the queues outgrow the CPU caches each event
        costs more (page faults, cache misses), the listener threads fall further behind, and a one-listener
        app settled at 0.6-0.75 of its rate in some runs. The fetcher keeps prefetching meanwhile.
        """
        room, bound = self.room, self.services.pace_bound
        room.clear()
        for lane in self.lanes:
            if lane.backlog.depth < bound and not lane.spilling and not lane.paused:
                return
        room.wait(0.02)  # a lane's thread sets it when its queue falls below the bound

    def _dispatch(self, records: Sequence[Record]) -> None:
        # One batch per partition: a slow event then holds back the commits of its own partition only.
        groups: dict[TopicPartition, list[Record]] = {}
        for record in records:
            tp = (record.topic() or "", record.partition() or 0)
            group = groups.get(tp)
            if group is None:
                groups[tp] = [record]
            else:
                group.append(record)
        may_spill = self.settings.reread and not self._all_behind()
        for tp, group in groups.items():
            self._dispatch_partition(tp, group, may_spill)
        self.metrics.consumed.inc(len(records))

    def _dispatch_partition(self, tp: TopicPartition, records: list[Record], may_spill: bool) -> None:
        """Decode one partition's records of a poll and hand each listener lane its share (spilled, if it is
        over its bounds and ``may_spill``)."""
        tracker = self.tracker
        # A partition's records come in offset order.
        end = (records[-1].offset() or 0) + 1
        batch = tracker.open(tp, end)
        self.positions[tp] = end
        self.committed.setdefault(tp, records[0].offset() or 0)  # where this consumer started reading
        types: dict[EventType, int] = {}
        shares: dict[Lane, list[Item]] = {}
        sizes: dict[Lane, int] = {}
        routes = self.routes
        skipping = self.skipping
        for sidelining in skipping.values():
            sidelining.dispatching(tp, records[0].offset() or 0)  # replays due go ahead of these events
        for record in records:
            value = record.value()
            try:
                if value is None:
                    raise DecodeError("empty message (null value)")
                decoded = apiary.read(value)
            except DecodeError as e:
                self._dead_letter_undecodable(batch, record, e.reason)
                continue
            item = Item.of(tp, record, value, decoded)
            size = len(value)
            event_type = decoded.event_type
            types[event_type] = types.get(event_type, 0) + 1
            for listener, lane in routes:
                if listener.accepts(decoded):
                    if skipping and lane in skipping and skipping[lane].skips(tp, item._offset, decoded):
                        continue
                    share = shares.get(lane)
                    if share is None:
                        shares[lane] = share = []
                        sizes[lane] = 0
                    share.append(item)
                    sizes[lane] += size
        for lane, items in shares.items():
            lane.submit(Share.hand_out(tracker, batch, items, sizes[lane]), may_spill)
        Share.dispatched(tracker, batch)
        for event_type, count in types.items():
            self.metrics.by_type.labels(event_type.value).inc(count)

    def _dead_letter_undecodable(self, batch: Batch, record: Record, reason: str) -> None:
        """Dead-letter an undecodable record; until the broker has it, it counts as the decoder's backlog."""
        self.metrics.undecodable.inc()
        log.warning(
            "undecodable record %s/%s@%s: %s; dead-lettering",
            record.topic(),
            record.partition(),
            record.offset(),
            reason,
        )
        send_dead_letter(
            self.source,
            self.tracker,
            self.undelivered,
            batch,
            record,
            dead_letter_headers(self.app_name, DECODER, record, reason, 0),
        )

    def _apply_backpressure(self) -> None:
        pausing = self.pausing
        if not self.paused:
            full = [backlog for backlog in pausing if backlog.full]
            if not full and self.settings.reread and all(queue.full for queue in self.lane_queues):
                full = self.lane_queues
            if not full and all(lane.paused for lane in self.lanes):
                full = self.lane_queues  # every listener is switched off: reading ahead is for nobody
            if full:
                self.source.pause()
                self.paused = True
                log.info(
                    "pausing consumption: a backlog at its bound (%d events or %d bytes): %s",
                    self.undelivered.max_events,
                    self.undelivered.max_bytes,
                    ", ".join(f"{b.name}={b.depth} events/{b.bytes} bytes" for b in full),
                )
        elif (
            all(backlog.drained for backlog in pausing)
            and (not self.settings.reread or any(queue.drained for queue in self.lane_queues))
            and not all(lane.paused for lane in self.lanes)
        ):
            self.source.resume()
            self.paused = False
            log.info("resuming consumption")
        for lane in self.lanes:
            lane.metrics.queue_depth.set(lane.depth)
            lane.metrics.queue_bytes.set(lane.bytes)
            lane.metrics.spilled.set(lane.spilled)

    # -- offsets --------------------------------------------------------------------------------------
    def _held_positions(self) -> dict[TopicPartition, int]:
        """The next offset to dispatch of every partition held: how far this instance got, or, for a partition
        it has dispatched nothing of yet, where its consumer starts reading. A sideline's replay runs up to
        there: with only what was dispatched, a partition that brought nothing new since a restart would never
        have its skipped events replayed."""
        positions = dict(self.positions)
        for tp in self.assigned - positions.keys():
            start = self.source.next_offset(tp)
            if start is not None:
                positions[tp] = start
        return positions

    def _commit(self, *, wait: bool, everything: bool = False) -> None:
        offsets = self.tracker.take_commits(everything)
        if offsets:
            self.source.commit(offsets, wait=wait)
            self.committed.update(offsets)
            self.metrics.commits.inc()

    def _on_assign(self, partitions: list[TopicPartition]) -> None:
        log.info("assigned %s", sorted(partitions))
        with self._assignment_lock:
            self.assigned |= set(partitions)
            if self.assigned:
                self.unassigned_since = None
        self.tracker.assign(partitions)
        if self.membership is not None:
            self.membership.hold(self.assigned)
        if self.switches is not None:
            self.switches.assigned(partitions, self.source.next_offset)

    def _on_revoke(self, partitions: list[TopicPartition]) -> None:
        log.info("revoked %s", sorted(partitions))
        final = self.tracker.revoke(partitions)
        if final:
            # Asynchronously: partitions revoked in an outage may already be lost, and a synchronous commit
            # would hold the polling thread (and liveness) for as long as the broker is away. A commit that
            # does not make it means those records are read again by the new owner (at least once).
            self.source.commit(final, wait=False)
        with self._assignment_lock:
            if self.assigned and not self.assigned - set(partitions):
                # a rebalance takes them back to hand them out again: ready meanwhile; lost ones (the group
                # dropped this member) are not coming back by themselves
                lost = isinstance(self.source, SupportsLoss) and self.source.losing
                self.unassigned_since = None if lost else time.monotonic()
            self.assigned -= set(partitions)
        if self.switches is not None:
            self.switches.revoked(partitions)
        if self.membership is not None:
            self.membership.hold(self.assigned)
        for tp in partitions:
            self.positions.pop(tp, None)
            self.committed.pop(tp, None)
            # The new owner reports these partitions' lag; a stale value here would be double-counted forever.
            for gauge in (self.metrics.lag, self.metrics.committed_lag):
                try:
                    gauge.remove(tp[0], str(tp[1]))
                except KeyError:
                    pass

    def _update_lag(self) -> None:
        """The lag gauges: not yet read, not yet committed (per partition), and each listener's events behind."""
        try:
            lags = self.source.lag()
        except Exception as e:  # lag is informational; never let it stop consumption
            log.debug("could not read consumer lag: %s", e)
            return
        metrics = self.metrics
        for (topic, partition), lag in lags.items():
            metrics.lag.labels(topic, str(partition)).set(lag)
            tp = (topic, partition)
            position, committed = self.positions.get(tp), self.committed.get(tp)
            if position is not None and committed is not None:
                metrics.committed_lag.labels(topic, str(partition)).set(lag + max(0, position - committed))
        unread = sum(lags.values())
        for lane in self.lanes:
            lane.metrics.behind.set(unread + lane.outstanding)
        if self.membership is not None:
            self.membership.lag({lane.name: unread + lane.outstanding for lane in self.lanes})
        if self.switches is not None:
            self.switches.report()

    # -- shutdown -------------------------------------------------------------------------------------
    def _shutdown(self) -> None:
        self.stopping.set()
        deadline, self.abandoned = wind_down(self.lanes, self.settings.shutdown_timeout, self.forced)
        try:
            self.source.drain(1.0 if self.forced.is_set() else max(1.0, deadline - time.monotonic()))
            self._commit(wait=True, everything=True)
        except Exception as e:
            log.error("final commit failed (%s); uncommitted events will be read again on restart", e)
        finally:
            if self.loop is not None:
                self.loop.stop(max(1.0, deadline - time.monotonic()))
            if self.membership is not None:  # first: its singletons' runners dead-letter through the source
                self.membership.close()
            committed = dict(self.committed)
            self.source.close()
            log.info("%s", summary(self.metrics, self.lanes, committed))

    def health(self) -> dict[str, Any]:
        """``/health``: see :func:`hivewire.runtime._health.health`."""
        now = time.monotonic()
        with self._assignment_lock:  # answered from another thread than the polling one, which changes both
            assigned = frozenset(self.assigned)
            since = self.unassigned_since
        return health(
            polling=self.started and not self.stopping.is_set() and now - self.last_poll < 30,
            paused=self.paused,
            source=self.source,
            lanes=self.lanes,
            watchdog=self.watchdog,
            tracker=self.tracker,
            assigned=assigned,
            unassigned_for=None if since is None else now - since,
            now=now,
        )
