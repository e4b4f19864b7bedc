"""The shim refuses a configuration in which it would relay to itself or to other shims in a loop."""

from __future__ import annotations

import pytest

from hivewire.discovery import DiscoveryConfig
from hivewire.errors import ConfigError
from hivewire_shim import Shim, Upstream


class Discovered:
    """Stands in for hivewire.discovery.ZooKeeperResolver (which connects to ZooKeeper when made)."""

    def __init__(self, quorum: str, namespace: str) -> None:
        self.config = DiscoveryConfig(quorum=quorum, namespace=namespace)

    def uris(self) -> list[str]:
        return ["thrift://hms1:9083"]

    def refresh(self) -> list[str]:
        return self.uris()


@pytest.mark.parametrize("registered", ["zk1:2181", "ZK2,zk1:2181", DiscoveryConfig("zk1", "elsewhere")])
def test_registering_where_the_upstream_is_discovered_is_refused(registered: str | DiscoveryConfig) -> None:
    resolver = Discovered("zk1:2181,zk2:2181", "hive_metastore")
    with pytest.raises(ConfigError, match=r"/hive_metastore .*in a loop.*--namespace.*--upstream-namespace"):
        Shim(resolver, zookeeper=registered, namespace="hive_metastore")
    with pytest.raises(ConfigError, match="in a loop"):  # also through an Upstream made by the caller
        Shim(Upstream(resolver), zookeeper=registered, namespace="hive_metastore")


@pytest.mark.parametrize(("quorum", "namespace"), [("zk1:2181", "hivewire_shim"), ("zk9:2181", "hive_metastore"),
                                                   ("zk1:2181/other", "hive_metastore")])
def test_another_namespace_or_ensemble_is_fine(quorum: str, namespace: str) -> None:
    shim = Shim(Discovered("zk1:2181,zk2:2181", "hive_metastore"), zookeeper=quorum, namespace=namespace)
    assert shim.namespace == namespace
    shim.lookup.close()
