"""The shim server: accepts client connections, relays each on its own thread, publishes change events.

::

    shim = Shim("thrift://hms:9083", port=9084, sinks=[KafkaSink("kafka:9092", "apiary", "/var/spool/hw")])
    shim.start()          # listening; clients use thrift://<this host>:9084
    ...
    shim.stop()           # finishes calls in progress, delivers what it can, withdraws from ZooKeeper

A thread per client connection, as Hive's ``TThreadPoolServer`` does: calls are blocking request/reply
exchanges, and the threads spend their time waiting on sockets (where Python releases the GIL).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import errno
import logging
import os
import select
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from hivewire._ratelimit import RateLimit
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._key import Key
from hivewire.errors import ConfigError
from hivewire.metastore import SaslAuth, UriResolver, format_address
from hivewire_shim.budget import Budget
from hivewire_shim.capture import Capture, EventOptions
from hivewire_shim.connection import Connection
from hivewire_shim.health import Health, HealthEndpoint
from hivewire_shim.intents import Intents
from hivewire_shim.lookup import DEFAULT_READ_TIMEOUT, Lookup
from hivewire_shim.sinks import Sink, fan_out
from hivewire_shim.spool import FsyncPolicy
from hivewire_shim.tls import client_context, server_context
from hivewire_shim.upstream import Upstream, discovery_of
from hivewire_shim.wire import DEFAULT_MAX_MESSAGE_BYTES
from hivewire_thrift.hive_metastore import ThriftHiveMetastore

if TYPE_CHECKING:
    from hivewire.metastore._discovery import ZooKeeperResolver
    from hivewire.metastore._registration import Registration
    from hivewire.metastore._zookeeper import DiscoveryConfig

__all__ = ["DEFAULT_HIVE_VERSION", "UNKNOWN_METHOD", "PublishSettings", "Shim", "ShimSettings"]

log = logging.getLogger(__name__)

#: The ``hive.version`` events carry unless told otherwise: the metastore in pyspark's jars. fb303
#: ``getVersion`` cannot tell (Hive 2.3 answers "3.0"), so the shim does not guess; see ``--hive-version``.
DEFAULT_HIVE_VERSION = "2.3.10"

#: The :attr:`Shim.calls` bucket of method names neither our IDL nor the upstream knows (a client's junk
#: must not grow the counter without bound).
UNKNOWN_METHOD = "(unknown)"
_IDL_METHODS = frozenset(name for name in dir(ThriftHiveMetastore.Iface) if not name.startswith("_"))


class Shim:
    """A Hive Metastore Thrift front for ``upstream`` (URIs or a :class:`~hivewire.metastore.UriResolver`).

    ``host``/``port`` to listen on (port 0: a free one, see :attr:`port`); ``framed``: the upstream uses
    the framed transport (clients may use either). ``sinks`` receive the events (closed by :meth:`stop`).
    ``hive_version`` is the events' ``hive.version``; ``publish_failures`` publishes status=false events
    for failed changes; ``database_events`` publishes hivewire's database events. With ``zookeeper`` (a
    quorum or a :class:`~hivewire.metastore.DiscoveryConfig`) the shim registers ``advertise``
    (default: this host's name and the port) under ``/<namespace>`` (default: the DiscoveryConfig's, else
    ``hive_metastore``) as Hive 4 metastores do; registering
    in the namespace the upstream is discovered in raises :class:`~hivewire.errors.ConfigError` (shims
    would find each other as upstreams and relay in a loop). ``client_send_timeout``: a client that takes
    nothing of a reply for this many seconds is disconnected. ``max_message_bytes`` caps one client request
    (Hive's ``hive.metastore.server.max.message.size``, 100 MB by default); a bigger one closes that
    connection. ``read_timeout`` bounds each of the shim's own reads (the old object before a change, the
    stored one after), which run under the table's lock: past it the event carries what the request did.
    ``upstream_ssl_context`` and ``upstream_sasl`` (a :class:`~hivewire.metastore.SaslAuth`) are how the
    shim reaches the upstream: TLS, SASL, both or neither.
    """

    def __init__(
        self,
        upstream: str | Sequence[str] | UriResolver | Upstream,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        framed: bool = False,
        sinks: Sequence[Sink] = (),
        hive_version: str = DEFAULT_HIVE_VERSION,
        publish_failures: bool = False,
        database_events: bool = True,
        timeout: float = 600.0,
        connect_timeout: float = 5.0,
        zookeeper: str | DiscoveryConfig | None = None,
        namespace: str | None = None,
        advertise: str | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        lookup_connections: int = 16,
        client_send_timeout: float = 600.0,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_connections: int = 1000,
        max_buffered_bytes: int = 1 << 30,
        health_port: int | None = None,
        health_host: str = "127.0.0.1",
        ssl_context: ssl.SSLContext | None = None,
        upstream_ssl_context: ssl.SSLContext | None = None,
        upstream_sasl: SaslAuth | None = None,
        intent_dir: str | os.PathLike[str] | None = None,
        intent_fsync: bool = False,
    ) -> None:
        if max_message_bytes < 1024:
            raise ConfigError(
                "max_message_bytes",
                f"{max_message_bytes} bytes is too small for any metastore call; "
                f"Hive's default is {DEFAULT_MAX_MESSAGE_BYTES}",
            )
        if not read_timeout > 0:
            raise ConfigError("read_timeout", f"{read_timeout!r} must be more than zero seconds")
        self.upstream = (
            upstream
            if isinstance(upstream, Upstream)
            else Upstream(
                upstream,
                framed=framed,
                connect_timeout=connect_timeout,
                timeout=timeout,
                ssl_context=upstream_ssl_context,
                sasl=upstream_sasl,
            )
        )
        self.ssl_context = ssl_context
        # The namespace given, else a DiscoveryConfig's own, else Hive's default.
        namespace = namespace or (None if zookeeper is None or isinstance(zookeeper, str) else zookeeper.namespace)
        namespace = namespace or "hive_metastore"
        if zookeeper is not None:
            _refuse_discovery_loop(self.upstream, zookeeper, namespace)
        self.client_send_timeout = client_send_timeout
        self.host = host
        self._requested_port = port
        self.sinks = list(sinks)
        self.settings = EventOptions(
            hive_version=hive_version, publish_failures=publish_failures, database_events=database_events
        )
        self.zookeeper = zookeeper
        self.namespace = namespace
        self._advertise = advertise
        self.max_message_bytes = max_message_bytes
        self.read_timeout = read_timeout
        self.lookup = Lookup(lambda: self.upstream.client(read_timeout), size=lookup_connections, timeout=read_timeout)
        self.intents = Intents(intent_dir, fsync=intent_fsync) if intent_dir is not None else None
        self.capture = Capture(self.lookup, fan_out(self.sinks), self.settings, self.intents)
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._connections: dict[Connection, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._registration: Registration | None = None
        # The discovery session from_settings opened for the upstream, closed by stop().
        self._owned_resolver: ZooKeeperResolver | None = None
        #: Calls relayed so far, by Thrift method name (what clients actually call); names that neither our
        #: IDL nor the upstream knows are counted together under :data:`UNKNOWN_METHOD`.
        self.calls: collections.Counter[str] = collections.Counter()
        self.port = 0
        self.max_connections = max_connections
        self.budget = Budget(max_buffered_bytes)
        self.health = Health()
        self.health_port = health_port
        self.health_host = health_host
        self._health_endpoint: HealthEndpoint | None = None
        self._trouble_log = RateLimit(60)
        self._full_log = RateLimit(60)
        self._spare: int | None = None

    @classmethod
    def from_settings(cls, settings: ShimSettings, *, sinks: Sequence[Sink] | None = None) -> Shim:
        """A shim configured by ``settings``: the upstream it names (a ZooKeeper discovery session, which
        :meth:`stop` ends, when it is discovered), the Kafka sink when it publishes, unless ``sinks`` are given."""
        upstream = settings.open_upstream()
        try:
            shim = cls(upstream, sinks=settings.sinks() if sinks is None else sinks, **settings.keywords())
        except BaseException:
            if not isinstance(upstream, str):
                upstream.close()
            raise
        shim._owned_resolver = None if isinstance(upstream, str) else upstream
        return shim

    @classmethod
    def from_config(cls, config: Config, *, sinks: Sequence[Sink] | None = None) -> Shim:
        """A shim configured by ``hivewire.shim.*``, ``apiary.bootstrap.servers`` and ``apiary.kafka.topic.name``
        (docs/configuration.md, "Shim"); see :meth:`from_settings`."""
        return cls.from_settings(ShimSettings.from_config(config), sinks=sinks)

    # -- lifecycle ----------------------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``host:port`` as registered in ZooKeeper and used by :attr:`uri`."""
        if self._advertise:
            return self._advertise
        host = self.host
        if host in ("", "0.0.0.0", "::"):
            host = socket.getfqdn()
        return format_address(host, self.port)

    @property
    def uri(self) -> str:
        return f"thrift://{self.address}"

    def start(self) -> Shim:
        """Listen and serve in background threads; register in ZooKeeper if configured."""
        if self._listener is not None:
            return self
        # Before any new change: the events of the changes the last run may have left without them.
        self.capture.reconcile()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self._requested_port))
        listener.listen(256)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self.upstream.exclude(self.uri)
        with contextlib.suppress(OSError):
            self._spare = os.open(os.devnull, os.O_RDONLY)
        if self.health_port is not None:
            self._health_endpoint = HealthEndpoint(self.health_host, self.health_port, self.health_report)
            log.info("shim health on http://%s:%d/health", self.health_host, self._health_endpoint.port)
        self._accept_thread = threading.Thread(target=self._accept_loop, name=f"hivewire-shim-{self.port}", daemon=True)
        self._accept_thread.start()
        log.info("hivewire shim listening on %s:%d, relaying to %s", self.host, self.port, self.upstream.describe())
        if self.zookeeper is not None:
            from hivewire.metastore._registration import Registration  # kazoo: only when registering

            self._registration = Registration(self.address, self.zookeeper, self.namespace).start()
        return self

    def _accept_loop(self) -> None:
        """Accept connections until stopped. Nothing ends it but :meth:`stop`: when descriptors or threads
        run out, it refuses connections (accepts and closes them, with a spare descriptor kept for that),
        backs off, logs one line a minute and reports DOWN on ``/health`` until a connection is served again."""
        assert self._listener is not None
        backoff = 0.0
        while not self._stopping.is_set():
            try:
                trouble = self._accept_one()
            except Exception as e:  # never let the accept thread die
                trouble = f"{type(e).__name__}: {e}"
            if trouble is None:
                backoff = 0.0
                lasted = self.health.fine()
                if lasted is not None:
                    log.warning("accepting connections again after %.1f s", lasted)
                continue
            if self._stopping.is_set():
                return
            self.health.trouble(trouble)
            if count := self._trouble_log.due():
                log.error(
                    "cannot serve new connections (%s; %d time(s) since the last such line); refusing them "
                    "and retrying with backoff; /health reports DOWN until it recovers",
                    trouble,
                    count,
                )
            backoff = min(1.0, max(0.05, backoff * 2))
            self._refuse_for(backoff)

    def _refuse_for(self, seconds: float) -> None:
        """Refuse every connection that arrives in the next ``seconds`` (clients hear no at once instead of
        waiting in the backlog while the shim cannot serve them)."""
        listener = self._listener
        assert listener is not None
        deadline = time.monotonic() + seconds
        while not self._stopping.is_set() and (left := deadline - time.monotonic()) > 0:
            try:
                readable, _, _ = select.select([listener], [], [], left)
            except (OSError, ValueError):
                self._stopping.wait(left)
                return
            if not readable:
                continue
            try:
                sock, _ = listener.accept()
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE) and self._spare is not None:
                    self._refuse_with_spare()
                else:
                    self._stopping.wait(min(left, 0.05))
                continue
            self._refuse(sock)

    def _accept_one(self) -> str | None:
        """Accept one connection and start serving it; what went wrong, or None."""
        assert self._listener is not None
        try:
            sock, addr = self._listener.accept()
        except OSError as e:
            if self._stopping.is_set():
                return "stopping"
            if e.errno in (errno.EMFILE, errno.ENFILE):
                self._refuse_with_spare()
            return f"accept failed: {e}"
        peer = f"{addr[0]}:{addr[1]}"
        if self.ssl_context is not None:
            # The handshake runs on the connection's thread (Connection.run), not here: a slow or silent client
            # must not hold up accepting.
            try:
                sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (OSError, ValueError) as e:
                self._refuse(sock)
                return f"could not set up TLS for a connection: {e}"
        with self._lock:
            full = len(self._connections) >= self.max_connections
        if full:
            self._refuse(sock)
            if count := self._full_log.due():
                log.warning(
                    "refused a connection from %s: %d connections are open, the limit (%s); %d refused since "
                    "the last such line",
                    peer,
                    self.max_connections,
                    keys.SHIM_MAX_CONNECTIONS.name,
                    count,
                )
            return None
        try:
            conn = Connection(
                sock,
                peer,
                upstream=self.upstream,
                capture=self.capture,
                count=self._count,
                max_message_bytes=self.max_message_bytes,
                send_timeout=self.client_send_timeout,
                budget=self.budget,
            )
            thread = threading.Thread(target=self._serve, args=(conn,), name=f"hivewire-shim-conn-{peer}", daemon=True)
            with self._lock:
                self._connections[conn] = thread
        except Exception as e:
            self._refuse(sock)
            return f"could not set up a connection: {e}"
        try:
            thread.start()
        except (RuntimeError, MemoryError, OSError) as e:  # "can't start new thread": pids or memory limit
            with self._lock:
                self._connections.pop(conn, None)
            self._refuse(sock)
            return f"could not start a thread: {e}"
        return None

    def _refuse(self, sock: socket.socket) -> None:
        self.health.refuse()
        with contextlib.suppress(OSError):
            sock.close()

    def _refuse_with_spare(self) -> None:
        """Out of descriptors: free the spare one, accept and close a waiting connection (so its client
        hears no rather than hanging), take the spare back."""
        if self._spare is None:
            return
        os.close(self._spare)
        self._spare = None
        try:
            sock, _ = self._listener.accept() if self._listener is not None else (None, None)
            if sock is not None:
                self._refuse(sock)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                self._spare = os.open(os.devnull, os.O_RDONLY)

    def _serve(self, conn: Connection) -> None:
        try:
            conn.run()
        finally:
            with self._lock:
                self._connections.pop(conn, None)

    def _count(self, method: str, answered: bool) -> None:
        name = method if answered or method in _IDL_METHODS else UNKNOWN_METHOD
        with self._lock:
            self.calls[name] += 1

    @property
    def read_failures(self) -> int:
        """The shim's own reads of the upstream that failed or timed out (their events carry stand-ins)."""
        return self.lookup.failures

    @property
    def health_url(self) -> str | None:
        """Where ``/health`` is served (None: no endpoint)."""
        if self._health_endpoint is None:
            return None
        return f"http://{format_address(self.health_host, self._health_endpoint.port)}/health"

    def health_report(self) -> dict[str, object]:
        """What ``/health`` answers: UP while connections are accepted, else DOWN with the reason."""
        problem = self.health.problem
        return {
            "status": "UP" if problem is None else "DOWN",
            "problem": problem,
            "connections": self.connections,
            "max_connections": self.max_connections,
            "refused_connections": self.health.refused,
            "buffered_request_bytes": self.budget.held,
            "refused_requests": self.budget.refused,
        }

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._connections)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop accepting, let calls in progress finish (up to ``timeout``), close the connections and the
        sinks (which deliver what they can; the Kafka spool keeps the rest), withdraw from ZooKeeper."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._registration is not None:
            self._registration.stop()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(5)
        if self._health_endpoint is not None:
            self._health_endpoint.close()
        if self._spare is not None:
            with contextlib.suppress(OSError):
                os.close(self._spare)
            self._spare = None
        with self._lock:
            connections = dict(self._connections)
        for conn in connections:
            conn.stop_reading()
        for thread in connections.values():
            thread.join(timeout)
        self.lookup.close()
        if self.intents is not None:
            self.intents.close()
        for sink in self.sinks:
            try:
                sink.close(timeout)
            except Exception:
                log.exception("closing sink %s failed", sink)
        if self._owned_resolver is not None:
            self._owned_resolver.close()
        log.info("hivewire shim on port %d stopped", self.port)

    def __enter__(self) -> Shim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self, stop: threading.Event) -> None:
        """Start (if needed) and block until ``stop`` is set; then :meth:`stop`."""
        self.start()
        try:
            while not stop.wait(0.5):
                pass
        finally:
            self.stop()


