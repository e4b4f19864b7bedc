"""Singleton listeners (``@app.on(..., singleton=True)``): one live instance of the app runs each.

Every instance stands for the listener's election in the coordinator (``apps/<app>/singletons/<listener>``);
the leader runs it with a :class:`~hivewire.runtime._runner.Runner` of its own, the same lanes, retries, dead
letters and timeouts as any listener, over a :class:`SingletonSource`: every partition of the topic read by
assignment (not through the group's subscription, whose partitions are spread over the instances), from the
listener's own progress, which its commits advance in the coordinator (``apps/<app>/progress/<listener>``).
So a new leader resumes where the last one's commits got: nothing skipped, the uncommitted tail read again. A
partition without progress yet is read from the group's committed offset, which becomes its progress at once:
a later leader must not start from where the group got since (past what no leader has handled).

Losing leadership (the session was lost or is merely suspended, or the instance stops) stops that runner:
the listener finishes its current call and waits, while the other listeners go on, until the election says
again that this instance leads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from hivewire._ratelimit import RateLimit
from hivewire.coordination._member import AppMember
from hivewire.coordination._state import AppState
from hivewire.errors import ConfigError, CoordinationError, SourceError
from hivewire.runtime._listener import Listener
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._source import (
    Assigned,
    Delivered,
    Reader,
    Record,
    Source,
    SupportsTail,
    Tail,
    TopicPartition,
    partition_name,
)

log = logging.getLogger("hivewire.runtime.singleton")

#: How often a leader looks for partitions added to the topic.
REFRESH_PARTITIONS = 30.0


class SingletonSource:
    """The source of a singleton listener's runner: every partition of ``source``'s topic through a
    :class:`~hivewire.runtime._source.Tail`, from ``listener``'s progress in ``state``; commits advance that
    progress; dead letters and re-reading go through ``source``."""

    def __init__(self, source: Source, tail: Tail, state: AppState, listener: str) -> None:
        self.topic = source.topic
        self.dead_letter_topic = source.dead_letter_topic
        self._source = source
        self._tail = tail
        self._state = state
        self._listener = listener
        self._assigned: set[TopicPartition] = set()
        self._on_assign: Assigned | None = None
        self._next_refresh = 0.0
        self._failed_commits = RateLimit(60.0)
        #: Where partitions without progress began (the group's offsets), until the coordinator has them.
        self._unrecorded: dict[str, int] = {}
        #: Events not yet read, over every partition, as of the last :meth:`lag`.
        self.unread = 0

    def __repr__(self) -> str:
        return f"SingletonSource({self.topic!r}, listener={self._listener!r})"

    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        self._on_assign = on_assign
        self._refresh()

    def _refresh(self) -> None:
        # Soon while the topic has no partitions yet (not created yet), now and then afterwards.
        self._next_refresh = time.monotonic() + (REFRESH_PARTITIONS if self._assigned else 1.0)
        found = [tp for tp in self._tail.partitions() if tp not in self._assigned]
        if not found:
            return
        try:  # nothing is read before where to start is known: the progress, then the group's offsets
            progress = self._state.progress(self._listener)
            starts = self._tail.add({tp: progress.get(partition_name(tp)) for tp in found})
        except (CoordinationError, SourceError) as e:  # ZooKeeper, or the group's coordinator, not answering
            log.info("singleton %s: where to start is not known yet (%s); trying again", self._listener, e)
            self._next_refresh = time.monotonic() + 1.0
            return
        self._unrecorded.update(
            {partition_name(tp): o for tp, o in starts.items() if o is not None and partition_name(tp) not in progress}
        )
        if self._unrecorded:
            self.commit({}, wait=True)  # the group's offsets this leader starts from become the progress
        self._assigned.update(found)
        log.info("singleton %s reads %s from %s", self._listener, sorted(found), progress or "the group's offsets")
        if self._on_assign is not None:
            self._on_assign(found)

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        if time.monotonic() >= self._next_refresh:
            self._refresh()
        return self._tail.poll(max_records, timeout)

    def commit(self, offsets: Mapping[TopicPartition, int], *, wait: bool) -> None:
        progress = {**self._unrecorded, **{partition_name(tp): o for tp, o in offsets.items()}}
        if not progress:
            return
        try:
            self._state.advance_progress(self._listener, progress)
            self._unrecorded.clear()
        except CoordinationError as e:
            # Written with the next commit; if this instance stops first, its successor reads the tail again.
            count = self._failed_commits.due()
            if count:
                log.warning("%d progress write(s) of singleton %s failed (last: %s)", count, self._listener, e)

    def pause(self) -> None:
        self._tail.pause()

    def resume(self) -> None:
        self._tail.resume()

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        self._source.dead_letter(record, headers, on_delivered)

    def lag(self) -> dict[TopicPartition, int]:
        lags = self._tail.lag()
        self.unread = sum(lags.values())
        return lags

    def finished(self) -> bool:
        return False

    def next_offset(self, tp: TopicPartition) -> int | None:
        """Not known here (and never asked: a singleton listener has no sidelines)."""
        return None

    def drain(self, timeout: float) -> None:
        self._source.drain(timeout)

    def reader(self) -> Reader:
        return self._source.reader()

    def close(self) -> None:
        self._tail.close()


class Singleton:
    """One singleton ``listener`` on this instance: :meth:`stand` for it once the instance has joined its app;
    while elected, a runner made by ``build`` runs it over a :class:`SingletonSource` of ``source``.
    ``fatal`` is told if that runner fails beyond recovery."""

    def __init__(
        self,
        listener: Listener,
        source: Source,
        build: Callable[[Source], Runner],
        metrics: Metrics,
        fatal: Callable[[BaseException], None],
    ) -> None:
        self.listener = listener
        self.name = listener.name
        self._source = source
        self._build = build
        self._metrics = metrics
        self._fatal = fatal
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._leading = False
        self._closing = False
        self._state: AppState | None = None
        self._runner: Runner | None = None
        self._running: SingletonSource | None = None
        self._thread = threading.Thread(target=self._run, name=f"hivewire-singleton:{self.name}", daemon=True)
        metrics.singleton_leading.labels(self.name).set(0)
        metrics.singleton_lag.labels(self.name).set_function(lambda: float(self.lag()))

    @property
    def leading(self) -> bool:
        """Whether this instance runs the listener now."""
        return self._leading

    def start(self) -> None:
        self._thread.start()

    def stand(self, member: AppMember) -> None:
        """Stand for the listener's election as ``member`` (called once the instance has joined its app)."""
        with self._lock:
            self._state = member.state
        member.stand_for(self.name, self._elected, self._lost)

    def close(self, timeout: float) -> None:
        """Stop running the listener (its runner commits what it finished) and stop standing."""
        with self._lock:
            self._closing = True
            self._leading = False
            runner = self._runner
            self._wake.notify_all()
        if runner is not None:
            runner.stop()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # -- the election's callbacks (on the coordinator's thread: they only signal) ------------------------
    def _elected(self) -> None:
        log.info("singleton %s runs here now", self.name)
        self._metrics.leadership_changes.labels(self.name, "gained").inc()
        self._metrics.singleton_leading.labels(self.name).set(1)
        with self._lock:
            self._leading = True
            self._wake.notify_all()

    def _lost(self) -> None:
        log.info("singleton %s no longer runs here (leadership lost); it waits until elected again", self.name)
        self._metrics.leadership_changes.labels(self.name, "lost").inc()
        self._metrics.singleton_leading.labels(self.name).set(0)
        with self._lock:
            self._leading = False
            runner = self._runner
        if runner is not None:
            runner.stop()

    # -- the singleton's thread ------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._lock:
                while not (self._leading or self._closing):
                    self._wake.wait()
                if self._closing:
                    return
                state = self._state
            assert state is not None  # elected only after stand()
            try:
                source = SingletonSource(self._source, _tail(self._source), state, self.name)
                runner = self._build(source)
            except Exception as e:
                log.error("singleton %s cannot start: %s", self.name, e)
                self._fatal(e)
                return
            with self._lock:
                if not self._leading or self._closing:
                    source.close()
                    continue
                self._runner, self._running = runner, source
            try:
                runner.run()
            except Exception as e:
                log.error("singleton %s failed: %s", self.name, e)
                self._fatal(e)
                return
            finally:
                with self._lock:
                    self._runner = self._running = None

    def lag(self) -> int:
        """Events from the end of the log to what the listener has handled, here (0 where it does not run; the
        unread part as of its runner's last look, every few seconds)."""
        runner, source = self._runner, self._running
        if runner is None or source is None:
            return 0
        return source.unread + sum(lane.outstanding for lane in runner.lanes)


def _tail(source: Source) -> Tail:
    """A new tail of ``source`` (the app checked, before running, that its source has one)."""
    if not isinstance(source, SupportsTail):
        raise ConfigError("source", f"{source!r} has no tail(): singleton listeners need one, as KafkaSource has")
    return source.tail()
