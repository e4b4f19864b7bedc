"""This instance in its app's group, when coordination is configured (``hivewire.coordination.zookeeper``).

:class:`Membership` announces the instance (host, pid, version, listeners, start time) through an
:class:`~hivewire.coordination.AppMember`, then keeps the partitions it holds and its listeners' lag up to date,
and leaves on shutdown. The runner only records what changed (:meth:`Membership.hold`, :meth:`Membership.lag`);
one thread of its own talks to the coordinator, so an unreachable ZooKeeper never holds up polling, dispatch or
commits: it is said once (and reminded now and then), the announcement is retried, and the data path goes on.

The listeners' switches are followed by watches (:meth:`Membership.paused` reads the last ones seen, kept when
ZooKeeper goes away); :attr:`Membership.switched` is set after each change, for the runner to obey them.
So are the sidelines (:meth:`Membership.sidelines`); what the instance records in them (where skipping began
and ended, how far the replay got: :meth:`Membership.record`) is written by the same thread, retried until
ZooKeeper takes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from hivewire._reachability import Reachability
from hivewire.coordination._interfaces import Coordinator
from hivewire.coordination._member import AppMember, this_instance
from hivewire.coordination._state import Sideline
from hivewire.errors import CoordinationError
from hivewire.runtime._source import TopicPartition, partition_name

if TYPE_CHECKING:
    from hivewire.runtime._metrics import Metrics

log = logging.getLogger("hivewire.runtime.membership")


class Candidate(Protocol):
    """A singleton listener standing for election through this membership (what it needs of
    :class:`~hivewire.runtime._singleton.Singleton`, which runs the listener while elected)."""

    name: str

    @property
    def leading(self) -> bool: ...

    def lag(self) -> int: ...

    def start(self) -> None: ...

    def stand(self, member: AppMember) -> None: ...

    def close(self, timeout: float) -> None: ...


@dataclass
class _Offsets:
    """Offsets to merge into one sideline, and what to call once they are stored."""

    starts: dict[str, int] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)
    replayed: dict[str, int] = field(default_factory=dict)
    then: list[Callable[[], None]] = field(default_factory=list)


class Membership:
    """``app``'s member for this process, on the coordinator ``connect`` opens (it may raise
    :class:`~hivewire.errors.CoordinationError`; it is then called again every ``retry_every`` seconds).

    Once joined, it stands for each of ``singletons`` (their listeners run here while elected) and counts the
    app's live instances in ``metrics``."""

    def __init__(
        self,
        connect: Callable[[], Coordinator],
        app: str,
        listeners: Iterable[str],
        *,
        where: str = "ZooKeeper",
        retry_every: float = 5.0,
        metrics: Metrics | None = None,
        singletons: Sequence[Candidate] = (),
    ) -> None:
        self.app = app
        self._metrics = metrics
        self.singletons = tuple(singletons)
        self._connect = connect
        self._instance = this_instance(tuple(listeners))
        self._retry_every = retry_every
        self._lock = threading.Lock()
        self._partitions: tuple[str, ...] = ()
        self._lag: dict[str, int] = {}
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hivewire-membership:{app}", daemon=True)
        self._coordinator: Coordinator | None = None
        self.member: AppMember | None = None
        #: Set when the switches (or sidelines) changed; the runner clears it and obeys them.
        self.switched = threading.Event()
        #: Set once the switches are known (the first time this instance joined).
        self.followed = threading.Event()
        self._records: dict[str, _Offsets] = {}  # by sideline id, not yet stored
        #: Whether the coordinator answers (logged once per outage).
        self.reachability = Reachability(
            f"coordination at {where}",
            "check hivewire.coordination.zookeeper and that ZooKeeper runs; the listeners keep running meanwhile, "
            "but `hivewire status` does not show this instance",
            log,
        )

    def stand_for(self, singletons: Sequence[Candidate]) -> None:
        """Stand for ``singletons`` too once joined (called before :meth:`start`: the app's runner, which their
        fatal errors stop, is made after the membership it follows)."""
        self.singletons += tuple(singletons)

    # -- what the runner tells -------------------------------------------------------------------------------
    def hold(self, partitions: Iterable[TopicPartition]) -> None:
        """The partitions this instance holds now (after an assignment or a revocation)."""
        held = tuple(sorted(partition_name(tp) for tp in partitions))
        with self._lock:
            if held == self._partitions:
                return
            self._partitions = held
        self._wake.set()

    def lag(self, behind: Mapping[str, int]) -> None:
        """Events each listener is behind, over the partitions held here."""
        lag = dict(behind)
        lag.update({s.name: s.lag() for s in self.singletons if s.leading})  # over every partition
        with self._lock:
            if lag == self._lag:
                return
            self._lag = lag
        self._wake.set()

    def paused(self, listener: str) -> bool:
        """Whether ``listener`` is switched off, as last seen (running while never seen)."""
        member = self.member
        return member is not None and member.paused(listener)

    def sidelines(self, listener: str) -> tuple[Sideline, ...]:
        """``listener``'s unfinished sidelines, as last seen, oldest first."""
        member = self.member
        return member.sidelines(listener) if member is not None else ()

    def record(
        self,
        sideline: str,
        *,
        starts: Mapping[str, int] | None = None,
        ends: Mapping[str, int] | None = None,
        replayed: Mapping[str, int] | None = None,
        then: Callable[[], None] | None = None,
    ) -> None:
        """Merge offsets into ``sideline`` (by ``topic:partition``), in the background; ``then`` once stored."""
        with self._lock:
            pending = self._records.setdefault(sideline, _Offsets())
            for mine, given in ((pending.starts, starts), (pending.ends, ends)):
                for key, offset in (given or {}).items():
                    mine.setdefault(key, offset)  # the first one wins, as in the store
            for key, offset in (replayed or {}).items():
                pending.replayed[key] = max(offset, pending.replayed.get(key, offset))
            if then is not None:
                pending.then.append(then)
        self._wake.set()

    def _store_records(self, member: AppMember) -> None:
        with self._lock:
            records, self._records = self._records, {}
        try:
            while records:
                sideline, offsets = next(iter(records.items()))
                member.state.record_offsets(
                    sideline, starts=offsets.starts, ends=offsets.ends, replayed=offsets.replayed
                )
                del records[sideline]
                for then in offsets.then:
                    then()
        except CoordinationError:
            with self._lock:  # stored again on the next attempt, merged with what came since
                for sideline, offsets in records.items():
                    newer = self._records.get(sideline)
                    if newer is not None:
                        offsets.starts = {**newer.starts, **offsets.starts}
                        offsets.ends = {**newer.ends, **offsets.ends}
                        for key, offset in newer.replayed.items():
                            offsets.replayed[key] = max(offset, offsets.replayed.get(key, offset))
                        offsets.then.extend(newer.then)
                    self._records[sideline] = offsets
            raise

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Join in the background: returns at once, whether the coordinator answers or not."""
        for singleton in self.singletons:
            singleton.start()
        self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        """Leave the group and end the session (waiting up to ``timeout`` seconds; the session's end, at its
        timeout, removes the instance anyway)."""
        for singleton in self.singletons:  # first: their runners commit their progress through the session
            singleton.close(timeout)
        self._closing.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        announced: tuple[tuple[str, ...], dict[str, int]] | None = None
        try:
            while not self._closing.is_set():
                try:
                    member = self.member or self._join()
                    with self._lock:
                        wanted = (self._partitions, dict(self._lag))
                    if wanted != announced:
                        member.announce(partitions=wanted[0], lag=wanted[1])
                        announced = wanted
                    self._store_records(member)
                    self.reachability.up()
                except CoordinationError as e:
                    self.reachability.down(str(e))
                    self._closing.wait(self._retry_every)
                    continue
                self._wake.wait()
                self._wake.clear()
        finally:
            self._leave()

    def _join(self) -> AppMember:
        coordinator = self._coordinator = self._coordinator or self._connect()
        member = AppMember(coordinator, self.app, self._instance, on_change=self.switched.set)
        try:
            member.start()
        except CoordinationError:
            member.close()  # whatever it had set up; joined again on the next attempt
            raise
        self.member = member
        self.followed.set()
        self.switched.set()
        log.info("joined app %s in coordination as %s", self.app, member.member)
        self._stand(member)
        return member

    def _stand(self, member: AppMember) -> None:
        """Stand for the singletons and count the live instances (the coordinator keeps both up after a
        reconnection)."""
        metrics = self._metrics
        if metrics is not None:
            member.watch_instances(metrics.instances.labels(self.app).set)
        for singleton in self.singletons:
            singleton.stand(member)

    def _leave(self) -> None:
        member, coordinator = self.member, self._coordinator
        self.member = self._coordinator = None
        if member is not None:
            member.close()
        if coordinator is not None:
            try:
                coordinator.close()
            except Exception as e:  # a session that cannot be closed ends at its timeout
                log.info("could not close the coordination session: %s", e)
