"""TLS for the shim: towards its clients (it presents a certificate, and may require theirs) and towards the
upstream metastore (Hive's ``metastore.use.SSL``), with the standard library's :mod:`ssl` contexts.

Hive's own clients take a Java truststore (``metastore.truststore.path``); the shim takes PEM files, as
Python's Thrift ``TSSLSocket`` does. Convert a keystore with ``keytool -importkeystore -deststoretype
PKCS12`` and ``openssl pkcs12 -nodes``.
"""

from __future__ import annotations

import ssl

from hivewire.errors import ConfigError

__all__ = ["client_context", "server_context"]


def server_context(certfile: str, keyfile: str | None = None, ca: str | None = None) -> ssl.SSLContext:
    """The context the shim serves its clients with: its certificate, and with ``ca`` clients must present
    a certificate signed by it."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile)
        if ca:
            context.load_verify_locations(cafile=ca)
            context.verify_mode = ssl.CERT_REQUIRED
    except (OSError, ssl.SSLError) as e:
        raise ConfigError("hivewire.shim.ssl.certfile", f"cannot load the shim's certificate or CA: {e}") from e
    return context


def client_context(ca: str | None = None, certfile: str | None = None, keyfile: str | None = None) -> ssl.SSLContext:
    """The context the shim connects to the upstream with: its certificate checked against ``ca`` (default:
    the system's CAs) and its host name; ``certfile``/``keyfile`` if the upstream asks for a client one."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        if ca:
            context.load_verify_locations(cafile=ca)
        if certfile:
            context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError("hivewire.shim.upstream.ssl.ca", f"cannot load the upstream TLS files: {e}") from e
    return context
