"""Coordination's keys: where apps keep their shared state in ZooKeeper."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Duration, Text

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
