"""``hivewire run`` restarted in place on a real Apache Kafka broker (issue 39, acceptance 5): the restart handles
its first event without waiting for the member it replaces, after a clean stop (SIGTERM: the consumer leaves
the group) and after kill -9 with static membership (``--group-instance-id``, KIP-345).

No wall clock is asserted. The consumer's ``session.timeout.ms`` is :data:`SESSION_MS` (45 s, librdkafka's
default), and the test waits at most :data:`BOUND` seconds (less than that) for the restart to handle the events
sent after it. A member that did not leave (a dynamic member after kill -9) holds its partitions until its
session ends, 45 s after its last heartbeat: the coordinator cannot assign them to the restarted process
before then, so a restart that handles the new events within the bound can only have been assigned without
waiting for the session. That, not a stopwatch, is what puts the first event within seconds of the start
(the 10 s asked of it; the seconds themselves are bench/bench_restart.py's: 3-4 s after a Ctrl-C,
docs/runtime.md). A control run, kill -9 without ``--group-instance-id``, times out here: that member holds
its partitions for the session.
"""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient
from runtime_harness import PARTITIONS, stream
from test_runtime_process import LISTENERS, Runner, base_args, lines, produce
from waiting import wait_for

from hivewire.tools._kafka_broker import create_topic

pytestmark = pytest.mark.integration

#: The consumer's session timeout: how long a member that stopped without leaving holds its partitions.
SESSION_MS = 45_000
#: The longest the test waits for the restarted process to handle the events sent after the restart.
BOUND = 30.0
assert BOUND < SESSION_MS / 1000
EVENTS = 40


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "acceptance_listeners.py").write_text(LISTENERS)
    return tmp_path


def handled(workdir: Path) -> set[int]:
    return {int(seq) for _pid, _table, seq, _p, _o in lines(workdir / "healthy.log")}


def static_members(bootstrap: str, group: str) -> list[str | None]:
    """The ``group.instance.id`` of each member of ``group``, as the broker describes it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_consumer_groups([group], request_timeout=30)[group].result()
    return [m.group_instance_id for m in described.members]


@pytest.mark.parametrize("stop", ["sigterm", "kill-9 with --group-instance-id"])
def test_a_restart_handles_its_first_events_without_waiting_for_the_session(
    kafka: str, workdir: Path, stop: str
) -> None:
    topic = f"restart-{uuid.uuid4().hex[:8]}"
    name = f"restart-{uuid.uuid4().hex[:8]}"
    group = f"apiary-kafka-metastore-receiver-{name}"
    create_topic(kafka, topic, PARTITIONS, 1)
    args = [*base_args(kafka, topic, name), "-X", f"session.timeout.ms={SESSION_MS}"]
    static = stop != "sigterm"
    if static:
        args += ["--group-instance-id", "restart-a"]
    payloads = stream(2 * EVENTS)
    first = Runner(workdir, args, {})
    first.start()
    try:
        produce(kafka, topic, payloads[:EVENTS])
        wait_for(lambda: handled(workdir) >= set(range(EVENTS)) or not first.alive(), "the first run's events", 120)
        assert first.alive(), first.tail()
        assert static_members(kafka, group) == (["restart-a"] if static else [None])
        if static:
            first.kill9()
        else:
            assert first.terminate() == 0, first.tail()
    finally:
        if first.alive():
            first.kill9()

    second = Runner(workdir, args, {})
    second.start()
    try:
        produce(kafka, topic, payloads[EVENTS:])
        wait_for(
            lambda: handled(workdir) >= set(range(2 * EVENTS)) or not second.alive(),
            f"the restarted run to handle the new events before the old member's session ({SESSION_MS} ms) ends",
            BOUND,
        )
        assert second.alive(), second.tail()
    finally:
        code = second.signal(signal.SIGTERM) if second.alive() else None
    assert code == 0, second.tail()
