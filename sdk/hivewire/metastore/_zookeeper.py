"""ZooKeeper settings (quorum, namespace, timeouts, digest auth, TLS) and the kazoo clients made from them.

The defaults and key spellings are Hive's (``MetastoreConf``): ``metastore.zookeeper.*`` with its
``hive.metastore.zookeeper.*`` and ``hive.zookeeper.*`` aliases, declared in :mod:`hivewire.config._keys`."""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from kazoo.client import KazooClient
from kazoo.retry import KazooRetry

from hivewire._reachability import Reachability
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._files import load_hive_site
from hivewire.errors import ConfigError, DiscoveryError
from hivewire.metastore._client_options import load_conf
from hivewire.metastore._kazoo_log import KazooLog, secrets_of

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

log = logging.getLogger("hivewire.discovery")


DEFAULT_NAMESPACE = "hive_metastore"


DEFAULT_CLIENT_PORT = 2181


# Long-lived clients (resolver, sidecar) must never give up reconnecting; this caps the wait between
# attempts so that a ZooKeeper that comes back is noticed within a few seconds.
_RECONNECT_MAX_DELAY = 5.0


def _normalize_namespace(namespace: str, key: str = "namespace") -> str:
    ns = namespace.strip().strip("/")
    if not ns or any(part in ("", ".", "..") for part in ns.split("/")):
        raise ConfigError(key, f"{namespace!r} is not a ZooKeeper node name such as 'hive_metastore'")
    return ns


def _normalize_quorum(quorum: str, client_port: int, key: str = "quorum") -> str:
    """Hive's rule: split on ``,`` and append the client port to every host that has no ``:``."""
    text = quorum.strip()
    if "://" in text:
        raise ConfigError(
            key,
            f"{quorum!r}: in ZooKeeper discovery mode this holds the ZooKeeper quorum as "
            "host[:port] entries (zk1:2181,zk2:2181), not thrift:// URIs",
        )
    chroot = ""
    if "/" in text:  # kazoo (like the Java client) accepts a chroot after the last host
        text, _, rest = text.partition("/")
        chroot = "/" + rest
    hosts = [h.strip() for h in text.split(",") if h.strip()]
    if not hosts:
        raise ConfigError(key, "no ZooKeeper host given; set it to the ensemble, such as zk1:2181,zk2:2181")
    return ",".join(h if ":" in h else f"{h}:{client_port}" for h in hosts) + chroot


class DiscoveryOptions(TypedDict, total=False):
    """:class:`DiscoveryConfig`'s fields other than the quorum and the namespace, as keyword arguments of the
    functions that take a quorum (:func:`discover_metastores`, :class:`ZooKeeperResolver`, ...)."""

    session_timeout: float
    connection_timeout: float
    max_retries: int
    base_sleep: float
    auth_data: Iterable[tuple[str, str]]
    use_ssl: bool
    certfile: str | None
    keyfile: str | None
    keyfile_password: str | None
    ca: str | None
    verify_certs: bool


