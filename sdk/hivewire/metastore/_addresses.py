"""Host:port and ``thrift://`` URIs: parsing, formatting, and connecting to one within a single deadline."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from hivewire.errors import ConfigError

DEFAULT_PORT = 9083


def parse_uri(uri: str) -> tuple[str, int]:
    """``thrift://host:port``, ``host:port`` or ``host`` -> ``(host, port)``.

    An IPv6 address is written in brackets (``thrift://[::1]:9083``) and returned without them (``::1``).
    """
    text = uri.strip()
    if not text:
        raise ConfigError("metastore uri", "empty URI")
    parts = urlsplit(text if "://" in text else f"thrift://{text}")
    if parts.scheme != "thrift":
        raise ConfigError("metastore uri", f"{uri!r} is not a thrift:// URI")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as e:
        raise ConfigError("metastore uri", f"{uri!r} has an invalid port") from e
    if not parts.hostname:
        raise ConfigError("metastore uri", f"{uri!r} has no host")
    return parts.hostname, port


def format_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 address in brackets (``[::1]:9083``), as HIVE-20794 registrations write it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def format_uri(host: str, port: int) -> str:
    """``thrift://host:port``, with an IPv6 address in brackets so that :func:`parse_uri` reads it back."""
    return f"thrift://{format_address(host, port)}"


def parse_uris(uris: str | Sequence[str]) -> list[str]:
    """Normalise a comma-separated string or a list of URIs to ``thrift://host:port`` strings."""
    items = uris.split(",") if isinstance(uris, str) else list(uris)
    out = []
    for item in items:
        if item.strip():
            host, port = parse_uri(item)
            out.append(format_uri(host, port))
    if not out:
        raise ConfigError("metastore uris", "no metastore URI given")
    return out


def connect(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP socket to ``host:port`` within one deadline of ``timeout`` seconds, whatever the name resolves to.

    :func:`socket.create_connection` and ``TSocket.open`` give each resolved address (IPv6 and IPv4 of one
    name) a full timeout of its own. Raises ``TimeoutError`` or ``OSError`` naming what happened to each address.
    """
    return _connect_socket(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM), timeout)


def _connect_socket(addresses: Sequence[tuple[Any, ...]], timeout: float) -> socket.socket:
    """A socket connected to the first of ``addresses`` (``getaddrinfo`` results) that accepts.

    All of them share one deadline of ``timeout`` seconds: a name that resolves to a dead IPv6 and a dead
    IPv4 address costs one timeout, not two, while an address that refuses at once still leaves time for
    the next. Raises ``TimeoutError`` (or ``OSError``) saying what happened to each address.
    """
    deadline = time.monotonic() + timeout
    failures: list[str] = []
    timed_out = False
    for i, (family, socktype, proto, _, sockaddr) in enumerate(addresses):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            failures.append(f"{len(addresses) - i} more address(es) not tried within connect_timeout")
            break
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(remaining)
            sock.connect(sockaddr)
        except BaseException as e:
            sock.close()
            if not isinstance(e, OSError):
                raise
            if isinstance(e, TimeoutError):
                timed_out = True
                failures.append(f"connecting to {_address(sockaddr)} timed out (connect_timeout {timeout:g} s)")
            else:
                failures.append(f"{_address(sockaddr)}: {e.strerror or e}")
            continue
        return sock
    detail = "; ".join(failures) or "the name resolved to no address"
    raise TimeoutError(detail) if timed_out else OSError(detail)


def _address(sockaddr: tuple[Any, ...]) -> str:
    host, port = sockaddr[0], sockaddr[1]
    return format_address(str(host), int(port))


def host_port(text: str) -> str | None:
    """``host:port`` (or ``[v6]:port``, or with a ``thrift://`` prefix) -> normalised ``host:port``, else None."""
    text = text.strip()
    if text.startswith("thrift://"):
        text = text[len("thrift://") :]
    text = text.rstrip("/")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    if host.startswith("[") != host.endswith("]") or any(c in host for c in " /;=,"):
        return None
    return f"{host}:{int(port)}"
