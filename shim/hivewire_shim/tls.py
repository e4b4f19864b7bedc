"""TLS for the shim: towards its clients (it presents a certificate, and may require theirs) and towards the
upstream metastore (Hive's ``metastore.use.SSL``), with the standard library's :mod:`ssl` contexts.

Hive's own clients take a Java truststore (``metastore.truststore.path``); the shim takes PEM files, as
Python's Thrift ``TSSLSocket`` does. Convert a keystore with ``keytool -importkeystore -deststoretype
PKCS12`` and ``openssl pkcs12 -nodes``.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable

from hivewire.config import _keys as keys
from hivewire.config._key import Key
from hivewire.errors import ConfigError

__all__ = ["client_context", "server_context"]


def _load(key: Key[object], what: str, path: str, load: Callable[[], None]) -> None:
    """Run ``load``; an unreadable or invalid file is a :class:`ConfigError` naming ``key`` and ``path``."""
    try:
        load()
    except (OSError, ssl.SSLError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ConfigError(key.name, f"cannot load {what} from {path}: {reason}") from e


def _load_chain(context: ssl.SSLContext, key: Key[object], what: str, certfile: str, keyfile: str | None) -> None:
    """Load a certificate (chain) and its key into ``context``, as :func:`_load` does."""
    path = f"{certfile} and {keyfile}" if keyfile else certfile
    _load(key, what, path, lambda: context.load_cert_chain(certfile, keyfile))


def server_context(certfile: str, keyfile: str | None = None, ca: str | None = None) -> ssl.SSLContext:
    """The context the shim serves its clients with: its certificate, and with ``ca`` clients must present
    a certificate signed by it."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    _load_chain(context, keys.SHIM_SSL_CERTFILE, "the shim's certificate and key", certfile, keyfile)
    if ca:
        _load(keys.SHIM_SSL_CA, "the CA of clients' certificates", ca, lambda: context.load_verify_locations(cafile=ca))
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def client_context(ca: str | None = None, certfile: str | None = None, keyfile: str | None = None) -> ssl.SSLContext:
    """The context the shim connects to the upstream with: its certificate checked against ``ca`` (default:
    the system's CAs) and its host name; ``certfile``/``keyfile`` if the upstream asks for a client one."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if ca:
        _load(keys.SHIM_UPSTREAM_SSL_CA, "the upstream's CA", ca, lambda: context.load_verify_locations(cafile=ca))
    if certfile:
        _load_chain(
            context, keys.SHIM_UPSTREAM_SSL_CERTFILE, "the shim's client certificate and key", certfile, keyfile
        )
    return context
