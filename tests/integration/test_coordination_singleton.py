"""Issue 21's singleton listeners, end to end: three ``hivewire run`` processes of one app in a real ZooKeeper
(against a real Apache Kafka broker). ``hivewire status`` lists the three with their listeners; the
singleton runs on exactly one, over every partition; ``kill -9`` that one and another takes over when the dead
session times out, resuming from the committed progress (nothing skipped, only the uncommitted tail twice). And
ZooKeeper cut off for 30 s (through a TCP proxy: the session ZooKeeper is shared by the suite): the other
listeners keep processing, the singleton pauses until it leads again, and nothing is lost."""

from __future__ import annotations

import json
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import waiting
from click.testing import CliRunner
from proxy import TcpProxy
from runtime_harness import stream
from test_runtime_process import Runner, base_args, lines, metric, produce

from hivewire.coordination import AppState, ZooKeeperCoordinator
from hivewire.tools._cli import main as cli
from hivewire.tools._local import LocalZooKeeper, free_port

LISTENERS = textwrap.dedent('''
    """Two listeners: "healthy" on the partitions this instance holds, "single" a singleton over all of them.
    Every call leaves a line in a file (line-buffered: kill -9 safe)."""
    import os, threading
    import hivewire as hw

    OUT = os.environ["HW_OUT"]
    _lock = threading.Lock()
    _files = {}

    def write(name, line):
        with _lock:
            f = _files.get(name)
            if f is None:
                f = _files[name] = open(f"{OUT}/{name}.log", "a", buffering=1)
            f.write(line + "\\n")

    def line(event):
        o = event.origin
        return f"{os.getpid()}\\t{event.partitions[0].values[0]}\\t{o.partition}\\t{o.offset}"

    app = hw.App("acceptance")

    @app.on_add_partition(name="healthy")
    def healthy(event):
        write("healthy", line(event))

    @app.on_add_partition(name="single", singleton=True)
    def single(event):
        write("single", line(event))
''')

SESSION = "4s"  # ZooKeeper's least (2 ticks): a dead instance's singleton moves on quickly


def wait(predicate: Callable[[], object], what: str, timeout: float = 180, interval: float = 0.5) -> None:
    waiting.wait_for(predicate, what, timeout, interval)


def status(zookeeper: LocalZooKeeper, root: str, app: str, *, text: bool = False) -> Any:
    args = ["status", app, "--zookeeper", zookeeper.quorum, "--root", root, *([] if text else ["--json"])]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    return out.output if text else json.loads(out.output)


class Instance(Runner):
    """A ``hivewire run`` of the app with a singleton, in its own directory, with /metrics on ``port``."""

    def __init__(self, workdir: Path, kafka: str, topic: str, app: str, quorum: str, root: str) -> None:
        workdir.mkdir()
        (workdir / "acceptance_listeners.py").write_text(LISTENERS)
        self.port = free_port()
        args = [
            *base_args(kafka, topic, app, self.port),
            "--zookeeper",
            quorum,
            "--root",
            root,
            "--set",
            f"hivewire.coordination.session.timeout={SESSION}",
            "--set",
            "apiary.messaging.consumer.session.timeout.ms=6000",
            "--set",
            "apiary.messaging.consumer.heartbeat.interval.ms=500",
        ]
        super().__init__(workdir, args, {})

    def seen(self, listener: str) -> list[tuple[int, int, int]]:
        """(seq, partition, offset) of every call of ``listener`` here, in call order."""
        return [(int(s), int(p), int(o)) for _pid, s, p, o in lines(self.workdir / f"{listener}.log")]

    def leads(self) -> bool:
        return metric(self.port, "hivewire_singleton_leading", "single") == 1


def seqs(instances: list[Instance], listener: str) -> set[int]:
    return {seq for i in instances for seq, _, _ in i.seen(listener)}


@contextmanager
def explained(instances: list[Instance]) -> Iterator[None]:
    """A failed assertion inside says what each instance saw and logged last (a timed-out wait alone does not)."""
    try:
        yield
    except AssertionError as e:
        report = [
            f"{i.workdir.name}: alive {i.alive()}, single {len(i.seen('single'))}, healthy {len(i.seen('healthy'))}"
            f"\n{i.tail()}"
            for i in instances
        ]
        raise AssertionError("\n".join([str(e), *report])) from None


