"""Apps' shared state (instances, listener switches, sidelines) on the in-memory coordinator; the same code runs on
ZooKeeper in tests/integration/test_coordination_cli.py."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hivewire.config import Config
from hivewire.coordination import (
    AppState,
    CoordinationSettings,
    InMemoryCoordinator,
    Instance,
    Sideline,
    app_status,
)
from hivewire.errors import ConfigError, CoordinationError


def _instance(
    *listeners: str, partitions: tuple[str, ...] = (), leading: tuple[str, ...] = (), lag: dict[str, int] | None = None
) -> Instance:
    return Instance(
        host="h1", pid=42, version="1.0", started_at=1.0, listeners=listeners, partitions=partitions,
        leading=leading, lag=lag or {},
    )  # fmt: skip


@pytest.fixture
def memory() -> InMemoryCoordinator:
    return InMemoryCoordinator()


@pytest.fixture
def state(memory: InMemoryCoordinator) -> AppState:
    return AppState(memory, "orders")


def test_instances_are_members_that_leave_with_their_session(memory: InMemoryCoordinator, state: AppState) -> None:
    other = AppState(memory.connect(), "orders")
    state.join("h1-42", _instance("audit"))
    other.join("h2-7", _instance("audit", "billing", partitions=("t:0", "t:1")))
    assert set(state.instances()) == {"h1-42", "h2-7"}
    assert state.instances()["h2-7"].partitions == ("t:0", "t:1")
    other.coordinator.close()
    assert set(state.instances()) == {"h1-42"}
    state.leave("h1-42")
    assert state.instances() == {}


def test_switches(state: AppState) -> None:
    assert state.switch("audit") is None and state.switches() == {}
    assert state.pause("audit", by="me@host").state == "paused"
    switch = state.switch("audit")
    assert switch is not None and (switch.state, switch.by) == ("paused", "me@host")
    state.resume("audit")
    assert {name: s.state for name, s in state.switches().items()} == {"audit": "running"}


def test_sideline_lifecycle(state: AppState) -> None:
    first = state.start_sideline("audit", "tenant_a", types=["add_partition", "ADD_PARTITION", " insert "])
    assert (first.id, first.state, first.table, first.types) == ("s1", "started", "*", ("ADD_PARTITION", "INSERT"))
    with pytest.raises(CoordinationError, match="s1 already parks db=tenant_a"):
        state.start_sideline("audit", "tenant_a")
    assert state.start_sideline("billing", "tenant_a").id == "s2"
    assert state.resume_sideline("s1").state == "resumed"
    with pytest.raises(CoordinationError, match="s1 is resumed: it can be resolved, not resumed"):
        state.resume_sideline("s1")
    assert state.resolve_sideline("s1").state == "resolved"
    with pytest.raises(CoordinationError, match="s1 is resolved: it can be nothing"):
        state.resolve_sideline("s1")
    assert state.resolve_sideline("s2").state == "resolved"  # resolving straight from started is allowed
    assert [s.id for s in state.sidelines()] == ["s1", "s2"]
    with pytest.raises(CoordinationError, match=r"no sideline 's9' \(its sidelines: s1, s2\)"):
        state.sideline("s9")
    with pytest.raises(CoordinationError, match="database pattern"):
        state.start_sideline("audit", " ")


def test_offsets_merge_first_start_and_end_win_and_replay_only_advances(state: AppState) -> None:
    state.start_sideline("audit", "tenant_a")
    state.record_offsets("s1", starts={"t:0": 10})
    state.record_offsets("s1", starts={"t:0": 99, "t:1": 5})  # t:0 is already set: a later instance must not move it
    state.record_offsets("s1", replayed={"t:0": 30})
    state.record_offsets("s1", replayed={"t:0": 20, "t:1": 6})
    s = state.sideline("s1")
    assert (s.starts, s.replayed) == ({"t:0": 10, "t:1": 5}, {"t:0": 30, "t:1": 6})
    state.resolve_sideline("s1")
    state.record_offsets("s1", ends={"t:0": 40})
    assert not state.sideline("s1").finished  # t:1 skipped but has no end yet
    state.record_offsets("s1", ends={"t:1": 6, "t:0": 41})
    s = state.sideline("s1")
    assert s.ends == {"t:0": 40, "t:1": 6} and not s.finished  # t:0 replayed to 30 of 40
    assert state.record_offsets("s1", replayed={"t:0": 40}).finished


def test_concurrent_offset_writers_lose_nothing(memory: InMemoryCoordinator, state: AppState) -> None:
    state.start_sideline("audit", "tenant_a")
    sessions = [AppState(memory.connect(), "orders") for _ in range(4)]

    def record(i: int) -> None:
        for p in range(25):
            sessions[i].record_offsets("s1", starts={f"t:{i * 25 + p}": p})

    threads = [threading.Thread(target=record, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(state.sideline("s1").starts) == 100


@pytest.mark.parametrize(
    ("db", "table", "types", "event", "matches"),
    [
        ("tenant_a", "*", (), ("tenant_a", "orders", "ADD_PARTITION"), True),
        ("tenant_a", "*", (), ("TENANT_A", None, "CREATE_DATABASE"), True),
        ("tenant_a", "*", (), ("tenant_b", "orders", "ADD_PARTITION"), False),
        ("tenant_*", "ord?rs", (), ("tenant_x", "orders", "INSERT"), True),
        ("tenant_*", "ord?rs", (), ("tenant_x", None, "DROP_DATABASE"), False),
        ("*", "*", ("INSERT",), ("any", "t", "insert"), True),
        ("*", "*", ("INSERT",), ("any", "t", "ADD_PARTITION"), False),
    ],
)
def test_sideline_filter(
    db: str, table: str, types: tuple[str, ...], event: tuple[str, str | None, str], matches: bool
) -> None:
    sideline = Sideline(id="s1", listener="l", db=db, table=table, types=types, created_at=0, changed_at=0)
    assert sideline.matches(*event) is matches


def test_a_stored_value_that_does_not_fit_is_an_error_naming_the_key(state: AppState) -> None:
    state.coordinator.put("apps/orders/sidelines/s1", b'{"id": "s1"}')
    with pytest.raises(CoordinationError, match="apps/orders/sidelines/s1 does not hold a valid Sideline"):
        state.sidelines()
    state.coordinator.put("apps/orders/listeners/audit", b"{not json")
    with pytest.raises(CoordinationError, match="apps/orders/listeners/audit is not JSON"):
        state.switches()


def test_state_outlives_every_session() -> None:
    first = InMemoryCoordinator()
    AppState(first, "orders").start_sideline("audit", "tenant_a")
    AppState(first, "orders").pause("billing")
    later = first.connect()
    first.close()
    assert [s.id for s in AppState(later, "orders").sidelines()] == ["s1"]
    assert AppState(later, "orders").switch("billing") is not None


def test_app_status(memory: InMemoryCoordinator, state: AppState) -> None:
    other = AppState(memory.connect(), "orders")
    state.join("a", _instance("audit", "report", leading=("report",), lag={"audit": 3}))
    other.join("b", _instance("audit", lag={"audit": 4}))
    state.pause("audit")
    state.start_sideline("audit", "tenant_a")
    state.pause("gone")  # switched, but no instance runs it now
    status = app_status(state)
    assert list(status.instances) == ["a", "b"]
    audit, report, gone = status.listeners["audit"], status.listeners["report"], status.listeners["gone"]
    assert (audit.state, audit.instances, audit.lag, audit.sidelined, audit.singleton_on) == (
        "paused",
        ("a", "b"),
        7,
        ("s1",),
        None,
    )
    assert (report.state, report.singleton_on, report.lag) == ("running", "a", None)
    assert (gone.state, gone.instances) == ("paused", ())
    assert [s.id for s in status.sidelines] == ["s1"]
    assert json.loads(json.dumps(status.to_builtins()))["listeners"]["audit"]["lag"] == 7


def test_settings() -> None:
    assert CoordinationSettings.from_config(Config({})).zookeeper is None
    with pytest.raises(ConfigError, match=r"hivewire\.coordination\.zookeeper: not set"):
        CoordinationSettings.from_config(Config({})).connect()
    settings = CoordinationSettings.from_config(
        Config(
            {
                "hivewire.coordination.zookeeper": "zk1,zk2:2182/chroot",
                "hivewire.coordination.root": "/hw/",
                "hivewire.coordination.session.timeout": "9s",
                "hivewire.zookeeper.auth": "digest:u:p",
            }
        )
    )
    assert settings.root == "hw" and settings.zookeeper is not None
    assert settings.zookeeper.quorum == "zk1:2181,zk2:2182/chroot"
    assert (settings.zookeeper.session_timeout, settings.zookeeper.auth_data) == (9.0, (("digest", "u:p"),))
    with pytest.raises(ConfigError, match=r"hivewire\.coordination\.root"):
        CoordinationSettings.from_config(Config({"hivewire.coordination.root": "a/../b"}))


def test_the_examples_in_docs_coordination_md_run() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "coordination.md").read_text()
    blocks = text.split("```python\n")[1:]
    assert len(blocks) == 3
    for block in blocks:
        exec(compile(block.split("```")[0], "docs/coordination.md", "exec"), {})
