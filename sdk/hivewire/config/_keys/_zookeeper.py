"""ZooKeeper discovery's keys: Hive's ``metastore.zookeeper.*`` (HIVE-20794) and hivewire's PEM forms."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Credentials, Duration, Flag, Integer, Path, Secret, Text


def _zookeeper(suffix: str) -> tuple[str, ...]:
    """Hive's aliases of ``metastore.zookeeper.<suffix>``, in MetastoreConf's lookup order."""
    return (f"hive.metastore.zookeeper.{suffix}", f"hive.zookeeper.{suffix}")


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
