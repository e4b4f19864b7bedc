"""SASL towards the metastore: who the client is (:class:`SaslAuth`) and the handshake on a connected socket.

The handshake is Thrift's own SASL negotiation (``TSaslClientTransport`` of the thrift library, with
pure-sasl's mechanisms): PLAIN and DIGEST-MD5 with a user name and password, GSSAPI (Kerberos) with the
ticket of the process (``kinit``) and the server's principal, as Hive's ``hive.metastore.sasl.enabled`` and
``hive.metastore.kerberos.principal`` describe it. A refusal or a failed negotiation becomes a
:class:`~hivewire.errors.MetastoreAuthError` that says what to check; the handshake is bounded by a timeout,
so a metastore that does not speak SASL costs that timeout, not a hang.
"""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from thrift.transport import TSocket, TTransport

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError, MetastoreAuthError, PrerequisiteError

Mechanism = Literal["PLAIN", "DIGEST-MD5", "GSSAPI"]
MECHANISMS: tuple[Mechanism, ...] = ("PLAIN", "DIGEST-MD5", "GSSAPI")

#: The SASL qualities of protection: ``auth`` (authentication only, Hive's default
#: ``hadoop.rpc.protection=authentication``), ``auth-int`` (integrity) and ``auth-conf`` (privacy).
ALL_QOPS = ("auth", "auth-int", "auth-conf")

_BY_NAME: dict[str, Mechanism] = {m: m for m in MECHANISMS}


@dataclass(frozen=True)
class SaslAuth:
    """How to authenticate to the metastore with SASL.

    ``mechanism``: ``"PLAIN"``, ``"DIGEST-MD5"`` or ``"GSSAPI"`` (Kerberos). PLAIN and DIGEST-MD5 take
    ``username`` and ``password``; DIGEST-MD5 also names the server as ``service/host`` (``service``, default
    ``hive``; the host is the metastore URI's). GSSAPI takes the metastore's ``principal`` as Hive writes it
    (``hive/_HOST@REALM``: ``_HOST`` becomes the metastore URI's host, lower-cased) and the process's Kerberos
    ticket; ``username``, if given, picks the client principal. The password never appears in a repr.
    """

    mechanism: Mechanism
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    principal: str | None = None
    service: str = "hive"

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ConfigError(
                keys.METASTORE_SASL_MECHANISM.name,
                f"{self.mechanism!r} is not one of {', '.join(MECHANISMS)}",
            )
        if self.mechanism == "GSSAPI":
            if not self.principal:
                raise ConfigError(
                    keys.METASTORE_KERBEROS_PRINCIPAL.name,
                    "GSSAPI (Kerberos) needs the metastore's principal, as Hive's "
                    "hive.metastore.kerberos.principal gives it (hive/_HOST@EXAMPLE.COM)",
                )
            server_principal(self.principal, "metastore.example")  # fails early on a malformed principal
        elif not self.username or self.password is None:
            raise ConfigError(
                keys.METASTORE_SASL_USERNAME.name if not self.username else keys.METASTORE_SASL_PASSWORD.name,
                f"SASL {self.mechanism} needs a user name ({keys.METASTORE_SASL_USERNAME.name}) and a password "
                f"({keys.METASTORE_SASL_PASSWORD.name}, which also takes file:PATH or env:NAME)",
            )

    @classmethod
    def from_config(cls, config: Config) -> SaslAuth | None:
        """The SASL settings of a configuration, or None when SASL is off.

        ``hivewire.metastore.sasl.mechanism`` turns SASL on with that mechanism; Hive's
        ``hive.metastore.sasl.enabled=true`` alone means Kerberos (GSSAPI), as it does for Hive's client.
        """
        mechanism = config.optional(keys.METASTORE_SASL_MECHANISM)
        enabled = config.optional(keys.METASTORE_SASL_ENABLED)
        if mechanism is None and not enabled:
            return None
        if enabled is False and mechanism is not None:
            raise ConfigError(
                config.provenance(keys.METASTORE_SASL_ENABLED).name,
                f"is false while {keys.METASTORE_SASL_MECHANISM.name} is {mechanism}: remove one of the two",
            )
        return cls(
            mechanism=_BY_NAME[mechanism or "GSSAPI"],
            username=config.optional(keys.METASTORE_SASL_USERNAME),
            password=config.optional(keys.METASTORE_SASL_PASSWORD),
            principal=config.optional(keys.METASTORE_KERBEROS_PRINCIPAL),
            service=config.read(keys.METASTORE_SASL_SERVICE),
        )

    def server(self, host: str) -> tuple[str, str]:
        """The SASL service name and server host for a metastore on ``host``."""
        if self.mechanism == "GSSAPI":
            assert self.principal is not None  # checked in __post_init__
            service, server_host, _realm = server_principal(self.principal, host)
            return service, server_host
        return self.service, host

    def describe(self) -> str:
        """The mechanism and who authenticates (never the password)."""
        if self.mechanism == "GSSAPI":
            return f"GSSAPI (Kerberos, server principal {self.principal})"
        return f"{self.mechanism} as user {self.username!r}"


def server_principal(principal: str, host: str) -> tuple[str, str, str]:
    """``service/host@REALM`` split into its three parts, ``_HOST`` replaced by ``host`` lower-cased.

    As Hadoop's ``SecurityUtil.getServerPrincipal`` does for Hive's client (``0.0.0.0`` or an empty host
    become this machine's name).
    """
    service, slash, rest = principal.partition("/")
    server_host, at, realm = rest.partition("@")
    if not (service and slash and server_host and at and realm) or "/" in rest or "@" in realm:
        raise ConfigError(
            keys.METASTORE_KERBEROS_PRINCIPAL.name,
            f"{principal!r} is not a Kerberos service principal service/host@REALM (such as hive/_HOST@EXAMPLE.COM)",
        )
    if server_host == "_HOST":
        server_host = (host if host and host != "0.0.0.0" else socket.getfqdn()).lower()
    return service, server_host, realm


