"""This instance in its app's group, when coordination is configured (``hivewire.coordination.zookeeper``).

:class:`Membership` announces the instance (host, pid, version, listeners, start time) through an
:class:`~hivewire.coordination.AppMember`, then keeps the partitions it holds and its listeners' lag up to date,
and leaves on shutdown. The runner only records what changed (:meth:`Membership.hold`, :meth:`Membership.lag`);
one thread of its own talks to the coordinator, so an unreachable ZooKeeper never holds up polling, dispatch or
commits: it is said once (and reminded now and then), the announcement is retried, and the data path goes on.

The listeners' switches are followed by watches (:meth:`Membership.paused` reads the last ones seen, kept when
ZooKeeper goes away); :attr:`Membership.switched` is set after each change, for the runner to obey them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping

from hivewire._reachability import Reachability
from hivewire.coordination._interfaces import Coordinator
from hivewire.coordination._member import AppMember, this_instance
from hivewire.errors import CoordinationError
from hivewire.runtime._source import TopicPartition

log = logging.getLogger("hivewire.runtime.membership")


class Membership:
    """``app``'s member for this process, on the coordinator ``connect`` opens (it may raise
    :class:`~hivewire.errors.CoordinationError`; it is then called again every ``retry_every`` seconds)."""

    def __init__(
        self,
        connect: Callable[[], Coordinator],
        app: str,
        listeners: Iterable[str],
        *,
        where: str = "ZooKeeper",
        retry_every: float = 5.0,
    ) -> None:
        self.app = app
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
        #: Whether the coordinator answers (logged once per outage).
        self.reachability = Reachability(
            f"coordination at {where}",
            "check hivewire.coordination.zookeeper and that ZooKeeper runs; the listeners keep running meanwhile, "
            "but `hivewire status` does not show this instance",
            log,
        )

    # -- what the runner tells -------------------------------------------------------------------------------

    def hold(self, partitions: Iterable[TopicPartition]) -> None:
        """The partitions this instance holds now (after an assignment or a revocation)."""
        held = tuple(sorted(f"{topic}:{partition}" for topic, partition in partitions))
        with self._lock:
            if held == self._partitions:
                return
            self._partitions = held
        self._wake.set()

    def lag(self, behind: Mapping[str, int]) -> None:
        """Events each listener is behind, over the partitions held here."""
        lag = dict(behind)
        with self._lock:
            if lag == self._lag:
                return
            self._lag = lag
        self._wake.set()

    def paused(self, listener: str) -> bool:
        """Whether ``listener`` is switched off, as last seen (running while never seen)."""
        member = self.member
        return member is not None and member.paused(listener)

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Join in the background: returns at once, whether the coordinator answers or not."""
        self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        """Leave the group and end the session (waiting up to ``timeout`` seconds; the session's end, at its
        timeout, removes the instance anyway)."""
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
        return member

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
