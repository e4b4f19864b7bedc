"""ZooKeeper discovery against a real ZooKeeper and a real metastore.

Registrations are written with kazoo exactly as Hive 4's HiveMetaStore (ZooKeeperHiveHelper) and
HiveServer2 write them, each test in its own namespace.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
from proxy import TcpProxy
from runtime_harness import MemoryHarness
from waiting import wait_for

import hivewire as hw
from hivewire.metastore._discovery import ZooKeeperResolver, close_shared_resolvers, discover_metastores
from hivewire.metastore._zookeeper import DiscoveryConfig
from hivewire.tools._cli import main as cli
from hivewire.tools._local import LocalMetastore, LocalZooKeeper
from hivewire.tools._testing import make_database, make_table


@pytest.fixture
def zk(zookeeper: LocalZooKeeper) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zookeeper.quorum, timeout=10)
    client.start(timeout=30)
    yield client
    client.stop()
    client.close()


@pytest.fixture(autouse=True)
def _close_shared_resolvers() -> Iterator[None]:
    yield
    close_shared_resolvers()


def register_like_hive4(zk: KazooClient, namespace: str, address: str) -> str:
    """ZooKeeperHiveHelper.addServerInstanceToZooKeeper(host:port, host:port, ...) with the default ACL."""
    zk.ensure_path(f"/{namespace}")
    path: str = zk.create(f"/{namespace}/{address}", address.encode("utf-8"), ephemeral=True, sequence=True)
    return path


def test_hive4_registrations(zk: KazooClient, zookeeper: LocalZooKeeper, unique: str) -> None:
    first = register_like_hive4(zk, unique, "hms-a.example.com:9083")
    register_like_hive4(zk, unique, "hms-b.example.com:9084")
    # The layout Hive 4 produces: sequence glued to the port, data host:port.
    assert first.rsplit("/", 1)[1].startswith("hms-a.example.com:9083") and first[-10:].isdigit()
    assert zk.get(first)[0] == b"hms-a.example.com:9083"
    assert discover_metastores(zookeeper.quorum, unique) == [
        "thrift://hms-a.example.com:9083",
        "thrift://hms-b.example.com:9084",
    ]


def test_hiveserver2_style_empty_data_and_duplicates(zk: KazooClient, zookeeper: LocalZooKeeper, unique: str) -> None:
    ns = f"/{unique}"
    zk.ensure_path(ns)
    hs2 = "serverUri={};version=4.0.0;sequence="
    zk.create(f"{ns}/{hs2.format('hs2-a:10000')}", b"hs2-a:10000", ephemeral=True, sequence=True)
    zk.create(
        f"{ns}/{hs2.format('hs2-b:10001')}",
        b"hive.server2.thrift.bind.host=hs2-b;hive.server2.instance.uri=hs2-b:10001;"
        b"hive.server2.transport.mode=binary;hive.server2.authentication=NONE",
        ephemeral=True,
        sequence=True,
    )
    zk.create(f"{ns}/{hs2.format('hs2-c:10002')}", b"", ephemeral=True, sequence=True)
    zk.create(f"{ns}/hms-d:9083", b"", ephemeral=True, sequence=True)  # Hive 4 name, empty data
    zk.create(f"{ns}/hms-e:9083", b"hms-a-typo", ephemeral=True, sequence=True)  # unreadable data: the name
    zk.create(f"{ns}/hms-d:9083", b"hms-d:9083", ephemeral=True, sequence=True)  # a duplicate registration
    zk.create(f"{ns}/lock-", b"", ephemeral=True, sequence=True)  # not a registration at all
    assert discover_metastores(zookeeper.quorum, unique) == [
        "thrift://hs2-a:10000",
        "thrift://hs2-b:10001",
        "thrift://hs2-c:10002",
        "thrift://hms-d:9083",
        "thrift://hms-e:9083",
    ]


def test_missing_or_empty_namespace_is_a_clear_error(zk: KazooClient, zookeeper: LocalZooKeeper, unique: str) -> None:
    with pytest.raises(hw.DiscoveryError) as missing:
        discover_metastores(zookeeper.quorum, unique)
    text = str(missing.value)
    assert "No metastore service discovered in ZooKeeper" in text
    assert zookeeper.quorum in text and f"/{unique}" in text and "does not exist" in text
    assert "at least one metastore server is online" in text

    zk.ensure_path(f"/{unique}")
    with pytest.raises(hw.DiscoveryError) as empty:
        discover_metastores(zookeeper.quorum, unique)
    assert "No metastore service discovered" in str(empty.value) and "no registration" in str(empty.value)

    with pytest.raises(hw.DiscoveryError) as empty_client:
        hw.MetastoreClient.from_zookeeper(zookeeper.quorum, unique)
    assert f"/{unique}" in str(empty_client.value)


def test_the_error_names_the_key_the_namespace_came_from(
    zookeeper: LocalZooKeeper, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    # An HDP-style site: hive.zookeeper.namespace is set for the lock manager, and MetastoreConf's fallback to
    # it moves discovery there.
    conf = {
        "metastore.service.discovery.mode": "zookeeper",
        "metastore.thrift.uris": zookeeper.quorum,
        "hive.zookeeper.namespace": unique,
    }
    with caplog.at_level("WARNING", logger="hivewire.discovery"), pytest.raises(hw.DiscoveryError) as exc:
        hw.MetastoreClient.from_hive_conf(conf)
    text = str(exc.value)
    assert f"hive.zookeeper.namespace={unique}" in text and "set metastore.zookeeper.namespace" in text
    assert f"metastore.zookeeper.namespace={unique}" not in text  # the old message named the wrong key
    assert any(
        "hive.zookeeper.namespace" in r.getMessage() and "metastore.zookeeper.namespace" in r.getMessage()
        for r in caplog.records
        if r.levelname == "WARNING"
    )

    conf = {**conf, "metastore.zookeeper.namespace": f"{unique}_hms"}
    with pytest.raises(hw.DiscoveryError) as exc2:
        hw.MetastoreClient.from_hive_conf(conf)
    assert f"metastore.zookeeper.namespace={unique}_hms" in str(exc2.value)
    assert "hive.zookeeper.namespace" not in str(exc2.value)


def test_unreachable_zookeeper_is_a_clear_error() -> None:
    from hivewire.tools._local import free_port

    quorum = f"127.0.0.1:{free_port()}"
    with pytest.raises(hw.DiscoveryError) as exc:
        discover_metastores(DiscoveryConfig(quorum=quorum, connection_timeout=1.0, max_retries=0))
    assert quorum in str(exc.value) and "could not connect to ZooKeeper" in str(exc.value)


def test_digest_protected_namespace_needs_credentials(zk: KazooClient, zookeeper: LocalZooKeeper, unique: str) -> None:
    acl = [make_digest_acl("reader", "pw", all=True)]
    zk.add_auth("digest", "reader:pw")
    zk.create(f"/{unique}", b"", acl=acl)
    zk.create(f"/{unique}/hms-x:9083", b"hms-x:9083", acl=acl, ephemeral=True, sequence=True)
    with pytest.raises(hw.DiscoveryError) as exc:
        discover_metastores(zookeeper.quorum, unique)
    assert "credentials" in str(exc.value)
    assert discover_metastores(zookeeper.quorum, unique, auth_data=[("digest", "reader:pw")]) == ["thrift://hms-x:9083"]


def test_resolver_follows_changes(zk: KazooClient, zookeeper: LocalZooKeeper, unique: str) -> None:
    with ZooKeeperResolver(zookeeper.quorum, unique) as resolver:
        assert resolver.uris() == []  # namespace missing: no error here, the watch waits for it
        a = register_like_hive4(zk, unique, "hms-a:9083")
        wait_for(lambda: resolver.uris() == ["thrift://hms-a:9083"], "the new namespace and node to be seen")
        b = register_like_hive4(zk, unique, "hms-b:9083")
        wait_for(lambda: sorted(resolver.uris()) == ["thrift://hms-a:9083", "thrift://hms-b:9083"], "hms-b")
        zk.delete(a)
        wait_for(lambda: resolver.uris() == ["thrift://hms-b:9083"], "hms-a to go")
        # The namespace deleted and created again: the watch must follow the new node.
        zk.delete(b)
        zk.delete(f"/{unique}")
        wait_for(lambda: not resolver._uris, "the namespace to go")
        register_like_hive4(zk, unique, "hms-c:9083")
        wait_for(lambda: resolver.uris() == ["thrift://hms-c:9083"], "hms-c in the re-created namespace")


def test_resolver_refresh_reads_synchronously_and_shuffles(
    zk: KazooClient, zookeeper: LocalZooKeeper, unique: str
) -> None:
    addresses = [f"hms-{i}:9083" for i in range(6)]
    for address in addresses:
        register_like_hive4(zk, unique, address)
    resolver = ZooKeeperResolver(zookeeper.quorum, unique)
    try:
        expected = sorted(f"thrift://{a}" for a in addresses)
        assert sorted(resolver.uris()) == expected
        orders = {tuple(resolver.uris()) for _ in range(30)}
        assert len(orders) > 1  # 30 draws of 720 orders are all alike with probability ~0
        register_like_hive4(zk, unique, "hms-new:9083")
        # No waiting: refresh() goes to ZooKeeper itself.
        assert "thrift://hms-new:9083" in resolver.refresh()
    finally:
        resolver.close()
    assert resolver.closed and resolver.refresh() == []


def test_from_zookeeper_and_from_hive_conf(
    zk: KazooClient, zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str, tmp_path: Path
) -> None:
    address = metastore.uri.removeprefix("thrift://")
    register_like_hive4(zk, unique, address)

    with hw.MetastoreClient.from_zookeeper(zookeeper.quorum, unique, timeout=60) as client:
        assert "default" in client.get_all_databases()
        assert client.uri == metastore.uri

    # Only Hive-style configuration: the quorum without a port in hive.metastore.uris, the port and
    # namespace under their aliases.
    host, port = zookeeper.quorum.split(":")
    site = tmp_path / "hive-site.xml"
    site.write_text(f"""<?xml version="1.0"?>
