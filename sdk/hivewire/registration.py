"""The ``register`` sidecar: puts an existing metastore into ZooKeeper the way Hive 4 registers itself.

Hive 2.x and 3.x metastores cannot register themselves (HIVE-20794 is Hive 4 only). :class:`Registration`
runs next to such a metastore and keeps an ephemeral sequential znode ``/<namespace>/<host:port><sequence>``
with data ``host:port`` while the metastore answers, exactly as Hive 4 would, so Hive 4 clients, Spark and
:func:`hivewire.discovery.discover_metastores` find it::

    reg = Registration("hms1.example.com:9083", zookeeper="zk1:2181,zk2:2181")
    reg.start()          # in a background thread; or reg.run(stop_event) to block
    ...
    reg.stop()           # withdraws the node

Every ``interval`` seconds it health-checks the metastore (fb303 ``getStatus()`` must be ALIVE and
``get_all_databases()`` must answer). A failed check withdraws the node at once; a passing one registers it
again. After a ZooKeeper session loss (the server expired the session, so the ephemeral node is gone) the node
is recreated as soon as the client reconnects.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import KazooState
from kazoo.security import ACL, OPEN_ACL_UNSAFE, Id, Permissions, make_digest_acl_credential

from hivewire.discovery import DiscoveryConfig, _config, _kazoo_client
from hivewire.errors import ConfigError
from hivewire.metastore import MetastoreClient, parse_uri
from hivewire_thrift.fb303.ttypes import fb_status

__all__ = ["Registration", "RegistrationEvent", "parse_acl"]

log = logging.getLogger(__name__)

_PERMS = {"r": Permissions.READ, "w": Permissions.WRITE, "c": Permissions.CREATE, "d": Permissions.DELETE,
          "a": Permissions.ADMIN}


def parse_acl(entries: str | Sequence[str] | None) -> tuple[list[Any], list[tuple[str, str]]]:
    """``scheme:id:perms`` entries -> (kazoo ACLs, credentials the sidecar must authenticate with).

    ``world:anyone:r``, ``digest:user:password:cdrwa`` (plain password: hashed here, and the sidecar
    authenticates as that user), ``ip:10.0.0.0/8:r``, ``sasl:principal:cdrwa``, ``auth::cdrwa``. Several
    entries may be given as a list or comma-separated. None or empty: open, like Hive (world:anyone:cdrwa).
    """
    if entries is None:
        return list(OPEN_ACL_UNSAFE), []
    items = entries.split(",") if isinstance(entries, str) else list(entries)
    acls: list[Any] = []
    auth: list[tuple[str, str]] = []
    for raw in (i.strip() for i in items):
        if not raw:
            continue
        scheme, sep, rest = raw.partition(":")
        identity, sep2, perms = rest.rpartition(":")
        if not sep or not sep2 or not scheme or not perms:
            raise ConfigError("acl", f"{raw!r} is not 'scheme:id:perms' such as world:anyone:r or "
                                     "digest:user:password:cdrwa")
        if any(p not in _PERMS for p in perms.lower()):
            raise ConfigError("acl", f"{raw!r}: permissions are letters of 'cdrwa', not {perms!r}")
        mask = 0
        for p in set(perms.lower()):
            mask |= _PERMS[p]
        if scheme == "digest":
            user, sep3, password = identity.partition(":")
            if not sep3 or not user:
                raise ConfigError("acl", f"{raw!r}: a digest entry is digest:user:password:perms")
            auth.append(("digest", f"{user}:{password}"))
            identity = make_digest_acl_credential(user, password)
        elif scheme == "world" and identity != "anyone":
            raise ConfigError("acl", f"{raw!r}: the world scheme's only id is 'anyone'")
        acls.append(ACL(mask, Id(scheme, identity)))
    if not acls:
        return list(OPEN_ACL_UNSAFE), []
    _check_not_locked_out(acls, auth)
    return acls, auth


def _check_not_locked_out(acls: list[Any], auth: list[tuple[str, str]]) -> None:
    """Creating and deleting our node needs CREATE and DELETE on the namespace, which gets this ACL."""
    needed = Permissions.CREATE | Permissions.DELETE
    ours = {make_digest_acl_credential(*credential.split(":", 1)) for _, credential in auth}
    for acl in acls:
        if acl.id.scheme not in ("world", "digest"):
            return  # ip/sasl/auth/x509: cannot tell from here who we are; trust the operator
        if acl.perms & needed == needed and (acl.id.scheme == "world" or acl.id.id in ours):
            return
    raise ConfigError("acl", "no entry lets the sidecar itself create and delete its node: add one such as "
                             "digest:user:password:cdrwa (it authenticates as that user)")


@dataclass(frozen=True)
class RegistrationEvent:
    """A change the sidecar made: at health check number ``check``, ``action`` on znode ``path``."""

    check: int
    action: Literal["registered", "withdrawn", "recreated"]
    path: str
    reason: str = ""


class Registration:
    """Keeps one metastore registered in ZooKeeper while it is healthy (see the module docstring).

    ``metastore`` is ``host:port`` (or ``thrift://host:port``): what is written to ZooKeeper, so it must be
    an address clients can reach. ``zookeeper`` is the quorum or a :class:`~hivewire.discovery.DiscoveryConfig`
    (``zk_options`` are its other fields, e.g. ``auth_data``, ``session_timeout``). ``acl`` as in
    :func:`parse_acl`. ``check_timeout`` bounds each health check (default ``max(interval, 3)`` seconds);
    ``client_options`` go to the :class:`~hivewire.metastore.MetastoreClient` used for checks.

    Observability: :attr:`checks` counts health checks, :attr:`history` lists the changes made,
    :attr:`node` is the current znode path (None when withdrawn).
    """

    def __init__(self, metastore: str, zookeeper: str | DiscoveryConfig, namespace: str | None = None, *,
                 acl: str | Sequence[str] | None = None, interval: float = 5.0,
                 check_timeout: float | None = None, client_options: Mapping[str, Any] | None = None,
                 **zk_options: Any) -> None:
        host, port = parse_uri(metastore)
        self.address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.config = _config(zookeeper, namespace, zk_options)
        if not interval > 0:
            raise ConfigError("interval", f"{interval!r} must be more than zero seconds")
        self.interval = interval
        self.check_timeout = check_timeout if check_timeout is not None else max(interval, 3.0)
        self.acl, acl_auth = parse_acl(acl)
        self.checks = 0
        self.healthy: bool | None = None
        self.history: list[RegistrationEvent] = []
        self.node: str | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._want_node = False  # True once registered, until we withdraw on purpose
        self._last_reason = ""
        self._client = MetastoreClient(f"thrift://{self.address}", timeout=self.check_timeout,
                                       connect_timeout=self.check_timeout, **dict(client_options or {}))
        self._zk = _kazoo_client(self.config, long_lived=True, extra_auth=acl_auth)
        self._zk.add_listener(self._on_state)

    # -- public -----------------------------------------------------------------------------------------
    @property
    def prefix(self) -> str:
        """The znode path before ZooKeeper's sequence: ``/<namespace>/<host:port>``."""
        return f"{self.config.path}/{self.address}"

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """The ZooKeeper session (id, password), or None when not connected."""
        cid = self._zk.client_id
        return (int(cid[0]), bytes(cid[1])) if cid else None

    def run(self, stop_event: threading.Event | None = None) -> None:
        """Register, health-check and re-register until ``stop_event`` is set; then withdraw the node."""
        stop = stop_event if stop_event is not None else self._stop
        self._zk.start_async()  # keeps trying in the background: ZooKeeper may come up after us
        log.info("registering metastore %s in ZooKeeper %s under %s every %.3g s", self.address,
                 self.config.quorum, self.config.path, self.interval)
        next_check = time.monotonic()
        try:
            while not stop.is_set() and not self._stop.is_set():
                now = time.monotonic()
                if now >= next_check:
                    healthy, reason = self._check()
                    with self._lock:
                        self.checks += 1
                        self.healthy = healthy
                        self._last_reason = reason
                    # Fixed rate, but never a burst of catch-up checks after a slow one.
                    next_check = max(next_check + self.interval, time.monotonic())
                    self._reconcile()
                elif self._wake.is_set():
                    self._wake.clear()
                    self._reconcile()
                # Short slices so an external stop_event (set from a signal handler) is seen promptly.
                self._wake.wait(timeout=max(0.0, min(0.25, next_check - time.monotonic())))
        finally:
            self._shutdown()

    def start(self) -> Registration:
        """Run in a daemon thread. Stop with :meth:`stop`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name=f"hivewire-register-{self.address}",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop checking, withdraw the node and end the ZooKeeper session."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> Registration:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- health ---------------------------------------------------------------------------------------
    def _check(self) -> tuple[bool, str]:
        try:
            status = self._client.getStatus()
            if status != fb_status.ALIVE:
                name = fb_status._VALUES_TO_NAMES.get(status, str(status))
                return False, f"getStatus() is {name}, not ALIVE"
            self._client.get_all_databases()
            return True, "ok"
        except Exception as e:  # any failure means "not serving"; the sidecar must keep running
            self._client.close()
            return False, str(e).splitlines()[0] if str(e) else type(e).__name__

    # -- ZooKeeper ------------------------------------------------------------------------------------
    def _on_state(self, state: str) -> None:
        # Runs in kazoo's connection thread: no ZooKeeper calls here (they would deadlock); wake the loop.
        if state == KazooState.LOST:
            log.warning("ZooKeeper session lost: %s's node is gone; it is recreated on reconnect", self.address)
        elif state == KazooState.SUSPENDED:
            log.info("ZooKeeper connection suspended; reconnecting")
        self._wake.set()

    def _reconcile(self) -> None:
        """Make ZooKeeper match the last health check. Errors are logged; the next round tries again."""
        if self._zk.state != KazooState.CONNECTED:
            return
        with self._lock:
            healthy, reason, check = self.healthy, self._last_reason, self.checks
        try:
            if healthy:
                self._ensure_registered(check)
            elif healthy is False:
                self._withdraw(check, reason)
        except KazooException as e:
            log.warning("ZooKeeper update for %s failed (%s: %s); retrying", self.address, type(e).__name__, e)
        except Exception:  # a sidecar must outlive surprises; the next round starts from ZooKeeper's state
            log.exception("unexpected error updating %s's registration; retrying", self.address)

    def _own_nodes(self) -> list[str]:
        """Our session's nodes for this address (a create whose reply was lost still made one)."""
        session = self._zk.client_id[0] if self._zk.client_id else None
        name = self.address
        found = []
        for child in self._zk.get_children(self.config.path):
            suffix = child[len(name):]
            if child.startswith(name) and len(suffix) == 10 and suffix.isdigit():
                path = f"{self.config.path}/{child}"
                try:
                    stat = self._zk.exists(path)
                except NoNodeError:
                    continue
                if stat is not None and stat.ephemeralOwner == session:
                    found.append(path)
        return sorted(found)

    def _ensure_registered(self, check: int) -> None:
        session = self._zk.client_id[0] if self._zk.client_id else None
        if self.node is not None:
            stat = self._zk.exists(self.node)
            if stat is not None and stat.ephemeralOwner == session:
                return
        # Hive creates the namespace as a persistent node on first registration; so do we (with our ACL).
        self._zk.ensure_path(self.config.path, acl=self.acl)
        own = self._own_nodes()
        if own:
            path = own[0]
            for extra in own[1:]:
                self._delete(extra)
        else:
            path = self._zk.create(self.prefix, self.address.encode("utf-8"), acl=self.acl, ephemeral=True,
                                   sequence=True)
        action: Literal["registered", "recreated"] = "recreated" if self._want_node else "registered"
        self.node, self._want_node = path, True
        self.history.append(RegistrationEvent(check, action, path))
        log.info("%s metastore %s as %s", action, self.address, path)

    def _withdraw(self, check: int, reason: str) -> None:
        path = self.node
        if path is None and not self._want_node:
            return
        if path is not None:
            self._delete(path)
        for extra in self._own_nodes() if self._zk.exists(self.config.path) else []:
            self._delete(extra)
        self.node, self._want_node = None, False
        self.history.append(RegistrationEvent(check, "withdrawn", path or self.prefix, reason))
        log.warning("withdrew metastore %s (%s): %s", self.address, path, reason)

    def _delete(self, path: str) -> None:
        try:
            self._zk.delete(path)
        except NoNodeError:
            pass

    def _shutdown(self) -> None:
        try:
            if self.node is not None and self._zk.state == KazooState.CONNECTED:
                self._delete(self.node)
                log.info("withdrew metastore %s (%s): stopping", self.address, self.node)
        except KazooException as e:
            log.warning("could not delete %s on stop (%s); it goes when the session ends", self.node, e)
        finally:
            self.node = None
            self._zk.remove_listener(self._on_state)
            self._zk.stop()
            self._zk.close()
            self._client.close()
