"""Hive Metastore discovery through ZooKeeper (HIVE-20794), read the way Hive 4's client reads it.

A Hive 4 metastore with ``metastore.service.discovery.mode=zookeeper`` registers an ephemeral sequential
znode ``/<namespace>/<host:port><10-digit sequence>`` whose data is ``host:port`` (UTF-8). Hive's client
lists the children of ``/<namespace>``, reads each child's data and prefixes ``thrift://``. This module does
the same and also copes with what is found in the wild: HiveServer2-style names
(``serverUri=h:p;version=...;sequence=...``) and ``k=v;...`` data, empty data (the address is then taken from
the name), duplicates, and nodes that vanish between the two reads.

Unlike Hive's client, which reads ZooKeeper once when it starts, :class:`ZooKeeperResolver` keeps the list
current with a children watch and re-reads ZooKeeper on demand (:meth:`ZooKeeperResolver.refresh`), which
:class:`~hivewire.metastore.MetastoreClient` calls when every known metastore has failed.

Where and how to connect (quorum, namespace, timeouts, auth, TLS: Hive's keys and defaults) is a
:class:`~hivewire.metastore._zookeeper.DiscoveryConfig`; what each znode advertises is read by
:mod:`hivewire.metastore._registrations`.
"""

from __future__ import annotations

import atexit
import logging
import random
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoAuthError, NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, DiscoveryError
from hivewire.metastore._addresses import parse_uris
from hivewire.metastore._client_options import ConfSource
from hivewire.metastore._client_options import load_conf as load_conf  # discovery's callers use it too
from hivewire.metastore._registrations import _to_uris
from hivewire.metastore._zookeeper import (
    DEFAULT_NAMESPACE,
    DiscoveryConfig,
    DiscoveryOptions,
    _connect,
    _kazoo_client,
    discovery_config,
)

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack


log = logging.getLogger("hivewire.discovery")


# -- parsing of registrations ---------------------------------------------------------------------------


# -- configuration --------------------------------------------------------------------------------------


def discovery_mode(conf: Mapping[str, str]) -> str:
    """``"zookeeper"``, or ``""`` for fixed URIs: ``metastore.service.discovery.mode`` or its ``hive.*`` alias."""
    return load_conf(conf).optional(keys.DISCOVERY_MODE) or ""


# -- reading ZooKeeper ----------------------------------------------------------------------------------


def _namespace_origin(config: DiscoveryConfig) -> str:
    """Where the namespace came from, for messages that ask the user to check it."""
    key = config.namespace_key
    if key is None:
        given = "the default namespace" if config.namespace == DEFAULT_NAMESPACE else "the namespace given"
        return f"{given}, {config.namespace!r}; in Hive's configuration, metastore.zookeeper.namespace"
    text = f"{key}={config.namespace}"
    if key.startswith("hive.zookeeper."):
        text += (
            ", which is also the Hive lock manager's namespace: if the metastores register elsewhere, "
            "set metastore.zookeeper.namespace, which takes precedence"
        )
    return text


def _nothing_registered(config: DiscoveryConfig, detail: str) -> DiscoveryError:
    return DiscoveryError(
        f"No metastore service discovered in ZooKeeper at {config.quorum} under {config.path} ({detail}). "
        "Please ensure that at least one metastore server is online: a Hive 4 metastore with "
        "metastore.service.discovery.mode=zookeeper, or `hivewire register` next to an older one, using the "
        f"same namespace ({_namespace_origin(config)})"
    )


def _read(zk: KazooClient, config: DiscoveryConfig, children: Iterable[str] | None = None) -> list[str]:
    """Registered URIs under the namespace (NoNodeError when it does not exist)."""
    path = config.path
    if children is None:
        children = zk.retry(zk.get_children, path)
    entries: list[tuple[str, bytes | None]] = []
    for child in children:
        try:
            data, _stat = zk.retry(zk.get, f"{path}/{child}")
        except NoNodeError:
            continue  # withdrawn between listing and reading
        entries.append((child, data))
    return _to_uris(entries, path)


def _not_allowed(config: DiscoveryConfig) -> DiscoveryError:
    return DiscoveryError(
        f"ZooKeeper at {config.quorum} does not let this client read {config.path}: give credentials "
        "(auth_data=[('digest', 'user:password')], or hivewire.zookeeper.auth in the configuration)"
    )


def _read_or_raise(zk: KazooClient, config: DiscoveryConfig) -> list[str]:
    try:
        uris = _read(zk, config)
    except NoNodeError:
        raise _nothing_registered(config, f"the znode {config.path} does not exist") from None
    except NoAuthError as e:
        raise _not_allowed(config) from e
    except KazooException as e:
        raise DiscoveryError(
            f"reading {config.path} from ZooKeeper at {config.quorum} failed: {type(e).__name__} {e}"
        ) from e
    if not uris:
        raise _nothing_registered(config, "no registration under it")
    return uris


