"""One contract for both coordination backends (FastStream's habit: one suite, two brokers).

Every test runs unchanged against the in-memory backend and a real ZooKeeper. ``backend.connect()`` opens one
more session on the same ensemble (another instance); ``backend.expire(c)`` expires ``c``'s session the way
ZooKeeper does (for ZooKeeper: a second client takes over the session id and closes it, so the server itself
expires it and deletes its ephemeral nodes), after which the session comes back on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import pytest
from kazoo.client import KazooClient
from waiting import wait_for

from hivewire.coordination import Coordinator, InMemoryCoordinator, Versioned, ZooKeeperCoordinator
from hivewire.errors import CoordinationError, VersionConflictError
from hivewire.tools._local import LocalZooKeeper


@dataclass
class Backend:
    connect: Callable[[], Coordinator]
    expire: Callable[[Coordinator], None]
    opened: list[Coordinator] = field(default_factory=list)

    def session(self) -> Coordinator:
        coordinator = self.connect()
        self.opened.append(coordinator)
        return coordinator


def _expire_zookeeper(coordinator: Coordinator) -> None:
    assert isinstance(coordinator, ZooKeeperCoordinator)
    client_id = coordinator._zk.client_id
    other = KazooClient(
        hosts=coordinator.config.quorum, client_id=client_id, timeout=coordinator.config.session_timeout
    )
    other.start(timeout=30)
    other.stop()  # closes the session: the server expires it for its first owner too
    other.close()


def _expire_memory(coordinator: Coordinator) -> None:
    assert isinstance(coordinator, InMemoryCoordinator)
    coordinator.expire_session()


@pytest.fixture(params=["memory", "zookeeper"])
def backend(request: pytest.FixtureRequest, unique: str) -> Iterator[Backend]:
    if request.param == "memory":
        first = InMemoryCoordinator()
        sessions = iter([first])
        made = Backend(lambda: next(sessions, None) or first.connect(), _expire_memory)
    else:
        zookeeper: LocalZooKeeper = request.getfixturevalue("zookeeper")
        made = Backend(
            lambda: ZooKeeperCoordinator(zookeeper.quorum, root=unique, session_timeout=6.0, connection_timeout=30),
            _expire_zookeeper,
        )
    yield made
    for coordinator in made.opened:
        coordinator.close()


class Recorder:
    """Collects what a watch or a candidacy reports, from whichever thread reports it."""

    def __init__(self) -> None:
        self.seen: list[object] = []
        self.lock = threading.Lock()

    def __call__(self, value: object) -> None:
        with self.lock:
            self.seen.append(value)

    @property
    def last(self) -> object:
        with self.lock:
            return self.seen[-1] if self.seen else "nothing yet"


def _values(snapshot: object) -> dict[str, bytes]:
    assert isinstance(snapshot, Mapping)
    return {k: (v.value if isinstance(v, Versioned) else v) for k, v in snapshot.items()}


# -- key-value store ------------------------------------------------------------------------------------------


def test_versions_and_compare_and_set(backend: Backend) -> None:
    kv = backend.session()
    assert kv.get("a/b") is None
    assert kv.create("a/b", b"one") == 0
    with pytest.raises(VersionConflictError, match="already exists"):
        kv.create("a/b", b"again")
    assert kv.put("a/b", b"two") == 1
    assert kv.compare_and_set("a/b", b"three", 1) == 2
    with pytest.raises(VersionConflictError):
        kv.compare_and_set("a/b", b"stale", 1)
    assert kv.get("a/b") == Versioned(b"three", 2)
    with pytest.raises(VersionConflictError, match="no longer exists"):
        kv.compare_and_set("a/missing", b"x", 0)
    with pytest.raises(VersionConflictError):
        kv.delete("a/b", version=0)
    kv.delete("a/b", version=2)
    assert kv.get("a/b") is None
    kv.delete("a/b")  # absent, unconditional: nothing to do
    with pytest.raises(VersionConflictError):
        kv.delete("a/b", version=0)


def test_children_are_one_level_and_parents_exist(backend: Backend) -> None:
    kv = backend.session()
    kv.put("p/x", b"1")
    kv.put("p/y/z", b"2")
    assert _values(kv.children("p")) == {"p/x": b"1", "p/y": b""}
    assert _values(kv.children("p/y")) == {"p/y/z": b"2"}
    assert kv.children("nothing/here") == {}
    with pytest.raises(CoordinationError, match="keys under it"):
        kv.delete("p/y")
    # Another session sees the same values.
    assert backend.session().get("p/y/z") == Versioned(b"2", 0)


@pytest.mark.parametrize("bad", ["", "/", "a//b", "a/../b", "a/./b", " a"])
def test_bad_keys_are_refused(backend: Backend, bad: str) -> None:
    kv = backend.session()
    with pytest.raises(CoordinationError, match="not a path"):
        kv.put(bad, b"x")


def test_concurrent_compare_and_set_loses_no_increment(backend: Backend) -> None:
    sessions = [backend.session(), backend.session()]
    sessions[0].create("counter", b"0")

    def increment(kv: Coordinator, times: int) -> None:
        for _ in range(times):
            while True:
                current = kv.get("counter")
                assert current is not None
                try:
                    kv.compare_and_set("counter", str(int(current.value) + 1).encode(), current.version)
                    break
                except VersionConflictError:
                    continue

    threads = [threading.Thread(target=increment, args=(sessions[i % 2], 20)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sessions[1].get("counter") == Versioned(b"80", 80)


# -- watches ---------------------------------------------------------------------------------------------------


def test_watch_key_reports_each_state(backend: Backend) -> None:
    watcher, writer = backend.session(), backend.session()
    seen = Recorder()
    watch = watcher.watch_key("w/k", seen)
    wait_for(lambda: seen.last is None, "the key's absence")
    writer.put("w/k", b"1")
    wait_for(lambda: seen.last == Versioned(b"1", 0), "the creation")
    writer.put("w/k", b"2")
    wait_for(lambda: seen.last == Versioned(b"2", 1), "the change")
    writer.delete("w/k")
    wait_for(lambda: seen.last is None, "the deletion")
    writer.put("w/k", b"3")
    wait_for(lambda: seen.last == Versioned(b"3", 0), "the re-creation")
    watch.cancel()
    count = len(seen.seen)
    writer.put("w/k", b"4")
    writer.put("w/other", b"sync")  # a later write the watcher's session has seen when the next read sees it
    wait_for(lambda: watcher.get("w/k") == Versioned(b"4", 1), "the write after cancelling")
    assert len(seen.seen) == count and seen.last == Versioned(b"3", 0)


def test_watch_prefix_reports_children_and_their_values(backend: Backend) -> None:
    watcher, writer = backend.session(), backend.session()
    seen = Recorder()
    watcher.watch_prefix("apps/x", seen)
    wait_for(lambda: seen.last == {}, "the empty prefix")
    writer.put("apps/x/a", b"1")
    wait_for(lambda: _values(seen.last) == {"apps/x/a": b"1"}, "a new child")
    writer.put("apps/x/a", b"2")
    wait_for(lambda: _values(seen.last) == {"apps/x/a": b"2"}, "a child's new value")
    writer.put("apps/x/b/deeper", b"3")
    wait_for(lambda: _values(seen.last) == {"apps/x/a": b"2", "apps/x/b": b""}, "a parent made by put")
    writer.delete("apps/x/a")
    wait_for(lambda: _values(seen.last) == {"apps/x/b": b""}, "a removed child")
    last = seen.last
    assert isinstance(last, Mapping) and all(isinstance(v, Versioned) for v in last.values())


def test_a_raising_callback_stops_neither_the_watch_nor_the_writer(backend: Backend) -> None:
    watcher, writer = backend.session(), backend.session()
    seen = Recorder()

    def callback(value: Versioned | None) -> None:
        seen(value)
        raise RuntimeError("a bug in the user's callback")

    watcher.watch_key("r/k", callback)
    writer.put("r/k", b"1")
    writer.put("r/k", b"2")
    wait_for(lambda: seen.last == Versioned(b"2", 1), "the second change despite the first raising")


# -- membership ------------------------------------------------------------------------------------------------


def test_members_join_update_and_leave(backend: Backend) -> None:
    a, b = backend.session(), backend.session()
    seen = Recorder()
    a.watch_members("g", seen)
    wait_for(lambda: seen.last == {}, "no members")
    a.join("g", "m1", b"a")
    b.join("g", "m2", b"b")
    wait_for(lambda: seen.last == {"m1": b"a", "m2": b"b"}, "two members")
    assert b.members("g") == {"m1": b"a", "m2": b"b"}
    b.join("g", "m2", b"b2")
    wait_for(lambda: seen.last == {"m1": b"a", "m2": b"b2"}, "a member's new data")
    a.leave("g", "m1")
    wait_for(lambda: seen.last == {"m2": b"b2"}, "a member leaving")
    a.leave("g", "m1")  # not a member: nothing happens
    b.close()
    wait_for(lambda: seen.last == {}, "the members of a closed session leaving")
    assert a.members("g") == {}


# -- election --------------------------------------------------------------------------------------------------


class Candidate:
    def __init__(self, coordinator: Coordinator, name: str, election: str = "e") -> None:
        self.events: list[str] = []
        self.candidacy = coordinator.campaign(
            election, name, lambda: self.events.append("elected"), lambda: self.events.append("lost")
        )

    @property
    def leads(self) -> bool:
        return bool(self.events) and self.events[-1] == "elected"


def test_one_leader_at_a_time(backend: Backend) -> None:
    sessions = {"a": backend.session(), "b": backend.session(), "c": backend.session()}
    first = Candidate(sessions["a"], "a")
    wait_for(lambda: first.leads, "the first candidate leading")
    # The order in which the others queue up is theirs (ZooKeeper: whoever's node is created first).
    others = {"b": Candidate(sessions["b"], "b"), "c": Candidate(sessions["c"], "c")}
    wait_for(lambda: sessions["c"].leader("e") == "a", "the leader's name")
    assert first.candidacy.is_leader and not any(o.events or o.candidacy.is_leader for o in others.values())
    first.candidacy.cancel()
    wait_for(lambda: first.events == ["elected", "lost"], "the leader losing on cancel")
    wait_for(lambda: any(o.leads for o in others.values()), "the next candidate leading")
    second = next(name for name, o in others.items() if o.leads)
    last = "c" if second == "b" else "b"
    assert sessions["a"].leader("e") == second and not others[last].events
    sessions[second].close()  # the leader's session ends: the last candidate leads
    wait_for(lambda: others[last].leads, "the last candidate leading")
    assert sessions["a"].leader("e") == last


# -- session loss ----------------------------------------------------------------------------------------------


def test_session_loss_loses_and_regains_membership_and_leadership(backend: Backend) -> None:
    member, observer = backend.session(), backend.session()
    member.join("g", "m", b"data")
    member.put("state/kept", b"persistent")  # not ephemeral: survives the session
    own = Recorder()
    member.watch_key("state/kept", own)  # the expiring session's own watch
    leader = Candidate(member, "m")
    wait_for(lambda: leader.leads, "leadership")
    other = Candidate(observer, "o")
    seen = Recorder()
    observer.watch_members("g", seen)
    wait_for(lambda: seen.last == {"m": b"data"}, "membership")

    backend.expire(member)

    wait_for(lambda: "lost" in leader.events, "leadership lost with the session", timeout=120)
    # Someone leads again: the other candidate, or this one if it stood again first (ZooKeeper: a race).
    wait_for(lambda: leader.leads or other.leads, "a leader after the session loss", timeout=120)
    wait_for(lambda: {} in seen.seen, "membership lost with the session", timeout=120)
    wait_for(lambda: seen.last == {"m": b"data"}, "membership regained after reconnecting", timeout=120)
    assert member.get("state/kept") == Versioned(b"persistent", 0)
    observer.put("state/kept", b"changed")
    wait_for(lambda: own.last == Versioned(b"changed", 1), "the watch of the expired session still reporting")
    # And leadership comes back once the other candidate steps down.
    other.candidacy.cancel()
    wait_for(lambda: leader.leads, "leadership regained after reconnecting", timeout=120)
    assert observer.leader("e") == "m"
