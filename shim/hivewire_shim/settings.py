"""The shim's settings, declared once: :class:`ShimOptions` (how a :class:`~hivewire_shim.Shim` serves),
:class:`PublishSettings` (where it publishes) and :class:`ShimSettings` (both, and the upstream, read from a
:class:`~hivewire.config.Config`).

Invariants: each setting is one field of :class:`ShimOptions`; a field that a configuration key sets names
that key (``hivewire.config._keys``) in its metadata, takes its default from the key's declaration unless
the field says why it differs, and is read by :meth:`ShimSettings.from_config` through the one typed reader
(``Config.optional``), so the command's flags (``tools/_cli/_shim.py``: a flag per key), the configuration
file and ``Shim(...)`` share the names, kinds and defaults. Values are checked once, when the options are
made, with a :class:`~hivewire.errors.ConfigError` naming the setting.
"""

from __future__ import annotations

import dataclasses
import os
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._key import Key
from hivewire.errors import ConfigError
from hivewire.metastore import SaslAuth
from hivewire_shim.capture import EventOptions
from hivewire_shim.spool import FsyncPolicy
from hivewire_shim.tls import client_context, server_context
from hivewire_shim.wire import DEFAULT_MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from hivewire.metastore._discovery import ZooKeeperResolver
    from hivewire.metastore._zookeeper import DiscoveryConfig
    from hivewire_shim.sinks import Sink

__all__ = ["DEFAULT_HIVE_VERSION", "PublishSettings", "ShimOptions", "ShimSettings"]

T = TypeVar("T")


def _declared(key: Key[T]) -> T:
    """The default ``key`` declares, parsed by its kind (a key read here must declare one)."""
    value = Config({}).optional(key)
    assert value is not None, f"{key.name} declares no default"
    return value


#: The ``hive.version`` events carry unless told otherwise: the metastore in pyspark's jars. fb303
#: ``getVersion`` cannot tell (Hive 2.3 answers "3.0"), so the shim does not guess; see ``--hive-version``.
DEFAULT_HIVE_VERSION: str = _declared(keys.SHIM_HIVE_VERSION)


def _setting(key: Key[T], default: T | None = None) -> T:
    """A field set by ``key``: its default is the key's, unless ``default`` is given."""
    return field(default=_declared(key) if default is None else default, metadata={"key": key})


def _optional(key: Key[T]) -> T | None:
    """A field set by ``key``, which has no default (None: not set)."""
    return field(default=None, metadata={"key": key})


# What a keyword given to Shim(...) must be, by the field's annotation (checked at run time too: the keywords
# are accepted as plain ``**options`` for compatibility, so a type checker cannot see them).
_SCALARS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "str | None": (str, type(None)),
    "int": (int,),
    "int | None": (int, type(None)),
    "float": (int, float),
    "bool": (bool,),
    "ssl.SSLContext | None": (ssl.SSLContext, type(None)),
    "SaslAuth | None": (SaslAuth, type(None)),
}