@dataclass(frozen=True)
class DiscoveryConfig:
    """Where and how to read metastore registrations from ZooKeeper. Times are in seconds.

    The defaults are Hive's (``MetastoreConf``): namespace ``hive_metastore``, session timeout 120 s,
    connection timeout 15 s, 3 retries starting at 1 s. ``auth_data`` holds kazoo credentials such as
    ``(("digest", "user:password"),)``; ``use_ssl`` with PEM ``certfile``/``keyfile``/``ca`` turns on TLS.
    ``namespace_key`` is the configuration key the namespace was read from (None when it was given directly or
    is the default); error messages name it.
    """

    quorum: str
    namespace: str = DEFAULT_NAMESPACE
    session_timeout: float = 120.0
    connection_timeout: float = 15.0
    max_retries: int = 3
    base_sleep: float = 1.0
    # Secrets: never in the repr (errors and logs show configurations).
    auth_data: tuple[tuple[str, str], ...] = dataclasses.field(default=(), repr=False)
    use_ssl: bool = False
    certfile: str | None = None
    keyfile: str | None = None
    keyfile_password: str | None = dataclasses.field(default=None, repr=False)
    ca: str | None = None
    verify_certs: bool = True
    # Not part of equality: two configurations that reach the same namespace share one resolver.
    namespace_key: str | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Frozen: normalise through object.__setattr__ so equal settings hash equal (shared resolvers).
        object.__setattr__(self, "quorum", _normalize_quorum(self.quorum, DEFAULT_CLIENT_PORT))
        object.__setattr__(self, "namespace", _normalize_namespace(self.namespace))
        object.__setattr__(self, "auth_data", tuple((str(s), str(c)) for s, c in self.auth_data))
        for name in ("session_timeout", "connection_timeout", "base_sleep"):
            if not getattr(self, name) > 0:
                raise ConfigError(name, f"{getattr(self, name)!r} must be more than zero seconds")
        if self.max_retries < 0:
            raise ConfigError("max_retries", f"{self.max_retries!r} must be zero or more")

    @property
    def path(self) -> str:
        """The namespace znode, ``/<namespace>``."""
        return "/" + self.namespace

    @classmethod
    def from_conf(
        cls, conf: Mapping[str, str], *, quorum: str | None = None, namespace: str | None = None
    ) -> DiscoveryConfig:
        """Read Hive's keys from a mapping or a :class:`~hivewire.config.Config` (``metastore.*`` first, then the
        ``hive.*`` aliases, then defaults; docs/configuration.md, "ZooKeeper discovery").

        The quorum comes from ``metastore.thrift.uris`` / ``hive.metastore.uris`` (host[:port] entries; hosts
        without a port get ``metastore.zookeeper.client.port``, default 2181), unless ``quorum`` is given.
        hivewire's own keys: ``hivewire.zookeeper.auth`` (``digest:user:password``) and
        ``hivewire.zookeeper.ssl.{certfile,keyfile,keyfile.password,ca,verify}`` (PEM files for kazoo).
        Invalid values raise :class:`~hivewire.errors.ConfigError` naming the key.
        """
        config = load_conf(conf)
        port = config.read(keys.ZK_CLIENT_PORT)
        if quorum is None:
            uris = config.find(keys.METASTORE_URIS)
            if uris is None:
                raise ConfigError(
                    keys.METASTORE_URIS.name,
                    "not set; in ZooKeeper discovery mode it holds the ZooKeeper quorum, such as zk1:2181,zk2:2181",
                )
            quorum = _normalize_quorum(uris[0], port, uris[1].name)
        else:
            quorum = _normalize_quorum(quorum, port)
        namespace_key = None
        if namespace is None and (found := config.find(keys.ZK_NAMESPACE)) is not None:
            namespace_key = found[1].name
            namespace = _normalize_namespace(found[0], namespace_key)
            if found[1].key.startswith("hive.zookeeper."):
                # HDP and CDH sites set this key for Hive's ZooKeeper lock manager; MetastoreConf falls back to
                # it too, so it silently moves discovery unless the metastore key is set.
                log.warning(
                    "ZooKeeper discovery reads the namespace %r from %s, which is also the Hive lock "
                    "manager's namespace; if the metastores register elsewhere (Hive's default is "
                    "%s), set metastore.zookeeper.namespace, which takes precedence",
                    namespace,
                    namespace_key,
                    DEFAULT_NAMESPACE,
                )
        tls = _Tls.from_config(config)
        return cls(
            quorum=quorum,
            namespace=namespace or DEFAULT_NAMESPACE,
            session_timeout=config.read(keys.ZK_SESSION_TIMEOUT),
            connection_timeout=config.read(keys.ZK_CONNECTION_TIMEOUT),
            max_retries=config.read(keys.ZK_MAX_RETRIES),
            base_sleep=config.read(keys.ZK_BASE_SLEEP),
            auth_data=config.optional(keys.ZK_AUTH) or (),
            use_ssl=tls.use_ssl,
            certfile=tls.certfile,
            keyfile=tls.keyfile,
            keyfile_password=tls.keyfile_password,
            ca=tls.ca,
            verify_certs=tls.verify_certs,
            namespace_key=namespace_key,
        )

    @classmethod
    def from_hive_site(
        cls, path: str | os.PathLike[str], *, quorum: str | None = None, namespace: str | None = None
    ) -> DiscoveryConfig:
        """:meth:`from_conf` on the properties of a ``hive-site.xml``."""
        return cls.from_conf(Config(load_hive_site(path)), quorum=quorum, namespace=namespace)

    @classmethod
    def from_parts(
        cls,
        quorum: str | None,
        namespace: str | None,
        hive_site: str | os.PathLike[str] | None,
        config: Config | None = None,
    ) -> DiscoveryConfig | None:
        """The ZooKeeper settings of a quorum and a namespace, or of a ``hive-site.xml`` (the two win over it);
        None when neither a quorum nor a file is given (the caller says what is missing). With ``config``, its
        client settings (``hivewire.zookeeper.auth``, TLS, timeouts) apply too; its credentials win over the
        file's."""
        if hive_site is not None:
            found = cls.from_hive_site(hive_site, quorum=quorum, namespace=namespace)
            auth = config.optional(keys.ZK_AUTH) if config is not None else None
            return dataclasses.replace(found, auth_data=auth) if auth else found
        if quorum is None:
            return None
        if config is not None:
            return cls.from_conf(config, quorum=quorum, namespace=namespace or DEFAULT_NAMESPACE)
        return cls(quorum=quorum, namespace=namespace or DEFAULT_NAMESPACE)


