"""``hivewire status``, ``listener`` and ``sideline`` against a real ZooKeeper, with instances joined through the
same ZooKeeper backend ``hivewire run`` will use."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result

from hivewire.coordination import AppState, Instance, ZooKeeperCoordinator
from hivewire.errors import CoordinationError
from hivewire.tools._cli import main as cli
from hivewire.tools._local import LocalZooKeeper, free_port


@pytest.fixture
def root(unique: str) -> str:
    return unique


@pytest.fixture
def instances(zookeeper: LocalZooKeeper, root: str) -> Iterator[AppState]:
    coordinator = ZooKeeperCoordinator(zookeeper.quorum, root=root, connection_timeout=30)
    state = AppState(coordinator, "orders")
    state.join(
        "host-a-101",
        Instance(host="host-a", pid=101, version="1.2", started_at=0, listeners=("audit", "report"),
                 partitions=("t:0",), leading=("report",), lag={"audit": 2}),
    )  # fmt: skip
    state.join(
        "host-b-202",
        Instance(host="host-b", pid=202, version="1.2", started_at=0, listeners=("audit",), partitions=("t:1",)),
    )
    yield state
    coordinator.close()


def hivewire(zookeeper: LocalZooKeeper, root: str, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "--zookeeper", zookeeper.quorum, "--root", root])


def test_status_lists_instances_and_listener_states(zookeeper: LocalZooKeeper, root: str, instances: AppState) -> None:
    assert hivewire(zookeeper, root, "listener", "pause", "orders", "audit").output == "orders: audit paused\n"
    out = hivewire(zookeeper, root, "status", "orders")
    assert out.exit_code == 0, out.output
    assert "app orders: 2 live instance(s)" in out.output
    assert "host-a-101  host-a pid 101  hivewire 1.2" in out.output and "partitions t:1" in out.output
    assert "  audit  paused  (since " in out.output and "on 2 instance(s)  lag 2" in out.output
    assert "  report  running  singleton on host-a-101" in out.output
    data = json.loads(hivewire(zookeeper, root, "status", "orders", "--json").output)
    assert sorted(data["instances"]) == ["host-a-101", "host-b-202"]
    assert data["listeners"]["audit"]["state"] == "paused"
    assert data["listeners"]["report"]["singleton_on"] == "host-a-101"
    assert hivewire(zookeeper, root, "listener", "resume", "orders", "audit").exit_code == 0
    assert (
        json.loads(hivewire(zookeeper, root, "status", "orders", "--json").output)["listeners"]["audit"]["state"]
        == "running"
    )


def test_pausing_a_listener_no_instance_runs_is_a_usage_error(
    zookeeper: LocalZooKeeper, root: str, instances: AppState
) -> None:
    out = hivewire(zookeeper, root, "listener", "pause", "orders", "audti")
    assert out.exit_code == 2 and "did you mean 'audit'?" in out.output
    assert instances.switches() == {}
    # Without live instances the name cannot be checked: the switch waits for them.
    assert hivewire(zookeeper, root, "listener", "pause", "other-app", "anything").exit_code == 0


def test_a_singleton_listener_is_not_paused_or_sidelined(
    zookeeper: LocalZooKeeper, root: str, instances: AppState
) -> None:
    # "report" is led by host-a: its instance does not obey switches and sidelines yet, so nothing is recorded.
    for args in (("listener", "pause", "orders", "report"),
                 ("sideline", "start", "orders", "--listener", "report", "--db", "tenant_a")):  # fmt: skip
        out = hivewire(zookeeper, root, *args)
        assert out.exit_code == 1 and "'report' is a singleton listener of orders" in out.output, out.output
    assert instances.switches() == {} and instances.sidelines() == []
    # Known as one by its stored progress too, while no instance leads it.
    instances.advance_progress("nightly", {"t:0": 5})
    out = hivewire(zookeeper, root, "sideline", "start", "orders", "--listener", "nightly", "--db", "x")
    assert out.exit_code == 1 and "singleton" in out.output, out.output


def test_sideline_start_resume_resolve_list(zookeeper: LocalZooKeeper, root: str) -> None:
    out = hivewire(zookeeper, root, "sideline", "start", "orders", "--listener", "audit", "--db", "tenant_a",
                   "--type", "add_partition", "--type", "INSERT")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert out.output == "orders: sideline s1 started: audit skips db=tenant_a table=* types=ADD_PARTITION,INSERT\n"
    assert "already parks" in hivewire(zookeeper, root, "sideline", "start", "orders", "--listener", "audit",
                                       "--db", "tenant_a").output  # fmt: skip
    assert hivewire(zookeeper, root, "sideline", "resume", "orders", "s1").exit_code == 0
    listed = hivewire(zookeeper, root, "sideline", "list", "orders")
    assert listed.output.startswith("s1  audit  db=tenant_a table=* types=ADD_PARTITION,INSERT  resumed  starts -")
    resolved = hivewire(zookeeper, root, "sideline", "resolve", "orders", "s1")
    assert resolved.output == "orders: sideline s1 resolved: audit no longer skips db=tenant_a table=* " \
                              "types=ADD_PARTITION,INSERT\n"  # fmt: skip
    again = hivewire(zookeeper, root, "sideline", "resume", "orders", "s1")
    assert again.exit_code == 1 and "s1 is resolved: it can be nothing (it is done), not resumed" in again.output
    data = json.loads(hivewire(zookeeper, root, "sideline", "list", "orders", "--json").output)
    assert [(s["id"], s["state"], s["finished"]) for s in data] == [("s1", "resolved", True)]
    missing = hivewire(zookeeper, root, "sideline", "resolve", "orders", "s7")
    assert missing.exit_code == 1 and "no sideline 's7' (its sidelines: s1)" in missing.output
    bad = hivewire(zookeeper, root, "sideline", "start", "orders", "--listener", "a", "--db", "x", "--type", "CREATE")
    assert bad.exit_code == 2 and "CREATE: not an event type" in bad.output


def test_state_survives_every_client(zookeeper: LocalZooKeeper, root: str) -> None:
    hivewire(zookeeper, root, "sideline", "start", "orders", "--listener", "audit", "--db", "tenant_*")
    hivewire(zookeeper, root, "listener", "pause", "orders", "audit")
    with ZooKeeperCoordinator(zookeeper.quorum, root=root) as later:
        state = AppState(later, "orders")
        assert [(s.id, s.db) for s in state.sidelines()] == [("s1", "tenant_*")]
        assert state.switch("audit") is not None


def test_no_zookeeper_is_a_clear_error() -> None:
    out = CliRunner().invoke(cli, ["status", "orders"])
    assert out.exit_code == 2 and "--zookeeper (hivewire.coordination.zookeeper): not set" in out.output
    dead = f"127.0.0.1:{free_port()}"
    out = CliRunner().invoke(
        cli, ["status", "orders", "--zookeeper", dead, "--set", "metastore.zookeeper.connection.timeout=2s"]
    )
    assert out.exit_code == 1 and f"could not connect to ZooKeeper at {dead}" in out.output


def test_chroot_and_digest_credentials(zookeeper: LocalZooKeeper, unique: str) -> None:
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoAuthError

    quorum = f"{zookeeper.quorum}/{unique}-chroot"
    with pytest.raises(CoordinationError, match=f"the chroot /{unique}-chroot of .* does not exist in ZooKeeper"):
        ZooKeeperCoordinator(quorum)
    plain = KazooClient(hosts=zookeeper.quorum, timeout=10)
    plain.start(timeout=30)
    try:
        plain.create(f"/{unique}-chroot")
        with ZooKeeperCoordinator(quorum, root="hw", auth_data=[("digest", "ops:secret")]) as coordinator:
            AppState(coordinator, "orders").pause("audit")
        # Kept under the chroot, and closed to sessions without the credentials.
        assert plain.get_children(f"/{unique}-chroot") == ["hw"]
        with pytest.raises(NoAuthError):
            plain.get_children(f"/{unique}-chroot/hw")
    finally:
        plain.stop()
        plain.close()
    out = CliRunner().invoke(
        cli,
        [
            "status",
            "orders",
            "--zookeeper",
            quorum,
            "--root",
            "hw",
            "--set",
            "hivewire.zookeeper.auth=digest:ops:secret",
        ],
    )
    assert out.exit_code == 0 and "  audit  paused" in out.output, out.output
