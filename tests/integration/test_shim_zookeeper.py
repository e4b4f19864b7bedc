"""The shim in ZooKeeper: it registers itself the way Hive 4 metastores do, and can find its upstream there,
also in namespaces that need credentials (``hivewire shim --hive-site/--upstream-hive-site``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

import hivewire as hw
from hivewire.metastore._discovery import ZooKeeperResolver, close_shared_resolvers, discover_metastores
from hivewire.tools._local import LocalMetastore, LocalZooKeeper, free_port
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


def test_discovered_upstream_and_registered_shim(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, upstream_namespace: str
) -> None:
    shim_namespace = f"shim_{uuid.uuid4().hex[:8]}"
    with (
        ZooKeeperResolver(zookeeper.quorum, upstream_namespace) as resolver,
        Shim(resolver, zookeeper=zookeeper.quorum, namespace=shim_namespace) as shim,
    ):
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
            with (
                hw.MetastoreClient.from_zookeeper(zookeeper.quorum, namespace=shim_namespace) as client,
                hw.MetastoreClient(metastore.uri) as direct,
            ):
                assert client.uri == shim.uri
                assert client.get_all_databases() == direct.get_all_databases()
        finally:
            close_shared_resolvers()  # from_zookeeper's process-wide resolver: its session must not outlive us
    with pytest.raises(hw.DiscoveryError):  # withdrawn when the shim stopped
        discover_metastores(zookeeper.quorum, shim_namespace)


def test_registering_in_the_namespace_the_upstream_is_discovered_in_is_refused(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, upstream_namespace: str
) -> None:
    with ZooKeeperResolver(zookeeper.quorum, upstream_namespace) as resolver:
        with pytest.raises(hw.ConfigError, match="in a loop") as refused:
            Shim(resolver, zookeeper=zookeeper.quorum, namespace=upstream_namespace)
        assert f"/{upstream_namespace}" in str(refused.value) and "--namespace" in str(refused.value)
    assert discover_metastores(zookeeper.quorum, upstream_namespace) == [metastore.uri]  # no shim registered


def hive_site(path: Path, **properties: str) -> Path:
    path.write_text(
        "<configuration>"
        + "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in properties.items())
        + "</configuration>"
    )
    return path


def test_the_shim_command_discovers_and_registers_in_digest_protected_namespaces(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, tmp_path: Path
) -> None:
    upstream_ns, shim_ns = f"hms_{uuid.uuid4().hex[:8]}", f"shim_{uuid.uuid4().hex[:8]}"
    admin = KazooClient(hosts=zookeeper.quorum, timeout=10)
    admin.start(timeout=30)
    admin.add_auth("digest", "reader:pw")
    admin.add_auth("digest", "writer:pw")
    # The metastore is registered where only "reader" may look; the shim may register only as "writer".
    readers, writers = [make_digest_acl("reader", "pw", all=True)], [make_digest_acl("writer", "pw", all=True)]
    admin.create(f"/{upstream_ns}", b"", acl=readers)
    address = metastore.uri.removeprefix("thrift://")
    admin.create(f"/{upstream_ns}/{address}", address.encode(), acl=readers, ephemeral=True, sequence=True)
    admin.create(f"/{shim_ns}", b"", acl=writers)
    upstream_site = hive_site(
        tmp_path / "upstream-site.xml",
        **{
            "metastore.thrift.uris": zookeeper.quorum,
            "metastore.zookeeper.namespace": upstream_ns,
            "hivewire.zookeeper.auth": "digest:reader:pw",
        },
    )
    shim_site = hive_site(
        tmp_path / "shim-site.xml",
        **{
            "metastore.thrift.uris": zookeeper.quorum,
            "metastore.zookeeper.namespace": shim_ns,
            "hivewire.zookeeper.auth": "digest:writer:pw",
        },
    )
    port = free_port()
    log = tmp_path / "shim.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hivewire",
                "shim",
                "--upstream-hive-site",
                str(upstream_site),
                "--hive-site",
                str(shim_site),
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--advertise",
                f"127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    shim_uri = f"thrift://127.0.0.1:{port}"
    writer = [("digest", "writer:pw")]
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if discover_metastores(zookeeper.quorum, shim_ns, auth_data=writer) == [shim_uri]:
                    break
            except hw.DiscoveryError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        with pytest.raises(hw.DiscoveryError, match="credentials"):  # the namespace is protected indeed
            discover_metastores(zookeeper.quorum, shim_ns)
        # Through the shim, which could only find the metastore in the protected upstream namespace.
        with hw.MetastoreClient(shim_uri, timeout=60) as client, hw.MetastoreClient(metastore.uri) as direct:
            assert client.get_all_databases() == direct.get_all_databases()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()[-5000:]
        admin.stop()
        admin.close()
    assert "Traceback" not in log.read_text(), log.read_text()[-5000:]
    with pytest.raises(hw.DiscoveryError):  # withdrawn when the shim stopped
        discover_metastores(zookeeper.quorum, shim_ns, auth_data=writer)