def _refuse_discovery_loop(upstream: Upstream, zookeeper: str | DiscoveryConfig, namespace: str) -> None:
    """Refuse to register where the upstream is discovered: other shims would be found as upstreams."""
    discovered = discovery_of(upstream.resolver)
    if discovered is None:
        return
    from hivewire.metastore._zookeeper import DiscoveryConfig  # kazoo: only when registering

    registered = (
        DiscoveryConfig(quorum=zookeeper, namespace=namespace)
        if isinstance(zookeeper, str)
        else dataclasses.replace(zookeeper, namespace=namespace)
    )

    def ensemble(config: DiscoveryConfig) -> tuple[set[str], str]:
        hosts, _, chroot = config.quorum.partition("/")
        return {h.strip().lower() for h in hosts.split(",")}, chroot

    (hosts, chroot), (up_hosts, up_chroot) = ensemble(registered), ensemble(discovered)
    # Any server in common means one ensemble (its members serve the same tree).
    if hosts & up_hosts and chroot == up_chroot and registered.namespace == discovered.namespace:
        raise ConfigError(
            "namespace",
            f"the shim would register in /{registered.namespace} of the ZooKeeper it discovers its "
            f"upstream metastores in ({discovered.quorum}, /{discovered.namespace}): it, and any other shim there, "
            f"would be found as an upstream and calls could be relayed from shim to shim in a loop. Register the "
            f"shim in a namespace of its own (--namespace, e.g. hivewire_shim) and point clients there, or "
            f"discover the metastores in another one (--upstream-namespace)",
        )


