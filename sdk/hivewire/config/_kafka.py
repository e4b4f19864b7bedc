"""Drone Fly's Java Kafka consumer properties, translated for librdkafka.

``apiary.messaging.consumer.*`` holds Java ``KafkaConsumer`` properties in a Drone Fly file. librdkafka shares
most names; the tables here hold those that have another name (or form) there, or none at all. The
configuration reference (``docs/configuration.md``) lists them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from hivewire.config._config import _secret
from hivewire.config._keys import BATCH_SIZE
from hivewire.config._keys import CONSUMER_PREFIX as _CONSUMER
from hivewire.config._kinds import Invalid, resolve_secret
from hivewire.errors import ConfigError

#: A librdkafka client setting as confluent-kafka takes it: text, a number, a flag, a callback (``error_cb``,
#: ``oauth_cb``) or a :class:`logging.Logger` (``logger``).
KafkaValue: TypeAlias = str | int | float | bool | Callable[..., object] | logging.Logger

CONSUMER_PREFIX = _CONSUMER.name
# Java's max.poll.records sets the runtime's batch size, so it has the same bounds.
_MAX_POLL_RECORDS = BATCH_SIZE.kind

#: Java consumer properties that librdkafka calls differently.
JAVA_CONSUMER_RENAMED: dict[str, str] = {
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "ssl.truststore.certificates": "ssl.ca.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
}

#: Java consumer properties with no librdkafka equivalent (Java classes, JVM security providers, JKS stores,
#: client metrics, login refresh tuning): ignored, with one warning naming them.
JAVA_ONLY_CONSUMER_KEYS: frozenset[str] = frozenset(
    {
        "key.deserializer",
        "value.deserializer",
        "interceptor.classes",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.recording.level",
        "metrics.sample.window.ms",
        "auto.include.jmx.reporter",
        "default.api.timeout.ms",
        "exclude.internal.topics",
        "internal.leave.group.on.close",
        "internal.throw.on.fetch.stable.offset.unsupported",
        "security.providers",
        "socket.connection.setup.timeout.max.ms",
        "ssl.protocol",
        "ssl.enabled.protocols",
        "ssl.provider",
        "ssl.engine.factory.class",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.keystore.type",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "sasl.client.callback.handler.class",
        "sasl.login.callback.handler.class",
        "sasl.login.class",
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
        "sasl.login.refresh.buffer.seconds",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.retry.backoff.max.ms",
        "sasl.login.retry.backoff.ms",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.oauthbearer.clock.skew.seconds",
        "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
        "sasl.oauthbearer.scope.claim.name",
    }
)

_JAVA_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}
_JAAS_LOGIN = re.compile(r"^\s*([\w.$]+)\s+(?:required|requisite|sufficient|optional)\b(.*?);?\s*$", re.S)
_JAAS_OPTION = re.compile(r'([\w.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))')


@dataclass(frozen=True)
class ConsumerSettings:
    """``apiary.messaging.consumer.*`` turned into librdkafka settings (see :func:`consumer_settings`).

    ``origins`` names the setting each translated librdkafka key came from (``fetch.wait.max.ms`` ->
    ``fetch.max.wait.ms``), so errors can name the key the user wrote.
    """

    config: dict[str, KafkaValue]
    ignored: tuple[str, ...]
    max_poll_records: int | None
    origins: dict[str, str]


def consumer_settings(raw: Mapping[str, KafkaValue]) -> ConsumerSettings:
    """Translate Drone Fly's Java consumer properties (prefix removed) for librdkafka.

    Properties librdkafka knows by the same name pass unchanged (librdkafka validates them when the consumer
    is created, and a value it rejects stops the app with a :class:`~hivewire.errors.ConfigError` naming the
    key). Java names and forms with an equivalent are translated: ``max.poll.records`` becomes the runtime's
    batch size (``hivewire.consumer.batch.size``), ``fetch.max.wait.ms`` ``fetch.wait.max.ms``, assignor class
    names librdkafka's strategy names, ``sasl.jaas.config`` for PLAIN, SCRAM and Kerberos ``sasl.username`` and
    ``sasl.password`` or the keytab and principal, a PEM trust store ``ssl.ca.location``, ... Java-only properties
    (:data:`JAVA_ONLY_CONSUMER_KEYS`) are returned in ``ignored``.
    """
    out: dict[str, KafkaValue] = {}
    origins: dict[str, str] = {}
    ignored: list[str] = []
    max_poll: int | None = None
    pem_truststore = str(raw.get("ssl.truststore.type", "")).strip().upper() == "PEM"
    for key, given in raw.items():
        if not isinstance(given, str):  # a Python caller's own librdkafka setting (a callback, a number)
            out[key] = given
            continue
        value = given.strip()
        full = CONSUMER_PREFIX + key
        before = set(out)
        if key == "max.poll.records":
            try:
                max_poll = _MAX_POLL_RECORDS.parse(value)
            except Invalid as e:
                raise ConfigError(full, str(e)) from None
        elif key == "ssl.truststore.location" and pem_truststore:
            out["ssl.ca.location"] = value
        elif key in JAVA_ONLY_CONSUMER_KEYS:
            ignored.append(full)
        elif key in JAVA_CONSUMER_RENAMED:
            out[JAVA_CONSUMER_RENAMED[key]] = "0" if key.endswith("buffer.bytes") and value == "-1" else value
        elif key == "partition.assignment.strategy":
            out[key] = ",".join(_JAVA_ASSIGNORS.get(name.strip(), name.strip()) for name in value.split(","))
        elif key == "auto.offset.reset" and value.lower() == "none":
            out[key] = "error"  # Java's "none": fail when there is no committed offset
        elif key == "client.dns.lookup" and value == "default":
            out[key] = "use_all_dns_ips"
        elif key == "ssl.endpoint.identification.algorithm":
            out[key] = value.lower() or "none"  # Java's empty value turns host name checks off
        elif key == "sasl.jaas.config":
            out.update(_jaas(full, value))
        else:
            out[key] = value
        origins.update((new, key) for new in set(out) - before if new != key)
    return ConsumerSettings(out, tuple(sorted(ignored)), max_poll, origins)


def _jaas(key: str, value: str) -> dict[str, str]:
    """A JAAS login line as librdkafka settings, where librdkafka has them; otherwise the line unchanged
    (librdkafka then refuses it, naming the key)."""
    login = _JAAS_LOGIN.match(value)
    if login is None:
        return {"sasl.jaas.config": value}
    module = login.group(1).rsplit(".", 1)[-1]
    options = {
        m.group(1): re.sub(r"\\(.)", r"\1", m.group(2)) if m.group(2) is not None else m.group(3)
        for m in _JAAS_OPTION.finditer(login.group(2))
    }
    if module in ("PlainLoginModule", "ScramLoginModule") and "username" in options and "password" in options:
        return {"sasl.username": options["username"], "sasl.password": options["password"]}
    if module == "Krb5LoginModule" and "principal" in options:
        out = {"sasl.kerberos.principal": options["principal"]}
        if "keyTab" in options:
            out["sasl.kerberos.keytab"] = options["keyTab"]
        return out
    return {"sasl.jaas.config": value}


def resolve_secrets(settings: Mapping[str, str]) -> dict[str, str]:
    """``settings`` with the value of each secret setting (``sasl.password``, ``ssl.key.password``, ...: the
    names hivewire treats as secrets) read from ``file:PATH`` or ``env:NAME`` where it names one, as
    :meth:`~hivewire.config.Config.with_prefix` does for configured keys. For clients configured outside a
    :class:`~hivewire.config.Config` (the Spark source's ``kafka.*`` options). Raises
    :class:`~hivewire.errors.ConfigError` naming the setting when the file or variable is missing."""
    out = dict(settings)
    for key, value in settings.items():
        if _secret(key):
            try:
                out[key] = resolve_secret(value)
            except Invalid as e:
                raise ConfigError(key, str(e)) from None
    return out
