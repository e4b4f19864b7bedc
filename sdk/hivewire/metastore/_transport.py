"""One connection to one metastore, as the metastore asks for it: TCP within one deadline, then TLS, then SASL.

:class:`~hivewire.metastore.MetastoreClient` builds its Thrift transport on it, and the shim relays its
clients' calls over it, so both reach a metastore the same way.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Sequence

from thrift.transport import TTransport

from hivewire.metastore._addresses import connect, parse_uri
from hivewire.metastore._sasl import ALL_QOPS, SaslAuth, negotiate


def open_connection(
    uri: str,
    *,
    connect_timeout: float,
    ssl_context: ssl.SSLContext | None = None,
    sasl: SaslAuth | None = None,
    qops: Sequence[str] = ALL_QOPS,
) -> tuple[socket.socket, TTransport.TTransportBase | None]:
    """A socket connected to the metastore at ``uri``, and with ``sasl`` the authenticated SASL transport on it.

    Connecting, the TLS handshake and the SASL negotiation are each bounded by ``connect_timeout``. Raises
    ``OSError`` (``ssl.SSLError`` for TLS) or :class:`~hivewire.errors.MetastoreAuthError`; the socket is
    closed on any failure.
    """
    host, port = parse_uri(uri)
    handle = connect(host, port, connect_timeout)
    try:
        if ssl_context is not None:
            handle.settimeout(connect_timeout)
            handle = ssl_context.wrap_socket(handle, server_hostname=host)
        transport = None
        if sasl is not None:
            transport = negotiate(handle, host, sasl, uri=uri, timeout=connect_timeout, qops=qops)
    except BaseException:
        handle.close()
        raise
    return handle, transport
