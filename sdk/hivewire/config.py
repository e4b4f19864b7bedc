"""Configuration: flat ``key=value`` settings from a file, the environment and flags, with Drone Fly's keys.

Keys are dotted strings, as in Drone Fly (``apiary.bootstrap.servers``, ``apiary.kafka.topic.name``,
``apiary.listener.list``, ``instance.name``, ``endpoint.port``, ``apiary.messaging.consumer.*``) plus
hivewire's own ``hivewire.*`` keys and Hive's metastore keys (``metastore.thrift.uris``/``hive.metastore.uris``,
``metastore.service.discovery.mode``, ``metastore.zookeeper.*``, ...).

Sources, later ones winning: built-in defaults, the app's own settings, a ``.properties`` or ``.toml`` file,
environment variables (``APIARY_BOOTSTRAP_SERVERS`` -> ``apiary.bootstrap.servers``, as Spring maps them for
Drone Fly), and explicit overrides (CLI flags). :class:`Settings` validates the runtime's keys and raises
:class:`~hivewire.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import javaproperties

from hivewire.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

__all__ = ["ENV_PREFIXES", "Config", "Settings"]

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
    "hivewire.listener.queue.size": "10000",
    "hivewire.consumer.batch.size": "500",
    "hivewire.commit.interval.ms": "1000",
    "hivewire.shutdown.timeout.ms": "30000",
    "hivewire.gc.tuning": "true",
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
    """Immutable flat settings. Build one with :meth:`load`; read it like a dict of strings."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        flat: dict[str, str] = {}
        _flatten("", dict(values or {}), flat)
        self._values = flat

    @classmethod
    def load(cls, *, file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
             overrides: Mapping[str, Any] | None = None, base: Mapping[str, Any] | None = None) -> Config:
        """Merge ``base`` (the app's settings), ``file``, ``env`` (default: ``os.environ``) and ``overrides``."""
        merged: dict[str, str] = {}
        for layer in (Config(base), _read_file(Path(file)) if file else {},
                      _from_env(os.environ if env is None else env), Config(overrides)):
            merged.update(layer)
        return cls(merged)

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
        return {k[len(prefix):]: v for k, v in self._values.items() if k.startswith(prefix) and len(k) > len(prefix)}

    def merged(self, overrides: Mapping[str, Any]) -> Config:
        """A copy with ``overrides`` applied."""
        return Config({**self._values, **Config(overrides)._values})

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
    queue_size: int
    batch_size: int
    commit_interval: float
    shutdown_timeout: float
    tune_gc: bool
    listener_list: tuple[str, ...]

    @classmethod
    def from_config(cls, config: Config, *, need_kafka: bool = True) -> Settings:
        unknown = [k for k in config if k.startswith("hivewire.") and k not in DEFAULTS]
        if unknown:
            key = unknown[0]
            close = difflib.get_close_matches(key, DEFAULTS, n=1)
            raise ConfigError(key, "unknown setting" + (f"; did you mean {close[0]}?" if close else ""))
        bootstrap_servers = config.text("apiary.bootstrap.servers", None if need_kafka else "")
        topic = config.text("apiary.kafka.topic.name", None if need_kafka else "")
        return cls(
            bootstrap_servers=bootstrap_servers,
            topic=topic,
            instance_name=config.text("instance.name"),
            endpoint_port=config.integer("endpoint.port", minimum=0, maximum=65535),
            consumer_config=config.with_prefix("apiary.messaging.consumer."),
            dead_letter_topic=config.text("hivewire.dead.letter.topic", f"{topic}.dlq"),
            retry_max_attempts=config.integer("hivewire.retry.max.attempts", minimum=1),
            retry_initial_delay=config.number("hivewire.retry.initial.delay.ms", minimum=0) / 1000,
            retry_multiplier=config.number("hivewire.retry.multiplier", minimum=1),
            retry_max_delay=config.number("hivewire.retry.max.delay.ms", minimum=0) / 1000,
            listener_timeout=config.number("hivewire.listener.timeout.ms", minimum=1) / 1000,
            queue_size=config.integer("hivewire.listener.queue.size", minimum=1),
            batch_size=config.integer("hivewire.consumer.batch.size", minimum=1, maximum=100_000),
            commit_interval=config.number("hivewire.commit.interval.ms", minimum=1) / 1000,
            shutdown_timeout=config.number("hivewire.shutdown.timeout.ms", minimum=0) / 1000,
            tune_gc=config.flag("hivewire.gc.tuning"),
            listener_list=tuple(p.strip() for p in config.get("apiary.listener.list", "").split(",") if p.strip()),
        )
