"""Drone Fly 1.0.9 against ``hivewire run``: the same topic, the same broker, the same properties file.

One run: an Apache Kafka broker (KRaft, the jars of ``make jvm``) is started, and one topic is filled with
realistic Apiary messages of the six types Drone Fly 1.0.9 delivers on Java 25 (CREATE_TABLE, ADD_PARTITION,
ALTER_PARTITION, ALTER_TABLE, DROP_PARTITION, DROP_TABLE over 200 tables, as ``hivewire.apiary.encode`` writes
them, which the Apiary golden files check; INSERT is left out because Drone Fly 1.0.9 cannot build Hive's
InsertEvent on Java 24+). Then, alternating over the rounds, each contender runs as its own process with a
fresh consumer group, started from the same ``.properties`` file the way a user starts it:

* Drone Fly 1.0.9 on Java 25, started by the peer tests' harness (``tests/peers/dronefly.py``: ``java -Xmx1g
  -XX:+UseSerialGC -cp ... DroneFly --spring.config.import=file:bench.properties``), with a Java
  ``MetaStoreEventListener`` of this benchmark's own, compiled against Drone Fly's classpath;
* ``hivewire run --config bench.properties``, with a Python listener of the same name (``apiary.listener.list``
  names ``hwbench.NoopListener`` or ``hwbench.WaitingListener``: a Java class on Drone Fly's classpath, a
  Python class in the working directory of ``hivewire run``).

Listeners: (i) no-op (every callback overridden, doing nothing); (ii) one that waits 10 ms per event: Drone
Fly's calls ``Thread.sleep(10)``; hivewire's awaits ``asyncio.sleep(0.01)`` with
``hivewire.listener.concurrency``, and a plain function's ``time.sleep(0.01)`` on threads, and the same
with ``--workers``.

Everything is measured from outside, the same way for both: the consumer group's committed offsets (both
commit only what they handled: Drone Fly's consumer auto-commits at its next poll, hivewire commits what
every listener finished; both every 200 ms here, ``apiary.messaging.consumer.auto.commit.interval.ms`` and
``hivewire.commit.interval.ms`` in the one file) and the processes' CPU time from ``/proc/<pid>/stat``
(utime + stime of every thread, child processes included), read together every 100 ms. The first events
are a warm-up (until the group has committed ``--warmup`` events, or 10 s after its first commit, whichever
comes first: the JIT compiler's and the caches' start); then the rate and CPU are measured up to the end of
the topic or for ``--window`` seconds, whichever comes first. Resident memory is the processes' peak
(VmHWM) at the end. Each run is checked: Drone Fly's log has no error, and hivewire's listeners handled (its
``/metrics``) at least what the group committed. The CPU of the live threads, by thread name, shows what each
side spends it on. With ``--update-readme`` the headline in the top README.md is rewritten too.

Usage: python bench/bench_dronefly.py [--events 30000] [--rounds 3] [--warmup 2000] [--window 20]
       [--json] [--update-readme]
(needs the peers' Maven repository, HIVEWIRE_PEERS_M2 or ../shared/peers/m2, and a Java 21+: see
tests/peers/dronefly.py)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))  # the peer tests' Drone Fly harness
sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options, write_section  # noqa: E402
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from dronefly import DroneFly, compile_recorder, read_properties, write_properties  # noqa: E402

from hivewire import apiary, testing  # noqa: E402
from hivewire.events import ListenerEvent  # noqa: E402
from hivewire.tools._jvm import peers_repository, version  # noqa: E402
from hivewire.tools._kafka_broker import KafkaBroker  # noqa: E402
from hivewire.tools._local import free_port  # noqa: E402

TOPIC = "apiary"
PARTITIONS = 4
TABLES = 200
COMMIT_INTERVAL_MS = 200
POLL_S = 0.1
WARMUP_S = 10.0
RELEASE = "1.0.9"
#: The callbacks of Hive's MetaStoreEventListener for the types Apiary publishes, Java and Python names.
CALLBACKS = {
    "CreateTable": "on_create_table",
    "AlterTable": "on_alter_table",
    "DropTable": "on_drop_table",
    "AddPartition": "on_add_partition",
    "AlterPartition": "on_alter_partition",
    "DropPartition": "on_drop_partition",
    "Insert": "on_insert",
}

JAVA_LISTENER = """package hwbench;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.events.*;

/** {doc} */
public class {name} extends MetaStoreEventListener {{
  public {name}(Configuration config) {{ super(config); }}

