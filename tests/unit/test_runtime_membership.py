"""``hivewire run``'s membership of its app's group (runtime/_membership.py) on the in-memory coordinator: what it
announces, an unreachable coordinator (said once, retried, never blocking), and nothing at all without the keys."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import pytest
import waiting

from hivewire.coordination import AppState, Coordinator, InMemoryCoordinator
from hivewire.errors import CoordinationError
from hivewire.runtime._membership import Membership


def test_an_instance_announces_what_it_holds_and_leaves() -> None:
    memory = InMemoryCoordinator()
    ops = AppState(memory, "orders")
    membership = Membership(memory.connect, "orders", ["audit", "report"])
    membership.hold([("apiary", 2), ("apiary", 0)])  # before the start: announced on joining
    membership.start()
    waiting.wait_for(lambda: [i.partitions for i in ops.instances().values()] == [("apiary:0", "apiary:2")], "join", 30)
    (member, found), *_ = ops.instances().items()
    assert (found.pid, found.listeners) == (os.getpid(), ("audit", "report"))
    membership.hold([("apiary", 1)])
    membership.lag({"audit": 7, "report": 0})
    waiting.wait_for(
        lambda: ops.instances()[member].partitions == ("apiary:1",) and ops.instances()[member].lag["audit"] == 7,
        "the new partitions and lag",
        30,
    )
    membership.close()
    assert ops.instances() == {}


def test_an_unreachable_coordinator_is_said_once_and_joined_when_it_answers(caplog: pytest.LogCaptureFixture) -> None:
    memory = InMemoryCoordinator()
    attempts: list[None] = []

    def connect() -> Coordinator:
        attempts.append(None)
        if len(attempts) < 4:
            raise CoordinationError("could not connect to ZooKeeper at zk1:2181")
        return memory.connect()

    membership = Membership(connect, "orders", ["audit"], where="zk1:2181", retry_every=0.01)
    with caplog.at_level(logging.INFO, logger="hivewire.runtime.membership"):
        membership.hold([("apiary", 0)])  # never waits for the coordinator
        membership.start()
        ops = AppState(memory, "orders")
        waiting.wait_for(lambda: len(ops.instances()) == 1, "the join once connected", 30)
        membership.close()
    assert len(attempts) == 4
    assert caplog.text.count("coordination at zk1:2181") == 2, caplog.text  # unreachable once, reachable again
    assert "the listeners keep running meanwhile" in caplog.text
    assert ops.instances() == {}


def test_without_the_keys_run_imports_nothing_of_coordination() -> None:
    code = textwrap.dedent("""
        import sys
        import hivewire as hw
        from hivewire.runtime._source import MemorySource
        from hivewire.events._apiary import encode
        from hivewire.tools._testing import create_table_event

        app = hw.App("plain")
        seen = []
        app.on_create_table(lambda event: seen.append(event.table_name))
        source = MemorySource()
        source.send(encode(create_table_event("s", "t")))
        app.run(source, handle_signals=False)
        assert seen == ["t"], seen
        found = ("kazoo", "hivewire.coordination", "hivewire.runtime._membership")
        print(sorted(m for m in sys.modules if m.startswith(found)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