_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(DiscoveryConfig) if f.name not in ("quorum", "namespace_key"))


@dataclass(frozen=True)
class _Tls:
    """Hive's ``metastore.zookeeper.ssl.*`` keys and hivewire's own, mapped onto kazoo's PEM-file TLS options."""

    use_ssl: bool = False
    certfile: str | None = None
    keyfile: str | None = None
    keyfile_password: str | None = dataclasses.field(default=None, repr=False)
    ca: str | None = None
    verify_certs: bool = True

    @classmethod
    def from_config(cls, config: Config) -> _Tls:
        files: dict[str, str | None] = {"certfile": None, "keyfile": None, "ca": None}
        keyfile_password = None
        for location_key, type_key, targets in (
            (keys.ZK_KEYSTORE_LOCATION, keys.ZK_KEYSTORE_TYPE, ("certfile", "keyfile")),
            (keys.ZK_TRUSTSTORE_LOCATION, keys.ZK_TRUSTSTORE_TYPE, ("ca",)),
        ):
            location = config.find(location_key)
            if location is None:
                continue
            kind = config.optional(type_key)
            store_type = kind.upper() if kind else ("PEM" if location[0].lower().endswith((".pem", ".crt")) else "")
            if store_type != "PEM":
                # Java reads JKS/PKCS12 stores; kazoo (Python's ssl module) reads PEM only.
                raise ConfigError(
                    location[1].name,
                    f"{location[0]!r} is a {store_type or 'JKS/PKCS12'} store; kazoo needs "
                    "PEM files: convert it (openssl pkcs12 -in store.p12 -out store.pem "
                    "-nodes) or set hivewire.zookeeper.ssl.certfile/keyfile/ca",
                )
            files.update(dict.fromkeys(targets, location[0]))
            if location_key is keys.ZK_KEYSTORE_LOCATION:
                keyfile_password = config.optional(keys.ZK_KEYSTORE_PASSWORD)
        files["certfile"] = config.optional(keys.ZK_SSL_CERTFILE) or files["certfile"]
        files["keyfile"] = config.optional(keys.ZK_SSL_KEYFILE) or files["keyfile"]
        files["ca"] = config.optional(keys.ZK_SSL_CA) or files["ca"]
        for field, path in files.items():
            if path is not None and not Path(path).is_file():
                raise ConfigError(f"ZooKeeper TLS {field}", f"{path!r} is not a readable file")
        return cls(
            use_ssl=config.read(keys.ZK_SSL_ENABLE),
            certfile=files["certfile"],
            keyfile=files["keyfile"],
            keyfile_password=config.optional(keys.ZK_SSL_KEYFILE_PASSWORD) or keyfile_password,
            ca=files["ca"],
            verify_certs=config.read(keys.ZK_SSL_VERIFY),
        )


