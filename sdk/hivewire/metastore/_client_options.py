"""The metastore client's options as Hive's client keys set them (``metastore.thrift.*``, with ``hive.*`` aliases),
and the checks of its call arguments (``max_parts``, ``ugi``, a catalog in a database name)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._files import load_hive_site
from hivewire.errors import ConfigError
from hivewire.metastore._sasl import SaslAuth

Transport = Literal["buffered", "framed"]
ProtocolName = Literal["binary", "compact"]
Selection = Literal["sequential", "random"]

ConfSource = Mapping[str, str] | str | os.PathLike[str]
"""A Hive configuration: a mapping of keys to values (a :class:`~hivewire.config.Config` too), or the path of a
``hive-site.xml``."""


class ClientKeywords(TypedDict, total=False):
    """The keyword options of :class:`~hivewire.metastore.MetastoreClient` (what ``from_zookeeper`` and
    ``from_hive_conf`` pass on, and what a configuration sets)."""

    timeout: float
    connect_timeout: float
    transport: Transport
    protocol: ProtocolName
    ugi: str | tuple[str, Sequence[str]] | None
    selection: Selection
    sasl: SaslAuth | None


@dataclass(frozen=True)
class ClientOptions:
    """What Hive's client keys say about the connection; None where the configuration says nothing (the
    client's own default applies). ``timeout`` is in seconds."""

    transport: Transport | None = None
    protocol: ProtocolName | None = None
    selection: Selection | None = None
    timeout: float | None = None
    sasl: SaslAuth | None = None

    @classmethod
    def from_config(cls, config: Config) -> ClientOptions:
        """``metastore.thrift.framed.transport.enabled``, ``...compact.protocol.enabled``,
        ``metastore.thrift.uri.selection``, ``metastore.client.socket.timeout`` (and their aliases), and SASL
        (``metastore.sasl.enabled``, ``hivewire.metastore.sasl.*``, ``metastore.kerberos.principal``)."""
        framed = config.optional(keys.FRAMED)
        compact = config.optional(keys.COMPACT)
        selection = config.optional(keys.URI_SELECTION)
        return cls(
            transport=None if framed is None else ("framed" if framed else "buffered"),
            protocol=None if compact is None else ("compact" if compact else "binary"),
            selection=None if selection is None else ("random" if selection == "RANDOM" else "sequential"),
            timeout=config.optional(keys.SOCKET_TIMEOUT),
            sasl=SaslAuth.from_config(config),
        )

    def keywords(self) -> ClientKeywords:
        """The options the configuration sets, as keyword arguments of the client."""
        out = ClientKeywords()
        if self.transport is not None:
            out["transport"] = self.transport
        if self.protocol is not None:
            out["protocol"] = self.protocol
        if self.selection is not None:
            out["selection"] = self.selection
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.sasl is not None:
            out["sasl"] = self.sasl
        return out


def load_conf(conf: ConfSource) -> Config:
    """A Hive configuration as a :class:`~hivewire.config.Config`: a mapping's keys, or a ``hive-site.xml``'s."""
    if isinstance(conf, Config):
        return conf
    if isinstance(conf, Mapping):
        return Config({str(k): v for k, v in conf.items() if v is not None})
    if str(conf).lower().endswith(".xml"):
        return Config.load(file=conf, env={})
    return Config(load_hive_site(conf))


def hive_client_options(conf: ConfSource) -> ClientKeywords:
    """:class:`~hivewire.metastore.MetastoreClient` keyword arguments implied by Hive's client keys."""
    return ClientOptions.from_config(load_conf(conf)).keywords()


def in_catalog(db_name: str, catalog: str | None) -> str:
    """A database name for a call without a catalog field: ``@catalog#db``, as Hive's 3.0+ client sends it."""
    return db_name if catalog is None else f"@{catalog}#{db_name}"


def max_parts_arg(value: int) -> int:
    """Hive's ``max_parts`` is an i16 on the wire: fail clearly instead of sending what cannot be encoded."""
    if type(value) is not int or not -1 <= value <= 32767:
        raise ConfigError(
            "max_parts",
            f"{value!r} is out of range: the metastore takes -1 (all) or 0..32767; "
            "for more, pass -1 and slice the result, or list names and fetch by name",
        )
    return value


def parse_ugi(ugi: str | tuple[str, Sequence[str]] | None) -> tuple[str, list[str]] | None:
    if ugi is None:
        return None
    if isinstance(ugi, str):
        user, _, groups = ugi.partition(":")
        if not user:
            raise ConfigError("ugi", f"{ugi!r} is not 'user' or 'user:group1,group2'")
        return user, [g for g in groups.split(",") if g]
    return ugi[0], list(ugi[1])
