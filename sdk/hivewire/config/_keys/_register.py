"""The register sidecar's keys (``hivewire register``)."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Duration, HostPorts, Path, SecretNames, Text

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