  private void handle(ListenerEvent event) {{ {body} }}
{overrides}
}}
"""
JAVA_LISTENERS = {
    "NoopListener": ("Does nothing with each event.", ""),
    "WaitingListener": (
        "Waits 10 ms per event, as a call to a remote service would.",
        "try { Thread.sleep(10); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }",
    ),
}

PYTHON_LISTENERS = f'''"""The benchmark's listeners, named as the Java ones on Drone Fly's classpath."""
import asyncio
import time

import hivewire as hw

CALLBACKS = {tuple(CALLBACKS.values())!r}


def listener(name, handle):
    """A MetaStoreEventListener overriding every callback with ``handle``."""
    return type(name, (hw.MetaStoreEventListener,), {{callback: handle for callback in CALLBACKS}})


def nothing(self, event):
    pass


async def awaits(self, event):
    await asyncio.sleep(0.01)


def sleeps(self, event):
    time.sleep(0.01)


NoopListener = listener("NoopListener", nothing)
WaitingListener = listener("WaitingListener", awaits)  # async: tasks on the runtime's event loop
SleepingListener = listener("SleepingListener", sleeps)  # a plain function: threads
'''


# -- the topic ----------------------------------------------------------------------------------------


def table_events(i: int) -> list[ListenerEvent]:
    """One table's life, in the proportions of a busy warehouse: created, partitions added and altered, the
    table altered, a partition dropped, the table dropped (12 events, half of them ADD_PARTITION)."""
    db, name = "sales", f"orders_{i}"
    options = {"columns": {f"c{j}": "string" for j in range(8)}, "parameters": {"hive.version": "2.3.9"}}
    keys = {"dt": "string"}
    days = [[f"2024-01-{d:02d}"] for d in range(1, 7)]
    return [
        testing.create_table_event(db, name, partition_keys=keys, **options),
        *(testing.add_partition_event(db, name, [day], partition_keys=keys, **options) for day in days),
        testing.alter_partition_event(db, name, days[0], new_location=f"s3://b/{name}/x", partition_keys=keys),
        testing.alter_partition_event(db, name, days[1], new_location=f"s3://b/{name}/y", partition_keys=keys),
        testing.alter_table_event(db, name, add_columns={"extra": "int"}, **options),
        testing.drop_partition_event(db, name, [days[0]], partition_keys=keys),
        testing.drop_table_event(db, name, **options),
    ]


def fill(bootstrap: str, n: int) -> dict[str, int]:
    """Produce ``n`` messages to the topic, the tables' lives interleaved; return the count of each type."""
    lives = [table_events(i) for i in range(TABLES)]
    messages = [[apiary.encode(event) for event in life] for life in lives]
    types = [type(event).__name__.removesuffix("Event") for event in lives[0]]
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "log_level": 3,  # not the warnings of a broker that has just started ("coordinator load in progress")
        }
    )
    counts: dict[str, int] = {}
    for k in range(n):
        table, step = k % TABLES, (k // TABLES) % len(types)
        counts[types[step]] = counts.get(types[step], 0) + 1
        while True:
            try:
                producer.produce(
                    TOPIC, messages[table][step], partition=apiary.partition_for(f"sales.orders_{table}", PARTITIONS)
                )
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush()
    return counts


# -- the processes ------------------------------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc (every thread's children)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                with contextlib.suppress(OSError):
                    todo.extend(int(c) for c in (task / "children").read_text().split())
    return found


Committed = Callable[[], int]  # the group's committed offsets, summed over the partitions
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of every thread of these processes (a process's own line counts its exited threads)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat
    return total / TICKS


def thread_cpu(pids: list[int]) -> dict[str, float]:
    """CPU seconds of the live threads of these processes, by thread name (digits dropped: "GC Thread#")."""
    found: dict[str, float] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    name, rest = task.joinpath("stat").read_text().split("(", 1)[1].rsplit(")", 1)
                    fields = rest.split()
                    key = "".join(c for c in name if not c.isdigit()).strip()
                    found[key] = found.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
    return found


def peak_rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
    return total / 1024


@dataclass
class Result:
    rate: float  # events/s over the window
    cpu_per_10k: float  # CPU seconds per 10,000 events over the window
    rss_mib: float  # peak resident memory, all processes
    events: int  # events in the window
    startup_s: float  # from start to the first commit
    processes: int
    threads: dict[str, float]  # CPU seconds per 10,000 events in the window, by thread name


@dataclass
class Contender:
    label: str
    side: str  # "dronefly" or "hivewire"
    listener: str  # the class apiary.listener.list names
    hivewire_args: list[str] = field(default_factory=list)


def properties(path: Path, bootstrap: str, listener: str) -> Path:
    """The one file both read: Drone Fly's keys, plus the commit interval in each one's terms."""
    return write_properties(
        path,
        {
            "apiary.bootstrap.servers": bootstrap,
            "apiary.kafka.topic.name": TOPIC,
            "apiary.listener.list": f"hwbench.{listener}",
            "apiary.messaging.consumer.auto.offset.reset": "earliest",
            "apiary.messaging.consumer.auto.commit.interval.ms": str(COMMIT_INTERVAL_MS),
            "hivewire.commit.interval.ms": str(COMMIT_INTERVAL_MS),
        },
    )


class Bench:
    """Runs one contender at a time over the topic and measures it from outside (:meth:`run`)."""

    def __init__(self, tmp: Path, bootstrap: str, total: int, warmup: int, window: float) -> None:
        self.tmp, self.bootstrap, self.total, self.warmup, self.window = tmp, bootstrap, total, warmup, window
        self.python = tmp / "python"
        self.python.mkdir()
        (self.python / "hwbench.py").write_text(PYTHON_LISTENERS)
        self.classes = self._compile()
        self.runs = 0

    def _compile(self) -> Path:
        sources = self.tmp / "java" / "hwbench"
        sources.mkdir(parents=True)
        overrides = "".join(
            f"\n  @Override public void on{cb}({cb}Event e) throws MetaException {{ handle(e); }}" for cb in CALLBACKS
        )
        for name, (doc, body) in JAVA_LISTENERS.items():
            source = JAVA_LISTENER.format(name=name, doc=doc, body=body, overrides=overrides)
            (sources / f"{name}.java").write_text(source)
        return compile_recorder(RELEASE, self.tmp / "classes", sorted(sources.glob("*.java")))

    def run(self, contender: Contender) -> Result:
        """Start the contender with a fresh consumer group, measure it, stop it; exit if it logged an error."""
        self.runs += 1
        instance = f"bench-{self.runs}-{contender.side}"
        workdir = self.tmp / instance
        workdir.mkdir()
        config = properties(workdir / "bench.properties", self.bootstrap, contender.listener)
        with self.committed(f"apiary-kafka-metastore-receiver-{instance}") as committed:
            if contender.side == "dronefly":
                return self._dronefly(config, workdir, instance, committed)
            return self._hivewire(contender, config, workdir, instance, committed)

    def _dronefly(self, config: Path, workdir: Path, instance: str, committed: Committed) -> Result:
        began = time.monotonic()
        # The harness names its recorder as the listener unless told: tell it the file's own listener.
        overrides = {"instance.name": instance, "apiary.listener.list": read_properties(config)["apiary.listener.list"]}
        peer = DroneFly(RELEASE, config, workdir=workdir, classes=self.classes, overrides=overrides, record=False)
        peer.launch()
        try:
            if peer.pid is None:
                sys.exit("Drone Fly did not start")
            result = self._measure(peer.pid, lambda: peer.running, committed, began, peer.log_path)
        finally:
            peer.stop()
        if peer.errors():
            sys.exit("Drone Fly logged errors:\n" + "\n".join(peer.errors()[:40]))
        return result

    def _hivewire(
        self, contender: Contender, config: Path, workdir: Path, instance: str, committed: Committed
    ) -> Result:
        port = free_port()
        cmd = [sys.executable, "-m", "hivewire", "--log-level", "WARNING", "run", "--config", str(config)]
        cmd += ["--instance-name", instance, "--endpoint-port", str(port), *contender.hivewire_args]
        log = workdir / "hivewire-run.log"
        began = time.monotonic()
        with log.open("wb") as out:
            proc = subprocess.Popen(cmd, cwd=self.python, stdout=out, stderr=subprocess.STDOUT)
        try:
            result = self._measure(proc.pid, lambda: proc.poll() is None, committed, began, log)
            handled = self._handled(port, contender)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()  # a run that does not stop within two minutes is not left behind
                proc.wait()
                print(f"hivewire run did not stop within 120 s of SIGTERM: killed; its log: {log}", file=sys.stderr)
        if handled < result.events:
            sys.exit(f"hivewire run committed {result.events} events but its listeners handled {handled}")
        errors = [line for line in log.read_text(errors="replace").splitlines() if "ERROR" in line]
        if errors:
            sys.exit("hivewire run logged errors:\n" + "\n".join(errors[:40]))
        return result

    @staticmethod
    def _handled(port: int, contender: Contender) -> int:
        """Events the listeners handled, from each worker's /metrics (a check that they were called)."""
        workers = (
            int(contender.hivewire_args[contender.hivewire_args.index("--workers") + 1])
            if ("--workers" in contender.hivewire_args)
            else 1
        )
        total = 0.0
        for worker in range(workers):
            with urllib.request.urlopen(f"http://127.0.0.1:{port + worker}/metrics", timeout=10) as answer:
                for line in answer.read().decode().splitlines():
                    if line.startswith("hivewire_listener_events_handled_total{"):
                        total += float(line.rsplit(" ", 1)[1])
        return int(total)

    def _measure(self, pid: int, alive: Callable[[], bool], committed: Committed, began: float, log: Path) -> Result:
        start: tuple[float, int, float, dict[str, float]] | None = None  # time, committed, CPU at the warm-up's end
        first: float | None = None
        deadline = began + 900
        while time.monotonic() < deadline:
            time.sleep(POLL_S)
            if not alive():
                sys.exit(f"{log.parent.name} exited:\n{tail(log)}")
            done = committed()
            now = time.monotonic()
            pids = process_tree(pid)
            cpu = cpu_seconds(pids)
            if done > 0 and first is None:
                first = now
            if start is None:
                if first is not None and (done >= self.warmup or now - first >= WARMUP_S):
                    start = (now, done, cpu, thread_cpu(pids))
                continue
            if done >= self.total or now - start[0] >= self.window:
                if done == start[1]:
                    sys.exit(f"{log.parent.name} committed nothing in {now - start[0]:.0f} s:\n{tail(log)}")
                seconds, events = now - start[0], done - start[1]
                threads = {
                    name: (spent - start[3].get(name, 0.0)) / events * 10_000
                    for name, spent in thread_cpu(pids).items()
                }
                return Result(
                    rate=events / seconds,
                    cpu_per_10k=(cpu - start[2]) / events * 10_000,
                    rss_mib=peak_rss_mib(pids),
                    events=events,
                    startup_s=(first or now) - began,
                    processes=len(pids),
                    threads=threads,
                )
        sys.exit(f"{log.parent.name} did not finish in 900 s:\n{tail(log)}")

    @contextlib.contextmanager
    def committed(self, group: str) -> Iterator[Committed]:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group, "enable.auto.commit": False})
        partitions = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        last = [0]

        def read() -> int:
            with contextlib.suppress(KafkaException):  # the group's coordinator moving or loading: ask again
                last[0] = sum(max(0, tp.offset) for tp in consumer.committed(partitions, timeout=10))
            return last[0]

        try:
            yield read
        finally:
            consumer.close()


