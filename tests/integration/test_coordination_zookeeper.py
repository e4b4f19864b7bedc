"""What only the ZooKeeper backend has: a connection that is cut but comes back within the session timeout.

The coordinator reaches the real ZooKeeper through a TCP proxy the test can cut. A leader must give up
leadership as soon as the connection is suspended (it can no longer prove it leads, and a singleton must never
run twice), while its membership, held by a session that is still alive, stays.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proxy import TcpProxy
from waiting import wait_for

from hivewire.coordination import ZooKeeperCoordinator
from hivewire.tools._local import LocalZooKeeper


@pytest.fixture
def proxy(zookeeper: LocalZooKeeper) -> Iterator[TcpProxy]:
    made = TcpProxy(("127.0.0.1", zookeeper.port))
    yield made
    made.close()


def test_a_suspended_leader_gives_up_leadership_but_not_its_membership(
    zookeeper: LocalZooKeeper, proxy: TcpProxy, unique: str
) -> None:
    # A long session timeout: the cut below suspends the connection without expiring the session.
    cut_off = ZooKeeperCoordinator(f"127.0.0.1:{proxy.port}", root=unique, session_timeout=40.0, connection_timeout=30)
    observer = ZooKeeperCoordinator(zookeeper.quorum, root=unique, connection_timeout=30)
    try:
        session = cut_off.session_id
        events: list[str] = []
        cut_off.campaign("e", "cut-off", lambda: events.append("elected"), lambda: events.append("lost"))
        cut_off.join("g", "cut-off", b"data")
        wait_for(lambda: events == ["elected"], "leadership")
        memberships: list[dict[str, bytes]] = []
        observer.watch_members("g", lambda members: memberships.append(dict(members)))

        proxy.cut()
        wait_for(lambda: events == ["elected", "lost"], "leadership given up on suspension", timeout=120)
        proxy.restore()
        wait_for(lambda: events == ["elected", "lost", "elected"], "leadership regained on reconnection", timeout=120)

        assert cut_off.session_id == session  # the same session throughout
        assert observer.leader("e") == "cut-off"
        assert memberships and all(m == {"cut-off": b"data"} for m in memberships)  # it never left
    finally:
        cut_off.close()
        observer.close()


def test_instances_follow_switches_and_a_singleton_moves(zookeeper: LocalZooKeeper, unique: str) -> None:
    from hivewire.coordination import AppMember, AppState, app_status
    from hivewire.coordination._member import this_instance

    def connect() -> ZooKeeperCoordinator:
        return ZooKeeperCoordinator(zookeeper.quorum, root=unique, session_timeout=6.0, connection_timeout=30)

    runs: dict[str, list[str]] = {"a": [], "b": []}
    members: dict[str, AppMember] = {}
    ops = AppState(connect(), "orders")
    try:
        for name in ("a", "b"):
            members[name] = AppMember(connect(), "orders", this_instance(("report", "audit")), member=name)
            members[name].start()
            members[name].stand_for(
                "report", lambda n=name: runs[n].append("run"), lambda n=name: runs[n].append("stop")
            )
        wait_for(lambda: sum(r == ["run"] for r in runs.values()) == 1, "one instance running the singleton")
        leader = next(n for n, r in runs.items() if r == ["run"])
        other = "b" if leader == "a" else "a"
        wait_for(lambda: app_status(ops).listeners["report"].singleton_on == leader, "the singleton in the status")

        ops.pause("audit")
        wait_for(lambda: all(m.paused("audit") for m in members.values()), "every instance following the pause")
        ops.start_sideline("audit", "tenant_a")
        wait_for(lambda: all(m.sidelines("audit") for m in members.values()), "every instance following the sideline")

        members[leader].state.coordinator.close()  # the instance dies
        wait_for(lambda: runs[other] == ["run"], "the other instance taking the singleton over", timeout=120)
        wait_for(lambda: list(ops.instances()) == [other], "the dead instance gone from the group")
        wait_for(lambda: app_status(ops).listeners["report"].singleton_on == other, "the singleton's new home")
    finally:
        for m in members.values():
            m.state.coordinator.close()
        ops.coordinator.close()
