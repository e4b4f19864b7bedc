"""Issue 20's acceptance, end to end: listeners that wait (async and threads), and ``hivewire run --workers``,
in their own processes against Kafka (a real Apache Kafka broker), through kill -9 and restarts."""

from __future__ import annotations

import collections
import os
import random
import re
import signal
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from runtime_harness import stream
from test_runtime_process import Runner, base_args, committed, kill9_after_progress, lines, produce
from waiting import wait_for

LISTENERS = textwrap.dedent('''
    """Listeners that wait: every call leaves a line in a file (line-buffered: kill -9 safe)."""
    import asyncio, os, threading, time
    import hivewire as hw

    OUT = os.environ["HW_OUT"]
    _lock = threading.Lock()
    _files = {}

    def write(name, event):
        o = event.origin
        line = f"{os.getpid()}\\t{event.qualified_name}\\t{event.partitions[0].values[0]}\\t{o.partition}\\t{o.offset}"
        with _lock:
            f = _files.get(name)
            if f is None:
                f = _files[name] = open(f"{OUT}/{name}.log", "a", buffering=1)
            f.write(line + "\\n")

    app = hw.App("waiting")

    if os.environ.get("HW_WAITERS"):
        @app.on_add_partition(name="awaits", concurrency=200)
        async def awaits(event):
            await asyncio.sleep(0.01)  # an HTTP call, say
            write("awaits", event)

        @app.on_add_partition(name="sleeps", concurrency=200)
        def sleeps(event):
            time.sleep(0.01)
            write("sleeps", event)

    if os.environ.get("HW_CPU"):
        @app.on_add_partition(name="cpu")
        def cpu(event):
            total = 0
            for i in range(3000):  # some pure Python per event
                total += i * i
            write("cpu", event)
''')

KILL_FAST = [
    "--set",
    "apiary.messaging.consumer.session.timeout.ms=6000",
    "--set",
    "apiary.messaging.consumer.heartbeat.interval.ms=500",
]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "waiting_listeners.py").write_text(LISTENERS)
    return tmp_path


def args(bootstrap: str, topic: str, instance: str, *extra: str) -> list[str]:
    return ["waiting_listeners:app", *base_args(bootstrap, topic, instance)[1:], *KILL_FAST, *extra]


def check_runs(
    name: str, rows: list[list[str]], ends: dict[int, int], killed: dict[str, dict[int, int]]
) -> dict[tuple[int, int], list[str]]:
    """Nothing lost; a record repeated only by a later run, after a run killed before committing it; each
    run's events of one table in order."""
    runs: dict[tuple[int, int], list[str]] = collections.defaultdict(list)
    per_run_table: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for pid, table, seq, partition, offset in rows:
        runs[(int(partition), int(offset))].append(pid)
        per_run_table[(pid, table)].append(int(seq))
    assert set(runs) == {(p, o) for p, end in ends.items() for o in range(end)}, f"{name} lost events"
    for (pid, table), seqs in per_run_table.items():
        assert seqs == sorted(seqs), f"{name}: {table} out of order in run {pid}"
    for (partition, offset), who in runs.items():
        assert len(set(who)) == len(who), f"{name}: {partition}/{offset} repeated within one process: {who}"
        for pid in who[:-1]:
            assert pid in killed and offset >= killed[pid].get(partition, 0), (name, partition, offset, who)
    return runs


def test_kill_9_of_listeners_that_wait_loses_nothing_and_keeps_each_table_in_order(kafka: str, workdir: Path) -> None:
    n = 20_000
    topic, instance = f"wait-{uuid.uuid4().hex[:8]}", f"inst-{uuid.uuid4().hex[:6]}"
    group = f"apiary-kafka-metastore-receiver-{instance}"
    ends = produce(kafka, topic, stream(n, tables=200))
    rng = random.Random(20261125)
    runner = Runner(workdir, args(kafka, topic, instance), {"HW_WAITERS": "1"})
    killed: dict[str, dict[int, int]] = {}
    for kill in range(3):
        runner.start()
        assert runner.proc is not None
        pid = str(runner.proc.pid)
        if kill == 2:
            break  # the last run finishes the stream
        before = sum(committed(kafka, group, topic).values())
        target = len(lines(workdir / "awaits.log")) + rng.randrange(2000, 6000)
        killed[pid] = kill9_after_progress(runner, workdir / "awaits.log", target, before, kafka, group, topic)
    try:
        wait_for(
            lambda: sum(committed(kafka, group, topic).values()) >= n or not runner.alive(),
            "the last run to finish the stream",
            300,
        )
        assert runner.terminate() == 0, runner.tail()
    finally:
        if runner.alive():
            runner.kill9()
    assert committed(kafka, group, topic) == ends
    for name in ("awaits", "sleeps"):
        check_runs(name, lines(workdir / f"{name}.log"), ends, killed)


def test_workers_share_the_topic_and_a_killed_worker_is_restarted_losing_nothing(kafka: str, workdir: Path) -> None:
    n = 6000
    topic, instance = f"workers-{uuid.uuid4().hex[:8]}", f"inst-{uuid.uuid4().hex[:6]}"
    group = f"apiary-kafka-metastore-receiver-{instance}"
    ends = produce(kafka, topic, stream(n, tables=40))
    supervisor = Runner(workdir, args(kafka, topic, instance, "--workers", "2"), {"HW_CPU": "1"})
    supervisor.start()
    try:

        def workers() -> list[str]:
            return re.findall(r"worker \d started \(pid (\d+)\)", supervisor.text())

        wait_for(lambda: len(workers()) == 2, "two workers to start", 60)
        first = workers()
        # Both workers take part: each handles events (the group shares the partitions between them). The
        # first to join may handle every event before the other is given partitions, so more keep coming
        # (a batch a second) until both have handled some.
        deadline = time.monotonic() + 120
        while not {row[0] for row in lines(workdir / "cpu.log")} >= set(first) and supervisor.alive():
            assert time.monotonic() < deadline, "timed out after 120 s waiting for both workers to handle events"
            for partition, count in produce(kafka, topic, stream(500, tables=40)).items():
                ends[partition] = ends.get(partition, 0) + count
            n += 500
            time.sleep(1)
        assert supervisor.alive(), supervisor.tail()
        victim = first[0]
        os.kill(int(victim), signal.SIGKILL)
        wait_for(lambda: len(workers()) == 3, "the killed worker to be restarted", 60)
        assert re.search(rf"worker 0 \(pid {victim}\) exited with status signal SIGKILL", supervisor.text())
        wait_for(lambda: sum(committed(kafka, group, topic).values()) >= n, "the workers to finish", 300)
        assert supervisor.terminate() == 0, supervisor.tail()
    finally:
        if supervisor.alive():
            supervisor.kill9()
    for pid in workers():
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text(), pid
    assert committed(kafka, group, topic) == ends
    rows = lines(workdir / "cpu.log")
    seen = {(int(r[3]), int(r[4])) for r in rows}
    assert seen == {(p, o) for p, end in ends.items() for o in range(end)}, "events lost"
    assert {r[0] for r in rows} >= set(first)
