"""The Spark source's events/s with 1 and 2 executor cores, against Spark's own Kafka source + ``from_json``.

One real Kafka broker (Apache Kafka 4.x, KRaft, from Maven Central: ``hivewire.tools._kafka_broker``), one
topic of ``--events`` mixed Apiary messages on 4 partitions (the generator of tests/unit/test_arrow.py;
zstd-compressed), and a Spark standalone master and worker (2 cores) started from the pyspark wheel. Each
application is limited to N executor cores (``spark.cores.max``) and materialises every column
(``write.format("noop")``), reading the whole topic in as many input partitions (16) each way:

* ``hivewire source``: ``spark.read.format("hivewire")``: each executor core reads its Kafka ranges with
  confluent-kafka and decodes them with the columnar decoder into Arrow record batches;
* ``hivewire.spark.read``: the same ranges read by the ``hivewire_raw`` source (records only, as Arrow
  batches: no decoding in Python), decoded in the JVM by ``hivewire.spark.from_kafka`` (``from_json`` and one
  SQL expression per column: the anchor's projection);
* ``kafka + from_json``: Spark's own Kafka source (spark-sql-kafka-0-10 for the installed Spark, from Maven
  Central through ``hivewire.tools._jvm``) and ``from_json`` with a hand-made Apiary schema, projected in
  Spark SQL onto the same columns (``_spark_kafka_anchor.py``): all per-event work in the JVM;
* ``read_events + to_dataframe``: one process reads the topic with ``hivewire.data.read_events`` and hands
  the table to Spark with ``hivewire.spark.to_dataframe`` (in the 2-core application, whose driver reads).

The applications' first actions (starting the executor and its Python workers) are not counted: they count
each contender's rows and decoded events, and the run stops unless every one has all ``--events``. Each runs
``--rounds`` timed reads of every contender, alternating. Rates are events/s, the median of the rounds.

Usage: python bench/bench_spark_source.py [--events 200000] [--rounds 3] [--json] [--update-readme]
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
from _spark_kafka_anchor import kafka_frame  # noqa: E402
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


def session(master: str, cores: int, jars: list[str]) -> Any:
    from pyspark.sql import SparkSession

    import hivewire.spark

    spark = (
        SparkSession.Builder()
        .master(master)
        .appName(f"bench-spark-source-{cores}")
        .config("spark.cores.max", str(cores))
        .config("spark.executor.cores", str(cores))
        .config("spark.executor.memory", "2g")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.executorEnv.PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        .config("spark.python.authenticate.socketTimeout", "300s")  # slow Python worker starts under load
        .config("spark.jars", ",".join(jars))  # spark-sql-kafka-0-10 and its dependencies
        .getOrCreate()
    )
    return hivewire.spark.register(spark)


def spark_frame(spark: Any, bootstrap: str, topic: str, n: int) -> Any:
    return (
        spark.read.format("hivewire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("maxEventsPerSplit", str(max(1, -(-n // SPLITS))))
        .load()
    )


def spark_read(spark: Any, bootstrap: str, topic: str, n: int) -> int:
    spark_frame(spark, bootstrap, topic, n).write.format("noop").mode("overwrite").save()
    return n


def kafka_read(spark: Any, bootstrap: str, topic: str, n: int) -> int:
    kafka_frame(spark, bootstrap, topic, SPLITS).write.format("noop").mode("overwrite").save()
    return n


def fast_frame(spark: Any, bootstrap: str, topic: str, n: int) -> Any:
    import hivewire.spark

    split = str(max(1, -(-n // SPLITS)))
    return hivewire.spark.read(spark, bootstrap_servers=bootstrap, topic=topic, options={"maxEventsPerSplit": split})


def fast_read(spark: Any, bootstrap: str, topic: str, n: int) -> int:
    fast_frame(spark, bootstrap, topic, n).write.format("noop").mode("overwrite").save()
    return n


def check_rows(name: str, df: Any, n: int) -> None:
    """Every message read and decoded (the generator makes no malformed message): else the run stops."""
    from pyspark.sql import functions as F

    rows, decoded = df.agg(F.count("*"), F.count("event_type")).first()
    if (rows, decoded) != (n, n):
        raise SystemExit(f"{name}: {rows:,} rows, {decoded:,} decoded events; expected {n:,} of each")


def single_process(spark: Any, bootstrap: str, topic: str, n: int) -> int:
    import hivewire.spark
    from hivewire.data import read_events

    events = read_events(bootstrap_servers=bootstrap, topic=topic, progress=False, timeout=120)
    table = events.to_arrow(include_failures=True)
    hivewire.spark.to_dataframe(spark, table).write.format("noop").mode("overwrite").save()
    assert table.num_rows == n
    return n


def timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    units = fn(*args)
    return float(units / (time.perf_counter() - start))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    add_output_options(parser)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    from hivewire.tools._jvm import resolve
    from hivewire.tools._kafka_broker import KafkaBroker
    from hivewire.tools._local import LocalSparkCluster

    n = args.events
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    jars = [str(jar) for jar in resolve("spark-kafka")]
    names = ("hivewire source", "hivewire.spark.read", "kafka + from_json")
    rates: dict[str, list[float]] = {f"{name}, {c} core{'s' if c > 1 else ''}": [] for c in (1, 2) for name in names}
    rates["read_events + to_dataframe"] = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-spark-") as work,
        KafkaBroker(workdir=f"{work}/kafka") as broker,
        LocalSparkCluster(work, cores=2, pythonpath=pythonpath) as cluster,
    ):
        bootstrap = broker.bootstrap_servers
        topic = f"bench_{uuid.uuid4().hex[:8]}"
        broker.create_topic(topic, PARTITIONS)
        produce(bootstrap, topic, mixed_messages(n, seed=2024))
        for cores in (1, 2):
            spark = session(cluster.url, cores, jars)
            suffix = f"{cores} core{'s' if cores > 1 else ''}"
            try:
                # the first actions start the executor and check the rows: not counted
                check_rows("hivewire source", spark_frame(spark, bootstrap, topic, n), n)
                check_rows("hivewire.spark.read", fast_frame(spark, bootstrap, topic, n), n)
                check_rows("kafka + from_json", kafka_frame(spark, bootstrap, topic, SPLITS), n)
                for _ in range(args.rounds):
                    rates[f"hivewire source, {suffix}"].append(timed(spark_read, spark, bootstrap, topic, n))
                    rates[f"hivewire.spark.read, {suffix}"].append(timed(fast_read, spark, bootstrap, topic, n))
                    rates[f"kafka + from_json, {suffix}"].append(timed(kafka_read, spark, bootstrap, topic, n))
                    if cores == 2:
                        rates["read_events + to_dataframe"].append(timed(single_process, spark, bootstrap, topic, n))
            finally:
                spark.stop()
    medians = {name: statistics.median(values) for name, values in rates.items()}
    one, two = medians["hivewire source, 1 core"], medians["hivewire source, 2 cores"]
    f1, f2 = medians["hivewire.spark.read, 1 core"], medians["hivewire.spark.read, 2 cores"]
    k1, k2 = medians["kafka + from_json, 1 core"], medians["kafka + from_json, 2 cores"]
    single = medians["read_events + to_dataframe"]
    print(f"\n{n:,} events on {PARTITIONS} partitions ({SPLITS} input partitions), median of {args.rounds} rounds")
    for name, rate in medians.items():
        print(f"  {name:<44} {rate:>10,.0f}")
        out.figure(name, rate, "events/s")
    for label, value, target in (
        ("hivewire.spark.read / kafka + from_json, 1 core", f1 / k1, "   (target >= 1)"),
        ("hivewire.spark.read / kafka + from_json, 2 cores", f2 / k2, ""),
        ("hivewire.spark.read, 2 cores / 1 core", f2 / f1, "   (target >= 1.6)"),
        ("hivewire.spark.read / hivewire source, 1 core", f1 / one, ""),
        ("hivewire source / kafka + from_json, 1 core", one / k1, ""),
        ("hivewire source / kafka + from_json, 2 cores", two / k2, ""),
        ("hivewire source, 2 cores / 1 core", two / one, ""),
        ("kafka + from_json, 2 cores / 1 core", k2 / k1, ""),
        ("hivewire.spark.read, 2 cores / read_events + to_dataframe", f2 / single, "   (target > 1)"),
    ):
        print(f"  {label}: {value:.2f}{target}")
        out.figure(label, value, "ratio")
    print(f"  rounds: { {k: [round(v) for v in vs] for k, vs in rates.items()} }")


if __name__ == "__main__":
    main()