<configuration>
  <property><name>hive.metastore.uris</name><value>{host}</value></property>
  <property><name>hive.metastore.service.discovery.mode</name><value>zookeeper</value></property>
  <property><name>hive.zookeeper.client.port</name><value>{port}</value></property>
  <property><name>hive.metastore.zookeeper.namespace</name><value>{unique}</value></property>
  <property><name>hive.metastore.client.socket.timeout</name><value>60s</value></property>
</configuration>
""")
    with hw.MetastoreClient.from_hive_conf(site) as client:
        assert "default" in client.get_all_databases()
        assert (client.uri, client.timeout) == (metastore.uri, 60.0)
    with hw.MetastoreClient.from_hive_conf({"metastore.thrift.uris": metastore.uri}) as plain:
        assert "default" in plain.get_all_databases()


def test_from_zookeeper_with_credentials_in_a_discovery_config(
    zk: KazooClient, zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str
) -> None:
    acl = [make_digest_acl("reader", "pw", all=True)]
    zk.add_auth("digest", "reader:pw")
    zk.create(f"/{unique}", b"", acl=acl)
    address = metastore.uri.removeprefix("thrift://")
    zk.create(f"/{unique}/{address}", address.encode(), acl=acl, ephemeral=True, sequence=True)
    with pytest.raises(hw.DiscoveryError, match="credentials"):
        hw.MetastoreClient.from_zookeeper(zookeeper.quorum, unique)
    config = DiscoveryConfig(quorum=zookeeper.quorum, namespace=unique, auth_data=(("digest", "reader:pw"),))
    with hw.MetastoreClient.from_zookeeper(config, timeout=60) as client:
        assert client.uri == metastore.uri and "default" in client.get_all_databases()


def test_cli_discover(zk: KazooClient, zookeeper: LocalZooKeeper, unique: str, tmp_path: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(cli, ["discover", "--zookeeper", zookeeper.quorum, "--namespace", unique])
    assert empty.exit_code == 1
    assert "No metastore service discovered" in empty.output and f"/{unique}" in empty.output

    register_like_hive4(zk, unique, "hms-a:9083")
    register_like_hive4(zk, unique, "hms-b:9084")
    lines = runner.invoke(cli, ["discover", "--zookeeper", zookeeper.quorum, "--namespace", unique])
    assert lines.exit_code == 0, lines.output
    assert lines.output.splitlines() == ["thrift://hms-a:9083", "thrift://hms-b:9084"]

    site = tmp_path / "hive-site.xml"
    site.write_text(f"""<configuration>
  <property><name>metastore.thrift.uris</name><value>{zookeeper.quorum}</value></property>
  <property><name>metastore.service.discovery.mode</name><value>zookeeper</value></property>
  <property><name>metastore.zookeeper.namespace</name><value>{unique}</value></property>
