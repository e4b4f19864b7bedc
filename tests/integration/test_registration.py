"""The ``register`` sidecar with real metastores and a real ZooKeeper, including failures of both.

The failure tests start their own ZooKeeper and two metastores (never the session ones) and share them
across the module: metastores take tens of seconds to start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.security import OPEN_ACL_UNSAFE, Permissions
from waiting import wait_for

import hivewire as hw
from hivewire.metastore._discovery import close_shared_resolvers, discover_metastores, shared_resolver
from hivewire.metastore._registration import Registration, RegistrationEvent
from hivewire.metastore._zookeeper import DiscoveryConfig
from hivewire.tools._local import LocalMetastore, LocalZooKeeper, free_port

INTERVAL = 1.0
ZK_OPTIONS: dict[str, Any] = {"session_timeout": 6.0, "connection_timeout": 10.0, "base_sleep": 0.2}


def address_of(hms: LocalMetastore) -> str:
    return hms.uri.removeprefix("thrift://")


def until_registered(predicate: Callable[[], Any], what: str) -> Any:
    """Wait up to 120 s for ``predicate``; "nothing registered" (DiscoveryError) counts as not yet."""
    return wait_for(predicate, what, 120, interval=0.2, ignoring=(hw.DiscoveryError,))


def nodes_for(zk: KazooClient, namespace: str, address: str) -> list[str]:
    if not zk.exists(f"/{namespace}"):
        return []
    return sorted(f"/{namespace}/{c}" for c in zk.get_children(f"/{namespace}") if c.startswith(address))


def withdrawal_after(reg: Registration, check: int) -> RegistrationEvent | None:
    """The first withdrawal at a check after ``check`` (the sidecar records it just after deleting the node)."""
    return next((e for e in list(reg.history) if e.action == "withdrawn" and e.check > check), None)


def discover(quorum: str, namespace: str) -> list[str]:
    return discover_metastores(DiscoveryConfig(quorum=quorum, namespace=namespace, **ZK_OPTIONS))


class Cluster:
    def __init__(self, zk: LocalZooKeeper, a: LocalMetastore, b: LocalMetastore, namespace: str) -> None:
        self.zk, self.a, self.b, self.namespace = zk, a, b, namespace
        self.regs = {
            hms.uri: Registration(address_of(hms), zk.quorum, namespace, interval=INTERVAL, **ZK_OPTIONS)
            for hms in (a, b)
        }
        self.reader = KazooClient(hosts=zk.quorum, timeout=10)

    def both(self) -> list[str]:
        return sorted([self.a.uri, self.b.uri])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    base = tmp_path_factory.mktemp("registration")
    zk = LocalZooKeeper(workdir=base / "zk")
    a, b = LocalMetastore(workdir=base / "hms_a"), LocalMetastore(workdir=base / "hms_b")
    errors: list[BaseException] = []

    def start(service: LocalZooKeeper | LocalMetastore) -> None:
        try:
            service.start()
        except BaseException as e:  # re-raised below, in the test thread
            errors.append(e)

    threads = [threading.Thread(target=start, args=(s,)) for s in (zk, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c = Cluster(zk, a, b, "hive_metastore")
    try:
        if errors:
            raise errors[0]
        c.reader.start(timeout=30)
        for reg in c.regs.values():
            reg.start()
        yield c
    finally:
        for reg in c.regs.values():
            reg.stop()
        c.reader.stop()
        c.reader.close()
        close_shared_resolvers()
        for service in (a, b, zk):
            service.close()


def test_two_metastores_registered_like_hive4(cluster: Cluster) -> None:
    until_registered(lambda: sorted(discover(cluster.zk.quorum, "hive_metastore")) == cluster.both(), "both registered")
    for hms in (cluster.a, cluster.b):
        reg = cluster.regs[hms.uri]
        [node] = nodes_for(cluster.reader, "hive_metastore", address_of(hms))
        name = node.rsplit("/", 1)[1]
        assert name[:-10] == address_of(hms) and name[-10:].isdigit()  # host:port + 10-digit sequence
        data, stat = cluster.reader.get(node)
        assert data == address_of(hms).encode("utf-8")
        assert stat.ephemeralOwner != 0 and reg.client_id is not None and stat.ephemeralOwner == reg.client_id[0]
        assert cluster.reader.get_acls(node)[0] == list(OPEN_ACL_UNSAFE)  # Hive's default: open
        assert reg.node == node and reg.history[0].action == "registered"
    assert cluster.reader.get_acls("/hive_metastore")[0] == list(OPEN_ACL_UNSAFE)


def test_hung_metastore_is_withdrawn_within_two_periods_and_restored(cluster: Cluster) -> None:
    """SIGSTOP: the metastore still accepts TCP connections (the kernel completes them) but never answers, so
    only a bounded health check notices. Periods are counted with the sidecar's own counters: while no check
    overran its interval, checks run one per interval, so withdrawal by the second check after the hang is
    withdrawal within two periods."""
    quorum = cluster.zk.quorum
    until_registered(lambda: sorted(discover(quorum, "hive_metastore")) == cluster.both(), "both registered")
    victim, survivor = cluster.a, cluster.b
    reg = cluster.regs[victim.uri]
    pid = victim.pid
    assert pid is not None and reg.check_timeout < reg.interval
    until_registered(lambda: reg.node is not None and reg.healthy, "a passing check")
    checks_before, overruns_before = reg.checks, reg.overruns
    os.killpg(pid, signal.SIGSTOP)
    try:
        checks_at_stop = reg.checks
        withdrawn = until_registered(lambda: withdrawal_after(reg, checks_before), "the withdrawal")
        assert not nodes_for(cluster.reader, "hive_metastore", address_of(victim))
        assert withdrawn.check <= checks_at_stop + 2, (withdrawn, checks_at_stop)
        assert reg.overruns == overruns_before, "a check overran its interval"
        assert "no answer" in withdrawn.reason, withdrawn  # a hang, not a refused connection
        assert reg.node is None
        assert discover(quorum, "hive_metastore") == [survivor.uri]
        # It stays withdrawn while hung, and the checks keep their rate.
        seen = reg.checks
        until_registered(lambda: reg.checks >= seen + 2, "two more checks")
        assert reg.node is None and not nodes_for(cluster.reader, "hive_metastore", address_of(victim))
        assert reg.overruns == overruns_before
    finally:
        os.killpg(pid, signal.SIGCONT)
    until_registered(lambda: sorted(discover(quorum, "hive_metastore")) == cluster.both(), "re-registration")
    again = [e for e in reg.history if e.check > withdrawn.check]
    assert again and again[0].action == "registered"
    [node] = nodes_for(cluster.reader, "hive_metastore", address_of(victim))
    assert cluster.reader.get(node)[0] == address_of(victim).encode("utf-8") and reg.node == node


def test_killed_metastore_is_withdrawn_clients_fail_over_and_it_comes_back(cluster: Cluster) -> None:
    quorum = cluster.zk.quorum
    until_registered(lambda: sorted(discover(quorum, "hive_metastore")) == cluster.both(), "both registered")
    client = hw.MetastoreClient.from_zookeeper(quorum, timeout=30, connect_timeout=3)
    try:
        assert "default" in client.get_all_databases()
        victim, survivor = (cluster.a, cluster.b) if client.uri == cluster.a.uri else (cluster.b, cluster.a)
        reg = cluster.regs[victim.uri]
        checks_before = reg.checks
        victim.stop(kill=True)

        # The client connected to the dead one reconnects to the other; fresh clients work at once,
        # even while the dead one is still registered.
        assert "default" in client.get_all_databases()
        assert client.uri == survivor.uri
        for _ in range(3):
            with hw.MetastoreClient.from_zookeeper(quorum, timeout=30, connect_timeout=3) as fresh:
                assert "default" in fresh.get_all_databases()
                assert fresh.uri == survivor.uri

        withdrawn = until_registered(lambda: withdrawal_after(reg, checks_before), "the withdrawal")
        assert not nodes_for(cluster.reader, "hive_metastore", address_of(victim))
        assert withdrawn.check - checks_before <= 2, (withdrawn, checks_before)
        assert reg.node is None
        assert discover(quorum, "hive_metastore") == [survivor.uri]
        # The shared resolver behind from_zookeeper saw it through its watch.
        resolver = shared_resolver(DiscoveryConfig(quorum=quorum))
        until_registered(lambda: resolver.uris() == [survivor.uri], "the resolver to drop the dead metastore")
        assert "default" in client.get_all_databases()

        victim.restart()
        until_registered(lambda: sorted(discover(quorum, "hive_metastore")) == cluster.both(), "re-registration")
        again = [e for e in reg.history if e.check > withdrawn.check]
        assert again and again[0].action == "registered"
        until_registered(lambda: sorted(resolver.uris()) == cluster.both(), "the resolver to see it again")
    finally:
        client.close()


def test_registrations_are_back_after_zookeeper_restarts(cluster: Cluster) -> None:
    quorum = cluster.zk.quorum
    until_registered(lambda: sorted(discover(quorum, "hive_metastore")) == cluster.both(), "both registered")
    cluster.zk.restart()

    def owned_by_live_session(hms: LocalMetastore) -> bool:
        # Right after the restart ZooKeeper still holds the old sessions' nodes until they reconnect or
        # expire; what matters is a node owned by the sidecar's current, connected session.
        reg = cluster.regs[hms.uri]
        session = reg.client_id
        nodes = nodes_for(cluster.reader, "hive_metastore", address_of(hms))
        if session is None or len(nodes) != 1:
            return False
        stat = cluster.reader.exists(nodes[0])
        return stat is not None and stat.ephemeralOwner == session[0] and reg.node == nodes[0]

    for hms in (cluster.a, cluster.b):
        until_registered(lambda h=hms: owned_by_live_session(h), f"{hms.uri} to be registered by a live session")
    assert sorted(discover(quorum, "hive_metastore")) == cluster.both()
    with hw.MetastoreClient.from_zookeeper(quorum, timeout=30, connect_timeout=3) as client:
        assert "default" in client.get_all_databases()


def test_session_expiry_recreates_the_node(zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str) -> None:
    with Registration(address_of(metastore), zookeeper.quorum, unique, interval=INTERVAL, **ZK_OPTIONS) as reg:
        first = until_registered(lambda: reg.node, "registration")
        session = reg.client_id
        assert session is not None
        # Expire the session for real: another client takes it over and closes it (kazoo's own test trick).
        thief = KazooClient(hosts=zookeeper.quorum, client_id=session, timeout=6)
        thief.start(timeout=30)
        thief.stop()
        thief.close()
        recreated = until_registered(
            lambda: [e for e in reg.history if e.action == "recreated"], "the node to come back"
        )
        assert recreated[0].path != first
        new_session = reg.client_id
        assert new_session is not None and new_session[0] != session[0]
        assert discover(zookeeper.quorum, unique) == [metastore.uri]
    # stop() withdrew it
    with pytest.raises(hw.DiscoveryError):
        discover(zookeeper.quorum, unique)


def test_unhealthy_metastore_is_never_registered(zookeeper: LocalZooKeeper, unique: str) -> None:
    with Registration(f"127.0.0.1:{free_port()}", zookeeper.quorum, unique, interval=0.2, **ZK_OPTIONS) as reg:
        until_registered(lambda: reg.checks >= 5, "five health checks")
        assert reg.healthy is False and reg.node is None and reg.history == []
    with pytest.raises(hw.DiscoveryError):
        discover(zookeeper.quorum, unique)


def test_cli_register_until_sigterm(zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str) -> None:
    exe = Path(sys.executable).parent / "hivewire"
    proc = subprocess.Popen(
        [
            str(exe),
            "register",
            "--metastore",
            address_of(metastore),
            "--zookeeper",
            zookeeper.quorum,
            "--namespace",
            unique,
            "--interval",
            "1",
            "--acl",
            "world:anyone:r",
            "--acl",
            "digest:ops:pw:cdrwa",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    reader = KazooClient(hosts=zookeeper.quorum, timeout=10)
    reader.start(timeout=30)
    try:
        [node] = until_registered(lambda: nodes_for(reader, unique, address_of(metastore)), "the CLI to register")
        acls = reader.get_acls(node)[0]
        assert [(a.id.scheme, a.perms) for a in acls] == [("world", Permissions.READ), ("digest", Permissions.ALL)]
        assert discover(zookeeper.quorum, unique) == [metastore.uri]  # world-readable
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out.decode(errors="replace")
        assert nodes_for(reader, unique, address_of(metastore)) == []
        assert b"withdrew" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.stop()
        reader.close()


def test_cli_register_from_a_config_file_with_flags_winning(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str, tmp_path: Path
) -> None:
    settings = tmp_path / "register.toml"
    settings.write_text(
        f'[hivewire.register]\nmetastore = "{address_of(metastore)}"\nzookeeper = "{zookeeper.quorum}"\n'
        f'namespace = "not-{unique}"\ninterval = "1s"\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hivewire", "register", "--config", str(settings), "--namespace", unique],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "HIVEWIRE_REGISTER_INTERVAL": "2s"},
    )
    try:
        until_registered(lambda: discover(zookeeper.quorum, unique) == [metastore.uri], "the CLI to register")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out.decode(errors="replace")
        assert f"under /{unique} every 2 s" in out.decode()  # the flag over the file, the environment over it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
