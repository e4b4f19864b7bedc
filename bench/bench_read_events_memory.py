"""Peak resident memory of ``read_events(...).to_arrow()`` against the size of the table it returns.

One real Kafka broker (Apache Kafka 4.x, KRaft: ``hivewire.tools._kafka_broker``; librdkafka's mock cluster
keeps only the last few MiB of each partition), one topic of ``--events`` mixed Apiary messages on 16
partitions (the generator of tests/unit/test_arrow.py; zstd-compressed). Each reader runs in a fresh Python
process of its own, so that its peak resident set (``ru_maxrss``) is its own and not the broker's:

* ``read_events(...).to_arrow()``: the messages held raw, decoded by the columnar decoder straight into the
  table (what a notebook does);
* ``decoded first``: the same list used as a list first (``len(events)``: every message becomes an event),
  then ``to_arrow()``, which is what every ``read_events`` did before the columnar decoder.

Printed: the table's size (``Table.nbytes``), each reader's peak RSS, its RSS after importing (the
interpreter, pyarrow, confluent-kafka), the ratios peak / table, and the peak counted apart from the raw
messages: (peak - after imports - the ``raw`` column) / (the table without ``raw``), and the same with both
copies of the messages' bytes taken apart, the list's that ``read_events`` holds and the table's ``raw``
column (target: at most 2.5 for the first reader).

Usage: python bench/bench_read_events_memory.py [--events 1000000] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options  # noqa: E402

PARTITIONS = 16


def child(bootstrap: str, topic: str, mode: str) -> None:
    """Read the topic in this fresh process and print one JSON line of sizes in bytes."""
    import gc

    import pyarrow  # noqa: F401  (counted in the baseline, as any notebook has it loaded)

    from hivewire.data import read_events

    gc.collect()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    events = read_events(bootstrap_servers=bootstrap, topic=topic, progress=False, timeout=120)
    if mode == "decoded":
        len(events)  # used as a list: every message is decoded into an event
    table = events.to_arrow(include_failures=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    raw = table.column("raw").nbytes
    sizes = {"rows": table.num_rows, "table": table.nbytes, "raw": raw, "baseline": baseline, "peak": peak}
    print(json.dumps({**sizes, "s": seconds}))


def produce(bootstrap: str, topic: str, n: int) -> int:
    from confluent_kafka import Producer
    from test_arrow import mixed_messages

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": "zstd",
            "linger.ms": 200,
            "batch.num.messages": 100_000,
            "batch.size": 900_000,  # the broker takes batches of up to 1 MiB
            "message.max.bytes": 10_000_000,
            "queue.buffering.max.kbytes": 1_000_000,
        }
    )
    total = 0
    for chunk in range(0, n, 100_000):
        for i, data in enumerate(mixed_messages(min(100_000, n - chunk), seed=chunk)):
            total += len(data)
            while True:
                try:
                    producer.produce(topic, data, partition=(chunk + i) % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.1)
    if producer.flush(300):
        raise SystemExit("the broker did not take every message")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=3, metavar=("BOOTSTRAP", "TOPIC", "MODE"), help=argparse.SUPPRESS)
    add_output_options(parser)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    import tempfile

    from hivewire.tools._kafka_broker import KafkaBroker

    n = args.events
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as work, KafkaBroker(workdir=work) as broker:
        bootstrap = broker.bootstrap_servers
        topic = f"bench_{uuid.uuid4().hex[:8]}"
        broker.create_topic(topic, PARTITIONS)
        size = produce(bootstrap, topic, n)
        print(f"{n:,} messages, {size / n:,.0f} bytes each on average, {PARTITIONS} partitions")
        results = {}
        for mode in ("raw", "decoded"):
            done = subprocess.run(
                [sys.executable, __file__, "--child", bootstrap, topic, mode],
                check=True,
                capture_output=True,
                text=True,
                env={**os.environ},
            )
            results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
            assert results[mode]["rows"] == n, results[mode]
    gb = 1e9
    table = results["raw"]["table"]
    print(f"  Arrow table: {table / gb:.2f} GB")
    for mode, label in (("raw", "read_events(...).to_arrow()"), ("decoded", "decoded first, then to_arrow()")):
        r = results[mode]
        ratio = r["peak"] / r["table"]
        print(
            f"  {label:<34} peak RSS {r['peak'] / gb:5.2f} GB (after imports {r['baseline'] / gb:.2f} GB), "
            f"{r['s']:6.1f} s; peak / table {ratio:.2f}"
        )
        out.figure(f"{label}: peak RSS / table size", ratio, "ratio", "lower")
        # the raw messages counted apart: what the decoding holds beyond them, against the decoded columns
        apart = (r["peak"] - r["baseline"] - r["raw"]) / (r["table"] - r["raw"])
        print(f"  {'':<34} (peak - after imports - raw column) / table without raw {apart:.2f}")
        out.figure(f"{label}: peak beyond the raw messages / table without raw", apart, "ratio", "lower")
        # read_events holds the messages' bytes too (its raw list), beside the table's raw column: both apart
        both = (r["peak"] - r["baseline"] - 2 * r["raw"]) / (r["table"] - r["raw"])
        print(
            f"  {'':<34} (peak - after imports - raw bytes, the list's and the column's) / table without raw "
            f"{both:.2f}" + ("   (target <= 2.5)" if mode == "raw" else "")
        )
        out.figure(f"{label}: peak beyond both copies of the raw messages / table without raw", both, "ratio", "lower")
        out.figure(f"{label}: events/s", n / r["s"], "events/s")


if __name__ == "__main__":
    main()