@dataclass(frozen=True)
class ShimOptions:
    """How a :class:`~hivewire_shim.Shim` serves (times in seconds); every field is also a keyword of
    ``Shim(...)``. The defaults are the configuration keys' (docs/configuration.md, "Shim"), except where
    the shim is embedded in a program: it listens on ``127.0.0.1`` and on a free port (``port=0``, see
    ``Shim.port``) rather than on every address at 9083, as the command does.

    ``host``/``port`` to listen on; ``framed``: the upstream uses the framed transport (clients may use
    either). ``hive_version`` is the events' ``hive.version``; ``publish_failures`` publishes status=false
    events for failed changes; ``database_events`` publishes hivewire's database events. ``timeout`` and
    ``connect_timeout`` bound a call to the upstream and connecting to it. With ``zookeeper`` (a quorum or a
    :class:`~hivewire.metastore.DiscoveryConfig`) the shim registers ``advertise`` (default: this host's
    name and the port) under ``/<namespace>`` (default: the DiscoveryConfig's, else ``hive_metastore``) as
    Hive 4 metastores do. ``max_message_bytes`` caps one client request (Hive's
    ``hive.metastore.server.max.message.size``); a bigger one closes that connection.
    ``lookup_connections`` are kept for the shim's own reads, each bounded by ``read_timeout`` (they run
    under the table's lock: past it the event carries what the request did). ``client_send_timeout``: a
    client that takes nothing of a reply for this long is disconnected (0: never). ``max_connections``
    clients are served at once; ``max_buffered_bytes`` is what all connections may hold for requests.
    ``health_port`` (None: no endpoint; 0: a free one) and ``health_host`` serve ``/health``.
    ``ssl_context`` is how clients connect (None: plain TCP); ``upstream_ssl_context`` and
    ``upstream_sasl`` how the shim reaches the upstream. ``intent_dir`` keeps the changes in flight, so a
    shim killed mid-change publishes their events when it starts again (``intent_fsync``: fsync'ed first).
    """

    # The command's defaults (0.0.0.0, 9083) are the keys'; embedded, the shim listens locally, on a free port.
    host: str = _setting(keys.SHIM_BIND, "127.0.0.1")
    port: int = _setting(keys.SHIM_PORT, 0)
    framed: bool = _setting(keys.SHIM_FRAMED)
    hive_version: str = _setting(keys.SHIM_HIVE_VERSION)
    publish_failures: bool = _setting(keys.SHIM_PUBLISH_FAILURES)
    database_events: bool = _setting(keys.SHIM_DATABASE_EVENTS)
    timeout: float = _setting(keys.SHIM_TIMEOUT)
    connect_timeout: float = _setting(keys.SHIM_CONNECT_TIMEOUT)
    zookeeper: str | DiscoveryConfig | None = None
    namespace: str | None = None
    advertise: str | None = _optional(keys.SHIM_ADVERTISE)
    max_message_bytes: int = _setting(keys.SHIM_MAX_MESSAGE_SIZE)
    lookup_connections: int = _setting(keys.SHIM_LOOKUP_CONNECTIONS)
    client_send_timeout: float = _setting(keys.SHIM_CLIENT_SEND_TIMEOUT)
    read_timeout: float = _setting(keys.SHIM_READ_TIMEOUT)
    max_connections: int = _setting(keys.SHIM_MAX_CONNECTIONS)
    max_buffered_bytes: int = _setting(keys.SHIM_MAX_BUFFERED)
    # The key's 0 (no endpoint) is None here: 0 is a free port, as for ``port``.
    health_port: int | None = field(default=None, metadata={"key": keys.SHIM_HEALTH_PORT, "zero": None})
    health_host: str = _setting(keys.SHIM_HEALTH_HOST)
    ssl_context: ssl.SSLContext | None = None
    upstream_ssl_context: ssl.SSLContext | None = None
    upstream_sasl: SaslAuth | None = None
    intent_dir: str | os.PathLike[str] | None = None
    intent_fsync: bool = False

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            expected = _SCALARS.get(str(f.type))
            value = getattr(self, f.name)
            if expected is not None and (
                not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected)
            ):
                raise ConfigError(f.name, f"{value!r} is not a {f.type}")
        if self.max_message_bytes < 1024:
            raise ConfigError(
                "max_message_bytes",
                f"{self.max_message_bytes} bytes is too small for any metastore call; "
                f"Hive's default is {DEFAULT_MAX_MESSAGE_BYTES}",
            )
        for name in ("timeout", "connect_timeout", "read_timeout"):
            if not getattr(self, name) > 0:
                raise ConfigError(name, f"{getattr(self, name)!r} must be more than zero seconds")

    @classmethod
    def with_keywords(cls, base: ShimOptions | None = None, **changes: object) -> ShimOptions:
        """``base`` (default: the defaults) with ``changes``, each the name of a field; a name that is not
        one raises :class:`TypeError`, as for any unknown keyword argument."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise TypeError(f"Shim() got unexpected keyword argument(s) {', '.join(unknown)}; known: {sorted(names)}")
        typed: dict[str, Any] = changes
        return dataclasses.replace(base if base is not None else cls(), **typed)

    @property
    def events(self) -> EventOptions:
        """How the shim makes its events."""
        return EventOptions(
            hive_version=self.hive_version, publish_failures=self.publish_failures, database_events=self.database_events
        )


@dataclass(frozen=True)
class PublishSettings:
    """Where the shim publishes: the Kafka topic, the spool that holds events until Kafka has them, and the
    producer's librdkafka settings (``hivewire.shim.producer.*``)."""

    bootstrap_servers: str
    topic: str
    spool_dir: str
    fsync: FsyncPolicy
    producer_config: dict[str, str]
    alter_by_old_name: bool