def _kazoo_client(
    config: DiscoveryConfig, *, long_lived: bool, extra_auth: Iterable[tuple[str, str]] = ()
) -> KazooClient:
    """A kazoo client with Hive's retry settings (Curator's ExponentialBackoffRetry(baseSleep, maxRetries)).

    A long-lived client reconnects forever (with capped backoff): a resolver or a sidecar must outlive a
    ZooKeeper restart. Commands are retried ``max_retries`` times either way.
    """
    command_retry = KazooRetry(
        max_tries=config.max_retries + 1,
        delay=config.base_sleep,
        backoff=2,
        max_delay=max(config.base_sleep, _RECONNECT_MAX_DELAY),
    )
    connection_retry = KazooRetry(
        max_tries=-1 if long_lived else config.max_retries + 1,
        delay=min(config.base_sleep, 1.0),
        backoff=2,
        max_delay=_RECONNECT_MAX_DELAY,
    )
    ssl: dict[str, Any] = {}
    if config.use_ssl:
        ssl = {
            "use_ssl": True,
            "certfile": config.certfile,
            "keyfile": config.keyfile,
            "keyfile_password": config.keyfile_password,
            "ca": config.ca,
            "verify_certs": config.verify_certs,
        }
    auth_data = [*config.auth_data, *extra_auth]
    reachability = Reachability(
        f"ZooKeeper at {config.quorum}",
        "check the quorum (metastore.zookeeper.quorum / --zookeeper) and that ZooKeeper runs",
        log,
    )
    return KazooClient(
        hosts=config.quorum,
        timeout=config.session_timeout,
        auth_data=auth_data or None,
        connection_retry=connection_retry,
        command_retry=command_retry,
        logger=KazooLog(
            logging.getLogger("hivewire.kazoo"), secrets_of(auth_data, config.keyfile_password), reachability
        ),
        **ssl,
    )


def _connect(zk: KazooClient, config: DiscoveryConfig) -> None:
    try:
        zk.start(timeout=config.connection_timeout)
    except Exception as e:  # kazoo raises its handler's timeout type, or SSL/socket errors
        raise DiscoveryError(
            f"could not connect to ZooKeeper at {config.quorum} within {config.connection_timeout:g} s ({e}). "
            "Check the quorum (metastore.thrift.uris in discovery mode), that ZooKeeper is running, and its "
            "TLS settings"
        ) from e


def discovery_config(
    quorum: str | DiscoveryConfig, /, namespace: str | None = None, **options: Unpack[DiscoveryOptions]
) -> DiscoveryConfig:
    """The :class:`DiscoveryConfig` that ``discover_metastores(quorum, namespace, **options)`` would use.

    ``quorum`` is ``"zk1:2181,zk2:2181"`` or a :class:`DiscoveryConfig`; ``namespace`` (default: the config's,
    else ``hive_metastore``) and ``options`` (other fields: ``auth_data``, ``use_ssl``, ``ca``, ...) override
    it. Every API that takes a ZooKeeper quorum accepts the same three, through this function.
    """
    if not isinstance(quorum, (str, DiscoveryConfig)):
        raise ConfigError(
            "zookeeper",
            f"{quorum!r} is neither a quorum such as 'zk1:2181,zk2:2181' nor a hivewire.metastore.DiscoveryConfig",
        )
    unknown = sorted(set(options) - set(_OPTION_NAMES) - {"namespace"} | ({"quorum"} & set(options)))
    if unknown:
        raise ConfigError(
            "discovery option",
            f"unknown option(s) {', '.join(unknown)}: the options "
            "are DiscoveryConfig's fields other than quorum (" + ", ".join(_OPTION_NAMES) + ")",
        )
    if isinstance(quorum, DiscoveryConfig):
        if not options and namespace is None:
            return quorum
        base = quorum
    else:
        base = DiscoveryConfig(quorum=quorum, namespace=namespace or DEFAULT_NAMESPACE)
    return DiscoveryConfig(
        quorum=base.quorum,
        namespace=base.namespace if namespace is None else namespace,
        session_timeout=options.get("session_timeout", base.session_timeout),
        connection_timeout=options.get("connection_timeout", base.connection_timeout),
        max_retries=options.get("max_retries", base.max_retries),
        base_sleep=options.get("base_sleep", base.base_sleep),
        auth_data=tuple(options.get("auth_data", base.auth_data)),
        use_ssl=options.get("use_ssl", base.use_ssl),
        certfile=options.get("certfile", base.certfile),
        keyfile=options.get("keyfile", base.keyfile),
        keyfile_password=options.get("keyfile_password", base.keyfile_password),
        ca=options.get("ca", base.ca),
        verify_certs=options.get("verify_certs", base.verify_certs),
        # A namespace given here is no longer the configuration's.
        namespace_key=base.namespace_key if namespace is None else None,
    )
