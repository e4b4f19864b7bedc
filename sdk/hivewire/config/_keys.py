"""Every configuration key hivewire reads, declared once: name, kind, default, doc, aliases, environment form.

The consumers read them through :meth:`hivewire.config.Config.read` into small frozen settings objects (the
runtime's, ZooKeeper discovery's, the metastore client's, the shim's, the archive's, the register sidecar's);
``docs/configuration.md`` is rendered from this module (:func:`hivewire.config._reference.render`).

To add a key: declare it here with :func:`_key` in its section, read it in the consumer's ``from_config``, map
a flag to it in ``hivewire/tools/_cli.py``'s table if the command line should set it, and regenerate the
reference (``python -m hivewire.config._reference docs/configuration.md``).
"""

from __future__ import annotations

from typing import TypeVar

from hivewire.config._key import Key, Prefix, Section
from hivewire.config._kinds import (
    Choice,
    Credentials,
    Duration,
    Flag,
    HostPorts,
    Integer,
    Kind,
    Names,
    Number,
    Path,
    Secret,
    SecretNames,
    Text,
)

T = TypeVar("T")

#: Every key, in the order of the reference.
KEYS: list[Key[object]] = []
#: Prefixes whose keys are passed through to a library.
PREFIXES: list[Prefix] = []
#: The sections of the reference, in order.
SECTIONS: list[Section] = []

#: Namespaces whose unknown keys are errors (a typo): hivewire's own and Drone Fly's. Keys of other programs
#: (``hive.*``, ``metastore.*``, a listener's own settings) are not checked.
CHECKED_NAMESPACES = ("hivewire.", "apiary.", "endpoint.", "instance.")

#: Environment variables whose dotted form starts with one of these are read as settings.
ENV_PREFIXES = ("apiary.", "instance.", "endpoint.", "hivewire.", "metastore.", "hive.metastore.", "hive.zookeeper.")


def _section(title: str, intro: str) -> Section:
    section = Section(title, intro)
    SECTIONS.append(section)
    return section