class _Refused(Exception):
    """The server answered the negotiation with BAD or ERROR."""


def _authenticated(
    sock: TSocket.TSocket, host: str, service: str, mechanism: str, options: dict[str, Any]
) -> TTransport.TTransportBase:
    """thrift's SASL client transport (the framing and pure-sasl's wrapping), after the negotiation.

    The negotiation is thrift's ``TSaslClientTransport.open()`` written out, because before thrift 0.23
    that sends None as an empty initial response and ignores the server's last message, which DIGEST-MD5
    needs (``rspauth``); and so that the server's BAD/ERROR answer is told apart from other failures.
    """
    transport = TTransport.TSaslClientTransport(sock, host, service, mechanism, **options)
    sasl = transport.sasl
    transport.send_sasl_msg(transport.START, mechanism.encode("ascii"))
    transport.send_sasl_msg(transport.OK, sasl.process() or b"")
    while True:
        status, payload = transport.recv_sasl_msg()
        payload = payload if isinstance(payload, bytes) else b""  # thrift < 0.23 gives "" for none
        if status == transport.OK:
            transport.send_sasl_msg(transport.OK, sasl.process(payload) or b"")
        elif status == transport.COMPLETE:
            if payload:
                sasl.process(payload)  # DIGEST-MD5's rspauth: pure-sasl checks the server knew the password
            if not sasl.complete:
                raise _Refused("the server ended the negotiation before the client was done")
            return transport
        else:
            raise _Refused(payload.decode("utf-8", "replace") or f"status {status}")


def negotiate(
    handle: socket.socket,
    host: str,
    auth: SaslAuth,
    *,
    uri: str,
    timeout: float,
    qops: Sequence[str] = ALL_QOPS,
) -> TTransport.TTransportBase:
    """Authenticate on the connected socket ``handle``; the SASL transport to talk through afterwards.

    The handshake is bounded by ``timeout`` seconds; the transport's socket keeps that timeout (set another
    with its ``transport.setTimeout``). With the ``auth`` quality of protection the transport's bytes are
    Thrift's framed transport; ``qops`` limits which the client accepts. Raises
    :class:`~hivewire.errors.MetastoreAuthError` saying what to check.
    """
    if auth.mechanism == "GSSAPI" and importlib.util.find_spec("kerberos") is None:
        # pure-sasl's GSSAPI runs on pykerberos, which builds against the system's Kerberos library.
        raise PrerequisiteError(
            "SASL GSSAPI (Kerberos) needs the kerberos package (pykerberos): pip install kerberos "
            "(it builds against the system's libkrb5: apt-get install libkrb5-dev)"
        )
    sock = TSocket.TSocket(host, 0)
    sock.setHandle(handle)
    sock.setTimeout(timeout * 1000)
    service, server_host = auth.server(host)
    options: dict[str, Any] = {"qops": [q.encode() for q in qops]}
    if auth.mechanism == "GSSAPI":
        if auth.username:
            options["principal"] = auth.username
    else:
        options.update(username=auth.username, password=auth.password)
    who = auth.describe()
    try:
        transport = _authenticated(sock, server_host, service, auth.mechanism, options)
    except _Refused as e:
        raise MetastoreAuthError(
            f"{uri}: the metastore refused SASL {who}: {e}; check the user name and password "
            f"({keys.METASTORE_SASL_USERNAME.name}, {keys.METASTORE_SASL_PASSWORD.name}) and that the metastore "
            f"offers {auth.mechanism} ({keys.METASTORE_SASL_MECHANISM.name})",
            uri=uri,
        ) from None
    except TTransport.TTransportException as e:
        if e.type == TTransport.TTransportException.TIMED_OUT:
            detail = f"no SASL answer within {timeout:g} s"
        else:
            detail = f"the connection closed during SASL negotiation ({e.message or e})"
        raise MetastoreAuthError(
            f"{uri}: {detail} ({who}); check that the metastore uses SASL (hive.metastore.sasl.enabled=true) "
            f"and offers {auth.mechanism}, or turn SASL off for a metastore without it",
            uri=uri,
        ) from None
    except OSError as e:
        raise MetastoreAuthError(
            f"{uri}: the connection failed during SASL negotiation ({who}): {e.strerror or e}", uri=uri
        ) from None
    except Exception as e:  # pure-sasl's SASLError/SASLProtocolException, or a kerberos.GSSError
        raise MetastoreAuthError(
            f"{uri}: SASL {who} failed: {type(e).__name__}: {e}; check the mechanism "
            f"({keys.METASTORE_SASL_MECHANISM.name}), the credentials, and for GSSAPI the Kerberos ticket "
            f"(klist) and {keys.METASTORE_KERBEROS_PRINCIPAL.name}",
            uri=uri,
        ) from None
    return transport


def qop_of(transport: TTransport.TTransportBase) -> str:
    """The quality of protection a :func:`negotiate` transport agreed on (``auth``, ``auth-int``, ``auth-conf``)."""
    qop = getattr(getattr(transport, "sasl", None), "qop", b"auth")
    return qop.decode() if isinstance(qop, bytes) else str(qop)