@dataclass(frozen=True)
class ShimSettings:
    """The shim's settings (docs/configuration.md, "Shim"); build them with :meth:`from_config`.
    ``upstream`` is fixed URIs, or where to discover the metastores; ``options`` how the shim serves (its
    ``zookeeper``: where to register it, None: it does not); ``publish`` None: it only relays calls."""

    upstream: str | DiscoveryConfig
    options: ShimOptions
    publish: PublishSettings | None

    @classmethod
    def from_config(cls, config: Config) -> ShimSettings:
        """Validate and read the shim's keys; raises :class:`~hivewire.errors.ConfigError` naming the key."""
        config.check_keys()
        uris = config.optional(keys.SHIM_UPSTREAM)
        discovered = _discovery(
            config, keys.SHIM_UPSTREAM_ZOOKEEPER, keys.SHIM_UPSTREAM_NAMESPACE, keys.SHIM_UPSTREAM_HIVE_SITE
        )
        if (uris is None) == (discovered is None):
            raise ConfigError(
                keys.SHIM_UPSTREAM.name,
                f"give exactly one of {keys.SHIM_UPSTREAM.name} and {keys.SHIM_UPSTREAM_ZOOKEEPER.name} or "
                f"{keys.SHIM_UPSTREAM_HIVE_SITE.name}: the metastores to front, or where to discover them",
            )
        publish = _publish(config)
        read: dict[str, Any] = {}
        for f in dataclasses.fields(ShimOptions):
            key = f.metadata.get("key")
            if key is not None:
                value = config.optional(key)
                read[f.name] = f.metadata["zero"] if value == 0 and "zero" in f.metadata else value
        certfile = config.optional(keys.SHIM_SSL_CERTFILE)
        options = ShimOptions(
            **read,
            zookeeper=_discovery(config, keys.SHIM_ZOOKEEPER, keys.SHIM_NAMESPACE, keys.SHIM_HIVE_SITE),
            ssl_context=(
                server_context(certfile, config.optional(keys.SHIM_SSL_KEYFILE), config.optional(keys.SHIM_SSL_CA))
                if certfile
                else None
            ),
            upstream_ssl_context=(
                client_context(
                    config.optional(keys.SHIM_UPSTREAM_SSL_CA),
                    config.optional(keys.SHIM_UPSTREAM_SSL_CERTFILE),
                    config.optional(keys.SHIM_UPSTREAM_SSL_KEYFILE),
                )
                if config.read(keys.SHIM_UPSTREAM_SSL)
                else None
            ),
            upstream_sasl=SaslAuth.from_config(config),
            intent_dir=publish.spool_dir if publish is not None else None,
            intent_fsync=publish is not None and publish.fsync == "always",
        )
        return cls(upstream=discovered if discovered is not None else uris or "", options=options, publish=publish)

    def open_upstream(self) -> str | ZooKeeperResolver:
        """The fixed URIs, or a new discovery session (ZooKeeper) the caller closes."""
        if isinstance(self.upstream, str):
            return self.upstream
        from hivewire.metastore import _discovery  # kazoo: only when discovering

        return _discovery.ZooKeeperResolver(self.upstream)

    def sinks(self) -> list[Sink]:
        """The Kafka sink when the shim publishes (its spool is opened), else none."""
        if self.publish is None:
            return []
        from hivewire_shim.kafka_sink import KafkaSink

        p = self.publish
        return [
            KafkaSink(
                p.bootstrap_servers,
                p.topic,
                p.spool_dir,
                producer_config=p.producer_config,
                alter_by_old_name=p.alter_by_old_name,
                fsync=p.fsync,
            )
        ]


def _publish(config: Config) -> PublishSettings | None:
    """Where to publish: both of the Kafka keys, or neither (the shim only relays calls)."""
    bootstrap_servers, topic = config.optional(keys.BOOTSTRAP_SERVERS), config.optional(keys.TOPIC)
    if (bootstrap_servers is None) != (topic is None):
        raise ConfigError(
            keys.TOPIC.name if topic is None else keys.BOOTSTRAP_SERVERS.name,
            f"{keys.BOOTSTRAP_SERVERS.name} and {keys.TOPIC.name} go together: give both to publish events, "
            "or neither to only relay calls",
        )
    fsync = config.read(keys.SHIM_SPOOL_FSYNC)
    if not bootstrap_servers or not topic:
        return None
    return PublishSettings(
        bootstrap_servers=bootstrap_servers,
        topic=topic,
        spool_dir=config.read(keys.SHIM_SPOOL_DIR),
        fsync="always" if fsync == "always" else "never" if fsync == "never" else "interval",
        producer_config=config.with_prefix(keys.SHIM_PRODUCER_PREFIX.name),
        alter_by_old_name=config.read(keys.SHIM_PARTITION_BY_OLD_NAME),
    )


def _discovery(
    config: Config, quorum_key: Key[str], namespace_key: Key[str], hive_site_key: Key[str]
) -> DiscoveryConfig | None:
    """The ZooKeeper settings these three keys give, or None when neither a quorum nor a hive-site.xml is set."""
    quorum, site = config.optional(quorum_key), config.optional(hive_site_key)
    namespace = config.optional(namespace_key)
    if quorum is None and site is None:
        if namespace is not None:
            raise ConfigError(
                config.provenance(namespace_key).name,
                f"is set, but neither {quorum_key.name} nor {hive_site_key.name}: give the ZooKeeper quorum too",
            )
        return None
    from hivewire.metastore._zookeeper import DiscoveryConfig  # kazoo: only when discovering or registering

    return DiscoveryConfig.from_parts(quorum, namespace, site, config)
