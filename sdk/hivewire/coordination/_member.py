"""One instance's side of its app's coordination: it announces itself, follows the switches and sidelines, and
stands for the singleton listeners.

What the instance reads on its hot path (:meth:`AppMember.paused`, :meth:`AppMember.sidelines`) is a snapshot
kept up to date by watches, so reading it costs a dictionary lookup and never a round trip to ZooKeeper; when
ZooKeeper is unreachable the last snapshot stays in force (coordination loss must not stop the data path).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping

import msgspec

from hivewire._version import __version__
from hivewire.coordination._interfaces import Candidacy, Coordinator, Versioned
from hivewire.coordination._state import AppState, Instance, Sideline, Switch, decode
from hivewire.errors import CoordinationError

log = logging.getLogger("hivewire.coordination")


def member_name() -> str:
    """A member name unique to this process: ``<host>-<pid>-<random>``."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def this_instance(listeners: tuple[str, ...] = ()) -> Instance:
    """This process as an :class:`Instance`: host, pid, hivewire's version, the time now."""
    return Instance(
        host=socket.gethostname(), pid=os.getpid(), version=__version__, started_at=time.time(), listeners=listeners
    )


class AppMember:
    """This instance of ``app`` in ``coordinator``.

    :meth:`start` joins the app's instances and starts following its switches and sidelines; ``on_change``
    (optional) is called after each change of them, on the backend's thread. :meth:`close` leaves.
    """

    def __init__(
        self,
        coordinator: Coordinator,
        app: str,
        instance: Instance,
        *,
        member: str | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.state = AppState(coordinator, app)
        self.member = member or member_name()
        self._instance = instance
        self._on_change = on_change
        self._lock = threading.Lock()
        self._switches: Mapping[str, Switch] = {}
        self._sidelines: Mapping[str, tuple[Sideline, ...]] = {}
        self._watches: list[Callable[[], None]] = []
        self._candidacies: dict[str, Candidacy] = {}

    @property
    def instance(self) -> Instance:
        """What this instance announces now."""
        return self._instance

    def start(self) -> None:
        coordinator = self.state.coordinator
        self.state.join(self.member, self._instance)
        self._watches.append(coordinator.watch_prefix(f"{self.state.prefix}/listeners", self._on_switches).cancel)
        self._watches.append(coordinator.watch_prefix(f"{self.state.prefix}/sidelines", self._on_sidelines).cancel)

    def close(self) -> None:
        for cancel in self._watches:
            cancel()
        self._watches.clear()
        for candidacy in list(self._candidacies.values()):
            candidacy.cancel()
        self._candidacies.clear()
        try:
            self.state.leave(self.member)
        except CoordinationError as e:  # the session's end removes it anyway
            log.info("could not leave %s cleanly: %s", self.state.instances_group, e)

    # -- what this instance announces ------------------------------------------------------------------------

    def announce(
        self,
        *,
        listeners: tuple[str, ...] | None = None,
        partitions: tuple[str, ...] | None = None,
        lag: Mapping[str, int] | None = None,
    ) -> None:
        """Update what this instance announces (the listeners it runs, the partitions it holds, its lag)."""
        with self._lock:
            changes: dict[str, object] = {}
            if listeners is not None:
                changes["listeners"] = tuple(listeners)
            if partitions is not None:
                changes["partitions"] = tuple(partitions)
            if lag is not None:
                changes["lag"] = dict(lag)
            self._instance = msgspec.structs.replace(self._instance, **changes)
            instance = self._instance
        self.state.join(self.member, instance)

    # -- switches and sidelines, as last seen ----------------------------------------------------------------

    def paused(self, listener: str) -> bool:
        """Whether ``listener`` is switched off (as last seen)."""
        switch = self._switches.get(listener)
        return switch is not None and switch.state == "paused"

    def sidelines(self, listener: str) -> tuple[Sideline, ...]:
        """``listener``'s sidelines that are not finished (as last seen), oldest first."""
        return self._sidelines.get(listener, ())

    def _on_switches(self, values: Mapping[str, Versioned]) -> None:
        switches: dict[str, Switch] = {}
        for key, stored in values.items():
            if not stored.value:
                continue
            try:
                switches[key.rpartition("/")[2]] = decode(Switch, stored.value, key)
            except CoordinationError as e:  # a hand-edited value: keep following the others
                log.error("ignoring a switch: %s", e)
        self._switches = switches
        self._changed()

    def _on_sidelines(self, values: Mapping[str, Versioned]) -> None:
        by_listener: dict[str, list[Sideline]] = {}
        for key, stored in values.items():
            if not stored.value:
                continue
            try:
                sideline = decode(Sideline, stored.value, key)
            except CoordinationError as e:
                log.error("ignoring a sideline: %s", e)
                continue
            if not sideline.finished:
                by_listener.setdefault(sideline.listener, []).append(sideline)
        self._sidelines = {
            name: tuple(sorted(found, key=lambda s: s.created_at)) for name, found in by_listener.items()
        }
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    # -- singleton listeners ---------------------------------------------------------------------------------

    def watch_instances(self, callback: Callable[[int], None]) -> None:
        """Call ``callback`` with the number of live instances of the app now, and after each change (until
        :meth:`close`)."""
        group = self.state.instances_group
        self._watches.append(self.state.coordinator.watch_members(group, lambda found: callback(len(found))).cancel)

    def stand_for(self, listener: str, on_elected: Callable[[], None], on_lost: Callable[[], None]) -> Candidacy:
        """Stand for running the singleton ``listener``; the callbacks say when this instance gains and loses it
        (and what it announces follows: ``leading``)."""

        # The callbacks first: announcing talks to ZooKeeper, which waits while the connection is down, and a
        # lost leadership must stop the listener at once.
        def elected() -> None:
            on_elected()
            self._lead(listener, True)

        def lost() -> None:
            on_lost()
            self._lead(listener, False)

        candidacy = self.state.coordinator.campaign(
            f"{self.state.prefix}/singletons/{listener}", self.member, elected, lost
        )
        self._candidacies[listener] = candidacy
        return candidacy

    def _lead(self, listener: str, leading: bool) -> None:
        with self._lock:
            current = set(self._instance.leading)
            current = current | {listener} if leading else current - {listener}
            self._instance = msgspec.structs.replace(self._instance, leading=tuple(sorted(current)))
            instance = self._instance
        try:
            self.state.join(self.member, instance)
        except CoordinationError as e:  # announced again on the next change, or after reconnecting
            log.info("could not announce leadership of %s: %s", listener, e)