def discover_metastores(
    quorum: str | DiscoveryConfig,
    namespace: str | None = None,
    *,
    client: KazooClient | None = None,
    **options: Unpack[DiscoveryOptions],
) -> list[str]:
    """The ``thrift://host:port`` URIs of the metastores registered under ``/<namespace>``, in registration
    order, without duplicates.

    ``quorum`` is ``"zk1:2181,zk2:2181"`` or a :class:`DiscoveryConfig`; ``namespace`` defaults to
    ``hive_metastore``; ``options`` are other :class:`DiscoveryConfig` fields (``auth_data``, ``use_ssl``, ...).
    ``client`` is a started kazoo client to use instead of connecting. Raises
    :class:`~hivewire.errors.DiscoveryError` when nothing is registered or ZooKeeper cannot be read.
    """
    config = discovery_config(quorum, namespace, **options)
    if client is not None:
        return _read_or_raise(client, config)
    zk = _kazoo_client(config, long_lived=False)
    _connect(zk, config)
    try:
        return _read_or_raise(zk, config)
    finally:
        zk.stop()
        zk.close()


class ZooKeeperResolver:
    """A live view of the metastores registered in ZooKeeper, for :class:`~hivewire.metastore.MetastoreClient`.

    A children watch on ``/<namespace>`` (re-armed when the namespace is created, deleted or the session
    is lost) re-reads every child's data on each change. :meth:`uris` returns the current list shuffled
    (Hive's default RANDOM selection); :meth:`refresh` re-reads ZooKeeper synchronously. Thread-safe.

    Connects at construction and raises :class:`~hivewire.errors.DiscoveryError` if ZooKeeper cannot be
    reached; an empty namespace is not an error here (see :meth:`require`). Close it with :meth:`close`.
    """

    def __init__(
        self,
        quorum: str | DiscoveryConfig,
        namespace: str | None = None,
        *,
        shuffle: bool = True,
        client: KazooClient | None = None,
        **options: Unpack[DiscoveryOptions],
    ) -> None:
        self.config = discovery_config(quorum, namespace, **options)
        self.shuffle = shuffle
        self._lock = threading.Lock()
        self._uris: list[str] = []
        self._closed = False
        self._generation = 0  # bumped to retire a children watch (returning False from it stops it)
        self._watched_czxid: int | None = None  # the namespace node the current children watch is on
        self._updates = 0  # bumped by every change of _uris, so refresh() never overwrites a newer list
        self._own_client = client is None
        self._zk = client if client is not None else _kazoo_client(self.config, long_lived=True)
        if self._own_client:
            _connect(self._zk, self.config)
        # DataWatch copes with a missing node (it watches for its creation); ChildrenWatch does not, so
        # the data watch (re)creates the children watch whenever the namespace exists.
        try:
            DataWatch(self._zk, self.config.path, self._on_namespace)
        except NoAuthError as e:
            self.close()
            raise _not_allowed(self.config) from e

    # -- watches (run in kazoo's callback thread, where blocking ZooKeeper calls are allowed) -----------
    def _on_namespace(self, data: bytes | None, stat: Any, event: Any = None) -> bool | None:
        # Three parameters: DataWatch retries a two-argument call on *any* TypeError, so accept the event.
        with self._lock:
            if self._closed:
                return False
            if stat is None:  # namespace missing or deleted
                self._generation += 1
                self._watched_czxid = None
                self._uris = []
                self._updates += 1
                return None
            if self._watched_czxid == stat.czxid:
                return None  # same node, only its data changed: the children watch is still armed
            # New (or re-created) namespace node: retire any old children watch and arm a new one.
            self._watched_czxid = stat.czxid
            self._generation += 1
            generation = self._generation
        try:
            ChildrenWatch(self._zk, self.config.path, lambda children: self._on_children(generation, children))
        except KazooException as e:
            log.warning("could not watch %s in ZooKeeper (%s); will retry on the next change", self.config.path, e)
            with self._lock:
                self._watched_czxid = None
        return None

    def _on_children(self, generation: int, children: list[str]) -> bool:
        with self._lock:
            if self._closed or generation != self._generation:
                return False
        try:
            uris = _read(self._zk, self.config, children)
        except KazooException as e:
            log.warning(
                "could not read the registrations under %s (%s); keeping the previous list", self.config.path, e
            )
            return True
        with self._lock:
            if generation == self._generation:
                if uris != self._uris:
                    log.info("metastores registered under %s: %s", self.config.path, ", ".join(uris) or "none")
                self._uris = uris
                self._updates += 1
        return True

    # -- UriResolver ------------------------------------------------------------------------------------
    def uris(self) -> list[str]:
        """The registered URIs, shuffled when ``shuffle`` (re-reads ZooKeeper if none is known)."""
        with self._lock:
            uris = list(self._uris)
        if not uris:
            return self.refresh()
        if self.shuffle:
            random.shuffle(uris)
        return uris

    def refresh(self) -> list[str]:
        """Re-read ZooKeeper now and return the URIs (shuffled when ``shuffle``); [] if it cannot be read."""
        if self._closed:
            return []
        with self._lock:
            updates = self._updates
        try:
            uris = _read(self._zk, self.config)
        except NoNodeError:
            uris = []
        except KazooException as e:
            log.warning("re-reading %s from ZooKeeper at %s failed: %s", self.config.path, self.config.quorum, e)
            return []
        with self._lock:
            if self._updates == updates:
                self._uris = list(uris)
                self._updates += 1
            else:
                # The children watch stored a list while we read. Keep it: a change after the watch's read
                # fires the watch again, while ours, if older, would stay until the next change.
                uris = list(self._uris)
        if self.shuffle:
            random.shuffle(uris)
        return uris

    def require(self) -> list[str]:
        """:meth:`uris`, or :class:`~hivewire.errors.DiscoveryError` with Hive's advice when there are none."""
        uris = self.uris()
        if not uris:
            raise _nothing_registered(self.config, "no registration under it, or the znode does not exist")
        return uris

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop watching, and end the ZooKeeper session if this resolver opened it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._generation += 1
            self._uris = []
        with _shared_lock:
            if _shared.get(self.config) is self:
                del _shared[self.config]
        if self._own_client:
            self._zk.stop()
            self._zk.close()

    def __enter__(self) -> ZooKeeperResolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ZooKeeperResolver({self.config.quorum!r}, {self.config.namespace!r})"