def _key(
    section: Section,
    name: str,
    kind: Kind[T],
    doc: str,
    *,
    default: str | None = None,
    default_doc: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Key[T]:
    key = Key(name, kind, doc, section, default, default_doc, aliases)
    KEYS.append(key)
    return key


def _prefix(section: Section, name: str, doc: str) -> Prefix:
    prefix = Prefix(name, doc, section)
    PREFIXES.append(prefix)
    return prefix


def _hive(suffix: str) -> tuple[str, ...]:
    """Hive's aliases of ``metastore.<suffix>``: ``hive.metastore.<suffix>``."""
    return (f"hive.metastore.{suffix}",)


def _zookeeper(suffix: str) -> tuple[str, ...]:
    """Hive's aliases of ``metastore.zookeeper.<suffix>``, in MetastoreConf's lookup order."""
    return (f"hive.metastore.zookeeper.{suffix}", f"hive.zookeeper.{suffix}")


# -- Kafka and listeners: Drone Fly's keys -------------------------------------------------------------------

KAFKA = _section(
    "Kafka and listeners",
    "Drone Fly's keys, read the same way: a Drone Fly deployment's file and environment work unchanged. "
    "`run`, `archive` and the shim share the Kafka ones.",
)
BOOTSTRAP_SERVERS = _key(KAFKA, "apiary.bootstrap.servers", HostPorts(), "Kafka brokers.")
TOPIC = _key(KAFKA, "apiary.kafka.topic.name", Text("topic name"), "The Apiary topic.")
LISTENER_LIST = _key(
    KAFKA,
    "apiary.listener.list",
    Names("import paths"),
    "Listeners by import path (`pkg.module:Name` or `pkg.module.Name`).",
)
INSTANCE_NAME = _key(
    KAFKA,
    "instance.name",
    Text("name"),
    "Names the consumer group, `apiary-kafka-metastore-receiver-<instance.name>` as Drone Fly's, so hivewire "
    "can take over its offsets.",
    default="drone-fly",
    default_doc="the app's name (`drone-fly` without an app)",
)
ENDPOINT_PORT = _key(
    KAFKA,
    "endpoint.port",
    Integer(0, 65535),
    "Port of `/metrics` and `/health`; 0 turns the endpoint off.",
    default="8008",
)
ENDPOINT_ADDRESS = _key(
    KAFKA,
    "endpoint.address",
    Text("address"),
    "Address `/metrics` and `/health` listen on. All interfaces by default, as Drone Fly's: Kubernetes probes "
    "and Prometheus reach the pod's own address; use `127.0.0.1` where only a local agent scrapes. Neither "
    "endpoint shows a secret or changes anything.",
    default="0.0.0.0",
)
CONSUMER_PREFIX = _prefix(
    KAFKA,
    "apiary.messaging.consumer.",
    "Kafka consumer properties (`security.protocol`, `sasl.*`, `auto.offset.reset`, default `latest` as Drone "
    "Fly's). Java client properties are translated for librdkafka (see below); security settings also apply "
    "to the dead-letter producer.",
)

# -- the listener runtime ------------------------------------------------------------------------------------

RUNTIME = _section("Listener runtime (`hivewire run`)", "How `App.run` and `hivewire run` handle events.")
DEAD_LETTER_TOPIC = _key(
    RUNTIME,
    "hivewire.dead.letter.topic",
    Text("topic name"),
    "Where events a listener gave up on go.",
    default_doc="`<topic>.dlq`",
)
DEAD_LETTER_PRODUCER_PREFIX = _prefix(
    RUNTIME,
    "hivewire.dead.letter.producer.",
    "librdkafka producer properties of the dead-letter producer (`message.max.bytes`, `acks`, ...); they win "
    "over the security settings it shares with the consumer. A dead letter larger than `message.max.bytes` "
    "(default 1000000) keeps the start of the original, with headers saying so (see the runtime guide).",
)
ICEBERG_IO_PREFIX = _prefix(
    RUNTIME,
    "hivewire.iceberg.",
    "pyiceberg catalog properties for reading Iceberg metadata files (`s3.endpoint`, `s3.access-key-id`, "
    "`py-io-impl`, ...), the part after the prefix as pyiceberg names it; used by `on_iceberg_commit` listeners.",
)
STARTUP_TIMEOUT = _key(
    RUNTIME,
    "hivewire.startup.timeout.ms",
    Duration("ms"),
    "How long `run` and `archive` wait to reach Kafka for the first time before failing with a clear error; "
    "0 waits for ever. Later outages are waited out (readiness is DOWN meanwhile).",
    default="60000",
)
RETRY_MAX_ATTEMPTS = _key(
    RUNTIME, "hivewire.retry.max.attempts", Integer(1), "Calls per event, the first included.", default="5"
)
RETRY_INITIAL_DELAY = _key(
    RUNTIME,
    "hivewire.retry.initial.delay.ms",
    Duration("ms"),
    "Wait before the first retry.",
    default="1000",
)
RETRY_MULTIPLIER = _key(
    RUNTIME, "hivewire.retry.multiplier", Number(1.0), "Each wait is the last times this.", default="2.0"
)
RETRY_MAX_DELAY = _key(
    RUNTIME, "hivewire.retry.max.delay.ms", Duration("ms"), "The longest wait between calls.", default="60000"
)
LISTENER_TIMEOUT = _key(
    RUNTIME,
    "hivewire.listener.timeout.ms",
    Duration("ms", positive=True),
    "A call longer than this is a failed attempt (its thread is abandoned).",
    default="300000",
)
LISTENER_CONCURRENCY = _key(
    RUNTIME,
    "hivewire.listener.concurrency",
    Integer(1),
    "Events of one listener in flight at once, never two of one table (a listener's `concurrency=` overrides "
    "it): threads for a plain function, tasks on the runtime's event loop for an `async def` one.",
    default="1",
)
WORKERS = _key(
    RUNTIME,
    "hivewire.workers",
    Integer(1),
    "Processes `hivewire run` starts for the app, in one consumer group, supervised (a dead one is restarted); "
    "worker i serves /metrics and /health on `endpoint.port` + i. For listeners that spend CPU.",
    default="1",
)
MAX_ABANDONED_THREADS = _key(
    RUNTIME,
    "hivewire.listener.max.abandoned.threads",
    Integer(0),
    "Abandoned (timed-out, still running) threads per listener before `/health` reports DOWN.",
    default="8",
)
QUEUE_SIZE = _key(
    RUNTIME,
    "hivewire.listener.queue.size",
    Integer(1),
    "Events held in memory per listener worker; beyond, it spills (or consumption pauses, see `overflow`).",
    default="50000",
)
QUEUE_BYTES = _key(
    RUNTIME,
    "hivewire.listener.queue.bytes",
    Integer(1),
    "Bytes of messages held in memory per listener worker (256 MiB), likewise.",
    default=str(256 * 1024 * 1024),
)
OVERFLOW = _key(
    RUNTIME,
    "hivewire.listener.overflow",
    Choice(("reread", "pause")),
    "A worker over its bounds: `reread` spills (reads its records again from the topic later) while another "
    "keeps up and pauses consumption only when none does; `pause` pauses consumption for all.",
    default="reread",
)
BATCH_SIZE = _key(
    RUNTIME,
    "hivewire.consumer.batch.size",
    Integer(1, 100_000),
    "Records per poll. Drone Fly's `apiary.messaging.consumer.max.poll.records` sets it when this key is not given.",
    default="500",
)
COMMIT_INTERVAL = _key(
    RUNTIME,
    "hivewire.commit.interval.ms",
    Duration("ms", positive=True),
    "How often offsets are committed.",
    default="1000",
)
SHUTDOWN_TIMEOUT = _key(
    RUNTIME,
    "hivewire.shutdown.timeout.ms",
    Duration("ms"),
    "How long a stopping app waits for listeners' current calls.",
    default="30000",
)
GC_TUNING = _key(
    RUNTIME,
    "hivewire.gc.tuning",
    Flag(),
    "While the app runs, Python's cyclic garbage collector runs every 50,000 allocations instead of 700 and "
    "objects from start-up are frozen out of its scans; `false` keeps Python's defaults.",
    default="true",
)

# -- the metastore client: Hive's keys -----------------------------------------------------------------------

METASTORE = _section(
    "Metastore client",
    "Hive's client keys, with Hive's spellings: the metastore behind `event.handler` in `run`, and "
    "`MetastoreClient.from_hive_conf`.",
)
METASTORE_URIS = _key(
    METASTORE,
    "metastore.thrift.uris",
    Text("URIs or quorum"),
    "The metastores (`thrift://h1:9083,thrift://h2:9083`); in ZooKeeper discovery mode, the ZooKeeper quorum "
    "(`zk1:2181,zk2:2181`).",
    aliases=_hive("uris"),
)
DISCOVERY_MODE = _key(
    METASTORE,
    "metastore.service.discovery.mode",
    Choice(("zookeeper",), hint="(or empty for the fixed URIs of metastore.thrift.uris)"),
    "`zookeeper`: find the metastores registered in ZooKeeper (HIVE-20794); empty: the fixed URIs.",
    aliases=_hive("service.discovery.mode"),
)
FRAMED = _key(
    METASTORE,
    "metastore.thrift.framed.transport.enabled",
    Flag(),
    "The metastore uses Thrift's framed transport.",
    default_doc="`false`",
    aliases=_hive("thrift.framed.transport.enabled"),
)
COMPACT = _key(
    METASTORE,
    "metastore.thrift.compact.protocol.enabled",
    Flag(),
    "The metastore uses Thrift's compact protocol.",
    default_doc="`false`",
    aliases=_hive("thrift.compact.protocol.enabled"),
)
URI_SELECTION = _key(
    METASTORE,
    "metastore.thrift.uri.selection",
    Choice(("RANDOM", "SEQUENTIAL")),
    "The order fixed URIs are tried in.",
    default_doc="in the order given (discovered metastores: random)",
    aliases=("hive.metastore.uri.selection",),
)
SOCKET_TIMEOUT = _key(
    METASTORE,
    "metastore.client.socket.timeout",
    Duration("s", positive=True),
    "Bound on each metastore call.",
    default_doc="60 s",
    aliases=_hive("client.socket.timeout"),
)
METASTORE_SASL_ENABLED = _key(
    METASTORE,
    "metastore.sasl.enabled",
    Flag(),
    "Authenticate to the metastore with SASL; alone, as in Hive, it means Kerberos (GSSAPI).",
    default_doc="`false` (on when a mechanism is set)",
    aliases=_hive("sasl.enabled"),
)
METASTORE_SASL_MECHANISM = _key(
    METASTORE,
    "hivewire.metastore.sasl.mechanism",
    Choice(("PLAIN", "DIGEST-MD5", "GSSAPI")),
    "The SASL mechanism towards the metastore. PLAIN and DIGEST-MD5 take a user name and password and are "
    "tested against a SASL metastore; GSSAPI (Kerberos) takes the principal below and the process's ticket "
    "(`kinit`), needs the `kerberos` package, and is not tested here (no KDC): see docs/metastore.md.",
    default_doc="GSSAPI when `metastore.sasl.enabled`, else no SASL",
)
METASTORE_SASL_USERNAME = _key(
    METASTORE,
    "hivewire.metastore.sasl.username",
    Text("user"),
    "The SASL user (PLAIN, DIGEST-MD5); with GSSAPI, the client principal if not the ticket's default.",
)
METASTORE_SASL_PASSWORD = _key(
    METASTORE, "hivewire.metastore.sasl.password", Secret(), "The SASL password (PLAIN, DIGEST-MD5)."
)
METASTORE_SASL_SERVICE = _key(
    METASTORE,
    "hivewire.metastore.sasl.service",
    Text("name"),
    "The SASL service (protocol) name DIGEST-MD5 names the server with (`service/host`, the host being the "
    "metastore URI's); GSSAPI takes both from the principal.",
    default="hive",
)
METASTORE_KERBEROS_PRINCIPAL = _key(
    METASTORE,
    "metastore.kerberos.principal",
    Text("principal"),
    "The metastore's Kerberos principal (`hive/_HOST@EXAMPLE.COM`; `_HOST` becomes the host of the metastore "
    "URI, lower-cased, as in Hive's client).",
    aliases=_hive("kerberos.principal"),
)

# -- ZooKeeper discovery -------------------------------------------------------------------------------------

ZOOKEEPER = _section(
    "ZooKeeper discovery",
    "Where metastores are registered (HIVE-20794), read as Hive 4's client reads them: `metastore.zookeeper.*` "
    "first, then `hive.metastore.zookeeper.*`, then `hive.zookeeper.*`; the quorum is `metastore.thrift.uris`. "
    "Also read from a `hive-site.xml` (`--hive-site`).",
)
ZK_CLIENT_PORT = _key(
    ZOOKEEPER,
    "metastore.zookeeper.client.port",
    Integer(1, 65535),
    "Port of quorum hosts written without one.",
    default="2181",
    aliases=_zookeeper("client.port"),
)
ZK_NAMESPACE = _key(
    ZOOKEEPER,
    "metastore.zookeeper.namespace",
    Text("znode name"),
    "The parent znode of the registrations. `hive.zookeeper.namespace` is also the Hive lock manager's: "
    "hivewire warns when the namespace comes from it.",
    default="hive_metastore",
    aliases=_zookeeper("namespace"),
)
ZK_SESSION_TIMEOUT = _key(
    ZOOKEEPER,
    "metastore.zookeeper.session.timeout",
    Duration("ms", positive=True),
    "ZooKeeper session timeout.",
    default="120000ms",
    aliases=_zookeeper("session.timeout"),
)
ZK_CONNECTION_TIMEOUT = _key(
    ZOOKEEPER,
    "metastore.zookeeper.connection.timeout",
    Duration("s", positive=True),
    "How long connecting to ZooKeeper may take.",
    default="15s",
    aliases=_zookeeper("connection.timeout"),
)
ZK_MAX_RETRIES = _key(
    ZOOKEEPER,
    "metastore.zookeeper.connection.max.retries",
    Integer(0),
    "Retries of a ZooKeeper operation.",
    default="3",
    aliases=_zookeeper("connection.max.retries"),
)
ZK_BASE_SLEEP = _key(
    ZOOKEEPER,
    "metastore.zookeeper.connection.basesleeptime",
    Duration("ms", positive=True),
    "First wait between retries (it doubles).",
    default="1000ms",
    aliases=_zookeeper("connection.basesleeptime"),
)
ZK_SSL_ENABLE = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.client.enable",
    Flag(),
    "TLS to ZooKeeper.",
    default="false",
    aliases=_zookeeper("ssl.client.enable"),
)
ZK_KEYSTORE_LOCATION = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.keystore.location",
    Path(),
    "The client's key and certificate: a PEM file (JKS and PKCS12 stores must be converted).",
    aliases=_zookeeper("ssl.keystore.location"),
)
ZK_KEYSTORE_PASSWORD = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.keystore.password",
    Secret(),
    "Password of the key.",
    aliases=_zookeeper("ssl.keystore.password"),
)
ZK_KEYSTORE_TYPE = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.keystore.type",
    Text("store type"),
    "`PEM` (the only type kazoo reads).",
    default_doc="from the file name: `.pem`/`.crt` are PEM",
    aliases=_zookeeper("ssl.keystore.type"),
)
ZK_TRUSTSTORE_LOCATION = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.truststore.location",
    Path(),
    "The CA certificates: a PEM file.",
    aliases=_zookeeper("ssl.truststore.location"),
)
ZK_TRUSTSTORE_PASSWORD = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.truststore.password",
    Secret(),
    "Not used: PEM trust stores have no password.",
    aliases=_zookeeper("ssl.truststore.password"),
)
ZK_TRUSTSTORE_TYPE = _key(
    ZOOKEEPER,
    "metastore.zookeeper.ssl.truststore.type",
    Text("store type"),
    "`PEM`.",
    default_doc="from the file name",
    aliases=_zookeeper("ssl.truststore.type"),
)
ZK_AUTH = _key(
    ZOOKEEPER,
    "hivewire.zookeeper.auth",
    Credentials(),
    "ZooKeeper credentials, such as `digest:user:password`.",
)
ZK_SSL_CERTFILE = _key(
    ZOOKEEPER, "hivewire.zookeeper.ssl.certfile", Path(), "The client certificate (PEM); wins over the keystore."
)
ZK_SSL_KEYFILE = _key(ZOOKEEPER, "hivewire.zookeeper.ssl.keyfile", Path(), "The client key (PEM).")
ZK_SSL_KEYFILE_PASSWORD = _key(
    ZOOKEEPER, "hivewire.zookeeper.ssl.keyfile.password", Secret(), "Password of the client key."
)
ZK_SSL_CA = _key(ZOOKEEPER, "hivewire.zookeeper.ssl.ca", Path(), "The CA certificates (PEM); wins over the truststore.")
ZK_SSL_VERIFY = _key(
    ZOOKEEPER, "hivewire.zookeeper.ssl.verify", Flag(), "Verify ZooKeeper's certificate.", default="true"
)