</configuration>""")
    as_json = runner.invoke(cli, ["discover", "--hive-site", str(site), "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output) == ["thrift://hms-a:9083", "thrift://hms-b:9084"]

    settings = tmp_path / "hivewire.properties"
    settings.write_text(f"metastore.thrift.uris={zookeeper.quorum}\nmetastore.zookeeper.namespace={unique}\n")
    from_config = runner.invoke(cli, ["discover", "--config", str(settings)])
    assert from_config.exit_code == 0, from_config.output
    assert from_config.output.splitlines() == ["thrift://hms-a:9083", "thrift://hms-b:9084"]
    typo = runner.invoke(cli, ["discover", "--config", str(settings), "--set", "hivewire.zookeeper.auht=x"])
    assert typo.exit_code == 2 and "hivewire.zookeeper.auth" in typo.output  # did you mean

    usage = runner.invoke(cli, ["discover"])
    assert usage.exit_code == 2 and "--zookeeper" in usage.output


class MissedChanges(ZooKeeperResolver):
    """A resolver whose watch missed every change after its first list.

    Fault injection: a real ZooKeeper cannot be made to drop a notification on demand, but a client can
    miss changes (a long disconnection, a watch that could not be re-armed). ``refresh`` is the real one.
    """

    frozen: list[str] | None = None

    def uris(self) -> list[str]:
        if self.frozen is None:
            self.frozen = super().uris()
        return list(self.frozen)


def test_a_client_rereads_zookeeper_when_every_known_uri_fails(
    zk: KazooClient, zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str
) -> None:
    with socket.socket() as s:  # a port nothing listens on: the metastore that was registered and died
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    node = register_like_hive4(zk, unique, dead)
    resolver = MissedChanges(zookeeper.quorum, unique)
    try:
        assert resolver.uris() == [f"thrift://{dead}"]
        zk.delete(node)  # the dead one goes, the live one comes: the resolver's list does not follow
        register_like_hive4(zk, unique, metastore.uri.removeprefix("thrift://"))
        assert resolver.uris() == [f"thrift://{dead}"]
        with hw.MetastoreClient(resolver, connect_timeout=5, timeout=60) as client:
            assert "default" in client.get_all_databases()
            assert client.uri == metastore.uri
    finally:
        resolver.close()


def test_the_runtime_handler_finds_the_metastore_through_zookeeper(
    zk: KazooClient, zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str
) -> None:
    register_like_hive4(zk, unique, metastore.uri.removeprefix("thrift://"))
    with hw.MetastoreClient(metastore.uri) as client:
        client.create_database(make_database(unique))
        client.create_table(make_table(unique, "facts", partition_keys={"dt": "string"}))
    found: list[tuple[str, str]] = []

    def lookup(event: hw.InsertEvent) -> None:
        assert event.handler is not None
        found.append((event.table.tableName, event.handler.get_database(event.db_name).name))

    # Only Hive's discovery keys: no metastore URI anywhere.
    app = hw.App(
        "zk-handler",
        config={
            "endpoint.port": "0",
            "metastore.service.discovery.mode": "zookeeper",
            "metastore.thrift.uris": zookeeper.quorum,
            "metastore.zookeeper.namespace": unique,
        },
    )
    app.on(hw.EventType.INSERT)(lookup)
    harness = MemoryHarness()
    harness.send(
        [
            hw.apiary.encode(
                hw.InsertEvent(
                    db_name=unique,
                    table_name="facts",
                    partition_key_values={"dt": "2024-01-01"},
                    files=["file:/tmp/part-0"],
                    file_checksums=["abc"],
                )
            )
        ]
    )
    harness.run(app, lambda: len(found) == 1)
    assert found == [("facts", unique)]


EXITS_WHILE_ZOOKEEPER_IS_AWAY = """
import sys, time
import hivewire as hw

