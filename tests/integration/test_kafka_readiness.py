"""Readiness on a real three-broker cluster (issue 39, acceptance 1): Kafka is unreachable only when no broker
of the cluster answers the consumer.

A three-node KRaft cluster (replication factor 3, ``min.insync.replicas=2``), ``hivewire run`` consuming and
dead-lettering every event (one listener always fails). ``/health`` is polled twice a second throughout:

* started while one of the three bootstrap brokers is down, it becomes ready and logs no WARNING;
* ten times over, the broker leading the dead-letter topic is killed with SIGKILL and restarted: ``/health``
  never says DOWN (the first time it is the dead-letter producer's only broker: its bootstrap server), but
  after librdkafka logged that the group dropped the member (:data:`SESSION_TIMED_OUT`: the coordinator's
  new broker answered "Not coordinator" for the whole 45 s session, Kafka's doing; seen in two of four full
  test runs on a loaded machine, in none of five runs of this file alone). Its partitions are lost then, not
  rebalanced: ``/health`` says DOWN, with Kafka reachable and nothing assigned, which is true, until the
  member has joined again and has partitions;
* every broker killed: ``/health`` says DOWN, ``"reachable": false``, within the documented time
  (:data:`OUTAGE_SEEN`, docs/runtime.md), and UP again once they are back.

Each kill keeps the broker down :data:`DOWN` seconds, longer than librdkafka's statistics interval, so a
client's report of its own lost connection (what made readiness lie before) has its chance to count.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from runtime_harness import PARTITIONS, stream, topic_size
from waiting import wait_for

from hivewire.events import _apiary as apiary
from hivewire.runtime._kafka import STATISTICS_INTERVAL
from hivewire.tools._kafka_broker import KafkaBroker, KafkaCluster, create_topic
from hivewire.tools._local import free_port

HIVEWIRE = str(Path(sys.executable).with_name("hivewire"))
#: Seconds each killed broker stays down.
DOWN = 6.0
#: How long after the last broker stops ``/health`` says DOWN at the latest, as docs/runtime.md says: two
#: statistics reports in a row with no broker up (one interval, plus up to one until the first report).
OUTAGE_SEEN = 3 * STATISTICS_INTERVAL
KILLS = 10

LISTENERS = textwrap.dedent("""
    import hivewire as hw

    app = hw.App("readiness")

    @app.on_add_partition
    def failing(event):
        raise RuntimeError("always fails: every event is dead-lettered")
""")


def health(port: int) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    except OSError as e:  # not listening (yet): status 0
        return 0, {"error": str(e)}


#: librdkafka's line when the group coordinator did not answer its heartbeats for a whole session: the group
#: has dropped this member, its partitions are lost, and it joins again.
SESSION_TIMED_OUT = "Consumer group session timed out"


@dataclass(frozen=True)
class Answer:
    """One ``/health`` answer: when (monotonic seconds), its status and what it said."""

    at: float
    status: int
    body: dict[str, Any]

    @property
    def dropped(self) -> bool:
        """Not ready only because the group dropped the member: Kafka reachable, alive, nothing assigned."""
        b = self.body
        return self.status == 503 and b.get("reachable") is True and b.get("alive") is True and not b.get("assigned")

    def line(self, start: float) -> str:
        said = ", ".join(f"{k}={self.body[k]!r}" for k in _SAID if k in self.body)
        return f"{self.at - start:.1f} s: {self.status}, {said}"


#: What a not-ready answer's line shows.
_SAID = ("reachable", "alive", "assigned", "rebalancing_s", "waiting_for_assignment_s", "waiting_reason", "error")


class Poller:
    """``/health`` twice a second on a thread; :attr:`seen` holds every answer."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.seen: list[Answer] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            status, body = health(self.port)  # the endpoint not answering (status 0) is a failed probe too
            self.seen.append(Answer(time.monotonic(), status, body))

    def not_ready(self, run_log: Path) -> str:
        """The answers that were not 200 (seconds since the first answer, what each said), but those of a
        member the group dropped after librdkafka logged the session timeout."""
        dropped = SESSION_TIMED_OUT in run_log.read_text()
        start = self.seen[0].at
        return "\n".join(a.line(start) for a in self.seen if a.status != 200 and not (dropped and a.dropped))

    def dropped(self) -> int:
        """How many answers were not ready while the group had dropped the member."""
        return sum(a.status != 200 and a.dropped for a in self.seen)

    def rebalancing(self) -> int:
        """How many answers fell while the group was taking partitions back and handing them out again."""
        return sum(a.body.get("rebalancing_s") is not None for a in self.seen)

    def stop(self) -> list[Answer]:
        self._stop.set()
        self._thread.join(10)
        return self.seen


def events_of_the_run(log: Path) -> str:
    """The run's log without its per-event lines (each dead letter's): the group's and Kafka's news."""
    noise = ("hivewire.runtime.lane", "RuntimeError", "Traceback", "  ")
    return "\n".join(line for line in log.read_text().splitlines() if not line.startswith(noise))[-4000:]


def leader_of(cluster: KafkaCluster, topic: str) -> KafkaBroker:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    leader = admin.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
    return next(b for b in cluster.brokers if b.node_id == leader)


