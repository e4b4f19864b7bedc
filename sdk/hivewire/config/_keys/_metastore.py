"""Hive's metastore client keys (``metastore.*``, read under their ``hive.metastore.*`` aliases too)."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Choice, Duration, Flag, Secret, Text


def _hive(suffix: str) -> tuple[str, ...]:
    """Hive's aliases of ``metastore.<suffix>``: ``hive.metastore.<suffix>``."""
    return (f"hive.metastore.{suffix}",)


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