def tail(log: Path, lines: int = 40) -> str:
    """The log's last lines, without Java stack frames (their "Caused by" lines stay)."""
    text = log.read_text(errors="replace").splitlines()
    return "\n".join([line for line in text if not line.startswith(("\tat ", "\t..."))][-lines:])


NOOP = [
    Contender("Drone Fly 1.0.9, no-op Java listener", "dronefly", "NoopListener"),
    Contender("hivewire run, no-op Python listener", "hivewire", "NoopListener"),
]
SLEEPING = ["--set", "apiary.listener.list=hwbench.SleepingListener"]  # the sync Python listener, same file
WAITING = [
    Contender("Drone Fly 1.0.9, Thread.sleep(10)", "dronefly", "WaitingListener"),
    Contender(
        "hivewire, async, concurrency 200",
        "hivewire",
        "WaitingListener",
        ["--set", "hivewire.listener.concurrency=200"],
    ),
    Contender(
        "hivewire, sync (threads), concurrency 200",
        "hivewire",
        "WaitingListener",
        [*SLEEPING, "--set", "hivewire.listener.concurrency=200"],
    ),
    Contender(
        "hivewire, sync, --workers 4 x concurrency 50",
        "hivewire",
        "WaitingListener",
        [*SLEEPING, "--set", "hivewire.listener.concurrency=50", "--workers", "4"],
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=30_000, help="events in the topic (at least 10,000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2_000, help="events of each run's warm-up (or 10 s)")
    parser.add_argument("--window", type=float, default=20.0, help="seconds measured at most, after the warm-up")
    add_output_options(parser)
    args = parser.parse_args()
    if args.events < 10_000:
        parser.error("--events: at least 10,000")
    if peers_repository() is None:
        sys.exit("bench_dronefly.py needs the peers' Maven repository: set HIVEWIRE_PEERS_M2 (Makefile: PEERS_M2)")
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    began = time.monotonic()
    load = os.getloadavg()
    results: dict[str, list[Result]] = {}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hivewire-bench-")))
        broker = stack.enter_context(KafkaBroker(workdir=tmp / "kafka"))
        counts = fill(broker.bootstrap_servers, args.events)
        bench = Bench(tmp, broker.bootstrap_servers, args.events, args.warmup, args.window)
        mix = ", ".join(f"{name} {count:,}" for name, count in counts.items())
        print(
            f"{args.events:,} Apiary messages in one topic ({PARTITIONS} partitions, {TABLES} tables: {mix}) on "
            f"Apache Kafka {version('kafka')} (KRaft, one broker); {args.rounds} rounds, contenders alternating; "
            f"load average {load[0]:.1f} at the start"
        )
        for _ in range(args.rounds):
            for contender in [*NOOP, *WAITING]:
                result = bench.run(contender)
                results.setdefault(contender.label, []).append(result)
                print(
                    f"  {contender.label:<46} {result.rate:>9,.0f} events/s  {result.cpu_per_10k:6.2f} CPU s/10k  "
                    f"{result.rss_mib:6.0f} MiB  ({result.events:,} events measured)",
                    flush=True,
                )
    headline = report(results, out)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; took {time.monotonic() - began:.0f} s")
    if out.update_readme:
        write_section(Path(__file__).name, headline, ROOT / "README.md")


def report(results: dict[str, list[Result]], out: Output) -> str:
    """Print the medians, the ratios to Drone Fly and where the CPU went; return the README's headline."""

    def median(label: str, what: str) -> float:
        return statistics.median(getattr(r, what) for r in results[label])

    print("\nmedians of the rounds")
    print(f"  {'':<46} {'events/s':>9} {'CPU s/10k':>10} {'peak RSS':>9} {'start':>6}")
    for label in results:
        rate, cpu, rss, start = (median(label, w) for w in ("rate", "cpu_per_10k", "rss_mib", "startup_s"))
        print(f"  {label:<46} {rate:>9,.0f} {cpu:>10.2f} {rss:>6.0f} MiB {start:>5.1f}s")
        out.figure(f"{label}: events/s", rate, "events/s")
        out.figure(f"{label}: CPU s per 10,000 events", cpu, "s", "lower")
        out.figure(f"{label}: peak RSS", rss, "MiB", "lower")
    print("\nwhere the CPU went in the last round (CPU s per 10,000 events, by thread name; the live threads)")
    for label, rounds in results.items():
        busiest = sorted(rounds[-1].threads.items(), key=lambda kv: -kv[1])[:4]
        print(f"  {label:<46} " + ", ".join(f"{name} {cpu:.2f}" for name, cpu in busiest))
    df_noop, hw_noop = (c.label for c in NOOP)
    cpu_ratio = median(hw_noop, "cpu_per_10k") / median(df_noop, "cpu_per_10k")
    print(f"\nno-op: hivewire / Drone Fly events/s {median(hw_noop, 'rate') / median(df_noop, 'rate'):5.2f}")
    print(f"       hivewire / Drone Fly CPU per event {cpu_ratio:5.2f}   (goal <= 1, at most 2)")
    out.figure("no-op: hivewire / Drone Fly CPU per event", cpu_ratio, "ratio", "lower")
    memory = median(hw_noop, "rss_mib") / median(df_noop, "rss_mib")
    df_wait = WAITING[0].label
    waits = {}
    for contender in WAITING[1:]:
        waits[contender.label] = ratio = median(contender.label, "rate") / median(df_wait, "rate")
        print(f"waiting 10 ms: {contender.label} / Drone Fly events/s {ratio:6.1f}x   (goal >= 20x)")
        out.figure(f"waiting 10 ms: {contender.label} / Drone Fly", ratio, "ratio")
    return (
        "Against Drone Fly 1.0.9 (same topic, broker and properties file; "
        "[bench/README.md](bench/README.md#bench_droneflypy-drone-fly-against-hivewire-run), "
        f"{date.today().isoformat()}): a listener that waits 10 ms per event, written as an `async def` with "
        f"`concurrency=200`, handles {waits[WAITING[1].label]:.0f}x as many events a second "
        f"({median(WAITING[1].label, 'rate'):,.0f} against {median(df_wait, 'rate'):,.0f}); a no-op listener runs "
        f"{median(hw_noop, 'rate') / median(df_noop, 'rate'):.1f}x as fast, on {cpu_ratio:.2f}x Drone Fly's CPU "
        f"per event and {memory:.2f}x its memory."
    )


if __name__ == "__main__":
    main()
