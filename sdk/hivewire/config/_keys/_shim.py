"""The shim's keys (``hivewire shim``): its upstream, listener, spool, limits and TLS."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import prefix as _prefix
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Choice, Duration, Flag, HostPorts, Integer, Path, Text

SHIM = _section(
    "Shim (`hivewire shim`)",
    "The HMS Thrift shim. It publishes to `apiary.bootstrap.servers` and `apiary.kafka.topic.name` when both "
    "are set, and only relays calls otherwise.",
)
SHIM_UPSTREAM = _key(
    SHIM, "hivewire.shim.upstream.uris", Text("URIs"), "The metastores to front: `thrift://h1:9083,thrift://h2:9083`."
)
SHIM_UPSTREAM_ZOOKEEPER = _key(
    SHIM,
    "hivewire.shim.upstream.zookeeper",
    Text("quorum"),
    "Instead, discover the upstream metastores in this ZooKeeper quorum.",
)
SHIM_UPSTREAM_NAMESPACE = _key(
    SHIM,
    "hivewire.shim.upstream.namespace",
    Text("znode name"),
    "Namespace of the upstream registrations.",
    default_doc="the upstream `hive-site.xml`'s, else `hive_metastore`",
)
SHIM_UPSTREAM_HIVE_SITE = _key(
    SHIM,
    "hivewire.shim.upstream.hive.site",
    Path(),
    "A `hive-site.xml` for discovering the upstream (quorum, namespace, credentials, TLS); the upstream quorum "
    "and namespace keys win over it.",
)
SHIM_FRAMED = _key(
    SHIM,
    "hivewire.shim.upstream.framed",
    Flag(),
    "The upstream uses the framed transport (clients may use either).",
    default="false",
)
SHIM_TIMEOUT = _key(
    SHIM,
    "hivewire.shim.upstream.timeout",
    Duration("s", positive=True),
    "How long to wait for the upstream's reply to a call.",
    default="600",
)
SHIM_CONNECT_TIMEOUT = _key(
    SHIM,
    "hivewire.shim.upstream.connect.timeout",
    Duration("s", positive=True),
    "How long connecting to the upstream may take.",
    default="5",
)
# Not hivewire.shim.port: Kubernetes sets HIVEWIRE_SHIM_PORT=tcp://... for a Service named hivewire-shim.
SHIM_PORT = _key(
    SHIM, "hivewire.shim.listen.port", Integer(0, 65535), "Port to listen on (0: any free one).", default="9083"
)
SHIM_BIND = _key(SHIM, "hivewire.shim.listen.host", Text("address"), "Address to listen on.", default="0.0.0.0")
SHIM_ADVERTISE = _key(
    SHIM,
    "hivewire.shim.advertise",
    HostPorts(single=True, port_required=True),
    "Address registered in ZooKeeper.",
    default_doc="this host's name and the port",
)
SHIM_SPOOL_DIR = _key(
    SHIM,
    "hivewire.shim.spool.dir",
    Path(),
    "Where events wait for Kafka (kept across restarts; one shim per directory).",
    default="hivewire-shim-spool",
)
SHIM_SPOOL_FSYNC = _key(
    SHIM,
    "hivewire.shim.spool.fsync",
    Choice(("always", "interval", "never")),
    "When spooled events are fsync'ed: before each call returns, every 0.2 s, or never.",
    default="interval",
)
SHIM_PRODUCER_PREFIX = _prefix(
    SHIM,
    "hivewire.shim.producer.",
    "librdkafka producer properties for the shim's Kafka producer (`security.protocol`, `compression.type`, ...).",
)
SHIM_PARTITION_BY_OLD_NAME = _key(
    SHIM,
    "hivewire.shim.partition.by.old.name",
    Flag(),
    "Partition table renames by the old name (Apiary 8.1.15) instead of the new one.",
    default="false",
)
SHIM_ZOOKEEPER = _key(
    SHIM, "hivewire.shim.zookeeper", Text("quorum"), "Register the shim in this ZooKeeper quorum (HIVE-20794 format)."
)
SHIM_NAMESPACE = _key(
    SHIM,
    "hivewire.shim.namespace",
    Text("znode name"),
    "Namespace to register in.",
    default_doc="the `hive-site.xml`'s, else `hive_metastore`",
)
SHIM_HIVE_SITE = _key(
    SHIM,
    "hivewire.shim.hive.site",
    Path(),
    "A `hive-site.xml` for registering the shim (quorum, namespace, credentials, TLS); the two keys above win over it.",
)
SHIM_HIVE_VERSION = _key(
    SHIM,
    "hivewire.shim.hive.version",
    Text("version"),
    "The `hive.version` events carry (it also picks the Thrift field set written).",
    default="2.3.10",
)
SHIM_PUBLISH_FAILURES = _key(
    SHIM,
    "hivewire.shim.publish.failures",
    Flag(),
    "Also publish `status=false` events for failed changes.",
    default="false",
)
SHIM_DATABASE_EVENTS = _key(
    SHIM,
    "hivewire.shim.database.events",
    Flag(),
    "Publish database events (`false` for consumers that know only Apiary's seven types).",
    default="true",
)
SHIM_CLIENT_SEND_TIMEOUT = _key(
    SHIM,
    "hivewire.shim.client.send.timeout",
    Duration("s"),
    "Disconnect a client that takes nothing of a reply for this long (0: never).",
    default="600",
)
SHIM_READ_TIMEOUT = _key(
    SHIM,
    "hivewire.shim.read.timeout",
    Duration("s", positive=True),
    "How long each of the shim's own reads (the old object before a change, the stored one after) may take; "
    "past it the event carries what the request did.",
    default="10",
)
SHIM_MAX_MESSAGE_SIZE = _key(
    SHIM,
    "hivewire.shim.max.message.size",
    Integer(1024),
    "Largest client request accepted, in bytes; a bigger one closes that connection.",
    default=str(100 * 1024 * 1024),
    aliases=("metastore.server.max.message.size", "hive.metastore.server.max.message.size"),
)
SHIM_LOOKUP_CONNECTIONS = _key(
    SHIM,
    "hivewire.shim.lookup.connections",
    Integer(1),
    "Connections to the upstream kept for the shim's own reads.",
    default="16",
)
SHIM_MAX_CONNECTIONS = _key(
    SHIM,
    "hivewire.shim.max.connections",
    Integer(1),
    "Client connections served at once; more are closed as they arrive (a WARNING, at most one a minute).",
    default="1000",
)
SHIM_MAX_BUFFERED = _key(
    SHIM,
    "hivewire.shim.max.buffered.bytes",
    Integer(1024),
    "Memory all connections may hold for client requests (twice the bytes received); a request past it is refused.",
    default=str(1024 * 1024 * 1024),
)
SHIM_HEALTH_PORT = _key(
    SHIM,
    "hivewire.shim.health.port",
    Integer(0),
    "Port of the shim's /health endpoint (JSON; 503 while it cannot accept connections); 0: none.",
    default="0",
)
SHIM_SSL_CERTFILE = _key(
    SHIM,
    "hivewire.shim.ssl.certfile",
    Path(),
    "PEM certificate (chain) the shim presents to its clients; set, clients must connect with TLS.",
)
SHIM_SSL_KEYFILE = _key(
    SHIM, "hivewire.shim.ssl.keyfile", Path(), "PEM private key of the certificate.", default_doc="in the certfile"
)
SHIM_SSL_CA = _key(
    SHIM,
    "hivewire.shim.ssl.ca",
    Path(),
    "PEM CA certificates clients' certificates must be signed by; set, clients must present one.",
)
SHIM_UPSTREAM_SSL = _key(
    SHIM,
    "hivewire.shim.upstream.ssl",
    Flag(),
    "Connect to the upstream metastore with TLS.",
    default="false",
    aliases=("metastore.use.SSL", "hive.metastore.use.SSL"),
)
SHIM_UPSTREAM_SSL_CA = _key(
    SHIM,
    "hivewire.shim.upstream.ssl.ca",
    Path(),
    "PEM CA certificates the upstream's certificate is checked against.",
    default_doc="the system's",
)
SHIM_UPSTREAM_SSL_CERTFILE = _key(
    SHIM, "hivewire.shim.upstream.ssl.certfile", Path(), "PEM client certificate for the upstream, if it asks for one."
)
SHIM_UPSTREAM_SSL_KEYFILE = _key(
    SHIM,
    "hivewire.shim.upstream.ssl.keyfile",
    Path(),
    "PEM private key of that certificate.",
    default_doc="in the certfile",
)
SHIM_HEALTH_HOST = _key(
    SHIM, "hivewire.shim.health.host", Text("address"), "Address the /health endpoint listens on.", default="127.0.0.1"
)
