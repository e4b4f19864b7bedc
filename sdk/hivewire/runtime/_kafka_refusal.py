"""Kafka refusing a client: wrong credentials, an untrusted certificate, a missing ACL; one line saying what to fix.

librdkafka reports these as errors it retries for ever (a SASL failure is ``_AUTHENTICATION``, a broker
certificate the client cannot verify ``_SSL``, a client certificate the broker refuses a ``_TRANSPORT`` error
carrying the TLS alert, a missing ACL ``*_AUTHORIZATION_FAILED``), so a client would log the same failure
every few hundred milliseconds and never stop. Retrying cannot help: the settings, the certificate or the ACLs
must change. :func:`refusal` recognises them and writes the one line a user needs: what was refused, the
setting to check (under the key prefix the command reads it from: ``apiary.messaging.consumer.sasl.password``,
which ``-X sasl.password`` sets; ``hivewire.shim.producer.sasl.password`` for the shim), the principal and, for
an ACL, the ``kafka-acls`` grant that is missing. :class:`RefusalLog` keeps librdkafka's own line per retry at
DEBUG.

Invariant: a :class:`Refusal`'s message holds no secret. It names settings, never their values (only
``sasl.username``, which is the principal the broker's ACLs name anyway), and quotes librdkafka's reason only
after removing anything that looks like a credential.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from confluent_kafka import KafkaError

__all__ = ["Refusal", "RefusalLog", "principal", "refusal"]

#: TLS alerts a broker sends when it refuses the client's certificate (or gets none while it requires one).
_CERTIFICATE_ALERTS = re.compile(
    r"alert (bad certificate|unknown ca|certificate unknown|certificate required|certificate expired"
    r"|unsupported certificate|certificate revoked|access denied)",
    re.I,
)
_VERIFY_FAILED = re.compile(r"certificate verify failed|unable to get local issuer|self.signed certificate", re.I)
_AUTHORIZATION = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "topic",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "group",
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: "cluster",
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "transactional-id",
}
#: librdkafka log lines that report a refusal (each retry logs one).
_REFUSAL_LINE = re.compile(
    r"SASL authentication error|certificate verify failed|No matching issuer found|" + _CERTIFICATE_ALERTS.pattern,
    re.I,
)
# Whatever follows these words in a reason is not quoted (librdkafka never prints secrets; this is a second belt).
_SECRET_TEXT = re.compile(r"(password|secret|token)\s*[=:]\s*\S+", re.I)


@dataclass(frozen=True)
class Refusal:
    """Kafka refused the client for good: ``kind`` is ``authentication``, ``certificate`` or ``authorization``;
    ``message`` is one line naming what to check."""

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


def principal(settings: Mapping[str, object]) -> str:
    """The principal the broker sees for a client with ``settings`` (librdkafka's), as ACLs name it."""
    protocol = str(settings.get("security.protocol", "plaintext")).lower()
    if protocol.startswith("sasl") and settings.get("sasl.username"):
        return f"User:{settings['sasl.username']}"
    if protocol == "ssl" and settings.get("ssl.certificate.location"):
        return (
            f"the principal of the certificate {settings['ssl.certificate.location']} (its subject, as the "
            "brokers' ssl.principal.mapping.rules map it)"
        )
    if protocol == "ssl":
        return "the principal of this client's certificate"
    return "this client's principal"


def refusal(
    error: KafkaError,
    *,
    servers: str,
    settings: Mapping[str, object],
    option: str,
    operation: str = "READ",
    resource: str = "",
) -> Refusal | None:
    """What ``error`` means if Kafka refused the client for good, else None (a connection error, ...).

    ``settings`` are the client's librdkafka settings (only names and the SASL user are read), ``option`` the
    key prefix the command takes them under (``apiary.messaging.consumer.``: each setting is named with it),
    ``operation`` and ``resource`` what the client was doing (``WRITE``, the topic ``apiary.dlq``) for an
    authorisation failure.
    """
    code = error.code()
    reason = _SECRET_TEXT.sub(r"\1 ***", str(error.str()))
    who = principal(settings)
    if code == KafkaError._AUTHENTICATION:
        mechanism = str(settings.get("sasl.mechanism", settings.get("sasl.mechanisms", "GSSAPI")))
        return Refusal(
            "authentication",
            f"Kafka at {servers} refused the SASL {mechanism} credentials of {who}: check {option}sasl.username and "
            f"{option}sasl.password (and sasl.mechanism) against the users the brokers know ({_short(reason)})",
        )
    if code == KafkaError._SSL and _VERIFY_FAILED.search(reason):
        return Refusal(
            "certificate",
            f"could not verify the certificate of Kafka at {servers}: check {option}ssl.ca.location (the CA that "
            f"signed the brokers' certificates) and that the brokers' certificates name the host in "
            f"--bootstrap-servers ({_short(reason)})",
        )
    alert = _CERTIFICATE_ALERTS.search(reason) if code in (KafkaError._TRANSPORT, KafkaError._SSL) else None
    if alert is not None:
        return Refusal(
            "certificate",
            f"Kafka at {servers} refused this client's certificate (TLS {alert.group(0)}): check "
            f"{option}ssl.certificate.location and {option}ssl.key.location (a certificate signed by a CA the "
            "brokers trust: their ssl.truststore)",
        )
    kind = _AUTHORIZATION.get(code)
    note = ""
    if kind == "cluster" and operation == "WRITE" and resource:
        # An idempotent producer asks for a producer id first: Kafka gives one to a principal that may WRITE
        # to some topic (KIP-679), and says "cluster authorization failed" to one that may write nowhere.
        kind, note = "topic", " (the idempotent producer got no producer id: it needs WRITE on the topic)"
    if kind is not None:
        if kind == "group":
            operation = "READ"
        name = resource if kind == "topic" and resource else ""
        if kind == "group":
            name = str(settings.get("group.id", ""))
        target = f"{kind} {name}".strip()
        flag = f"--{kind} {name}" if name and kind in ("topic", "group") else f"--{kind}"
        return Refusal(
            "authorization",
            f"Kafka at {servers} denies {operation} on {target} to {who}{note}: an ACL must allow it (kafka-acls "
            f"--bootstrap-server {servers.split(',')[0]} --add --allow-principal {_acl_principal(who)} --operation "
            f"{operation} {flag}), or connect as a principal that has it ({option}*)",
        )
    return None


def _acl_principal(who: str) -> str:
    return who if who.startswith("User:") else "User:<the certificate's principal>"


def _short(reason: str) -> str:
    """librdkafka's reason without its broker prefix and connection-state suffix."""
    reason = re.sub(r"^\S+://\S+?: ", "", reason)
    return re.sub(r"\s*\(after \d+ms in state \w+\)\s*$", "", reason)


class RefusalLog:
    """A librdkafka ``logger`` that passes its lines to ``logger``, those reporting a refusal at DEBUG only
    (librdkafka logs one per retry; the client's error callback says it once, with :func:`refusal`)."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger

    def log(self, level: int, fmt: str, *args: object) -> None:
        if level > logging.DEBUG and _REFUSAL_LINE.search(fmt % args if args else fmt):
            level = logging.DEBUG
        if self._logger.isEnabledFor(level):
            self._logger.log(level, fmt, *args)