class ShimKeywords(TypedDict):
    """:class:`Shim`'s keyword arguments that come from the configuration."""

    host: str
    port: int
    framed: bool
    hive_version: str
    publish_failures: bool
    database_events: bool
    timeout: float
    connect_timeout: float
    zookeeper: DiscoveryConfig | None
    advertise: str | None
    max_message_bytes: int
    lookup_connections: int
    client_send_timeout: float
    read_timeout: float
    max_connections: int
    max_buffered_bytes: int
    health_port: int | None
    health_host: str
    ssl_context: ssl.SSLContext | None
    upstream_ssl_context: ssl.SSLContext | None
    upstream_sasl: SaslAuth | None
    intent_dir: str | None
    intent_fsync: bool


@dataclass(frozen=True)
class PublishSettings:
    """Where the shim publishes: the Kafka topic, the spool that holds events until Kafka has them, and the
    producer's librdkafka settings (``hivewire.shim.producer.*``)."""

    bootstrap_servers: str
    topic: str
    spool_dir: str
    fsync: FsyncPolicy
    producer_config: dict[str, str]
    alter_by_old_name: bool


@dataclass(frozen=True)
class ShimSettings:
    """The shim's settings (docs/configuration.md, "Shim"); build them with :meth:`from_config`. Times are
    in seconds. ``upstream`` is fixed URIs, or where to discover the metastores; ``zookeeper`` where to
    register the shim (None: it does not register); ``publish`` None: it only relays calls."""

    upstream: str | DiscoveryConfig
    host: str
    port: int
    framed: bool
    timeout: float
    connect_timeout: float
    hive_version: str
    publish_failures: bool
    database_events: bool
    zookeeper: DiscoveryConfig | None
    advertise: str | None
    max_message_bytes: int
    lookup_connections: int
    client_send_timeout: float
    read_timeout: float
    max_connections: int
    max_buffered_bytes: int
    health_port: int | None
    health_host: str
    ssl_certfile: str | None
    ssl_keyfile: str | None
    ssl_ca: str | None
    upstream_ssl: bool
    upstream_ssl_ca: str | None
    upstream_ssl_certfile: str | None
    upstream_ssl_keyfile: str | None
    upstream_sasl: SaslAuth | None
    publish: PublishSettings | None

    @classmethod
    def from_config(cls, config: Config) -> ShimSettings:
        """Validate and read the shim's keys; raises :class:`~hivewire.errors.ConfigError` naming the key."""
        config.check_keys()
        uris = config.optional(keys.SHIM_UPSTREAM)
        discovered = _discovery(
            config, keys.SHIM_UPSTREAM_ZOOKEEPER, keys.SHIM_UPSTREAM_NAMESPACE, keys.SHIM_UPSTREAM_HIVE_SITE
        )
        if (uris is None) == (discovered is None):
            raise ConfigError(
                keys.SHIM_UPSTREAM.name,
                f"give exactly one of {keys.SHIM_UPSTREAM.name} and {keys.SHIM_UPSTREAM_ZOOKEEPER.name} or "
                f"{keys.SHIM_UPSTREAM_HIVE_SITE.name}: the metastores to front, or where to discover them",
            )
        bootstrap_servers, topic = config.optional(keys.BOOTSTRAP_SERVERS), config.optional(keys.TOPIC)
        if (bootstrap_servers is None) != (topic is None):
            raise ConfigError(
                keys.TOPIC.name if topic is None else keys.BOOTSTRAP_SERVERS.name,
                f"{keys.BOOTSTRAP_SERVERS.name} and {keys.TOPIC.name} go together: give both to publish events, "
                "or neither to only relay calls",
            )
        fsync = config.read(keys.SHIM_SPOOL_FSYNC)
        publish = PublishSettings(
            bootstrap_servers=bootstrap_servers or "",
            topic=topic or "",
            spool_dir=config.read(keys.SHIM_SPOOL_DIR),
            fsync="always" if fsync == "always" else "never" if fsync == "never" else "interval",
            producer_config=config.with_prefix(keys.SHIM_PRODUCER_PREFIX.name),
            alter_by_old_name=config.read(keys.SHIM_PARTITION_BY_OLD_NAME),
        )
        return cls(
            upstream=discovered if discovered is not None else uris or "",
            host=config.read(keys.SHIM_BIND),
            port=config.read(keys.SHIM_PORT),
            framed=config.read(keys.SHIM_FRAMED),
            timeout=config.read(keys.SHIM_TIMEOUT),
            connect_timeout=config.read(keys.SHIM_CONNECT_TIMEOUT),
            hive_version=config.read(keys.SHIM_HIVE_VERSION),
            publish_failures=config.read(keys.SHIM_PUBLISH_FAILURES),
            database_events=config.read(keys.SHIM_DATABASE_EVENTS),
            zookeeper=_discovery(config, keys.SHIM_ZOOKEEPER, keys.SHIM_NAMESPACE, keys.SHIM_HIVE_SITE),
            advertise=config.optional(keys.SHIM_ADVERTISE),
            max_message_bytes=config.read(keys.SHIM_MAX_MESSAGE_SIZE),
            lookup_connections=config.read(keys.SHIM_LOOKUP_CONNECTIONS),
            client_send_timeout=config.read(keys.SHIM_CLIENT_SEND_TIMEOUT),
            read_timeout=config.read(keys.SHIM_READ_TIMEOUT),
            max_connections=config.read(keys.SHIM_MAX_CONNECTIONS),
            max_buffered_bytes=config.read(keys.SHIM_MAX_BUFFERED),
            health_port=config.read(keys.SHIM_HEALTH_PORT) or None,
            health_host=config.read(keys.SHIM_HEALTH_HOST),
            ssl_certfile=config.optional(keys.SHIM_SSL_CERTFILE),
            ssl_keyfile=config.optional(keys.SHIM_SSL_KEYFILE),
            ssl_ca=config.optional(keys.SHIM_SSL_CA),
            upstream_ssl=config.read(keys.SHIM_UPSTREAM_SSL),
            upstream_ssl_ca=config.optional(keys.SHIM_UPSTREAM_SSL_CA),
            upstream_ssl_certfile=config.optional(keys.SHIM_UPSTREAM_SSL_CERTFILE),
            upstream_ssl_keyfile=config.optional(keys.SHIM_UPSTREAM_SSL_KEYFILE),
            upstream_sasl=SaslAuth.from_config(config),
            publish=publish if bootstrap_servers and topic else None,
        )

    def open_upstream(self) -> str | ZooKeeperResolver:
        """The fixed URIs, or a new discovery session (ZooKeeper) the caller closes."""
        if isinstance(self.upstream, str):
            return self.upstream
        from hivewire.metastore import _discovery  # kazoo: only when discovering

        return _discovery.ZooKeeperResolver(self.upstream)

    def sinks(self) -> list[Sink]:
        """The Kafka sink when the shim publishes (its spool is opened), else none."""
        if self.publish is None:
            return []
        from hivewire_shim.kafka_sink import KafkaSink

        p = self.publish
        return [
            KafkaSink(
                p.bootstrap_servers,
                p.topic,
                p.spool_dir,
                producer_config=p.producer_config,
                alter_by_old_name=p.alter_by_old_name,
                fsync=p.fsync,
            )
        ]

    def keywords(self) -> ShimKeywords:
        """The :class:`Shim` keyword arguments these settings make (the upstream and the sinks aside)."""
        return ShimKeywords(
            host=self.host,
            port=self.port,
            framed=self.framed,
            hive_version=self.hive_version,
            publish_failures=self.publish_failures,
            database_events=self.database_events,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
            zookeeper=self.zookeeper,
            advertise=self.advertise,
            max_message_bytes=self.max_message_bytes,
            lookup_connections=self.lookup_connections,
            client_send_timeout=self.client_send_timeout,
            read_timeout=self.read_timeout,
            max_connections=self.max_connections,
            max_buffered_bytes=self.max_buffered_bytes,
            health_port=self.health_port,
            health_host=self.health_host,
            ssl_context=server_context(self.ssl_certfile, self.ssl_keyfile, self.ssl_ca) if self.ssl_certfile else None,
            upstream_ssl_context=(
                client_context(self.upstream_ssl_ca, self.upstream_ssl_certfile, self.upstream_ssl_keyfile)
                if self.upstream_ssl
                else None
            ),
            upstream_sasl=self.upstream_sasl,
            intent_dir=self.publish.spool_dir if self.publish is not None else None,
            intent_fsync=self.publish is not None and self.publish.fsync == "always",
        )


def _discovery(
    config: Config, quorum_key: Key[str], namespace_key: Key[str], hive_site_key: Key[str]
) -> DiscoveryConfig | None:
    """The ZooKeeper settings these three keys give, or None when neither a quorum nor a hive-site.xml is set."""
    quorum, site = config.optional(quorum_key), config.optional(hive_site_key)
    namespace = config.optional(namespace_key)
    if quorum is None and site is None:
        if namespace is not None:
            raise ConfigError(
                config.provenance(namespace_key).name,
                f"is set, but neither {quorum_key.name} nor {hive_site_key.name}: give the ZooKeeper quorum too",
            )
        return None
    from hivewire.metastore._zookeeper import DiscoveryConfig  # kazoo: only when discovering or registering

    return DiscoveryConfig.from_parts(quorum, namespace, site, config)