client = hw.MetastoreClient.from_zookeeper(sys.argv[1], sys.argv[2], connect_timeout=1)  # never closed
print("discovered", flush=True)
sys.stdin.readline()  # the test cuts ZooKeeper off, then says go on
time.sleep(2)  # the shared resolver's watch is now retrying against nothing
print("exiting", flush=True)
"""


def test_a_process_exits_while_zookeeper_is_unreachable(
    zk: KazooClient, zookeeper: LocalZooKeeper, unique: str
) -> None:
    # kazoo's own exit hook waits for its worker threads, and a data watch retrying against an unreachable
    # ZooKeeper never returns: hivewire closes its shared resolvers first, so a script or notebook that used
    # from_zookeeper and never closed the client still exits.
    register_like_hive4(zk, unique, "127.0.0.1:9")
    proxy = TcpProxy(("127.0.0.1", zookeeper.port))
    child = subprocess.Popen(
        [sys.executable, "-c", EXITS_WHILE_ZOOKEEPER_IS_AWAY, f"127.0.0.1:{proxy.port}", unique],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "discovered"
        proxy.cut()
        child.stdin.write("go\n")
        child.stdin.flush()
        out, _ = child.communicate(timeout=120)  # a bound against the hang, not a timing check
        assert child.returncode == 0, out
        assert "exiting" in out
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
        proxy.close()
