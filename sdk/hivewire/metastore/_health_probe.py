"""The ``register`` sidecar's health check of its metastore: fb303 ``getStatus()`` ALIVE and
``get_all_databases()`` answering, on one connection whose every step shares one deadline.

Invariants: one check never takes longer than its budget (each step's socket timeout is what is left of
it) and is never retried within itself: the next check is the retry. The connection is kept between
passing checks and dropped after any failure.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Mapping
from typing import Any

from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport

from hivewire.errors import ConfigError
from hivewire.metastore._addresses import connect, format_address, parse_uri
from hivewire.metastore._client import MetastoreClient
from hivewire.metastore._transport import open_connection
from hivewire_thrift.fb303.ttypes import fb_status
from hivewire_thrift.hive_metastore import ThriftHiveMetastore

log = logging.getLogger("hivewire.registration")


class _OutOfTime(Exception):
    """The check's budget ran out between two steps."""


class _HealthProbe:
    """The sidecar's connection to its metastore, on which every step of a check shares one deadline.

    Not a :class:`~hivewire.metastore.MetastoreClient`: that one retries a read after reconnecting and gives
    each connect and call its own full timeout, so a check through it against a hung metastore (one that
    still accepts TCP connections, so only reads time out) lasted twice the timeout or more. Here the socket
    timeout of each step is what is left of the check's budget, and nothing is retried: the next check is
    the retry. The connection is kept between passing checks and dropped after any failure.
    """

    def __init__(self, address: str, options: Mapping[str, Any]) -> None:
        unknown = sorted(set(options) - {"transport", "protocol", "ugi", "sasl"})
        if unknown:
            raise ConfigError(
                "client_options",
                f"{', '.join(unknown)}: only transport, protocol, ugi and sasl apply "
                "to health checks (check_timeout bounds them)",
            )
        # MetastoreClient validates and normalises the options (it connects only when used).
        spec = MetastoreClient(f"thrift://{address}", **dict(options))
        self._host, self._port = parse_uri(address)
        self._framed = spec.transport == "framed"
        self._compact = spec.protocol == "compact"
        self._ugi = spec.ugi
        self._sasl = spec.sasl
        self._sock: TSocket.TSocket | None = None
        self._trans: TTransport.TTransportBase | None = None
        self._client: Any = None

    def check(self, budget: float) -> tuple[bool, str]:
        """(healthy, reason) within ``budget`` seconds: getStatus() is ALIVE and get_all_databases() answers."""
        deadline = time.monotonic() + budget
        step = "connecting"
        try:
            if self._client is None:
                self._open(deadline)
            step = "getStatus()"
            self._bound(deadline)
            status = self._client.getStatus()
            if status != fb_status.ALIVE:
                self.close()
                name = fb_status._VALUES_TO_NAMES.get(status, str(status))
                return False, f"getStatus() is {name}, not ALIVE"
            step = "get_all_databases()"
            self._bound(deadline)
            self._client.get_all_databases()
            return True, "ok"
        except Exception as e:  # any failure means "not serving"; the sidecar must keep running
            self.close()
            if isinstance(e, _OutOfTime) or _timed_out(e):
                return False, f"no answer to {step} within the check's {budget:.3g} s (hung or overloaded)"
            text = str(e).splitlines()[0] if str(e) else type(e).__name__
            return False, f"{step} failed: {text}"

    def _bound(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        assert self._sock is not None
        self._sock.setTimeout(left * 1000)

    def _open(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        # Not TSocket.open(), which logs a traceback at ERROR for every refused connection.
        trans: TTransport.TTransportBase
        if self._sasl is not None:
            # The SASL negotiation shares the check's deadline; SASL frames every message itself.
            _, authenticated = open_connection(
                f"thrift://{format_address(self._host, self._port)}", connect_timeout=left, sasl=self._sasl
            )
            assert authenticated is not None
            self._sock = authenticated.transport
            trans = authenticated
        else:
            handle = connect(self._host, self._port, left)
            sock = TSocket.TSocket(self._host, self._port)
            sock.setHandle(handle)
            self._sock = sock
            trans = TTransport.TFramedTransport(sock) if self._framed else TTransport.TBufferedTransport(sock)
        self._bound(deadline)
        self._trans = trans
        proto = (
            TCompactProtocol.TCompactProtocolAccelerated(trans)
            if self._compact
            else TBinaryProtocol.TBinaryProtocolAccelerated(trans)
        )
        client = ThriftHiveMetastore.Client(proto)
        if self._ugi is not None:
            self._bound(deadline)
            try:
                client.set_ugi(self._ugi[0], list(self._ugi[1]))
            except TApplicationException as e:
                log.debug("set_ugi on %s:%d failed (%s); checking without it", self._host, self._port, e)
        self._client = client

    def close(self) -> None:
        trans, self._trans, self._sock, self._client = self._trans, None, None, None
        if trans is not None:
            with contextlib.suppress(Exception):
                trans.close()


def _timed_out(e: BaseException) -> bool:
    """Whether ``e`` (or what it wraps) is a socket timeout."""
    if isinstance(e, TTransport.TTransportException) and e.type == TTransport.TTransportException.TIMED_OUT:
        return True
    seen: set[int] = set()
    current: BaseException | None = e
    while current is not None and id(current) not in seen:
        if isinstance(current, (socket.timeout, TimeoutError)):
            return True
        seen.add(id(current))
        current = getattr(current, "inner", None) or current.__cause__ or current.__context__
    return False
