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
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from hivewire._ratelimit import RateLimit
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError
from hivewire.metastore import UriResolver, format_address
from hivewire_shim.budget import Budget
from hivewire_shim.capture import Capture
from hivewire_shim.connection import Connection
from hivewire_shim.health import Health, HealthEndpoint
from hivewire_shim.intents import Intents
from hivewire_shim.lookup import Lookup
from hivewire_shim.settings import ShimOptions, ShimSettings
from hivewire_shim.sinks import Sink, fan_out
from hivewire_shim.threads import thread_limits
from hivewire_shim.upstream import Upstream, discovery_of
from hivewire_thrift.hive_metastore import ThriftHiveMetastore

if TYPE_CHECKING:
    from hivewire.metastore._discovery import ZooKeeperResolver
    from hivewire.metastore._registration import Registration
    from hivewire.metastore._zookeeper import DiscoveryConfig

__all__ = ["UNKNOWN_METHOD", "Shim"]

log = logging.getLogger(__name__)

#: The :attr:`Shim.calls` bucket of method names neither our IDL nor the upstream knows (a client's junk
#: must not grow the counter without bound).
UNKNOWN_METHOD = "(unknown)"
#: How the accept loop's trouble starts when no thread could be started (said by its own line, not the generic one).
_NO_THREAD = "could not start a thread"
_IDL_METHODS = frozenset(name for name in dir(ThriftHiveMetastore.Iface) if not name.startswith("_"))


