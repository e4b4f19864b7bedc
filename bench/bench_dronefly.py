"""Drone Fly 1.0.9 against ``hivewire run``: the same topic, the same broker, the same properties file.

One run: an Apache Kafka broker (KRaft, the jars of ``make jvm``) is started, and one topic is filled with
realistic Apiary messages of the six types Drone Fly 1.0.9 delivers on Java 25 (CREATE_TABLE, ADD_PARTITION,
ALTER_PARTITION, ALTER_TABLE, DROP_PARTITION, DROP_TABLE over 200 tables, as ``hivewire.apiary.encode`` writes
them, which the Apiary golden files check; INSERT is left out because Drone Fly 1.0.9 cannot build Hive's
InsertEvent on Java 24+). Then, alternating over the rounds, each contender runs as its own process with a
fresh consumer group, started from the same ``.properties`` file the way a user starts it:

* Drone Fly 1.0.9 on Java 25 (``java -cp ... DroneFly --spring.config.location=file:bench.properties``), the
  JVM's defaults as in Drone Fly's image, with a Java ``MetaStoreEventListener`` of this benchmark's own;
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
(VmHWM) at the end.

Usage: python bench/bench_dronefly.py [--events 50000] [--rounds 3] [--warmup 2000] [--window 30]
       [--json] [--update-readme]
(needs the peers' Maven repository: HIVEWIRE_PEERS_M2 or ../shared/peers/m2, and Java 21+ in
HIVEWIRE_JAVA25 or /usr/lib/jvm/temurin-25-jdk-amd64)
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from hivewire import apiary, testing
from hivewire.events import ListenerEvent
from hivewire.tools._jvm import peers_repository, resolve, version
from hivewire.tools._kafka_broker import KafkaBroker

TOPIC = "apiary"
PARTITIONS = 4
TABLES = 200
COMMIT_INTERVAL_MS = 200
POLL_S = 0.1
WARMUP_S = 10.0
JAVA = os.environ.get("HIVEWIRE_JAVA25", "/usr/lib/jvm/temurin-25-jdk-amd64")
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

PYTHON_LISTENERS = f'''"""The benchmark's listeners, named as the Java ones on Drone Fly's classpath (hwbench.NoopListener, ...)."""
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

LOG4J = """log4j.rootLogger=WARN, out
log4j.logger.com.expediagroup.dataplatform.dronefly=INFO
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d %p %c{1}: %m%n
"""


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
    lives = [[apiary.encode(event) for event in table_events(i)] for i in range(TABLES)]
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
        table, step = k % TABLES, (k // TABLES) % len(lives[0])
        message = lives[table][step]
        counts[step_type(step)] = counts.get(step_type(step), 0) + 1
        while True:
            try:
                producer.produce(TOPIC, message, partition=apiary.partition_for(f"sales.orders_{table}", PARTITIONS))
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush()
    return counts


def step_type(step: int) -> str:
    return [type(e).__name__ for e in table_events(0)][step].removesuffix("Event")


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


@dataclass
class Contender:
    label: str
    side: str  # "dronefly" or "hivewire"
    listener: str  # the class apiary.listener.list names
    hivewire_args: list[str] = field(default_factory=list)


def properties(path: Path, bootstrap: str, listener: str) -> Path:
    """The one file both read: Drone Fly's keys, plus the commit interval in each one's terms."""
    path.write_text(
        f"apiary.bootstrap.servers={bootstrap}\n"
        f"apiary.kafka.topic.name={TOPIC}\n"
        f"apiary.listener.list=hwbench.{listener}\n"
        "apiary.messaging.consumer.auto.offset.reset=earliest\n"
        f"apiary.messaging.consumer.auto.commit.interval.ms={COMMIT_INTERVAL_MS}\n"
        f"hivewire.commit.interval.ms={COMMIT_INTERVAL_MS}\n"
    )
    return path


class Bench:
    def __init__(self, tmp: Path, bootstrap: str, total: int, warmup: int, window: float) -> None:
        self.tmp, self.bootstrap, self.total, self.warmup, self.window = tmp, bootstrap, total, warmup, window
        self.classes = tmp / "classes"
        self.python = tmp / "python"
        self.python.mkdir()
        (self.python / "hwbench.py").write_text(PYTHON_LISTENERS)
        (tmp / "log4j").mkdir()
        (tmp / "log4j" / "log4j.properties").write_text(LOG4J)
        self.classpath = [str(jar) for jar in resolve("dronefly")]
        self._compile()
        self.runs = 0

    def _compile(self) -> None:
        sources = self.tmp / "java" / "hwbench"
        sources.mkdir(parents=True)
        for name, (doc, body) in JAVA_LISTENERS.items():
            overrides = "".join(
                f"\n  @Override public void on{cb}({cb}Event e) throws MetaException {{ handle(e); }}"
                for cb in CALLBACKS
            )
            source = JAVA_LISTENER.format(name=name, doc=doc, body=body, overrides=overrides)
            (sources / f"{name}.java").write_text(source)
        cmd = [f"{JAVA}/bin/javac", "-nowarn", "-d", str(self.classes), "-cp", os.pathsep.join(self.classpath)]
        done = subprocess.run([*cmd, *map(str, sources.glob("*.java"))], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            sys.exit(f"javac failed:\n{done.stdout}{done.stderr}")

    def command(self, contender: Contender, config: Path, instance: str, port: int) -> tuple[list[str], Path]:
        if contender.side == "dronefly":
            classpath = os.pathsep.join([str(self.tmp / "log4j"), str(self.classes), *self.classpath])
            main = "com.expediagroup.dataplatform.dronefly.app.DroneFly"
            args = [f"--spring.config.location=file:{config}", f"--instance.name={instance}", f"--endpoint.port={port}"]
            return [f"{JAVA}/bin/java", "-cp", classpath, main, *args], self.tmp
        cmd = [sys.executable, "-m", "hivewire", "--log-level", "WARNING", "run", "--config", str(config)]
        cmd += ["--instance-name", instance, "--endpoint-port", str(port), *contender.hivewire_args]
        return cmd, self.python

    def run(self, contender: Contender) -> Result:
        self.runs += 1
        instance = f"bench-{self.runs}-{contender.side}"
        config = properties(self.tmp / f"{contender.listener}.properties", self.bootstrap, contender.listener)
        log = self.tmp / f"{instance}.log"
        cmd, cwd = self.command(contender, config, instance, 18000 + self.runs)
        with open(log, "wb") as out, self.committed(f"apiary-kafka-metastore-receiver-{instance}") as committed:
            began = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                return self._measure(proc, committed, began, log)
            finally:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(60)

    def _measure(self, proc: subprocess.Popen[bytes], committed: Committed, began: float, log: Path) -> Result:
        start: tuple[float, int, float] | None = None  # time, committed, CPU at the end of the warm-up
        first: float | None = None
        deadline = began + 900
        while time.monotonic() < deadline:
            time.sleep(POLL_S)
            if proc.poll() is not None:
                sys.exit(f"{proc.args[:6]} exited with {proc.returncode}:\n{tail(log)}")
            done = committed()
            now = time.monotonic()
            pids = process_tree(proc.pid)
            cpu = cpu_seconds(pids)
            if done > 0 and first is None:
                first = now
            if start is None:
                if first is not None and (done >= self.warmup or now - first >= WARMUP_S):
                    start = (now, done, cpu)
                continue
            if done >= self.total or now - start[0] >= self.window:
                if done == start[1]:
                    sys.exit(f"{proc.args[:6]} committed nothing in {now - start[0]:.0f} s:\n{tail(log)}")
                seconds, events = now - start[0], done - start[1]
                return Result(
                    rate=events / seconds,
                    cpu_per_10k=(cpu - start[2]) / events * 10_000,
                    rss_mib=peak_rss_mib(pids),
                    events=events,
                    startup_s=(first or now) - began,
                    processes=len(pids),
                )
        sys.exit(f"{proc.args[:6]} did not finish in 900 s:\n{tail(log)}")

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
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


NOOP = [
    Contender("Drone Fly 1.0.9, no-op Java listener", "dronefly", "NoopListener"),
    Contender("hivewire run, no-op Python listener", "hivewire", "NoopListener"),
]
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
        ["--set", "apiary.listener.list=hwbench.SleepingListener", "--set", "hivewire.listener.concurrency=200"],
    ),
    Contender(
        "hivewire, sync, --workers 4 x concurrency 50",
        "hivewire",
        "WaitingListener",
        ["--set", "apiary.listener.list=hwbench.SleepingListener", "--set", "hivewire.listener.concurrency=50"]
        + ["--workers", "4"],
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=50_000, help="events in the topic (at least 10,000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2_000, help="events of each run's warm-up (or 10 s)")
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured at most, after the warm-up")
    add_output_options(parser)
    args = parser.parse_args()
    if peers_repository() is None:
        sys.exit("bench_dronefly.py needs the peers' Maven repository: set HIVEWIRE_PEERS_M2 (Makefile: PEERS_M2)")
    if not Path(JAVA, "bin", "javac").exists():
        sys.exit(f"bench_dronefly.py runs Drone Fly 1.0.9 on Java 21+: no JDK at {JAVA} (set HIVEWIRE_JAVA25)")
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
    report(results, out)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; took {time.monotonic() - began:.0f} s")


def report(results: dict[str, list[Result]], out: Output) -> None:
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
    df_noop, hw_noop = (c.label for c in NOOP)
    cpu_ratio = median(hw_noop, "cpu_per_10k") / median(df_noop, "cpu_per_10k")
    print(f"\nno-op: hivewire / Drone Fly events/s {median(hw_noop, 'rate') / median(df_noop, 'rate'):5.2f}")
    print(f"       hivewire / Drone Fly CPU per event {cpu_ratio:5.2f}   (goal <= 1, at most 2)")
    out.figure("no-op: hivewire / Drone Fly CPU per event", cpu_ratio, "ratio", "lower")
    df_wait = WAITING[0].label
    for contender in WAITING[1:]:
        ratio = median(contender.label, "rate") / median(df_wait, "rate")
        print(f"waiting 10 ms: {contender.label} / Drone Fly events/s {ratio:6.1f}x   (goal >= 20x)")
        out.figure(f"waiting 10 ms: {contender.label} / Drone Fly", ratio, "ratio")


if __name__ == "__main__":
    main()
