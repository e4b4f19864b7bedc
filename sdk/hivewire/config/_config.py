"""Configuration: flat ``key=value`` settings from a file, the environment and flags, with Drone Fly's keys.

Keys are dotted strings, as in Drone Fly (``apiary.bootstrap.servers``, ``apiary.kafka.topic.name``,
``apiary.listener.list``, ``instance.name``, ``endpoint.port``, ``apiary.messaging.consumer.*``) plus
hivewire's own ``hivewire.*`` keys and Hive's metastore keys (``metastore.thrift.uris``/``hive.metastore.uris``,
``metastore.service.discovery.mode``, ``metastore.zookeeper.*``, ...).

Sources, later ones winning: built-in defaults, the app's own settings, a ``.properties`` or ``.toml`` file,
environment variables (``APIARY_BOOTSTRAP_SERVERS`` -> ``apiary.bootstrap.servers``, as Spring maps them for
Drone Fly), and explicit overrides (CLI flags). :class:`Settings` validates the runtime's keys and raises
:class:`~hivewire.errors.ConfigError` naming the key. An unknown ``hivewire.*`` key is an error when it
comes from a file, the app or a flag (most likely a typo), but only logged when it comes from the
environment: Kubernetes injects ``<SERVICE>_SERVICE_HOST``/``<SERVICE>_PORT`` for every Service, so a
Service named ``hivewire`` would otherwise stop the app.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import javaproperties

from hivewire.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]


log = logging.getLogger("hivewire.config")

#: Environment variables whose dotted form starts with one of these are read as settings.
ENV_PREFIXES = ("apiary.", "instance.", "endpoint.", "hivewire.", "metastore.", "hive.metastore.")

# Every hivewire.* key the runtime understands, with its default (as text, like every setting).
DEFAULTS: dict[str, str] = {
    "instance.name": "drone-fly",
    "endpoint.port": "8008",
    "hivewire.dead.letter.topic": "",  # empty: <topic>.dlq
    "hivewire.retry.max.attempts": "5",
    "hivewire.retry.initial.delay.ms": "1000",
    "hivewire.retry.multiplier": "2.0",
    "hivewire.retry.max.delay.ms": "60000",
    "hivewire.listener.timeout.ms": "300000",
    "hivewire.listener.max.abandoned.threads": "8",
    # A listener's backlog held in memory: whichever bound is reached first. Beyond it the listener reads
    # what comes next again from the topic while another keeps up (overflow=reread; when none does,
    # consumption pauses), or consumption pauses for everyone (pause).
    "hivewire.listener.queue.size": "50000",
    "hivewire.listener.queue.bytes": str(256 * 1024 * 1024),
    "hivewire.listener.overflow": "reread",
    "hivewire.consumer.batch.size": "500",
    "hivewire.commit.interval.ms": "1000",
    "hivewire.shutdown.timeout.ms": "30000",
    "hivewire.gc.tuning": "true",
}

#: Every ``hivewire.*`` key anything in hivewire reads: the runtime's (:data:`DEFAULTS`) and ZooKeeper
#: discovery's (:meth:`hivewire.discovery.DiscoveryConfig.from_conf`), which have no default.
KNOWN_KEYS: frozenset[str] = frozenset(DEFAULTS) | {
    "hivewire.zookeeper.auth",
    "hivewire.zookeeper.ssl.certfile",
    "hivewire.zookeeper.ssl.keyfile",
    "hivewire.zookeeper.ssl.keyfile.password",
    "hivewire.zookeeper.ssl.ca",
    "hivewire.zookeeper.ssl.verify",
}


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    elif isinstance(value, list):
        out[prefix] = ",".join(str(v) for v in value)
    else:
        out[prefix] = str(value)


def _read_file(path: Path) -> dict[str, str]:
    try:
        if path.suffix == ".toml":
            with path.open("rb") as f:
                data = tomllib.load(f)
            out: dict[str, str] = {}
            _flatten("", data, out)
            return out
        with path.open(encoding="utf-8") as f:
            return dict(javaproperties.load(f))
    except FileNotFoundError as e:
        raise ConfigError("--config", f"no such file: {path}") from e
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        raise ConfigError("--config", f"cannot read {path}: {e}") from e


def _from_env(env: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for name, value in env.items():
        key = name.lower().replace("_", ".")
        if key.startswith(ENV_PREFIXES):
            out[key] = value
    return out


class Config(Mapping[str, str]):
    """Immutable flat settings. Build one with :meth:`load`; read it like a dict of strings.

    ``from_env`` names the keys whose value came from environment variables (see :attr:`env_keys`).
    """

    def __init__(self, values: Mapping[str, Any] | None = None, *, from_env: Iterable[str] = ()) -> None:
        flat: dict[str, str] = {}
        _flatten("", dict(values or {}), flat)
        self._values = flat
        self._env_keys = frozenset(from_env) & flat.keys()

    @classmethod
    def load(
        cls,
        *,
        file: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
        base: Mapping[str, Any] | None = None,
    ) -> Config:
        """Merge ``base`` (the app's settings), ``file``, ``env`` (default: ``os.environ``) and ``overrides``."""
        environment = _from_env(os.environ if env is None else env)
        flags = Config(overrides)
        merged: dict[str, str] = {}
        for layer in (Config(base), _read_file(Path(file)) if file else {}, environment, flags):
            merged.update(layer)
        return cls(merged, from_env=environment.keys() - flags.keys())

    @property
    def env_keys(self) -> frozenset[str]:
        """The keys whose value came from an environment variable (not overridden by a flag)."""
        return self._env_keys

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        shown = {k: ("***" if _secret(k) else v) for k, v in sorted(self._values.items())}
        return f"Config({shown})"

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """The settings under ``prefix`` (e.g. ``apiary.messaging.consumer.``), with the prefix removed."""
        return {k[len(prefix) :]: v for k, v in self._values.items() if k.startswith(prefix) and len(k) > len(prefix)}

    def merged(self, overrides: Mapping[str, Any]) -> Config:
        """A copy with ``overrides`` applied."""
        extra = Config(overrides)._values
        return Config({**self._values, **extra}, from_env=self._env_keys - extra.keys())

    # -- typed access (every error names the key) -----------------------------------------------------
    def text(self, key: str, default: str | None = None) -> str:
        value = self._values.get(key, DEFAULTS.get(key, default))
        if value is None or value.strip() == "":
            if default is not None:
                return default
            raise ConfigError(key, "is required")
        return value.strip()

    def integer(self, key: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
        raw = self.text(key)
        try:
            value = int(raw)
        except ValueError as e:
            raise ConfigError(key, f"{raw!r} is not a whole number") from e
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            raise ConfigError(key, f"{value} must be {bounds}")
        return value

    def flag(self, key: str) -> bool:
        raw = self.text(key).lower()
        if raw not in ("true", "false"):
            raise ConfigError(key, f"{raw!r} is not true or false")
        return raw == "true"

    def number(self, key: str, *, minimum: float | None = None) -> float:
        raw = self.text(key)
        try:
            value = float(raw)
        except ValueError as e:
            raise ConfigError(key, f"{raw!r} is not a number") from e
        if minimum is not None and value < minimum:
            raise ConfigError(key, f"{value} must be at least {minimum}")
        return value


def _secret(key: str) -> bool:
    return any(word in key for word in ("password", "secret", "jaas", "token", "credentials"))


# -- Drone Fly's Java Kafka consumer properties --------------------------------------------------------------
# ``apiary.messaging.consumer.*`` holds Java KafkaConsumer properties in a Drone Fly file. librdkafka shares
# most names; these have another name (or form) there, or none at all.

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
CONSUMER_PREFIX = "apiary.messaging.consumer."


@dataclass(frozen=True)
class ConsumerSettings:
    """``apiary.messaging.consumer.*`` turned into librdkafka settings (see :func:`consumer_settings`).

    ``origins`` names the setting each translated librdkafka key came from (``fetch.wait.max.ms`` ->
    ``fetch.max.wait.ms``), so errors can name the key the user wrote.
    """

    config: dict[str, Any]
    ignored: tuple[str, ...]
    max_poll_records: int | None
    origins: dict[str, str]


def consumer_settings(raw: Mapping[str, Any]) -> ConsumerSettings:
    """Translate Drone Fly's Java consumer properties (prefix removed) for librdkafka.

    Properties librdkafka knows by the same name pass unchanged (librdkafka validates them when the consumer
    is created, and a value it rejects stops the app with a :class:`~hivewire.errors.ConfigError` naming the
    key). Java names and forms with an equivalent are translated: ``max.poll.records`` becomes the runtime's
    batch size (in :class:`Settings`), ``fetch.max.wait.ms`` ``fetch.wait.max.ms``, assignor class names
    librdkafka's strategy names, ``sasl.jaas.config`` for PLAIN, SCRAM and Kerberos ``sasl.username`` and
    ``sasl.password`` or the keytab and principal, a PEM trust store ``ssl.ca.location``, ... Java-only properties
    (:data:`JAVA_ONLY_CONSUMER_KEYS`) are returned in ``ignored``.
    """
    out: dict[str, Any] = {}
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
                max_poll = int(value)
            except ValueError as e:
                raise ConfigError(full, f"{value!r} is not a whole number") from e
            if not 1 <= max_poll <= 100_000:
                raise ConfigError(full, f"{max_poll} must be between 1 and 100000")
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


@dataclass(frozen=True)
class Settings:
    """The runtime's validated settings (see :data:`DEFAULTS` for the keys)."""

    bootstrap_servers: str
    topic: str
    instance_name: str
    endpoint_port: int
    consumer_config: dict[str, str]
    dead_letter_topic: str
    retry_max_attempts: int
    retry_initial_delay: float
    retry_multiplier: float
    retry_max_delay: float
    listener_timeout: float
    max_abandoned_threads: int
    queue_size: int
    queue_bytes: int
    reread: bool
    batch_size: int
    commit_interval: float
    shutdown_timeout: float
    tune_gc: bool
    listener_list: tuple[str, ...]

    @classmethod
    def from_config(cls, config: Config, *, need_kafka: bool = True) -> Settings:
        unknown = sorted(k for k in config if k.startswith("hivewire.") and k not in KNOWN_KEYS)
        from_env = [k for k in unknown if k in config.env_keys]
        if from_env:
            log.info(
                "ignoring environment variables that are not hivewire settings: %s",
                ", ".join(k.upper().replace(".", "_") for k in from_env),
            )
        typos = [k for k in unknown if k not in config.env_keys]
        if typos:
            key = typos[0]
            close = difflib.get_close_matches(key, sorted(KNOWN_KEYS), n=1)
            raise ConfigError(
                key,
                "unknown setting"
                + (f"; did you mean {close[0]}?" if close else "; see docs/runtime.md for the hivewire.* keys"),
            )
        bootstrap_servers = config.text("apiary.bootstrap.servers", None if need_kafka else "")
        topic = config.text("apiary.kafka.topic.name", None if need_kafka else "")
        raw_consumer = config.with_prefix(CONSUMER_PREFIX)
        consumer = consumer_settings(raw_consumer)  # KafkaSource translates them; validated here, at start
        batch_size = config.integer("hivewire.consumer.batch.size", minimum=1, maximum=100_000)
        if consumer.max_poll_records is not None and "hivewire.consumer.batch.size" not in config:
            batch_size = consumer.max_poll_records
        return cls(
            bootstrap_servers=bootstrap_servers,
            topic=topic,
            instance_name=config.text("instance.name"),
            endpoint_port=config.integer("endpoint.port", minimum=0, maximum=65535),
            consumer_config=raw_consumer,
            dead_letter_topic=config.text("hivewire.dead.letter.topic", f"{topic}.dlq"),
            retry_max_attempts=config.integer("hivewire.retry.max.attempts", minimum=1),
            retry_initial_delay=config.number("hivewire.retry.initial.delay.ms", minimum=0) / 1000,
            retry_multiplier=config.number("hivewire.retry.multiplier", minimum=1),
            retry_max_delay=config.number("hivewire.retry.max.delay.ms", minimum=0) / 1000,
            listener_timeout=config.number("hivewire.listener.timeout.ms", minimum=1) / 1000,
            queue_size=config.integer("hivewire.listener.queue.size", minimum=1),
            queue_bytes=config.integer("hivewire.listener.queue.bytes", minimum=1),
            reread=_overflow(config.text("hivewire.listener.overflow")),
            max_abandoned_threads=config.integer("hivewire.listener.max.abandoned.threads", minimum=0),
            batch_size=batch_size,
            commit_interval=config.number("hivewire.commit.interval.ms", minimum=1) / 1000,
            shutdown_timeout=config.number("hivewire.shutdown.timeout.ms", minimum=0) / 1000,
            tune_gc=config.flag("hivewire.gc.tuning"),
            listener_list=tuple(p.strip() for p in config.get("apiary.listener.list", "").split(",") if p.strip()),
        )


def _overflow(value: str) -> bool:
    """``hivewire.listener.overflow``: True for ``reread``, False for ``pause``."""
    choice = value.strip().lower()
    if choice not in ("reread", "pause"):
        raise ConfigError("hivewire.listener.overflow", f"must be reread or pause, not {value!r}")
    return choice == "reread"