class Shim:
    """A Hive Metastore Thrift front for ``upstream`` (URIs or a :class:`~hivewire.metastore.UriResolver`).

    ``sinks`` receive the events (closed by :meth:`stop`). How it serves is ``options`` (a
    :class:`~hivewire_shim.settings.ShimOptions`: where it listens, the upstream's transport and timeouts,
    the events it makes, ZooKeeper registration, limits, TLS and SASL); each of its fields may also be given
    as a keyword (``Shim(uri, port=9084)``), over ``options`` when both are. Registering in the namespace the
    upstream is discovered in raises :class:`~hivewire.errors.ConfigError` (shims would find each other as
    upstreams and relay in a loop), and so does a keyword of the wrong type or out of range.
    """

    def __init__(
        self,
        upstream: str | Sequence[str] | UriResolver | Upstream,
        *,
        sinks: Sequence[Sink] = (),
        options: ShimOptions | None = None,
        **keywords: object,
    ) -> None:
        options = ShimOptions.with_keywords(options, **keywords) if keywords or options is None else options
        self.options = options
        self.upstream = (
            upstream
            if isinstance(upstream, Upstream)
            else Upstream(
                upstream,
                framed=options.framed,
                connect_timeout=options.connect_timeout,
                timeout=options.timeout,
                ssl_context=options.upstream_ssl_context,
                sasl=options.upstream_sasl,
            )
        )
        zookeeper = options.zookeeper
        # The namespace given, else a DiscoveryConfig's own, else Hive's default.
        namespace = options.namespace or (
            None if zookeeper is None or isinstance(zookeeper, str) else zookeeper.namespace
        )
        namespace = namespace or "hive_metastore"
        if zookeeper is not None:
            _refuse_discovery_loop(self.upstream, zookeeper, namespace)
        self.host = options.host
        self.sinks = list(sinks)
        self.settings = options.events
        self.zookeeper = zookeeper
        self.namespace = namespace
        self.max_message_bytes = options.max_message_bytes
        self.read_timeout = read_timeout = options.read_timeout
        self.lookup = Lookup(
            lambda: self.upstream.client(read_timeout), size=options.lookup_connections, timeout=read_timeout
        )
        self.intents = (
            Intents(options.intent_dir, fsync=options.intent_fsync) if options.intent_dir is not None else None
        )
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
        self.max_connections = options.max_connections
        self.budget = Budget(options.max_buffered_bytes)
        self.health = Health()
        self._health_endpoint: HealthEndpoint | None = None
        self._trouble_log = RateLimit(60)
        self._full_log = RateLimit(60)
        self._no_thread_log = RateLimit(60)
        self._spare: int | None = None

    @classmethod
    def from_settings(cls, settings: ShimSettings, *, sinks: Sequence[Sink] | None = None) -> Shim:
        """A shim configured by ``settings``: the upstream it names (a ZooKeeper discovery session, which
        :meth:`stop` ends, when it is discovered), the Kafka sink when it publishes, unless ``sinks`` are given."""
        upstream = settings.open_upstream()
        try:
            shim = cls(upstream, sinks=settings.sinks() if sinks is None else sinks, options=settings.options)
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
        if self.options.advertise:
            return self.options.advertise
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
        listener.bind((self.host, self.options.port))
        listener.listen(256)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self.upstream.exclude(self.uri)
        with contextlib.suppress(OSError):
            self._spare = os.open(os.devnull, os.O_RDONLY)
        if self.options.health_port is not None:
            health_host = self.options.health_host
            self._health_endpoint = HealthEndpoint(
                health_host, self.options.health_port, self.health_report, metrics=self.metrics_text
            )
            log.info("shim health on http://%s:%d/health (and /metrics)", health_host, self._health_endpoint.port)
        self._accept_thread = threading.Thread(target=self._accept_loop, name=f"hivewire-shim-{self.port}", daemon=True)
        self._accept_thread.start()
        log.info("hivewire shim listening on %s:%d, relaying to %s", self.host, self.port, self.upstream.describe())
        if self.zookeeper is not None:
            from hivewire.metastore._registration import Registration  # kazoo: only when registering

            self._registration = Registration(
                self.address,
                self.zookeeper,
                self.namespace,
                # the shim answers getStatus by asking its upstream: that is what to check
                hint="the shim relays the check to its upstream metastore: check --upstream "
                "(hivewire.shim.upstream.uris) and that the metastore runs",
            ).start()
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
            if not trouble.startswith(_NO_THREAD) and (count := self._trouble_log.due()):
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
        if self.options.ssl_context is not None:
            # The handshake runs on the connection's thread (Connection.run), not here: a slow or silent client
            # must not hold up accepting.
            try:
                sock = self.options.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
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
                send_timeout=self.options.client_send_timeout,
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
            self._refuse(sock, no_thread=True)
            if count := self._no_thread_log.due():
                log.error(
                    "cannot start a thread for the connection from %s (%s): refused; %d connection(s) refused "
                    "for want of a thread since the last such line, %d in all (the metric "
                    'hivewire_shim_connections_refused_total{reason="no_thread"}); %s. Raise that limit, or '
                    "set --max-connections (%s) below what it allows",
                    peer,
                    e,
                    count,
                    self.health.refused_no_thread,
                    thread_limits(),
                    keys.SHIM_MAX_CONNECTIONS.name,
                )
            return f"{_NO_THREAD}: {e}"
        return None

    def _refuse(self, sock: socket.socket, *, no_thread: bool = False) -> None:
        self.health.refuse(no_thread=no_thread)
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
        return f"http://{format_address(self.options.health_host, self._health_endpoint.port)}/health"

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

    def metrics_text(self) -> bytes:
        """``/metrics``: the shim's connections and refusals in Prometheus's text format."""
        registry = CollectorRegistry()
        registry.register(_ShimCollector(self))
        return generate_latest(registry)

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


class _ShimCollector(Collector):
    """The shim's connection counts, read when ``/metrics`` is asked."""

    def __init__(self, shim: Shim) -> None:
        self._shim = shim

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        health = self._shim.health
        yield GaugeMetricFamily("hivewire_shim_connections", "Client connections open", value=self._shim.connections)
        refused = CounterMetricFamily(
            "hivewire_shim_connections_refused",
            "Client connections refused: no_thread (a thread could not be started), other (descriptors, "
            "--max-connections, TLS set-up)",
            labels=["reason"],
        )
        no_thread, other = health.refusals()
        refused.add_metric(["no_thread"], no_thread)
        refused.add_metric(["other"], other)
        yield refused


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
