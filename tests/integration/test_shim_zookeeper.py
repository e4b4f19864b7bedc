"""The shim in ZooKeeper: it registers itself the way Hive 4 metastores do, and can find its upstream there."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

import hivewire as hw
from hivewire.discovery import ZooKeeperResolver, close_shared_resolvers, discover_metastores
from hivewire.local import LocalMetastore, LocalZooKeeper
from hivewire_shim import Shim


@pytest.fixture
def upstream_namespace(zookeeper: LocalZooKeeper, metastore: LocalMetastore) -> Iterator[str]:
    """The session metastore registered (HIVE-20794 format) in a namespace of its own."""
    namespace = f"hms_{uuid.uuid4().hex[:8]}"
    zk = KazooClient(hosts=zookeeper.quorum, timeout=10)
    zk.start(timeout=30)
    address = metastore.uri.removeprefix("thrift://")
    zk.create(f"/{namespace}/{address}", address.encode(), ephemeral=True, sequence=True, makepath=True)
    yield namespace
    zk.stop()
    zk.close()


def test_discovered_upstream_and_registered_shim(zookeeper: LocalZooKeeper, metastore: LocalMetastore,
                                                 upstream_namespace: str) -> None:
    shim_namespace = f"shim_{uuid.uuid4().hex[:8]}"
    with ZooKeeperResolver(zookeeper.quorum, upstream_namespace) as resolver, \
            Shim(resolver, zookeeper=zookeeper.quorum, namespace=shim_namespace) as shim:
        deadline = time.monotonic() + 30
        uris: list[str] = []
        while time.monotonic() < deadline:
            try:
                uris = discover_metastores(zookeeper.quorum, shim_namespace)
                break
            except hw.DiscoveryError:
                time.sleep(0.2)
        assert uris == [shim.uri]
        try:
            with hw.MetastoreClient.from_zookeeper(zookeeper.quorum, namespace=shim_namespace) as client, \
                    hw.MetastoreClient(metastore.uri) as direct:
                assert client.uri == shim.uri
                assert client.get_all_databases() == direct.get_all_databases()
        finally:
            close_shared_resolvers()  # from_zookeeper's process-wide resolver: its session must not outlive us
    with pytest.raises(hw.DiscoveryError):  # withdrawn when the shim stopped
        discover_metastores(zookeeper.quorum, shim_namespace)


def test_registering_in_the_namespace_the_upstream_is_discovered_in_is_refused(
        zookeeper: LocalZooKeeper, metastore: LocalMetastore, upstream_namespace: str) -> None:
    with ZooKeeperResolver(zookeeper.quorum, upstream_namespace) as resolver:
        with pytest.raises(hw.ConfigError, match="in a loop") as refused:
            Shim(resolver, zookeeper=zookeeper.quorum, namespace=upstream_namespace)
        assert f"/{upstream_namespace}" in str(refused.value) and "--namespace" in str(refused.value)
    assert discover_metastores(zookeeper.quorum, upstream_namespace) == [metastore.uri]  # no shim registered