# One resolver (one ZooKeeper session, one watch) per configuration, shared by every client that
# MetastoreClient.from_zookeeper / from_hive_conf makes: those clients cannot close a resolver, and a
# pool of them must not open a session each.
_shared: dict[DiscoveryConfig, ZooKeeperResolver] = {}
_shared_lock = threading.Lock()


def shared_resolver(config: DiscoveryConfig) -> ZooKeeperResolver:
    """The process-wide :class:`ZooKeeperResolver` for ``config`` (created on first use)."""
    with _shared_lock:
        resolver = _shared.get(config)
        if resolver is not None and not resolver.closed:
            return resolver
    created = ZooKeeperResolver(config)  # connects: outside the lock
    with _shared_lock:
        existing = _shared.get(config)
        if existing is not None and not existing.closed:
            winner = existing
        else:
            _shared[config] = winner = created
    if winner is not created:
        created.close()
    else:
        # kazoo stops each client's worker threads at exit (an atexit hook of its own, registered when the
        # client started) and waits for them; a data watch retrying against an unreachable ZooKeeper never
        # returns, so the process would hang at exit. Close the shared sessions first: atexit runs hooks last
        # registered first, hence registered again after every new client.
        atexit.unregister(close_shared_resolvers)
        atexit.register(close_shared_resolvers)
    return winner


def close_shared_resolvers() -> None:
    """Close every shared resolver (their ZooKeeper sessions end)."""
    with _shared_lock:
        resolvers = list(_shared.values())
        _shared.clear()
    for resolver in resolvers:
        resolver.close()


def metastore_uris_from_conf(conf: ConfSource, *, shared: bool = False) -> list[str] | ZooKeeperResolver:
    """What a Hive client would connect to, from a Hive configuration (a mapping or a ``hive-site.xml``).

    With ``metastore.service.discovery.mode`` empty: the ``thrift://`` URIs of ``metastore.thrift.uris``.
    With ``zookeeper``: a :class:`ZooKeeperResolver` (the process-wide one when ``shared``, which the caller
    must not close; otherwise the caller owns it).
    """
    config = load_conf(conf)
    if discovery_mode(config) == "zookeeper":
        discovery = DiscoveryConfig.from_conf(config)
        return shared_resolver(discovery) if shared else ZooKeeperResolver(discovery)
    found = config.find(keys.METASTORE_URIS)
    if found is None:
        raise ConfigError(
            keys.METASTORE_URIS.name,
            "not set: give the metastore URIs (thrift://host:9083), or set "
            "metastore.service.discovery.mode=zookeeper and the ZooKeeper quorum",
        )
    try:
        return parse_uris(found[0])
    except ConfigError as e:
        raise ConfigError(found[1].name, str(e)) from None
