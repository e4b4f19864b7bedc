"""The in-memory coordination backend: ZooKeeper's behaviour in one process, for tests and single-process use.

An ensemble is the shared state (what a ZooKeeper ensemble holds); each :class:`InMemoryCoordinator` is one
session on it (:meth:`InMemoryCoordinator.connect` opens another on the same ensemble, as a second instance
would). Callbacks run in the thread that made the change, one at a time and in order, like ZooKeeper's single
event thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from hivewire.coordination._callbacks import call_safely
from hivewire.coordination._interfaces import Cancellable, Candidacy, Versioned
from hivewire.coordination._paths import normalize, parent
from hivewire.errors import CoordinationError, VersionConflictError


class _Watch:
    def __init__(self, registry: list[_Watch], lock: threading.RLock, deliver: Callable[[], None]) -> None:
        self._registry = registry
        self._lock = lock
        self.deliver = deliver

    def cancel(self) -> None:
        with self._lock:
            if self in self._registry:
                self._registry.remove(self)


class _MemoryCandidacy:
    def __init__(
        self,
        ensemble: _Ensemble,
        session: InMemoryCoordinator,
        name: str,
        candidate: str,
        on_elected: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        self._ensemble = ensemble
        self.session = session
        self.name = name
        self.candidate = candidate
        self.on_elected = on_elected
        self.on_lost = on_lost
        self.leading = False
        self.cancelled = False

    @property
    def is_leader(self) -> bool:
        return self.leading

    def cancel(self) -> None:
        with self._ensemble.lock:
            self.cancelled = True
            self.session._candidacies.discard(self)
            self._ensemble.withdraw(self)


@dataclass
class _Ensemble:
    lock: threading.RLock = field(default_factory=threading.RLock)
    values: dict[str, Versioned] = field(default_factory=dict)
    groups: dict[str, dict[str, bytes]] = field(default_factory=dict)
    queues: dict[str, list[_MemoryCandidacy]] = field(default_factory=dict)
    key_watches: dict[str, list[_Watch]] = field(default_factory=dict)
    prefix_watches: dict[str, list[_Watch]] = field(default_factory=dict)
    member_watches: dict[str, list[_Watch]] = field(default_factory=dict)

    def changed(self, key: str) -> None:
        for watch in list(self.key_watches.get(key, ())):
            call_safely(watch.deliver, key)
        for watch in list(self.prefix_watches.get(parent(key), ())):
            call_safely(watch.deliver, parent(key))

    def members_changed(self, group: str) -> None:
        for watch in list(self.member_watches.get(group, ())):
            call_safely(watch.deliver, group)

    def stand(self, candidacy: _MemoryCandidacy) -> None:
        queue = self.queues.setdefault(candidacy.name, [])
        queue.append(candidacy)
        if queue[0] is candidacy:
            candidacy.leading = True
            call_safely(candidacy.on_elected, candidacy.name)

    def withdraw(self, candidacy: _MemoryCandidacy) -> None:
        queue = self.queues.get(candidacy.name, [])
        if candidacy not in queue:
            return
        was_leader = queue[0] is candidacy
        queue.remove(candidacy)
        if was_leader:
            candidacy.leading = False
            call_safely(candidacy.on_lost, candidacy.name)
            if queue:
                queue[0].leading = True
                call_safely(queue[0].on_elected, candidacy.name)


class InMemoryCoordinator:
    """A :class:`~hivewire.coordination.Coordinator` held in memory, with ZooKeeper's behaviour (versions start at
    0, members are ephemeral, one leader per election, watches fire with the state after each change).

    ``InMemoryCoordinator()`` starts a new ensemble; :meth:`connect` opens another session on the same one;
    :meth:`expire_session` plays a ZooKeeper session expiry followed by the reconnection.
    """

    def __init__(self, *, _ensemble: _Ensemble | None = None) -> None:
        self._ensemble = _ensemble or _Ensemble()
        self._joined: dict[tuple[str, str], bytes] = {}
        self._candidacies: set[_MemoryCandidacy] = set()
        self._watches: list[_Watch] = []
        self._closed = False

    def connect(self) -> InMemoryCoordinator:
        """Another session on this coordinator's ensemble (another instance of the app, in tests)."""
        return InMemoryCoordinator(_ensemble=self._ensemble)

    def __enter__(self) -> InMemoryCoordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._ensemble.lock:
            self._drop_session()
            self._joined.clear()
            self._candidacies.clear()
            for watch in self._watches:
                watch.cancel()
            self._watches.clear()
            self._closed = True

    def expire_session(self) -> None:
        """What a ZooKeeper session expiry does, then the reconnection: this session's members leave and its
        candidacies lose leadership; then the members join again and the candidates stand again."""
        with self._ensemble.lock:
            self._check_open()
            self._drop_session()
            for (group, member), data in self._joined.items():
                self._ensemble.groups.setdefault(group, {})[member] = data
                self._ensemble.members_changed(group)
            for candidacy in sorted(self._candidacies, key=lambda c: (c.name, c.candidate)):
                self._ensemble.stand(candidacy)

    def _drop_session(self) -> None:
        # Candidacies first: an on_lost callback may still write this session's member data.
        for candidacy in sorted(self._candidacies, key=lambda c: (c.name, c.candidate)):
            self._ensemble.withdraw(candidacy)
        for group, member in self._joined:
            if self._ensemble.groups.get(group, {}).pop(member, None) is not None:
                self._ensemble.members_changed(group)

    def _check_open(self) -> None:
        if self._closed:
            raise CoordinationError("this coordinator is closed; open a new one")

    # -- membership ------------------------------------------------------------------------------------------

    def join(self, group: str, member: str, data: bytes) -> None:
        group, member = normalize(group, "group"), normalize(member, "member")
        with self._ensemble.lock:
            self._check_open()
            self._joined[(group, member)] = data
            self._ensemble.groups.setdefault(group, {})[member] = data
            self._ensemble.members_changed(group)

    def leave(self, group: str, member: str) -> None:
        group, member = normalize(group, "group"), normalize(member, "member")
        with self._ensemble.lock:
            if self._joined.pop((group, member), None) is not None:
                self._ensemble.groups.get(group, {}).pop(member, None)
                self._ensemble.members_changed(group)

    def members(self, group: str) -> dict[str, bytes]:
        group = normalize(group, "group")
        with self._ensemble.lock:
            return dict(self._ensemble.groups.get(group, {}))

    def watch_members(self, group: str, callback: Callable[[Mapping[str, bytes]], None]) -> Cancellable:
        group = normalize(group, "group")
        return self._watch(self._ensemble.member_watches, group, lambda: callback(self.members(group)))

    # -- election --------------------------------------------------------------------------------------------

    def campaign(
        self, name: str, candidate: str, on_elected: Callable[[], None], on_lost: Callable[[], None]
    ) -> Candidacy:
        name = normalize(name, "election")
        with self._ensemble.lock:
            self._check_open()
            candidacy = _MemoryCandidacy(self._ensemble, self, name, candidate, on_elected, on_lost)
            self._candidacies.add(candidacy)
            self._ensemble.stand(candidacy)
            return candidacy

    def leader(self, name: str) -> str | None:
        with self._ensemble.lock:
            queue = self._ensemble.queues.get(normalize(name, "election"))
            return queue[0].candidate if queue else None

    # -- key-value store -------------------------------------------------------------------------------------

    def get(self, key: str) -> Versioned | None:
        with self._ensemble.lock:
            return self._ensemble.values.get(normalize(key))

    def put(self, key: str, value: bytes) -> int:
        key = normalize(key)
        with self._ensemble.lock:
            self._check_open()
            current = self._ensemble.values.get(key)
            return self._write(key, value, 0 if current is None else current.version + 1)

    def create(self, key: str, value: bytes) -> int:
        key = normalize(key)
        with self._ensemble.lock:
            self._check_open()
            if key in self._ensemble.values:
                raise VersionConflictError(key, "already exists")
            return self._write(key, value, 0)

    def compare_and_set(self, key: str, value: bytes, version: int) -> int:
        key = normalize(key)
        with self._ensemble.lock:
            self._check_open()
            current = self._ensemble.values.get(key)
            if current is None:
                raise VersionConflictError(key, "no longer exists")
            if current.version != version:
                raise VersionConflictError(key, f"is at version {current.version}, not {version}")
            return self._write(key, value, version + 1)

    def delete(self, key: str, version: int | None = None) -> None:
        key = normalize(key)
        with self._ensemble.lock:
            self._check_open()
            current = self._ensemble.values.get(key)
            if current is None:
                if version is not None:
                    raise VersionConflictError(key, "no longer exists")
                return
            if version is not None and current.version != version:
                raise VersionConflictError(key, f"is at version {current.version}, not {version}")
            if any(k.startswith(key + "/") for k in self._ensemble.values):
                raise CoordinationError(f"{key}: has keys under it; delete those first")
            del self._ensemble.values[key]
            self._ensemble.changed(key)

    def children(self, prefix: str) -> dict[str, Versioned]:
        prefix = normalize(prefix)
        with self._ensemble.lock:
            return {k: v for k, v in self._ensemble.values.items() if parent(k) == prefix}

    def _write(self, key: str, value: bytes, version: int) -> int:
        # Parents exist as empty values, as put's makepath creates them in ZooKeeper.
        up = parent(key)
        while up and up not in self._ensemble.values:
            self._ensemble.values[up] = Versioned(b"", 0)
            self._ensemble.changed(up)
            up = parent(up)
        self._ensemble.values[key] = Versioned(bytes(value), version)
        self._ensemble.changed(key)
        return version

    # -- watches ---------------------------------------------------------------------------------------------

    def watch_key(self, key: str, callback: Callable[[Versioned | None], None]) -> Cancellable:
        key = normalize(key)
        return self._watch(self._ensemble.key_watches, key, lambda: callback(self.get(key)))

    def watch_prefix(self, prefix: str, callback: Callable[[Mapping[str, Versioned]], None]) -> Cancellable:
        prefix = normalize(prefix)
        return self._watch(self._ensemble.prefix_watches, prefix, lambda: callback(self.children(prefix)))

    def _watch(self, registry: dict[str, list[_Watch]], path: str, deliver: Callable[[], None]) -> Cancellable:
        with self._ensemble.lock:
            self._check_open()
            watches = registry.setdefault(path, [])
            watch = _Watch(watches, self._ensemble.lock, deliver)
            watches.append(watch)
            self._watches.append(watch)
            call_safely(deliver, path)
            return watch
