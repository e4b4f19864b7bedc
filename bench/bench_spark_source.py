"""The Spark batch source's events/s with 1 and 2 executor cores, against ``read_events`` + ``to_dataframe``.

One librdkafka mock cluster, one topic of ``--events`` mixed Apiary messages on 4 partitions (the generator of
tests/unit/test_arrow.py; zstd-compressed), and a Spark standalone master and worker (2 cores) started from the
pyspark wheel. Then:

* ``spark source, N cores``: an application limited to N executor cores (``spark.cores.max``) reads the whole
  topic with ``spark.read.format("hivewire")`` and materialises every column (``write.format("noop")``);
  ``maxEventsPerSplit`` gives each core several input partitions. The application's first action (starting
  the executor and its Python workers) is not counted;
* ``read_events + to_dataframe``: one process reads the topic with ``hivewire.data.read_events`` and hands
  the table to Spark with ``hivewire.spark.to_dataframe``, materialised the same way (in the 2-core
  application, whose driver does the reading).

Each application runs ``--rounds`` timed reads; the single-process path runs between them, so that the
machine's load weighs on both. Rates are events/s, the median of the rounds.

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
from confluent_kafka import Producer  # noqa: E402
from test_arrow import mixed_messages  # noqa: E402

from hivewire.testing import mock_kafka  # noqa: E402

PARTITIONS = 4


def produce(bootstrap: str, topic: str, messages: list[bytes]) -> None:
    # zstd in large batches: the mock broker keeps only 5 MiB (stored bytes) per partition.
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "compression.type": "zstd",
            "linger.ms": 100,
            "batch.num.messages": 100_000,
            "batch.size": 4_000_000,
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


def session(master: str, cores: int) -> Any:
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
        .getOrCreate()
    )
    return hivewire.spark.register(spark)


def spark_read(spark: Any, bootstrap: str, topic: str, n: int) -> int:
    df = (
        spark.read.format("hivewire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("maxEventsPerSplit", str(max(1, n // 16)))
        .load()
    )
    df.write.format("noop").mode("overwrite").save()
    return n


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
    from hivewire.tools._local import LocalSparkCluster

    n = args.events
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    rates: dict[str, list[float]] = {"spark source, 1 core": [], "spark source, 2 cores": [], "single": []}
    with (
        mock_kafka() as bootstrap,
        tempfile.TemporaryDirectory(prefix="bench-spark-") as work,
        LocalSparkCluster(work, cores=2, pythonpath=pythonpath) as cluster,
    ):
        topic = f"bench_{uuid.uuid4().hex[:8]}"
        produce(bootstrap, topic, mixed_messages(n, seed=2024))
        for cores in (1, 2):
            spark = session(cluster.url, cores)
            try:
                spark_read(spark, bootstrap, topic, n)  # the first action starts the executor: not counted
                for _ in range(args.rounds):
                    rates[f"spark source, {cores} core{'s' if cores > 1 else ''}"].append(
                        timed(spark_read, spark, bootstrap, topic, n)
                    )
                    if cores == 2:
                        rates["single"].append(timed(single_process, spark, bootstrap, topic, n))
            finally:
                spark.stop()
    medians = {name: statistics.median(values) for name, values in rates.items()}
    one, two, single = medians["spark source, 1 core"], medians["spark source, 2 cores"], medians["single"]
    print(f"\n{n:,} events on {PARTITIONS} partitions, median of {args.rounds} rounds, events/s")
    print(f"  {'spark source, 1 executor core':<44} {one:>10,.0f}")
    print(f"  {'spark source, 2 executor cores':<44} {two:>10,.0f}")
    print(f"  {'read_events + to_dataframe (one process)':<44} {single:>10,.0f}")
    print(f"  2 cores / 1 core: {two / one:.2f}   (target >= 1.6)")
    print(f"  2 cores / one process: {two / single:.2f}   (target > 1)")
    print(f"  rounds: { {k: [round(v) for v in vs] for k, vs in rates.items()} }")
    out.figure("spark source, 1 core", one, "events/s")
    out.figure("spark source, 2 cores", two, "events/s")
    out.figure("read_events + to_dataframe", single, "events/s")
    out.figure("2 cores / 1 core", two / one, "ratio")
    out.figure("2 cores / read_events + to_dataframe", two / single, "ratio")


if __name__ == "__main__":
    main()