def test_three_instances_one_singleton_and_a_kill_9_takeover_from_its_progress(
    kafka: str, zookeeper: LocalZooKeeper, unique: str, tmp_path: Path
) -> None:
    topic, app = f"single-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:6]}"
    payloads = stream(1200, tables=40)
    produce(kafka, topic, payloads[:600])
    instances = [Instance(tmp_path / n, kafka, topic, app, zookeeper.quorum, unique) for n in ("a", "b", "c")]
    try:
        with explained(instances):
            for i in instances:
                i.start()
            pids = {i.proc.pid for i in instances if i.proc is not None}

            def three_with_a_singleton() -> bool:
                found = status(zookeeper, unique, app)
                live = {i["pid"] for i in found["instances"].values()}
                return live == pids and found["listeners"].get("single", {}).get("singleton_on") is not None

            wait(
                lambda: three_with_a_singleton() or not all(i.alive() for i in instances), "three instances, one leader"
            )
            wait(lambda: seqs(instances, "single") == set(range(600)), "the singleton to see the first 600 events")
            assert all(i.alive() for i in instances), "\n".join(i.tail() for i in instances)

            found = status(zookeeper, unique, app)
            assert {tuple(i["listeners"]) for i in found["instances"].values()} == {("healthy", "single")}
            leader_member = found["listeners"]["single"]["singleton_on"]
            assert [m for m, i in found["instances"].items() if i["leading"] == ["single"]] == [leader_member]
            leader = next(i for i in instances if i.proc and i.proc.pid == found["instances"][leader_member]["pid"])
            others = [i for i in instances if i is not leader]
            # Exactly one runs it, over every partition; the others never called it.
            assert {p for _, p, _ in leader.seen("single")} == {0, 1, 2, 3}
            assert all(i.seen("single") == [] for i in others)
            assert [i.leads() for i in instances].count(True) == 1 and leader.leads()
            assert all(metric(i.port, "hivewire_coordination_instances", app=app) == 3 for i in instances)
            text = status(zookeeper, unique, app, text=True)
            assert f"single  running  singleton on {leader_member}" in text, text
            assert f"{leader_member}  " in text and "singletons single" in text, text

            # kill -9 the leader; what its commits recorded is where its successor must start.
            with ZooKeeperCoordinator(zookeeper.quorum, root=unique) as zk:
                wait(lambda: sum(AppState(zk, app).progress("single").values()) == 600, "the leader's progress")
                leader.kill9()
                killed_at = time.monotonic()
                progress = AppState(zk, app).progress("single")
            produce(kafka, topic, payloads[600:])
            wait(lambda: any(i.alive() and i.leads() for i in others), "another instance to take over")
            # Shown with the test's output (a figure, not an assertion: this machine is shared).
            print(f"takeover {time.monotonic() - killed_at:.1f} s after the kill (session timeout {SESSION})")
            wait(lambda: seqs(others, "single") >= set(range(600, 1200)), "the new leader to see the rest")
            assert all(i.alive() for i in others), "\n".join(i.tail() for i in others)

            (successor,) = [i for i in others if i.leads()]
            calls = successor.seen("single")
            # Every event at least once, no gap; the successor began each partition exactly at the committed progress.
            assert seqs(instances, "single") == set(range(1200))
            first = {}
            for _, p, o in calls:
                first.setdefault(p, o)
            assert first == {int(tp.rpartition(":")[2]): o for tp, o in progress.items()}, (first, progress)
            assert metric(successor.port, "hivewire_singleton_leadership_changes_total", "single", change="gained") == 1
            wait(
                lambda: all(metric(i.port, "hivewire_coordination_instances", app=app) == 2 for i in others),
                "two instances",
            )
            for i in others:
                assert i.terminate() == 0, i.tail()
    finally:
        for i in instances:
            if i.alive():
                i.kill9()


OUTAGE = 30.0  # seconds ZooKeeper is unreachable: far beyond the session timeout


def test_zookeeper_cut_off_for_30_s_pauses_only_the_singleton(
    kafka: str, zookeeper: LocalZooKeeper, unique: str, tmp_path: Path
) -> None:
    topic, app = f"single-out-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:6]}"
    payloads = stream(900, tables=40)
    produce(kafka, topic, payloads[:300])
    proxy = TcpProxy(("127.0.0.1", zookeeper.port))
    quorum = f"127.0.0.1:{proxy.port}"
    instances = [Instance(tmp_path / n, kafka, topic, app, quorum, unique) for n in ("a", "b")]
    try:
        with explained(instances):
            for i in instances:
                i.start()
            wait(lambda: seqs(instances, "single") == set(range(300)), "the singleton to see the first 300 events")
            wait(lambda: seqs(instances, "healthy") == set(range(300)), "the others to see them")
            with ZooKeeperCoordinator(zookeeper.quorum, root=unique) as zk:
                wait(lambda: sum(AppState(zk, app).progress("single").values()) == 300, "the singleton's progress")
                before = AppState(zk, app).progress("single")

            proxy.cut()
            cut_at = time.monotonic()
            # Nobody can prove it leads: the singleton stops everywhere, at once.
            wait(lambda: not any(i.leads() for i in instances), "the singleton to pause")
            produce(kafka, topic, payloads[300:600])
            # The data path goes on: the other listeners handle what arrives meanwhile; the singleton does not.
            wait(lambda: seqs(instances, "healthy") == set(range(600)), "the others to go on during the outage")
            wait(lambda: time.monotonic() - cut_at >= OUTAGE, "the outage", timeout=OUTAGE + 10)
            assert seqs(instances, "single") == set(range(300)), "the singleton ran without proving it leads"
            assert all(i.alive() for i in instances), "\n".join(i.tail() for i in instances)

            proxy.restore()
            produce(kafka, topic, payloads[600:])
            wait(lambda: [i.leads() for i in instances].count(True) == 1, "one instance to lead again")
            wait(lambda: seqs(instances, "single") == set(range(900)), "the singleton to catch up, no gap")
            wait(lambda: seqs(instances, "healthy") == set(range(900)), "the others to see everything")
            with ZooKeeperCoordinator(zookeeper.quorum, root=unique) as zk:
                wait(lambda: sum(AppState(zk, app).progress("single").values()) == 900, "the progress to move on")
                after = AppState(zk, app).progress("single")
            assert all(after[p] >= o for p, o in before.items())

            def both_back() -> bool:  # each joins again once its ZooKeeper client has reconnected (it backs off)
                found = status(zookeeper, unique, app)
                return len(found["instances"]) == 2 and found["listeners"]["single"]["singleton_on"] is not None

            wait(both_back, "both instances back in the group, one of them running the singleton")
            for i in instances:
                assert i.terminate() == 0, i.tail()
    finally:
        for i in instances:
            if i.alive():
                i.kill9()
        proxy.close()
