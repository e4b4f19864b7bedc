"""Hive Metastore discovery through ZooKeeper (HIVE-20794), read the way Hive 4's client reads it.

A Hive 4 metastore with ``metastore.service.discovery.mode=zookeeper`` registers an ephemeral sequential
znode ``/<namespace>/<host:port><10-digit sequence>`` whose data is ``host:port`` (UTF-8). Hive's client
lists the children of ``/<namespace>``, reads each child's data and prefixes ``thrift://``. This module does
the same and also copes with what is found in the wild: HiveServer2-style names
(``serverUri=h:p;version=...;sequence=...``) and ``k=v;...`` data, empty data (the address is then taken from
the name), duplicates, and nodes that vanish between the two reads.

Unlike Hive's client, which reads ZooKeeper once when it starts, :class:`ZooKeeperResolver` keeps the list
current with a children watch and re-reads ZooKeeper on demand (:meth:`ZooKeeperResolver.refresh`), which
:class:`~hivewire.metastore.MetastoreClient` calls when every known metastore has failed.

Configuration follows Hive: :meth:`DiscoveryConfig.from_conf` / :meth:`DiscoveryConfig.from_hive_site` read
``metastore.*`` keys with their ``hive.metastore.zookeeper.*`` and ``hive.zookeeper.*`` aliases and Hive's
defaults, as declared in :mod:`hivewire.config._keys`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoAuthError, NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch
from kazoo.retry import KazooRetry

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._files import load_hive_site
from hivewire.errors import ConfigError, DiscoveryError
from hivewire.metastore._addresses import parse_uris
from hivewire.metastore._client_options import ConfSource
from hivewire.metastore._client_options import load_conf as load_conf  # discovery's callers use it too

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

# -- parsing of registrations ---------------------------------------------------------------------------

_SEQUENCE = re.compile(r"(\d{10})$")
_NAME_WITH_PORT = re.compile(r"(?P<host>.+):(?P<digits>\d+)")
# Keys under which a HiveServer2-style (k=v;...) registration carries the server's address.
_ADDRESS_KEYS = ("hive.metastore.uri", "hive.server2.instance.uri", "serverUri", "instance.uri")


def _host_port(text: str) -> str | None:
    """``host:port`` (or ``[v6]:port``, or with a ``thrift://`` prefix) -> normalised ``host:port``, else None."""
    text = text.strip()
    if text.startswith("thrift://"):
        text = text[len("thrift://") :]
    text = text.rstrip("/")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    if host.startswith("[") != host.endswith("]") or any(c in host for c in " /;=,"):
        return None
    return f"{host}:{int(port)}"


def _pairs(text: str) -> dict[str, str]:
    out = {}
    for item in text.split(";"):
        key, sep, value = item.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _from_pairs(pairs: Mapping[str, str]) -> str | None:
    for key in _ADDRESS_KEYS:
        if pairs.get(key):
            return _host_port(pairs[key])
    host, port = pairs.get("hive.server2.thrift.bind.host"), pairs.get("hive.server2.thrift.port")
    return _host_port(f"{host}:{port}") if host and port else None


def _from_name(name: str) -> str | None:
    if "=" in name:  # HiveServer2 style: serverUri=host:port;version=...;sequence=0000000012
        return _from_pairs(_pairs(name))
    match = _NAME_WITH_PORT.fullmatch(name)
    if not match:
        return None
    digits = match["digits"]
    # Hive 4 glues the 10-digit sequence to the port ("h:90830000000007"); a node created without
    # the sequence flag has just the port.
    if len(digits) > 10:
        digits = digits[:-10]
    elif len(digits) > 5:
        return None
    return _host_port(f"{match['host']}:{digits}")


def parse_registration(name: str, data: bytes | str | None) -> str | None:
    """The ``host:port`` a registration znode advertises, or None when it names no address.

    ``data`` is read first, as Hive 4's client does (``host:port``, or ``k=v;...`` with
    ``hive.server2.instance.uri``/``serverUri``); when it is empty or unreadable the child ``name`` is used
    (``host:port`` plus Hive's 10-digit sequence, or HiveServer2's ``serverUri=host:port;...;sequence=N``).
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")
    text = text.strip()
    if text:
        found = _from_pairs(_pairs(text)) if "=" in text else _host_port(text)
        if found:
            return found
    return _from_name(name)


def _sort_key(child: str) -> tuple[int, str]:
    # Registration order (the ZooKeeper sequence), so output is stable; get_children's order is not.
    match = _SEQUENCE.search(child)
    return (int(match.group(1)) if match else 10**10, child)


def _to_uris(entries: Iterable[tuple[str, bytes | None]], where: str) -> list[str]:
    uris: list[str] = []
    for name, data in sorted(entries, key=lambda e: _sort_key(e[0])):
        address = parse_registration(name, data)
        if address is None:
            log.warning("ZooKeeper %s/%s advertises no host:port (data %r); ignored", where, name, data)
            continue
        uri = f"thrift://{address}"
        if uri not in uris:  # a restarted sidecar or a retried create can leave two nodes for one server
            uris.append(uri)
    return uris


# -- configuration --------------------------------------------------------------------------------------


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
    auth_data: tuple[tuple[str, str], ...] = ()
    use_ssl: bool = False
    certfile: str | None = None
    keyfile: str | None = None
    keyfile_password: str | None = None
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
        cls, quorum: str | None, namespace: str | None, hive_site: str | os.PathLike[str] | None
    ) -> DiscoveryConfig | None:
        """The ZooKeeper settings of a quorum and a namespace, or of a ``hive-site.xml`` (the two win over it);
        None when neither a quorum nor a file is given (the caller says what is missing)."""
        if hive_site is not None:
            return cls.from_hive_site(hive_site, quorum=quorum, namespace=namespace)
        if quorum is not None:
            return cls(quorum=quorum, namespace=namespace or DEFAULT_NAMESPACE)
        return None


_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(DiscoveryConfig) if f.name not in ("quorum", "namespace_key"))


@dataclass(frozen=True)
class _Tls:
    """Hive's ``metastore.zookeeper.ssl.*`` keys and hivewire's own, mapped onto kazoo's PEM-file TLS options."""

    use_ssl: bool = False
    certfile: str | None = None
    keyfile: str | None = None
    keyfile_password: str | None = None
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


def discovery_mode(conf: Mapping[str, str]) -> str:
    """``"zookeeper"``, or ``""`` for fixed URIs: ``metastore.service.discovery.mode`` or its ``hive.*`` alias."""
    return load_conf(conf).optional(keys.DISCOVERY_MODE) or ""


# -- reading ZooKeeper ----------------------------------------------------------------------------------


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
    return KazooClient(
        hosts=config.quorum,
        timeout=config.session_timeout,
        auth_data=[*config.auth_data, *extra_auth] or None,
        connection_retry=connection_retry,
        command_retry=command_retry,
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


def _namespace_origin(config: DiscoveryConfig) -> str:
    """Where the namespace came from, for messages that ask the user to check it."""
    key = config.namespace_key
    if key is None:
        given = "the default namespace" if config.namespace == DEFAULT_NAMESPACE else "the namespace given"
        return f"{given}, {config.namespace!r}; in Hive's configuration, metastore.zookeeper.namespace"
    text = f"{key}={config.namespace}"
    if key.startswith("hive.zookeeper."):
        text += (
            ", which is also the Hive lock manager's namespace: if the metastores register elsewhere, "
            "set metastore.zookeeper.namespace, which takes precedence"
        )
    return text


def _nothing_registered(config: DiscoveryConfig, detail: str) -> DiscoveryError:
    return DiscoveryError(
        f"No metastore service discovered in ZooKeeper at {config.quorum} under {config.path} ({detail}). "
        "Please ensure that at least one metastore server is online: a Hive 4 metastore with "
        "metastore.service.discovery.mode=zookeeper, or `hivewire register` next to an older one, using the "
        f"same namespace ({_namespace_origin(config)})"
    )


def _read(zk: KazooClient, config: DiscoveryConfig, children: Iterable[str] | None = None) -> list[str]:
    """Registered URIs under the namespace (NoNodeError when it does not exist)."""
    path = config.path
    if children is None:
        children = zk.retry(zk.get_children, path)
    entries: list[tuple[str, bytes | None]] = []
    for child in children:
        try:
            data, _stat = zk.retry(zk.get, f"{path}/{child}")
        except NoNodeError:
            continue  # withdrawn between listing and reading
        entries.append((child, data))
    return _to_uris(entries, path)


def _not_allowed(config: DiscoveryConfig) -> DiscoveryError:
    return DiscoveryError(
        f"ZooKeeper at {config.quorum} does not let this client read {config.path}: give credentials "
        "(auth_data=[('digest', 'user:password')], or hivewire.zookeeper.auth in the configuration)"
    )


def _read_or_raise(zk: KazooClient, config: DiscoveryConfig) -> list[str]:
    try:
        uris = _read(zk, config)
    except NoNodeError:
        raise _nothing_registered(config, f"the znode {config.path} does not exist") from None
    except NoAuthError as e:
        raise _not_allowed(config) from e
    except KazooException as e:
        raise DiscoveryError(
            f"reading {config.path} from ZooKeeper at {config.quorum} failed: {type(e).__name__} {e}"
        ) from e
    if not uris:
        raise _nothing_registered(config, "no registration under it")
    return uris


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
            f"{quorum!r} is neither a quorum such as 'zk1:2181,zk2:2181' nor a hivewire.discovery.DiscoveryConfig",
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


def discover_metastores(
    quorum: str | DiscoveryConfig,
    namespace: str | None = None,
    *,
    client: KazooClient | None = None,
    **options: Unpack[DiscoveryOptions],
) -> list[str]:
    """The ``thrift://host:port`` URIs of the metastores registered under ``/<namespace>``, in registration
    order, without duplicates.

    ``quorum`` is ``"zk1:2181,zk2:2181"`` or a :class:`DiscoveryConfig`; ``namespace`` defaults to
    ``hive_metastore``; ``options`` are other :class:`DiscoveryConfig` fields (``auth_data``, ``use_ssl``, ...).
    ``client`` is a started kazoo client to use instead of connecting. Raises
    :class:`~hivewire.errors.DiscoveryError` when nothing is registered or ZooKeeper cannot be read.
    """
    config = discovery_config(quorum, namespace, **options)
    if client is not None:
        return _read_or_raise(client, config)
    zk = _kazoo_client(config, long_lived=False)
    _connect(zk, config)
    try:
        return _read_or_raise(zk, config)
    finally:
        zk.stop()
        zk.close()


class ZooKeeperResolver:
    """A live view of the metastores registered in ZooKeeper, for :class:`~hivewire.metastore.MetastoreClient`.

    A children watch on ``/<namespace>`` (re-armed when the namespace is created, deleted or the session
    is lost) re-reads every child's data on each change. :meth:`uris` returns the current list shuffled
    (Hive's default RANDOM selection); :meth:`refresh` re-reads ZooKeeper synchronously. Thread-safe.

    Connects at construction and raises :class:`~hivewire.errors.DiscoveryError` if ZooKeeper cannot be
    reached; an empty namespace is not an error here (see :meth:`require`). Close it with :meth:`close`.
    """

    def __init__(
        self,
        quorum: str | DiscoveryConfig,
        namespace: str | None = None,
        *,
        shuffle: bool = True,
        client: KazooClient | None = None,
        **options: Unpack[DiscoveryOptions],
    ) -> None:
        self.config = discovery_config(quorum, namespace, **options)
        self.shuffle = shuffle
        self._lock = threading.Lock()
        self._uris: list[str] = []
        self._closed = False
        self._generation = 0  # bumped to retire a children watch (returning False from it stops it)
        self._watched_czxid: int | None = None  # the namespace node the current children watch is on
        self._updates = 0  # bumped by every change of _uris, so refresh() never overwrites a newer list
        self._own_client = client is None
        self._zk = client if client is not None else _kazoo_client(self.config, long_lived=True)
        if self._own_client:
            _connect(self._zk, self.config)
        # DataWatch copes with a missing node (it watches for its creation); ChildrenWatch does not, so
        # the data watch (re)creates the children watch whenever the namespace exists.
        try:
            DataWatch(self._zk, self.config.path, self._on_namespace)
        except NoAuthError as e:
            self.close()
            raise _not_allowed(self.config) from e

    # -- watches (run in kazoo's callback thread, where blocking ZooKeeper calls are allowed) -----------
    def _on_namespace(self, data: bytes | None, stat: Any, event: Any = None) -> bool | None:
        # Three parameters: DataWatch retries a two-argument call on *any* TypeError, so accept the event.
        with self._lock:
            if self._closed:
                return False
            if stat is None:  # namespace missing or deleted
                self._generation += 1
                self._watched_czxid = None
                self._uris = []
                self._updates += 1
                return None
            if self._watched_czxid == stat.czxid:
                return None  # same node, only its data changed: the children watch is still armed
            # New (or re-created) namespace node: retire any old children watch and arm a new one.
            self._watched_czxid = stat.czxid
            self._generation += 1
            generation = self._generation
        try:
            ChildrenWatch(self._zk, self.config.path, lambda children: self._on_children(generation, children))
        except KazooException as e:
            log.warning("could not watch %s in ZooKeeper (%s); will retry on the next change", self.config.path, e)
            with self._lock:
                self._watched_czxid = None
        return None

    def _on_children(self, generation: int, children: list[str]) -> bool:
        with self._lock:
            if self._closed or generation != self._generation:
                return False
        try:
            uris = _read(self._zk, self.config, children)
        except KazooException as e:
            log.warning(
                "could not read the registrations under %s (%s); keeping the previous list", self.config.path, e
            )
            return True
        with self._lock:
            if generation == self._generation:
                if uris != self._uris:
                    log.info("metastores registered under %s: %s", self.config.path, ", ".join(uris) or "none")
                self._uris = uris
                self._updates += 1
        return True

    # -- UriResolver ------------------------------------------------------------------------------------
    def uris(self) -> list[str]:
        """The registered URIs, shuffled when ``shuffle`` (re-reads ZooKeeper if none is known)."""
        with self._lock:
            uris = list(self._uris)
        if not uris:
            return self.refresh()
        if self.shuffle:
            random.shuffle(uris)
        return uris

    def refresh(self) -> list[str]:
        """Re-read ZooKeeper now and return the URIs (shuffled when ``shuffle``); [] if it cannot be read."""
        if self._closed:
            return []
        with self._lock:
            updates = self._updates
        try:
            uris = _read(self._zk, self.config)
        except NoNodeError:
            uris = []
        except KazooException as e:
            log.warning("re-reading %s from ZooKeeper at %s failed: %s", self.config.path, self.config.quorum, e)
            return []
        with self._lock:
            if self._updates == updates:
                self._uris = list(uris)
                self._updates += 1
            else:
                # The children watch stored a list while we read. Keep it: a change after the watch's read
                # fires the watch again, while ours, if older, would stay until the next change.
                uris = list(self._uris)
        if self.shuffle:
            random.shuffle(uris)
        return uris

    def require(self) -> list[str]:
        """:meth:`uris`, or :class:`~hivewire.errors.DiscoveryError` with Hive's advice when there are none."""
        uris = self.uris()
        if not uris:
            raise _nothing_registered(self.config, "no registration under it, or the znode does not exist")
        return uris

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop watching, and end the ZooKeeper session if this resolver opened it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._generation += 1
            self._uris = []
        with _shared_lock:
            if _shared.get(self.config) is self:
                del _shared[self.config]
        if self._own_client:
            self._zk.stop()
            self._zk.close()

    def __enter__(self) -> ZooKeeperResolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ZooKeeperResolver({self.config.quorum!r}, {self.config.namespace!r})"


# One resolver (one ZooKeeper session, one watch) per configuration, shared by every client that
# MetastoreClient.from_zookeeper / from_hive_conf makes: those clients cannot close a resolver, and a
# pool of them must not open a session each.
_shared: dict[DiscoveryConfig, ZooKeeperResolver] = {}
_shared_lock = threading.Lock()


def shared_resolver(config: DiscoveryConfig) -> ZooKeeperResolver:
    """The process-wide :class:`ZooKeeperResolver` for ``config`` (created on first use)."""
    with _shared_lock:
        resolver = _shared.get(config)
        if resolver is not None and not resolver.closed:
            return resolver
    created = ZooKeeperResolver(config)  # connects: outside the lock
    with _shared_lock:
        existing = _shared.get(config)
        if existing is not None and not existing.closed:
            winner = existing
        else:
            _shared[config] = winner = created
    if winner is not created:
        created.close()
    return winner


def close_shared_resolvers() -> None:
    """Close every shared resolver (their ZooKeeper sessions end)."""
    with _shared_lock:
        resolvers = list(_shared.values())
        _shared.clear()
    for resolver in resolvers:
        resolver.close()


def metastore_uris_from_conf(conf: ConfSource, *, shared: bool = False) -> list[str] | ZooKeeperResolver:
    """What a Hive client would connect to, from a Hive configuration (a mapping or a ``hive-site.xml``).

    With ``metastore.service.discovery.mode`` empty: the ``thrift://`` URIs of ``metastore.thrift.uris``.
    With ``zookeeper``: a :class:`ZooKeeperResolver` (the process-wide one when ``shared``, which the caller
    must not close; otherwise the caller owns it).
    """
    config = load_conf(conf)
    if discovery_mode(config) == "zookeeper":
        discovery = DiscoveryConfig.from_conf(config)
        return shared_resolver(discovery) if shared else ZooKeeperResolver(discovery)
    found = config.find(keys.METASTORE_URIS)
    if found is None:
        raise ConfigError(
            keys.METASTORE_URIS.name,
            "not set: give the metastore URIs (thrift://host:9083), or set "
            "metastore.service.discovery.mode=zookeeper and the ZooKeeper quorum",
        )
    try:
        return parse_uris(found[0])
    except ConfigError as e:
        raise ConfigError(found[1].name, str(e)) from None
