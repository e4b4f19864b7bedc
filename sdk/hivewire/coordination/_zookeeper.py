"""The ZooKeeper coordination backend, on kazoo's recipes: ephemeral nodes for members, ``Lock`` for elections,
``DataWatch`` and ``ChildrenWatch`` for watches.

It connects as discovery does (:class:`~hivewire.metastore.DiscoveryConfig`: quorum with an optional chroot,
digest auth, TLS, Hive's retry settings) and keeps everything under one root znode: ``<root>/kv/<key>``,
``<root>/members/<group>/<member>`` and ``<root>/elections/<name>``.

After a session loss kazoo opens a new session; the members of this coordinator join again, and its
candidates stand again. A leader gives up leadership as soon as the connection is suspended (Curator's
standard policy): it cannot prove it still leads, and a singleton must never run twice.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from kazoo.exceptions import (
    BadVersionError,
    CancelledError,
    KazooException,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
)
from kazoo.protocol.states import KazooState, ZnodeStat
from kazoo.recipe.lock import Lock
from kazoo.recipe.watchers import ChildrenWatch, DataWatch
from kazoo.security import CREATOR_ALL_ACL

from hivewire.coordination._callbacks import call_safely
from hivewire.coordination._interfaces import Cancellable, Candidacy, Versioned
from hivewire.coordination._paths import normalize
from hivewire.errors import CoordinationError, VersionConflictError
from hivewire.metastore._zookeeper import DiscoveryConfig, DiscoveryOptions, _kazoo_client, discovery_config

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

log = logging.getLogger("hivewire.coordination")

#: How often a waiting candidate checks whether it was cancelled or the session came back.
_POLL = 0.5


@contextlib.contextmanager
def _errors(what: str) -> Iterator[None]:
    try:
        yield
    except KazooException as e:
        raise CoordinationError(
            f"{what}: ZooKeeper failed ({type(e).__name__}: {e}); check that ZooKeeper is reachable, then retry"
        ) from e


class _Children:
    """A cache of the nodes one level under ``path`` (ChildrenWatch, and a DataWatch per child) that hands the
    whole snapshot to ``deliver`` after each change."""

    def __init__(self, coordinator: ZooKeeperCoordinator, path: str, deliver: Callable[[dict[str, Versioned]], None]):
        self._zk = coordinator._zk
        self._path = path
        self._deliver = deliver
        self._lock = threading.RLock()
        self._values: dict[str, Versioned] = {}
        self._watched: set[str] = set()
        self._last: dict[str, Versioned] | None = None
        self._stopped = False
        with _errors(f"watching {path}"):
            self._zk.ensure_path(path)
            ChildrenWatch(self._zk, path, self._on_children)

    def cancel(self) -> None:
        with self._lock:
            self._stopped = True

    def _on_children(self, names: list[str]) -> bool | None:
        with self._lock:
            if self._stopped:
                return False
            for name in set(names) - self._watched:
                self._watched.add(name)
                DataWatch(self._zk, f"{self._path}/{name}", self._data_watcher(name))
            self._publish()
        return None

    def _data_watcher(self, name: str) -> Callable[[bytes | None, ZnodeStat | None], bool | None]:
        def on_data(data: bytes | None, stat: ZnodeStat | None) -> bool | None:
            with self._lock:
                if self._stopped:
                    return False
                if stat is None:
                    self._values.pop(name, None)
                    self._watched.discard(name)
                    self._publish()
                    return False  # the node is gone; a new one of this name gets a new watch
                self._values[name] = Versioned(data or b"", stat.version)
                self._publish()
            return None

        return on_data

    def _publish(self) -> None:
        snapshot = dict(self._values)
        if snapshot != self._last:
            self._last = snapshot
            call_safely(lambda: self._deliver(snapshot), self._path)


class _KeyWatch:
    def __init__(self, zk: object, path: str, callback: Callable[[Versioned | None], None]) -> None:
        self._stopped = False
        self._last: Versioned | bool | None = False  # False: nothing delivered yet
        self._callback = callback
        self._path = path
        with _errors(f"watching {path}"):
            DataWatch(zk, path, self._on_data)

    def cancel(self) -> None:
        self._stopped = True

    def _on_data(self, data: bytes | None, stat: ZnodeStat | None) -> bool | None:
        if self._stopped:
            return False
        value = None if stat is None else Versioned(data or b"", stat.version)
        if value != self._last:
            self._last = value
            call_safely(lambda: self._callback(value), self._path)
        return None


class _ZooKeeperCandidacy:
    """A candidate: a thread that takes kazoo's ``Lock`` on the election's node, leads while it holds it and the
    connection is up, and stands again after a loss."""

    def __init__(
        self,
        coordinator: ZooKeeperCoordinator,
        path: str,
        candidate: str,
        on_elected: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        self._coordinator = coordinator
        self._path = path
        self._candidate = candidate
        self._on_elected = on_elected
        self._on_lost = on_lost
        self._leading = False
        self._cancelled = threading.Event()
        self._wake = threading.Event()
        self._lock: Lock | None = None
        self._thread = threading.Thread(target=self._run, name=f"hivewire-election:{path}", daemon=True)
        self._thread.start()

    @property
    def is_leader(self) -> bool:
        return self._leading

    def cancel(self) -> None:
        self._cancelled.set()
        self._wake.set()
        lock = self._lock
        if lock is not None:
            lock.cancel()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=self._coordinator._config.session_timeout)

    def connection_changed(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._cancelled.is_set():
            if not self._coordinator._connected.wait(_POLL):
                continue
            lock = self._lock = Lock(self._coordinator._zk, self._path, self._candidate)
            self._wake.clear()
            try:
                acquired = lock.acquire()
            except CancelledError:
                acquired = False
            except KazooException as e:
                log.info("standing for %s failed (%s); standing again", self._path, e)
                acquired = False
            if acquired:
                # A suspension while waiting for the lock set it; holding the lock now, on a live session, this
                # candidate leads (a suspension from here on sets it again, and the state is read after).
                self._wake.clear()
            if acquired and not self._cancelled.is_set() and self._coordinator._zk.state == KazooState.CONNECTED:
                self._leading = True
                call_safely(self._on_elected, self._path)
                while not self._wake.wait(_POLL):
                    pass
                self._leading = False
                call_safely(self._on_lost, self._path)
            self._release(lock)

    def _release(self, lock: Lock) -> None:
        # Until the node is gone: a node left behind by this session would stand ahead of the next attempt.
        while True:
            try:
                lock.release()
                return
            except KazooException:
                if self._coordinator._closing.is_set():
                    return
                self._coordinator._connected.wait(_POLL)


class ZooKeeperCoordinator:
    """A :class:`~hivewire.coordination.Coordinator` on ZooKeeper.

    ``zookeeper`` is a quorum (``"zk1:2181,zk2:2181"``, optionally with a chroot ``/path``) or a
    :class:`~hivewire.metastore.DiscoveryConfig`; ``options`` are DiscoveryConfig's other fields (``auth_data``,
    ``use_ssl``, ``ca``, ``session_timeout``, ...). Everything is kept under the znode ``/<root>``. With
    credentials (``auth_data``), the nodes it creates are readable and writable only by sessions holding the same
    credentials (ZooKeeper's creator ACL), so that nobody else can pause a listener.
    Connecting fails with :class:`~hivewire.errors.CoordinationError` after ``connection_timeout``.
    """

    def __init__(
        self, zookeeper: str | DiscoveryConfig, root: str = "hivewire", **options: Unpack[DiscoveryOptions]
    ) -> None:
        self._config = discovery_config(zookeeper, **options)
        self._root = "/" + normalize(root, "root")
        self._zk = _kazoo_client(self._config, long_lived=True)
        if self._config.auth_data:
            self._zk.default_acl = list(CREATOR_ALL_ACL)
        self._state_lock = threading.Lock()
        self._joined: dict[str, bytes] = {}
        self._candidacies: set[_ZooKeeperCandidacy] = set()
        self._watches: list[Cancellable] = []
        self._connected = threading.Event()
        self._closing = threading.Event()
        # Sessions this coordinator had: their ephemeral nodes may outlive a reconnection briefly.
        self._sessions: set[int] = set()
        self._zk.add_listener(self._on_state)
        try:
            with warnings.catch_warnings():
                # A missing chroot is a warning to kazoo; it is refused below, with what to do.
                warnings.filterwarnings("ignore", "No chroot path exists", UserWarning)
                self._zk.start(timeout=self._config.connection_timeout)
        except Exception as e:  # kazoo raises its handler's timeout type, or SSL/socket errors
            self._stop()
            raise CoordinationError(
                f"could not connect to ZooKeeper at {self._config.quorum} within "
                f"{self._config.connection_timeout:g} s ({e}); check the quorum (hivewire.coordination.zookeeper), "
                "that ZooKeeper is running, and its TLS settings"
            ) from e
        if self._zk.chroot and not self._zk.exists("/"):
            self._stop()
            raise CoordinationError(
                f"the chroot {self._zk.chroot} of {self._config.quorum} does not exist in ZooKeeper: create it "
                f"(zkCli.sh create {self._zk.chroot}) or leave it out of the quorum"
            )
        if (session := self.session_id) is not None:
            self._sessions.add(session)
        self._connected.set()

    @property
    def config(self) -> DiscoveryConfig:
        """The connection settings."""
        return self._config

    @property
    def session_id(self) -> int | None:
        """The current ZooKeeper session's id (tests use it to expire the session)."""
        client_id = self._zk.client_id
        return None if client_id is None else int(client_id[0])

    def __enter__(self) -> ZooKeeperCoordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Withdraw every candidacy, stop the watches and end the session (its members leave)."""
        self._closing.set()
        with self._state_lock:
            candidacies, self._candidacies = set(self._candidacies), set()
            watches, self._watches = list(self._watches), []
            self._joined.clear()
        for candidacy in candidacies:
            candidacy.cancel()
        for watch in watches:
            watch.cancel()
        self._stop()

    def _stop(self) -> None:
        self._zk.stop()
        self._zk.close()

    def _on_state(self, state: str) -> None:
        # Runs on kazoo's connection thread: never block here.
        if state == KazooState.CONNECTED:
            if (session := self.session_id) is not None:
                self._sessions.add(session)
            self._connected.set()
            self._zk.handler.spawn(self._rejoin)
        else:
            self._connected.clear()
        with self._state_lock:
            candidacies = list(self._candidacies)
        for candidacy in candidacies:
            if state != KazooState.CONNECTED:
                candidacy.connection_changed()

    def _rejoin(self) -> None:
        with self._state_lock:
            joined = dict(self._joined)
        for path, data in joined.items():
            try:
                self._ensure_member(path, data)
            except (KazooException, CoordinationError) as e:
                log.warning("could not join %s again after reconnecting (%s); retrying on the next connection", path, e)

    def _path(self, kind: str, name: str, what: str) -> str:
        return f"{self._root}/{kind}/{normalize(name, what)}"

    # -- membership ------------------------------------------------------------------------------------------

    def join(self, group: str, member: str, data: bytes) -> None:
        path = f"{self._path('members', group, 'group')}/{normalize(member, 'member')}"
        with self._state_lock:
            self._joined[path] = data
        with _errors(f"joining {path}"):
            self._ensure_member(path, data)

    def _ensure_member(self, path: str, data: bytes) -> None:
        try:
            self._zk.create(path, data, ephemeral=True, makepath=True)
            return
        except NodeExistsError:
            pass
        current, stat = self._zk.get(path)
        if stat.ephemeralOwner != self.session_id and stat.ephemeralOwner in self._sessions:
            # Left by this coordinator's expired session, which ZooKeeper has not cleared yet.
            with contextlib.suppress(NoNodeError):
                self._zk.delete(path, version=stat.version)
            self._ensure_member(path, data)
            return
        if stat.ephemeralOwner != self.session_id:
            raise CoordinationError(
                f"{path}: another session has joined as this member; give each instance its own member name"
            )
        if current != data:
            self._zk.set(path, data)

    def leave(self, group: str, member: str) -> None:
        path = f"{self._path('members', group, 'group')}/{normalize(member, 'member')}"
        with self._state_lock:
            joined = self._joined.pop(path, None) is not None
        if joined:
            with _errors(f"leaving {path}"), contextlib.suppress(NoNodeError):
                self._zk.delete(path)

    def members(self, group: str) -> dict[str, bytes]:
        return {name: v.value for name, v in self._read_children(self._path("members", group, "group")).items()}

    def watch_members(self, group: str, callback: Callable[[Mapping[str, bytes]], None]) -> Cancellable:
        path = self._path("members", group, "group")
        return self._keep(_Children(self, path, lambda values: callback({n: v.value for n, v in values.items()})))

    # -- election --------------------------------------------------------------------------------------------

    def campaign(
        self, name: str, candidate: str, on_elected: Callable[[], None], on_lost: Callable[[], None]
    ) -> Candidacy:
        candidacy = _ZooKeeperCandidacy(self, self._path("elections", name, "election"), candidate, on_elected, on_lost)
        with self._state_lock:
            self._candidacies.add(candidacy)
        return _CandidacyHandle(self, candidacy)

    def leader(self, name: str) -> str | None:
        with _errors(f"reading the leader of {name}"):
            contenders = Lock(self._zk, self._path("elections", name, "election")).contenders()
        return contenders[0] if contenders else None

    # -- key-value store -------------------------------------------------------------------------------------

    def get(self, key: str) -> Versioned | None:
        path = self._path("kv", key, "key")
        with _errors(f"reading {key}"):
            try:
                data, stat = self._zk.get(path)
            except NoNodeError:
                return None
        return Versioned(data or b"", stat.version)

    def put(self, key: str, value: bytes) -> int:
        path = self._path("kv", key, "key")
        with _errors(f"writing {key}"):
            while True:
                try:
                    return int(self._zk.set(path, value).version)
                except NoNodeError:
                    pass
                try:
                    self._zk.create(path, value, makepath=True)
                    return 0
                except NodeExistsError:
                    continue  # created meanwhile: write over it

    def create(self, key: str, value: bytes) -> int:
        path = self._path("kv", key, "key")
        with _errors(f"creating {key}"):
            try:
                self._zk.create(path, value, makepath=True)
            except NodeExistsError as e:
                raise VersionConflictError(key, "already exists") from e
        return 0

    def compare_and_set(self, key: str, value: bytes, version: int) -> int:
        path = self._path("kv", key, "key")
        with _errors(f"writing {key}"):
            try:
                return int(self._zk.set(path, value, version=version).version)
            except NoNodeError as e:
                raise VersionConflictError(key, "no longer exists") from e
            except BadVersionError as e:
                raise VersionConflictError(key, f"is no longer at version {version}") from e

    def delete(self, key: str, version: int | None = None) -> None:
        path = self._path("kv", key, "key")
        with _errors(f"deleting {key}"):
            try:
                self._zk.delete(path, version=-1 if version is None else version)
            except NoNodeError as e:
                if version is not None:
                    raise VersionConflictError(key, "no longer exists") from e
            except BadVersionError as e:
                raise VersionConflictError(key, f"is no longer at version {version}") from e
            except NotEmptyError as e:
                raise CoordinationError(f"{key}: has keys under it; delete those first") from e

    def children(self, prefix: str) -> dict[str, Versioned]:
        prefix = normalize(prefix)
        return {f"{prefix}/{n}": v for n, v in self._read_children(self._path("kv", prefix, "key")).items()}

    def _read_children(self, path: str) -> dict[str, Versioned]:
        values: dict[str, Versioned] = {}
        with _errors(f"reading {path}"):
            try:
                names = self._zk.get_children(path)
            except NoNodeError:
                return values
            for name in sorted(names):
                try:
                    data, stat = self._zk.get(f"{path}/{name}")
                except NoNodeError:
                    continue
                values[name] = Versioned(data or b"", stat.version)
        return values

    # -- watches ---------------------------------------------------------------------------------------------

    def watch_key(self, key: str, callback: Callable[[Versioned | None], None]) -> Cancellable:
        return self._keep(_KeyWatch(self._zk, self._path("kv", key, "key"), callback))

    def watch_prefix(self, prefix: str, callback: Callable[[Mapping[str, Versioned]], None]) -> Cancellable:
        prefix = normalize(prefix)
        path = self._path("kv", prefix, "key")
        return self._keep(
            _Children(self, path, lambda values: callback({f"{prefix}/{n}": v for n, v in values.items()}))
        )

    def _keep(self, watch: Cancellable) -> Cancellable:
        with self._state_lock:
            self._watches.append(watch)
        return watch


class _CandidacyHandle:
    def __init__(self, coordinator: ZooKeeperCoordinator, candidacy: _ZooKeeperCandidacy) -> None:
        self._coordinator = coordinator
        self._candidacy = candidacy

    @property
    def is_leader(self) -> bool:
        return self._candidacy.is_leader

    def cancel(self) -> None:
        with self._coordinator._state_lock:
            self._coordinator._candidacies.discard(self._candidacy)
        self._candidacy.cancel()