# -- coordination ---------------------------------------------------------------------------------------------

COORDINATION = _section(
    "Coordination (`hivewire status`, `listener`, `sideline`)",
    "Where the instances of an app meet: live instances, singleton listeners, listener switches and sidelines "
    "live in ZooKeeper under `<root>/apps/<app>` (docs/coordination.md). Credentials, TLS and retries are the "
    "ZooKeeper discovery section's keys.",
)
COORDINATION_ZOOKEEPER = _key(
    COORDINATION,
    "hivewire.coordination.zookeeper",
    Text("quorum"),
    "The ZooKeeper ensemble, such as `zk1:2181,zk2:2181` (a chroot may follow: `zk1:2181/hive`); unset: no "
    "coordination.",
)
COORDINATION_ROOT = _key(
    COORDINATION,
    "hivewire.coordination.root",
    Text("znode name"),
    "The znode that holds hivewire's coordination state.",
    default="hivewire",
)
COORDINATION_SESSION_TIMEOUT = _key(
    COORDINATION,
    "hivewire.coordination.session.timeout",
    Duration("s", positive=True),
    "ZooKeeper session timeout of coordination: how soon a dead instance leaves and its singleton listeners "
    "move to another (ZooKeeper bounds it by its own min and max session timeouts).",
    default="15s",
)

