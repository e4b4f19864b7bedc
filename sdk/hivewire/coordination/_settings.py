"""Where coordination lives, read from the configuration (``hivewire.coordination.*`` and the ZooKeeper keys)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.coordination._paths import normalize
from hivewire.errors import ConfigError, CoordinationError

if TYPE_CHECKING:
    from hivewire.coordination._zookeeper import ZooKeeperCoordinator
    from hivewire.metastore._zookeeper import DiscoveryConfig


@dataclass(frozen=True)
class CoordinationSettings:
    """The ZooKeeper that coordinates (None: coordination is off) and the root znode under which it keeps its
    state. The connection's credentials, TLS and retries are discovery's keys (``hivewire.zookeeper.auth``,
    ``metastore.zookeeper.ssl.*``, ...); the session timeout is ``hivewire.coordination.session.timeout``."""

    zookeeper: DiscoveryConfig | None
    root: str = "hivewire"

    @classmethod
    def from_config(cls, config: Config) -> CoordinationSettings:
        """Raises :class:`~hivewire.errors.ConfigError` naming the key."""
        from hivewire.metastore._zookeeper import DiscoveryConfig  # kazoo: only when coordination is used

        root_key = keys.COORDINATION_ROOT
        root = config.read(root_key)
        try:
            root = normalize(root, "root")
        except CoordinationError as e:
            raise ConfigError(root_key.name, str(e)) from e
        quorum = config.optional(keys.COORDINATION_ZOOKEEPER)
        if not quorum:
            return cls(None, root)
        zookeeper = DiscoveryConfig.from_conf(config, quorum=quorum)
        zookeeper = dataclasses.replace(zookeeper, session_timeout=config.read(keys.COORDINATION_SESSION_TIMEOUT))
        return cls(zookeeper, root)

    def connect(self) -> ZooKeeperCoordinator:
        """A coordinator on the configured ZooKeeper (:class:`~hivewire.errors.ConfigError` when none is)."""
        from hivewire.coordination._zookeeper import ZooKeeperCoordinator

        if self.zookeeper is None:
            raise ConfigError(
                keys.COORDINATION_ZOOKEEPER.name, "not set; give the ZooKeeper quorum, such as zk1:2181,zk2:2181"
            )
        return ZooKeeperCoordinator(self.zookeeper, root=self.root)