def fully_replicated(cluster: KafkaCluster, *topics: str) -> bool:
    """Every partition of ``topics`` has all three replicas in sync (so the next kill leaves two)."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "socket.timeout.ms": 3000})
    try:
        found = admin.list_topics(timeout=5).topics
    except Exception:  # KafkaException while the restarted broker rejoins
        return False
    return all(
        t in found and all(len(p.isrs) == len(cluster.brokers) for p in found[t].partitions.values()) for t in topics
    )


@pytest.mark.timeout(1800)  # ten broker restarts: a JVM start each, 15-50 s on a loaded machine
def test_readiness_follows_the_cluster_not_one_broker(kafka_cluster: KafkaCluster, tmp_path: Path) -> None:
    cluster = kafka_cluster
    topic = f"ready-{uuid.uuid4().hex[:8]}"
    dlq = f"{topic}.dlq"
    create_topic(cluster.bootstrap_servers, topic, PARTITIONS, 3)
    create_topic(cluster.bootstrap_servers, dlq, 1, 3)  # one partition: the producer connects to its leader only
    (tmp_path / "readylisteners.py").write_text(LISTENERS)
    port = free_port()
    log_path = tmp_path / "run.log"
    stopped_at_start = cluster.brokers[2]
    stopped_at_start.stop()
    # The dead-letter producer's only bootstrap broker is the dead-letter topic's leader, the first victim: its
    # one connection dies with it (what made readiness lie).
    wait_for(lambda: leader_of(cluster, dlq) is not stopped_at_start, "a leader for the dead letters", 60)
    first_victim = leader_of(cluster, dlq)
    with log_path.open("ab") as log:
        run = subprocess.Popen(
            [HIVEWIRE, "run", "readylisteners:app", "--bootstrap-servers", cluster.bootstrap_servers,
             "--topic", topic, "--group", f"g-{topic}", "--from-beginning", "--endpoint-port", str(port),
             "--set", "hivewire.retry.max.attempts=1",
             "--set", f"hivewire.dead.letter.producer.bootstrap.servers={first_victim.bootstrap_servers}"],
            env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5})
    sending = threading.Event()
    sent = [0]

    payloads = stream(1000, tables=20)

    def send() -> None:  # a steady stream (100 a second), so the run consumes and dead-letters throughout
        while not sending.wait(0.05):
            for _ in range(5):
                i = sent[0] = sent[0] + 1
                table = f"sales.t{i % 20:02d}"
                producer.produce(topic, payloads[i % 1000], partition=apiary.partition_for(table, PARTITIONS))
            producer.poll(0)

    def outage_seen() -> bool:
        status, body = health(port)
        return status == 503 and body["reachable"] is False

    sender = threading.Thread(target=send, daemon=True)
    try:
        wait_for(lambda: health(port)[0] == 200 if run.poll() is None else True, "the run to be ready", 120)
        assert run.poll() is None, log_path.read_text()[-3000:]
        started = log_path.read_text()
        assert " WARNING " not in started, f"a start with one bootstrap broker down said:\n{started}"
        stopped_at_start.start()

        sender.start()
        wait_for(lambda: topic_size(cluster.bootstrap_servers, dlq) > 0, "the first dead letters", 60)
        poller = Poller(port)
        letters_before = topic_size(cluster.bootstrap_servers, dlq)
        for kill in range(KILLS):
            wait_for(lambda: fully_replicated(cluster, topic, dlq), "every replica in sync before a kill", 120)
            victim = leader_of(cluster, dlq)
            print(f"kill {kill + 1}: broker {victim.node_id} (leader of {dlq})")
            victim.stop(kill=True)
            time.sleep(DOWN)
            victim.start()
            bad = poller.not_ready(log_path)
            assert not bad, f"kill {kill + 1}: /health not ready:\n{bad}\nthe run said:\n{events_of_the_run(log_path)}"
            # a dropped member has its partitions again before the next kill
            wait_for(lambda: health(port)[0] == 200, "/health to be ready (partitions assigned)", 120)
        seen = poller.stop()
        letters = topic_size(cluster.bootstrap_servers, dlq) - letters_before
        print(f"{len(seen)} /health answers over {KILLS} kills; {letters} dead letters meanwhile")
        print(f"{poller.rebalancing()} of them while the group was handing its partitions out again (ready)")
        print(f"{poller.dropped()} not ready while the group had dropped the member after a session timeout")
        assert letters > 0, "nothing was dead-lettered while brokers were killed"
        assert not poller.not_ready(log_path), f"/health was not ready:\n{poller.not_ready(log_path)}"
        assert len(seen) >= KILLS * DOWN * 2 * 0.5, f"only {len(seen)} /health answers: the poller fell behind"
        during = log_path.read_text()[len(started) :]
        assert "unreachable" not in during, during[-3000:]

        sending.set()
        for broker in cluster.brokers:
            broker.stop(kill=True)
        stopped = time.monotonic()
        wait_for(outage_seen, "/health to say DOWN and unreachable", OUTAGE_SEEN + 1)
        print(f"/health said DOWN {time.monotonic() - stopped:.1f} s after the last broker stopped")
        for broker in cluster.brokers:
            broker.launch()
        for broker in cluster.brokers:
            broker.wait_ready()
        wait_for(lambda: health(port)[0] == 200, "/health to be ready again once the brokers are back", 120)
        assert health(port)[1]["reachable"] is True
    finally:
        sending.set()
        run.send_signal(signal.SIGTERM)
        code = run.wait(90)
        producer.flush(10)
    assert code == 0, log_path.read_text()[-3000:]