# -- the shim -----------------------------------------------------------------------------------------------

NOTIFICATION = _section(
    "Notification log (`NotificationLogSource`, `hivewire bridge`)",
    "Reading the metastore's own event feed (Hive's `DbNotificationListener`) through `get_next_notification`.",
)
NOTIFICATION_POSITION_FILE = _key(
    NOTIFICATION,
    "hivewire.notification.position.file",
    Path(),
    "Where the last event id handled is kept across restarts (one reader per file).",
    default="hivewire-notification.position",
)
NOTIFICATION_START = _key(
    NOTIFICATION,
    "hivewire.notification.start",
    Choice(("earliest", "latest")),
    "Where a reader without a position starts: the oldest event the log keeps, or the next one written.",
    default="earliest",
)
NOTIFICATION_BATCH_SIZE = _key(
    NOTIFICATION,
    "hivewire.notification.batch.size",
    Integer(1, 100000),
    "Events asked for per `get_next_notification` call.",
    default="500",
)
NOTIFICATION_POLL_INTERVAL = _key(
    NOTIFICATION,
    "hivewire.notification.poll.interval",
    Duration("s", positive=True),
    "How long to wait before asking again when the log had nothing new.",
    default="1",
)
NOTIFICATION_ON_GAP = _key(
    NOTIFICATION,
    "hivewire.notification.on.gap",
    Choice(("continue", "stop")),
    "What to do when events were removed from the log before they were read (the position fell behind "
    "`hive.metastore.event.db.listener.timetolive`): report and go on, or report and stop.",
    default="continue",
)

