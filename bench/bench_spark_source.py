"""``format("hivewire")`` per executor core, against a plain Python source + Spark's own ``from_json``.

One real Kafka broker (Apache Kafka 4.x, KRaft, from Maven Central: ``hivewire.tools._kafka_broker``), one
topic of ``--events`` mixed Apiary messages on 4 partitions (the generator of tests/unit/test_arrow.py;
zstd-compressed), and a Spark standalone master and worker started from the pyspark wheel; the application is
limited to one executor core (``spark.cores.max=1``). Every read is materialised (``write.format("noop")``)
over the same 16 input partitions:

* ``hivewire, full row``: ``spark.read.format("hivewire").load()``: each task reads its Kafka range with
  confluent-kafka and decodes it with the columnar decoder (native when ``hivewire.arrow.ACCELERATED``) into
  Arrow record batches of every column;
* ``hivewire, 3 columns``: the same with ``.schema("event_type string, db_name string, table_name string")``:
  only those columns are decoded;
* ``anchor, full row``: a plain Python data source that yields only the value bytes (``_spark_kafka_anchor.py``,
  no hivewire code), then ``from_json`` with the schema Spark infers from the values, every top-level field;
* ``anchor, 3 columns``: the same, selecting ``eventType``, ``databaseName``, ``tableName`` (Spark prunes the
  ``from_json`` schema to them).

Warm-up is identical: each contender's first read (starting the executor's Python workers) is a full count,
not timed. Then ``--rounds`` rounds, the order of the contenders alternating. For each read the wall seconds
and the CPU seconds of every process of the run (this driver, the Spark master, worker, executor JVM and its
Python workers, the broker: all descendants of this process) are recorded; the load average is printed.

Usage: python bench/bench_spark_source.py [--events 100000] [--rounds 3] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options  # noqa: E402
from _spark_kafka_anchor import anchor_frame, inferred_schema  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from test_arrow import mixed_messages  # noqa: E402

PARTITIONS = 4
SPLITS = 16


def produce(bootstrap: str, topic: str, messages: list[bytes]) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "compression.type": "zstd",
            "linger.ms": 100,
            "batch.num.messages": 100_000,
            "batch.size": 900_000,  # the broker takes batches of up to 1 MiB
            "message.max.bytes": 10_000_000,
        }
    )
    for i, data in enumerate(messages):
        while True:
            try:
                producer.produce(topic, data, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(120):
        raise SystemExit("the mock broker did not take every message")


def session(master: str, jars: list[str]) -> Any:
    from _spark_kafka_anchor import ValueSource
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.Builder()
        .master(master)
        .appName("bench-spark-source")
        .config("spark.cores.max", "1")
        .config("spark.executor.cores", "1")
        .config("spark.executor.memory", "2g")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.executorEnv.PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        .config("spark.python.authenticate.socketTimeout", "300s")  # slow Python worker starts under load
        .getOrCreate()
    )
    spark.dataSource.register(ValueSource)
    import hivewire.spark

    return hivewire.spark.register(spark)


THREE = "event_type string, db_name string, table_name string"


def hivewire_frame(spark: Any, bootstrap: str, topic: str, n: int, schema: str | None = None) -> Any:
    reader = spark.read.format("hivewire")
    if schema is not None:
        reader = reader.schema(schema)
    return (
        reader.option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("maxEventsPerSplit", str(max(1, -(-n // SPLITS))))
        .load()
    )


def _ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of one process, in clock ticks (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return sum(int(f) for f in fields[11:15])


def _descendants(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += parents.get(pid, [])
    return out


def tree_cpu() -> float:
    """CPU seconds of this process and every descendant alive now (processes that ended before the call and
    were waited for count in their parent's ``cutime``)."""
    return sum(_ticks(pid) for pid in _descendants(os.getpid())) / os.sysconf("SC_CLK_TCK")


def check(name: str, df: Any, n: int, column: str) -> None:
    """The warm-up: every message read and decoded (the generator makes no malformed message)."""
    from pyspark.sql import functions as F

    rows, decoded = df.agg(F.count("*"), F.count(column)).first()
    if (rows, decoded) != (n, n):
        raise SystemExit(f"{name}: {rows:,} rows, {decoded:,} decoded; expected {n:,} of each")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    add_output_options(parser)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    here = str(Path(__file__).parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [here, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    from hivewire.arrow import ACCELERATED
    from hivewire.tools._kafka_broker import KafkaBroker
    from hivewire.tools._local import LocalSparkCluster

    n = args.events
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    print(f"load average before: {os.getloadavg()[0]:.2f}; native decoder (hivewire.arrow.ACCELERATED): {ACCELERATED}")
    with (
        tempfile.TemporaryDirectory(prefix="bench-spark-") as work,
        KafkaBroker(workdir=f"{work}/kafka") as broker,
        LocalSparkCluster(work, cores=1, pythonpath=pythonpath) as cluster,
    ):
        bootstrap = broker.bootstrap_servers
        topic = f"bench_{uuid.uuid4().hex[:8]}"
        broker.create_topic(topic, PARTITIONS)
        produce(bootstrap, topic, mixed_messages(n, seed=2024))
        spark = session(cluster.url, [])
        try:
            schema = inferred_schema(spark, bootstrap, topic, SPLITS)
            frames = {
                "hivewire, full row": lambda: hivewire_frame(spark, bootstrap, topic, n),
                "anchor, full row": lambda: anchor_frame(spark, bootstrap, topic, SPLITS, schema),
                "hivewire, 3 columns": lambda: hivewire_frame(spark, bootstrap, topic, n, THREE),
                "anchor, 3 columns": lambda: anchor_frame(spark, bootstrap, topic, SPLITS, schema).select(
                    "eventType", "databaseName", "tableName"
                ),
            }
            firsts = {"hivewire, full row": "event_type", "anchor, full row": "eventType"}
            firsts |= {"hivewire, 3 columns": "event_type", "anchor, 3 columns": "eventType"}
            for name, frame in frames.items():  # identical warm-up: a full count of each
                check(name, frame(), n, firsts[name])
            for r in range(args.rounds):
                order = list(frames.items())
                for name, frame in order if r % 2 == 0 else reversed(order):
                    start, start_cpu = time.perf_counter(), tree_cpu()
                    frame().write.format("noop").mode("overwrite").save()
                    wall.setdefault(name, []).append(time.perf_counter() - start)
                    cpu.setdefault(name, []).append(tree_cpu() - start_cpu)
        finally:
            spark.stop()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(
        f"\n{n:,} events on {PARTITIONS} partitions ({SPLITS} input partitions), 1 executor core, "
        f"median of {args.rounds} alternating rounds"
    )
    rate = {name: n / statistics.median(values) for name, values in wall.items()}
    cpu_rate = {name: n / statistics.median(values) for name, values in cpu.items()}
    for name in wall:
        print(
            f"  {name:<24} {rate[name]:>10,.0f} events/s   "
            f"{cpu_rate[name]:>10,.0f} events per CPU second (all processes)"
        )
        out.figure(f"{name}, events/s", rate[name], "events/s")
        out.figure(f"{name}, events per CPU second", cpu_rate[name], "events/s")
    for label, value, target in (
        (
            "hivewire / anchor, full row, 1 core",
            rate["hivewire, full row"] / rate["anchor, full row"],
            "   (target >= 1.0)",
        ),
        (
            "hivewire / anchor, 3 columns, 1 core",
            rate["hivewire, 3 columns"] / rate["anchor, 3 columns"],
            "   (target >= 2)",
        ),
        ("hivewire / anchor, full row, CPU", cpu_rate["hivewire, full row"] / cpu_rate["anchor, full row"], ""),
        ("hivewire / anchor, 3 columns, CPU", cpu_rate["hivewire, 3 columns"] / cpu_rate["anchor, 3 columns"], ""),
    ):
        print(f"  {label}: {value:.2f}{target}")
        out.figure(label, value, "ratio")
    print(f"  wall seconds: { {k: [round(v, 1) for v in vs] for k, vs in wall.items()} }")
    print(f"  CPU seconds: { {k: [round(v, 1) for v in vs] for k, vs in cpu.items()} }")


if __name__ == "__main__":
    main()
