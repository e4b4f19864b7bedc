"""The ``register`` sidecar: puts an existing metastore into ZooKeeper the way Hive 4 registers itself.

Hive 2.x and 3.x metastores cannot register themselves (HIVE-20794 is Hive 4 only). :class:`Registration`
runs next to such a metastore and keeps an ephemeral sequential znode ``/<namespace>/<host:port><sequence>``
with data ``host:port`` while the metastore answers, exactly as Hive 4 would, so Hive 4 clients, Spark and
:func:`hivewire.metastore.discover_metastores` find it::

    reg = Registration("hms1.example.com:9083", zookeeper="zk1:2181,zk2:2181")
    reg.start()          # in a background thread; or reg.run(stop_event) to block
    ...
    reg.stop()           # withdraws the node

Every ``interval`` seconds it health-checks the metastore (fb303 ``getStatus()`` must be ALIVE and
``get_all_databases()`` must answer). A failed check withdraws the node at once; a passing one registers it
again. After a ZooKeeper session loss (the server expired the session, so the ephemeral node is gone) the node
is recreated as soon as the client reconnects.

One check, connect and both calls together, is bounded by ``check_timeout`` (half the interval unless given,
and always less than it) and is never retried within the check. So checks keep their fixed rate whatever the
metastore does, and a metastore that hangs (still accepting TCP connections, never answering) is withdrawn
by the first or second check after it hangs: within two intervals.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import KazooState

from hivewire._reachability import Reachability
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError
from hivewire.metastore._acl import parse_acl
from hivewire.metastore._addresses import format_address, parse_uri
from hivewire.metastore._client_options import ClientOptions, ProtocolName, Transport
from hivewire.metastore._health_probe import _HealthProbe
from hivewire.metastore._sasl import SaslAuth
from hivewire.metastore._zookeeper import DiscoveryConfig, DiscoveryOptions, _kazoo_client, discovery_config

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

log = logging.getLogger("hivewire.registration")

#: How many registration changes :attr:`Registration.history` keeps.
HISTORY_SIZE = 256


@dataclass(frozen=True)
class RegistrationSettings:
    """What the ``register`` sidecar needs (docs/configuration.md, "Register sidecar"). Times are in seconds;
    ``check_timeout`` None is half the interval; ``transport`` and ``protocol`` are the metastore's."""

    metastore: str
    zookeeper: DiscoveryConfig
    acl: tuple[str, ...] = field(repr=False)  # digest entries hold passwords
    interval: float
    check_timeout: float | None
    transport: Transport
    protocol: ProtocolName
    #: SASL towards the metastore, as for :class:`~hivewire.metastore.MetastoreClient` (None: none).
    sasl: SaslAuth | None = None

    @classmethod
    def from_config(cls, config: Config) -> RegistrationSettings:
        """Validate and read ``hivewire.register.*`` and Hive's transport and protocol keys; raises
        :class:`~hivewire.errors.ConfigError` naming the key."""
        config.check_keys()
        zookeeper = DiscoveryConfig.from_parts(
            config.optional(keys.REGISTER_ZOOKEEPER),
            config.optional(keys.REGISTER_NAMESPACE),
            config.optional(keys.REGISTER_HIVE_SITE),
            config,
        )
        if zookeeper is None:
            raise ConfigError(
                keys.REGISTER_ZOOKEEPER.name,
                f"not set: give the ZooKeeper quorum, or a hive-site.xml in {keys.REGISTER_HIVE_SITE.name}",
            )
        acl = config.optional(keys.REGISTER_ACL) or ()
        parse_acl(acl, config.provenance(keys.REGISTER_ACL).name)  # checked now, before anything starts
        options = ClientOptions.from_config(config)
        return cls(
            metastore=config.read(keys.REGISTER_METASTORE),
            zookeeper=zookeeper,
            acl=acl,
            interval=config.read(keys.REGISTER_INTERVAL),
            check_timeout=config.optional(keys.REGISTER_CHECK_TIMEOUT),
            transport=options.transport or "buffered",
            protocol=options.protocol or "binary",
            sasl=options.sasl,
        )


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
    an address clients can reach. ``zookeeper`` is the quorum or a :class:`~hivewire.metastore.DiscoveryConfig`
    (``zk_options`` are its other fields, e.g. ``auth_data``, ``session_timeout``). ``acl`` as in
    :func:`parse_acl`. ``check_timeout`` bounds a whole health check, connecting included (default: half of
    ``interval``; it must be less than ``interval``). ``client_options`` may set the metastore's
    ``transport``, ``protocol``, ``ugi`` and ``sasl``, as for :class:`~hivewire.metastore.MetastoreClient`.
    ``hint`` says what to check when the metastore does not answer (the default names ``register``'s flag).

    Observability: :attr:`checks` counts health checks, :attr:`overruns` those that did not finish (with the
    ZooKeeper update they caused) within their interval, :attr:`history` lists the last
    :data:`HISTORY_SIZE` changes made (a flapping metastore must not grow it for ever), :attr:`node`
    is the current znode path (None when withdrawn). While :attr:`overruns` stays the same, the checks run
    one per interval, so "withdrawn by the second check after the metastore hung" means "within two
    intervals".
    """

    def __init__(
        self,
        metastore: str,
        zookeeper: str | DiscoveryConfig,
        namespace: str | None = None,
        *,
        acl: str | Sequence[str] | None = None,
        interval: float = 5.0,
        check_timeout: float | None = None,
        client_options: Mapping[str, object] | None = None,
        hint: str = "check that it runs and listens on that address (--metastore, hivewire.register.metastore)",
        **zk_options: Unpack[DiscoveryOptions],
    ) -> None:
        host, port = parse_uri(metastore)
        self.address = format_address(host, port)
        self.config = discovery_config(zookeeper, namespace, **zk_options)
        if not interval > 0:
            raise ConfigError("interval", f"{interval!r} must be more than zero seconds")
        self.interval = interval
        if check_timeout is None:
            check_timeout = interval / 2
        elif not 0 < check_timeout < interval:
            raise ConfigError(
                "check_timeout",
                f"{check_timeout!r} must be more than zero and less than the interval "
                f"({interval:g} s), so that every check ends before the next is due "
                "and a hung metastore is withdrawn within two intervals: lower it, "
                "raise the interval, or leave it unset (half the interval)",
            )
        self.check_timeout = check_timeout
        self.acl, acl_auth = parse_acl(acl)
        self.checks = 0
        self.overruns = 0
        self.healthy: bool | None = None
        self._history: deque[RegistrationEvent] = deque(maxlen=HISTORY_SIZE)
        self.node: str | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._want_node = False  # True once registered, until we withdraw on purpose
        self._last_reason = ""
        self._probe = _HealthProbe(self.address, client_options or {})
        # One line when the metastore stops answering and one when it is back, not one per check.
        self.metastore = Reachability(
            f"metastore {self.address}",
            f"{hint}; its node stays withdrawn meanwhile",
            log,
        )
        self._zk = _kazoo_client(self.config, long_lived=True, extra_auth=acl_auth)
        self._zk.add_listener(self._on_state)

    @classmethod
    def from_settings(cls, settings: RegistrationSettings) -> Registration:
        """A sidecar configured by ``settings`` (see :meth:`RegistrationSettings.from_config`)."""
        return cls(
            settings.metastore,
            settings.zookeeper,
            acl=list(settings.acl) or None,
            interval=settings.interval,
            check_timeout=settings.check_timeout,
            client_options={
                "transport": settings.transport,
                "protocol": settings.protocol,
                **({"sasl": settings.sasl} if settings.sasl is not None else {}),
            },
        )

    @classmethod
    def from_config(cls, config: Config) -> Registration:
        """A sidecar configured by ``hivewire.register.*`` and Hive's transport and protocol keys."""
        return cls.from_settings(RegistrationSettings.from_config(config))

    # -- public -----------------------------------------------------------------------------------------
    @property
    def history(self) -> list[RegistrationEvent]:
        """The last :data:`HISTORY_SIZE` changes made, oldest first (a copy: safe while the sidecar runs)."""
        return list(self._history)

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
        log.info(
            "registering metastore %s in ZooKeeper %s under %s every %.3g s",
            self.address,
            self.config.quorum,
            self.config.path,
            self.interval,
        )
        next_check = time.monotonic()
        try:
            while not stop.is_set() and not self._stop.is_set():
                now = time.monotonic()
                if now >= next_check:
                    healthy, reason = self._check()
                    if healthy:
                        self.metastore.up()
                    else:
                        self.metastore.down(reason)
                    with self._lock:
                        self.checks += 1
                        self.healthy = healthy
                        self._last_reason = reason
                    self._reconcile()
                    next_check += self.interval
                    late = time.monotonic() - next_check
                    if late > 0:
                        # Only a slow ZooKeeper (or a starved process) gets here, since the check itself is
                        # bounded: count it, so that callers can tell the rate slipped, and never burst to
                        # catch up.
                        with self._lock:
                            self.overruns += 1
                        log.warning(
                            "health check %d of %s and its ZooKeeper update took %.3g s more than the "
                            "interval (%.3g s); checking again now",
                            self.checks,
                            self.address,
                            late,
                            self.interval,
                        )
                        next_check = time.monotonic()
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
            self._thread = threading.Thread(target=self.run, name=f"hivewire-register-{self.address}", daemon=True)
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
        return self._probe.check(self.check_timeout)

    # -- ZooKeeper ------------------------------------------------------------------------------------
    def _on_state(self, state: str) -> None:
        # Runs in kazoo's connection thread: no ZooKeeper calls here (they would deadlock); wake the loop.
        if state == KazooState.LOST:
            log.warning("ZooKeeper session lost: %s's node is gone; it is recreated on reconnect", self.address)
        elif state == KazooState.SUSPENDED:
            log.debug("ZooKeeper connection suspended; reconnecting")  # KazooLog says it once per outage
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
            suffix = child[len(name) :]
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
            path = self._zk.create(
                self.prefix, self.address.encode("utf-8"), acl=self.acl, ephemeral=True, sequence=True
            )
        action: Literal["registered", "recreated"] = "recreated" if self._want_node else "registered"
        self.node, self._want_node = path, True
        self._history.append(RegistrationEvent(check, action, path))
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
        self._history.append(RegistrationEvent(check, "withdrawn", path or self.prefix, reason))
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
            self._probe.close()