BRIDGE_PRODUCER_PREFIX = _prefix(
    NOTIFICATION,
    "hivewire.bridge.producer.",
    "librdkafka producer properties for `hivewire bridge` (`security.protocol`, `compression.type`, ...).",
)

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

# -- the archive ---------------------------------------------------------------------------------------------

ARCHIVE = _section(
    "Archive (`hivewire archive`)",
    "The exactly-once Delta archive of the topic. It reads `apiary.bootstrap.servers`, "
    "`apiary.kafka.topic.name` and `apiary.messaging.consumer.*`.",
)
ARCHIVE_TABLE = _key(
    ARCHIVE,
    "hivewire.archive.table",
    Text("path or URI"),
    "The Delta table: a path or a URI (`s3://`, `abfss://`, ...); created when missing.",
)
ARCHIVE_APP_ID = _key(
    ARCHIVE,
    "hivewire.archive.app.id",
    Text("name"),
    "Job name in the table's app transactions; the same for every process of one job.",
    default_doc="the topic",
)
ARCHIVE_GROUP_ID = _key(
    ARCHIVE,
    "hivewire.archive.group.id",
    Text("group"),
    "Kafka consumer group.",
    default_doc="`hivewire-archive-<app id>-<the Delta table's id>`",
)
ARCHIVE_FLUSH_EVENTS = _key(
    ARCHIVE,
    "hivewire.archive.flush.events",
    Integer(1),
    "Write when this many messages are buffered.",
    default="10000",
)
ARCHIVE_FLUSH_INTERVAL = _key(
    ARCHIVE,
    "hivewire.archive.flush.interval",
    Duration("s", positive=True),
    "Write when the oldest buffered message is this old (the latency bound).",
    default="10",
)
ARCHIVE_STORAGE_PREFIX = _prefix(
    ARCHIVE,
    "hivewire.archive.storage.",
    "deltalake storage options (`AWS_REGION`, ...); the part after the prefix is passed as written.",
)

