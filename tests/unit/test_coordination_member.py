"""An instance's side of coordination (AppMember) on the in-memory coordinator: what it announces, the switches
and sidelines it follows, the singletons it stands for."""

from __future__ import annotations

import logging
import os
import re
import socket

import pytest

from hivewire.coordination import AppMember, AppState, InMemoryCoordinator, app_status
from hivewire.coordination._member import member_name, this_instance


@pytest.fixture
def memory() -> InMemoryCoordinator:
    return InMemoryCoordinator()


def test_an_instance_announces_itself_and_leaves(memory: InMemoryCoordinator) -> None:
    member = AppMember(memory.connect(), "orders", this_instance(("audit",)))
    member.start()
    ops = AppState(memory, "orders")
    assert list(ops.instances()) == [member.member]
    host, pid, suffix = member.member.rsplit("-", 2)  # <host>-<pid>-<6 random hex digits>
    assert (host, pid) == (socket.gethostname(), str(os.getpid())), member.member
    assert re.fullmatch("[0-9a-f]{6}", suffix), member.member
    member.announce(partitions=("t:0", "t:2"), lag={"audit": 5})
    found = ops.instances()[member.member]
    assert (found.pid, found.listeners, found.partitions, found.lag) == (os.getpid(), ("audit",), ("t:0", "t:2"),
                                                                          {"audit": 5})  # fmt: skip
    member.close()
    assert ops.instances() == {}
    assert member_name() != member_name()


def test_switches_and_sidelines_are_followed(memory: InMemoryCoordinator, caplog: pytest.LogCaptureFixture) -> None:
    changes: list[None] = []
    member = AppMember(memory.connect(), "orders", this_instance(), on_change=lambda: changes.append(None))
    member.start()
    ops = AppState(memory, "orders")
    assert not member.paused("audit") and member.sidelines("audit") == ()
    ops.pause("audit")
    assert member.paused("audit") and not member.paused("billing")
    ops.resume("audit")
    assert not member.paused("audit")
    first = ops.start_sideline("audit", "tenant_a")
    ops.start_sideline("audit", "tenant_b")
    ops.start_sideline("billing", "tenant_a")
    assert [s.db for s in member.sidelines("audit")] == ["tenant_a", "tenant_b"]
    ops.resolve_sideline(first.id)  # nothing was skipped: finished at once, so no longer followed
    assert [s.db for s in member.sidelines("audit")] == ["tenant_b"]
    with caplog.at_level(logging.ERROR, logger="hivewire.coordination"):
        memory.put("apps/orders/sidelines/s9", b"{broken")
        assert [s.db for s in member.sidelines("billing")] == ["tenant_a"]  # the others still followed
    assert "ignoring a sideline: apps/orders/sidelines/s9 is not JSON" in caplog.text
    assert len(changes) >= 7
    member.close()
    ops.pause("billing")
    assert not member.paused("billing")  # no longer following after close


def test_a_singleton_runs_on_one_instance_and_moves_when_it_leaves(memory: InMemoryCoordinator) -> None:
    runs: dict[str, list[str]] = {"a": [], "b": []}
    members = {}
    for name in ("a", "b"):
        members[name] = AppMember(memory.connect(), "orders", this_instance(("report",)), member=name)
        members[name].start()
        members[name].stand_for("report", lambda n=name: runs[n].append("run"), lambda n=name: runs[n].append("stop"))
    ops = AppState(memory, "orders")
    assert runs == {"a": ["run"], "b": []}
    assert app_status(ops).listeners["report"].singleton_on == "a"
    members["a"].state.coordinator.close()  # the instance dies: its session ends
    assert runs == {"a": ["run", "stop"], "b": ["run"]}
    assert app_status(ops).listeners["report"].singleton_on == "b"
    assert list(ops.instances()) == ["b"]
    assert members["b"].instance.leading == ("report",)
