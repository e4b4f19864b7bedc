"""The archive's sustained events/s next to a raw consume of the same topic, in one run.

One librdkafka mock cluster, one topic of ``--events`` mixed Apiary messages: by default the same 100,000
events that bench_arrow.py converts (the generator of tests/unit/test_arrow.py, same seed; zstd-compressed).
Then, interleaved over ``--rounds``, each reading the whole topic from the beginning:

* ``raw consume``: a bare confluent-kafka consumer (``assign()``, ``consume(1000)``), message values untouched:
  the floor any Kafka reader pays;
* ``consume + decode``: the same, and ``apiary.decode`` of each value (lazy, as a listener gets it);
* ``consume + decode + to_arrow``: the same, and ``arrow.to_arrow`` of every ``--flush-events`` events (every
  object converted), as the archive does before writing: what is left of the archive's time is Parquet and
  the Delta commit;
* ``consume + to_arrow, raw messages``: the same, keeping each value with its origin and converting every
  ``--flush-events`` raw messages with ``arrow.to_arrow`` (the columnar decoder), as the archive now does
  (only on versions that have ``hivewire.arrow.Message``);
* ``archive``: ``hivewire.data._archive.Archiver`` into a fresh Delta table on local disk: consume, decode, convert
  to Arrow (every object), write Parquet (zstd) and commit with the offsets, flushing every
  ``--flush-events``.

Rates run from the first message received to the last message (or, for the archive, the last commit), so
the consumer group's join delay (about 3 s on the mock) is not counted.

Usage: python bench/bench_archive.py [--events 100000] [--rounds 2] [--flush-events 10000] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options, hivewire_module  # noqa: E402
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from test_arrow import T0_MS, mixed_messages  # noqa: E402

from hivewire import (  # noqa: E402
    KafkaSource,
    apiary,
    arrow,
)
from hivewire.events import Origin  # noqa: E402
from hivewire.testing import mock_kafka  # noqa: E402

Archiver = hivewire_module("hivewire.data._archive", "hivewire.archive").Archiver

PARTITIONS = 4


def produce(bootstrap: str, topic: str, messages: list[bytes]) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "compression.type": "zstd",
            "linger.ms": 50,
            "batch.num.messages": 2000,
        }
    )
    for i, data in enumerate(messages):
        while True:
            try:
                producer.produce(topic, value=data, partition=i % PARTITIONS, timestamp=T0_MS + i * 1000)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0


def consume(
    bootstrap: str, topic: str, n: int, decode: bool, convert_every: int = 0, raw: bool = False
) -> tuple[int, float]:
    """Read ``n`` messages from the beginning; (messages, seconds from the first to the last).

    With ``convert_every``, the decoded events also go through ``to_arrow`` that many at a time."""
    # fetch.queue.backoff.ms as KafkaSource sets it (the archive's consumer), so every reader is equal.
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "fetch.queue.backoff.ms": 20,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen, first, pending = 0, None, []
    try:
        while seen < n:
            for msg in consumer.consume(1000, timeout=5):
                if msg.error() is not None:
                    continue
                if first is None:
                    first = time.perf_counter()
                if raw:
                    kind, ts = msg.timestamp()
                    origin = Origin(topic, msg.partition(), msg.offset(), ts if kind else None)
                    pending.append(arrow.Message(origin, msg.value()))
                    if len(pending) >= convert_every:
                        arrow.to_arrow(pending, on_error="record")
                        pending = []
                elif decode:
                    event = apiary.decode(msg.value())
                    if convert_every:
                        pending.append(event)
                        if len(pending) >= convert_every:
                            arrow.to_arrow(pending)
                            pending = []
                seen += 1
        if pending:
            arrow.to_arrow(pending, on_error="record")
        assert first is not None
        return seen, time.perf_counter() - first
    finally:
        consumer.close()


def archive(bootstrap: str, topic: str, n: int, flush_events: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory(prefix="bench-archive-") as tmp:
        archiver = Archiver(
            KafkaSource(bootstrap, topic),
            f"{tmp}/events",
            app_id=f"bench-{uuid.uuid4().hex[:8]}",
            flush_events=flush_events,
            flush_seconds=5,
        )
        stats = archiver.run(idle_timeout=3)
        assert stats.rows_written == n, stats
        assert stats.first_message_at is not None and stats.last_commit_at is not None
        return stats.rows_written, stats.last_commit_at - stats.first_message_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--flush-events", type=int, default=10_000)
    add_output_options(parser)
    args = parser.parse_args()
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    logging.basicConfig(level=logging.ERROR)
    n = args.events
    messages = mixed_messages(n)  # bench_arrow.py's events
    contenders: dict[str, Callable[[str, str], tuple[int, float]]] = {
        "raw consume (confluent-kafka)": lambda b, t: consume(b, t, n, decode=False),
        "consume + apiary.decode": lambda b, t: consume(b, t, n, decode=True),
        "consume + decode + to_arrow": lambda b, t: consume(b, t, n, decode=True, convert_every=args.flush_events),
        f"archive (flush every {args.flush_events:,})": lambda b, t: archive(b, t, n, args.flush_events),
    }
    if hasattr(arrow, "Message"):  # the columnar decoder
        contenders["consume + to_arrow, raw messages"] = lambda b, t: consume(
            b, t, n, decode=False, convert_every=args.flush_events, raw=True
        )
    with mock_kafka() as bootstrap:
        topic = f"bench_{uuid.uuid4().hex[:8]}"
        produce(bootstrap, topic, messages)
        print(f"{n:,} messages of {sum(map(len, messages)) / n:,.0f} bytes on average, {PARTITIONS} partitions")
        rates: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.rounds):
            for name, fn in contenders.items():
                count, seconds = fn(bootstrap, topic)
                rates[name].append(count / seconds)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    base = medians["raw consume (confluent-kafka)"]
    print(f"\nmedian of {args.rounds} rounds, events/s (first message to last message or last commit)")
    for name, rate in medians.items():
        print(f"  {name:<36} {rate:>10,.0f}/s   {rate / base:6.3f} of raw consume")
        out.figure(name, rate, "events/s")
        if name != "raw consume (confluent-kafka)":
            out.figure(f"{name} / raw consume", rate / base, "ratio")


if __name__ == "__main__":
    main()