# -- the history on Spark ------------------------------------------------------------------------------------

SPARK_HISTORY = _section(
    "History on Spark (`hivewire spark-history`)",
    "The streaming history of the topic in a metastore table, written by Spark from the `hivewire` data "
    "source. It reads `apiary.bootstrap.servers`, `apiary.kafka.topic.name` and `apiary.messaging.consumer.*`.",
)
SPARK_HISTORY_TABLE = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.table",
    Text("db.table"),
    "The metastore table of the events: created when missing (parquet, partitioned by `event_date`); its "
    "database must exist.",
)
SPARK_HISTORY_CHECKPOINT = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.checkpoint",
    Text("path or URI"),
    "The streaming checkpoint (the Kafka offsets of every batch): one per table, on storage every restart sees.",
)
SPARK_HISTORY_MAX_EVENTS = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.max.events.per.trigger",
    Integer(1),
    "At most this many messages per micro-batch.",
    default_doc="no bound",
)
SPARK_HISTORY_INTERVAL = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.trigger.interval",
    Duration("s", positive=True),
    "Time between the starts of micro-batches.",
    default="10",
)
SPARK_HISTORY_AVAILABLE_NOW = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.available.now",
    Flag(),
    "Write what the topic holds when the job starts, then exit (for scheduled runs).",
    default="false",
)
SPARK_MASTER = _key(
    SPARK_HISTORY,
    "hivewire.spark.master",
    Text("URL"),
    "Spark master (`local[4]`, `spark://host:7077`, `yarn`).",
    default_doc="Spark's own (`spark-submit`'s, else `local[*]`)",
)
SPARK_ZOOKEEPER = _key(
    SPARK_HISTORY,
    "hivewire.spark.zookeeper",
    Text("quorum"),
    "Find the metastores in ZooKeeper (HIVE-20794) instead of `metastore.thrift.uris`.",
)
SPARK_NAMESPACE = _key(
    SPARK_HISTORY,
    "hivewire.spark.namespace",
    Text("znode name"),
    "Parent znode of the metastores' registrations.",
    default="hive_metastore",
)
SPARK_METASTORE_VERSION = _key(
    SPARK_HISTORY,
    "hivewire.spark.metastore.version",
    Text("release"),
    "The Hive client release Spark talks to the metastore with (`4.0.1` for a Hive 4 metastore, whose tables "
    "Spark's built-in 2.3 client cannot read); Spark downloads its jars from Maven Central on first use unless "
    "`spark.sql.hive.metastore.jars` (through `--conf`) names them.",
    default_doc="Spark's built-in Hive 2.3 client",
)
SPARK_CONF_PREFIX = _prefix(
    SPARK_HISTORY,
    "hivewire.spark.conf.",
    "Spark settings (`spark.executor.memory`, ...); the part after the prefix is passed as written.",
)

