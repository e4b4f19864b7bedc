"""The upstream metastore(s): fixed ``thrift://`` URIs or ZooKeeper discovery, and raw connections to them.

Client connections are relayed over raw sockets (one per client connection, so per-connection state such
as ``set_ugi`` stays with its client). The shim's own reads use :class:`~hivewire.metastore.MetastoreClient`
on the same URIs (:meth:`Upstream.client`).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hivewire._reachability import Reachability
from hivewire.errors import HivewireError, MetastoreAuthError
from hivewire.metastore import FixedUris, MetastoreClient, SaslAuth, UriResolver, parse_uris
from hivewire.metastore._transport import open_connection
from hivewire_shim.lookup import DEFAULT_READ_TIMEOUT, ReadClient

if TYPE_CHECKING:
    from hivewire.metastore import DiscoveryConfig

__all__ = ["Upstream", "UpstreamUnavailable", "discovery_of"]

log = logging.getLogger("hivewire.shim.upstream")


class UpstreamUnavailable(HivewireError):
    """No upstream metastore accepted a connection."""


class _Excluding:
    """A resolver without the shim's own address (a shim discovering in its own namespace finds itself)."""

    def __init__(self, inner: UriResolver, exclude: set[str]) -> None:
        self._inner = inner
        self._exclude = exclude

    def uris(self) -> list[str]:
        return [u for u in self._inner.uris() if u not in self._exclude]

    def refresh(self) -> list[str]:
        return [u for u in self._inner.refresh() if u not in self._exclude]


def discovery_of(resolver: UriResolver) -> DiscoveryConfig | None:
    """The :class:`~hivewire.metastore.DiscoveryConfig` a resolver discovers with, or None (fixed URIs)."""
    while isinstance(resolver, _Excluding):
        resolver = resolver._inner
    config = getattr(resolver, "config", None)
    # Duck-typed: importing hivewire.metastore._discovery would load kazoo for shims that do not use ZooKeeper.
    return config if hasattr(config, "quorum") and hasattr(config, "namespace") else None


class Upstream:
    """Where client connections are relayed to.

    ``uris``: ``"thrift://h1:9083,thrift://h2:9083"``, a list, or a :class:`~hivewire.metastore.UriResolver`
    such as :class:`hivewire.metastore.ZooKeeperResolver`. Fixed URIs are tried in order (``shuffle`` for
    Hive's random selection), discovered ones in the resolver's order. ``framed``: the upstream uses the
    framed transport. ``timeout`` bounds each relayed reply (Hive's client socket timeout is 600 s).
    ``ssl_context``: connect with TLS (see :func:`hivewire_shim.tls.client_context`). ``sasl``: authenticate
    with SASL; the relay then frames each message as SASL does (the ``auth`` quality of protection only:
    a metastore that requires integrity or privacy is refused with an error saying so; use TLS for privacy).
    """

    def __init__(
        self,
        uris: str | Sequence[str] | UriResolver,
        *,
        framed: bool = False,
        connect_timeout: float = 5.0,
        timeout: float = 600.0,
        shuffle: bool = False,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslAuth | None = None,
    ) -> None:
        self.resolver: UriResolver = uris if isinstance(uris, UriResolver) else FixedUris(parse_uris(uris), shuffle)
        self.framed = framed
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        #: Whether an upstream accepts connections: one line when none does, one when one does again.
        self.reachability = Reachability(
            "the upstream metastore",
            "check the shim's --upstream (hivewire.shim.upstream.uris), --upstream-zookeeper or "
            "--upstream-hive-site, and that the metastore runs",
            log,
        )
        self.ssl_context = ssl_context
        self.sasl = sasl

    @property
    def frames(self) -> bool:
        """Whether messages to and from the upstream carry a 4-byte length: the framed transport, or SASL."""
        return self.framed or self.sasl is not None

    def exclude(self, *uris: str) -> None:
        """Never connect to these (the shim's own advertised address)."""
        self.resolver = _Excluding(self.resolver, set(uris))

    def describe(self) -> str:
        uris = self.resolver.uris()
        return ",".join(uris) if uris else "(no upstream URI known)"

    def connect(self) -> tuple[socket.socket, str]:
        """A connected socket to the first upstream that accepts, and its URI."""
        tried: list[str] = []
        candidates = self.resolver.uris()
        for attempt in range(2):
            for uri in candidates:
                try:
                    sock, _ = open_connection(
                        uri,
                        connect_timeout=self.connect_timeout,
                        ssl_context=self.ssl_context,
                        sasl=self.sasl,
                        qops=("auth",),  # the relay frames messages itself: no SASL wrapping
                    )
                except MetastoreAuthError as e:
                    tried.append(str(e))
                    continue
                except ssl.SSLError as e:
                    tried.append(f"{uri}: TLS handshake failed: {e}")
                    continue
                except OSError as e:
                    tried.append(f"{uri}: {e.strerror or e}")
                    continue
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
                sock.settimeout(self.timeout)
                self.reachability.up()
                return sock, uri
            if attempt == 0:
                candidates = self.resolver.refresh()  # every known URI failed: look again (ZooKeeper)
                if not candidates:
                    break
        reason = "; ".join(tried) or "no URI to try"
        self.reachability.down(reason)
        raise UpstreamUnavailable("upstream metastore unavailable: " + reason)

    def client(self, timeout: float = DEFAULT_READ_TIMEOUT) -> MetastoreClient:
        """A client on the same upstream for the shim's own reads, each call bounded by ``timeout`` seconds."""
        client = ReadClient(
            self.resolver,
            transport="framed" if self.framed else "buffered",
            connect_timeout=min(self.connect_timeout, timeout),
            timeout=timeout,
        )
        client.ssl_context = self.ssl_context
        client.sasl = self.sasl
        return client