# -- the register sidecar ------------------------------------------------------------------------------------

REGISTER = _section(
    "Register sidecar (`hivewire register`)",
    "Registers an existing metastore in ZooKeeper the way Hive 4 does, while it passes health checks.",
)
REGISTER_METASTORE = _key(
    REGISTER,
    "hivewire.register.metastore",
    HostPorts(single=True),
    "The metastore to register, written to ZooKeeper as is: clients must reach this address.",
)
REGISTER_ZOOKEEPER = _key(
    REGISTER, "hivewire.register.zookeeper", Text("quorum"), "ZooKeeper quorum.", default_doc="the `hive-site.xml`'s"
)
REGISTER_NAMESPACE = _key(
    REGISTER,
    "hivewire.register.namespace",
    Text("znode name"),
    "Parent znode of the registrations.",
    default_doc="the `hive-site.xml`'s, else `hive_metastore`",
)
REGISTER_HIVE_SITE = _key(
    REGISTER,
    "hivewire.register.hive.site",
    Path(),
    "A `hive-site.xml` for the ZooKeeper settings (quorum, namespace, timeouts, credentials, TLS); the register "
    "quorum and namespace keys win over it.",
)
REGISTER_ACL = _key(
    REGISTER,
    "hivewire.register.acl",
    SecretNames("scheme:id:perms entries"),
    "ACL of the nodes, such as `world:anyone:r,digest:user:password:cdrwa`.",
    default_doc="open, like Hive",
)
REGISTER_INTERVAL = _key(
    REGISTER,
    "hivewire.register.interval",
    Duration("s", positive=True),
    "Time between health checks (fb303 `getStatus` and `get_all_databases`).",
    default="5",
)
REGISTER_CHECK_TIMEOUT = _key(
    REGISTER,
    "hivewire.register.check.timeout",
    Duration("s", positive=True),
    "How long one health check may take, connecting included; less than the interval.",
    default_doc="half the interval",
)


BY_SPELLING: dict[str, Key[object]] = {spelling: key for key in KEYS for spelling in key.spellings}
"""Every key by its name and by each alias."""


def find_key(name: str) -> Key[object] | None:
    """The key ``name`` is a spelling of (its name or an alias), or None."""
    return BY_SPELLING.get(name)


def passed_through(name: str) -> Prefix | None:
    """The pass-through prefix ``name`` is under, or None."""
    return next((p for p in PREFIXES if name.startswith(p.name) and len(name) > len(p.name)), None)
