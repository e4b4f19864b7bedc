"""``hivewire archive``: exactly once into Delta through kill -9, concurrent archivers and lost commit races.

The archivers run as real ``hivewire archive`` processes against a real Apache Kafka broker. The table is
then read three ways: deltalake, pyarrow (the table's current files) and Spark. The Delta connector for
Spark is not installed here (it needs a download), so Spark reads the current files of the table
(``DeltaTable.file_uris()``) with ``spark.read.parquet``, the partition column taken from the paths.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import deltalake
import pyarrow.dataset as ds
import pytest
from confluent_kafka import Producer
from waiting import wait_for

from hivewire.data._archive import Archiver
from hivewire.data._archive_table import txn_app_id
from hivewire.data._arrow import SCHEMA, Undecodable, paused_gc
from hivewire.errors import ConfigError
from hivewire.events import _apiary as apiary
from hivewire.events._model import Origin
from hivewire.runtime._kafka import KafkaSource

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from spark_local import local_session
from test_arrow import T0_MS, mixed_messages

HIVEWIRE = str(Path(sys.executable).with_name("hivewire"))
# Short sessions, so that the group notices a kill -9'd member in seconds (the defaults wait 45 s).
FAST_GROUP = ["-X", "session.timeout.ms=3000", "-X", "heartbeat.interval.ms=500", "-X", "max.poll.interval.ms=15000"]
BAD = {1000: b"<xml/>", 20000: b'{"eventType": "ON_CREATE_TABLE", "databaseName": "db"}', 40000: None}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with local_session("hivewire-archive-test") as session:
        yield session


def producer(kafka: str) -> Any:
    return Producer(
        {"bootstrap.servers": kafka, "enable.idempotence": True, "compression.type": "zstd", "linger.ms": 20}
    )


def start_archiver(kafka: str, topic: str, table: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [
                HIVEWIRE,
                "--log-level",
                "DEBUG",
                "archive",
                "--bootstrap-servers",
                kafka,
                "--topic",
                topic,
                "--table",
                str(table),
                *FAST_GROUP,
                *extra,
            ],
            stderr=out,
        )


def versions(table: Path, topic: str) -> list[int | None]:
    dt = deltalake.DeltaTable(str(table))
    return [dt.transaction_version(txn_app_id(topic, p)) for p in range(4)]


def test_exactly_once_through_kill_9(kafka: str, tmp_path: Path, spark: Any) -> None:
    seed = int(os.environ.get("HIVEWIRE_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (HIVEWIRE_TEST_SEED={seed} repeats this run)")
    rng = random.Random(seed)
    topic, table = f"archive_{uuid.uuid4().hex[:8]}", tmp_path / "events"
    messages: list[bytes | None] = [*mixed_messages(50_000, seed=5)]
    for at, bad in BAD.items():
        messages[at] = bad
    coordinates: dict[int, tuple[int, int]] = {}  # message index -> (partition, offset)
    last: dict[int, int] = {}

    kills_done = threading.Event()

    def produce() -> None:
        # A steady stream, about 2,500 messages/s, while the archivers are killed and restarted; after the
        # first 40,000 only a trickle (50/s) until the last kill, so that every kill lands mid-stream.
        out = producer(kafka)
        for i, data in enumerate(messages):

            def delivered(err: Any, msg: Any, i: int = i) -> None:
                assert err is None, err
                coordinates[i] = (msg.partition(), msg.offset())

            out.produce(topic, value=data, partition=i % 4, timestamp=T0_MS + i * 1000, on_delivery=delivered)
            if i % 250 == 0:
                out.poll(0)
                time.sleep(0.1 if i < 40_000 or kills_done.is_set() else 5.0)
        assert out.flush(60) == 0

    # Two archivers share the topic through the group; five times, one of them is killed with SIGKILL at a
    # random moment after it committed to the table since its start (so the kill lands while it streams and
    # writes, between or during its commits) and is restarted.
    logs = [tmp_path / "archiver-0.log", tmp_path / "archiver-1.log"]
    flush = ["--flush-events", "1500", "--flush-seconds", "1"]
    started_at = [0, 0]  # each archiver's log size when it was (re)started

    def start(i: int) -> subprocess.Popen[bytes]:
        started_at[i] = logs[i].stat().st_size if logs[i].exists() else 0
        return start_archiver(kafka, topic, table, logs[i], *flush)

    def committed_since_start(i: int) -> bool:
        return b"committed " in logs[i].read_bytes()[started_at[i] :]

    procs = [start(i) for i in range(2)]
    streaming = threading.Thread(target=produce)
    streaming.start()
    try:
        for kill in range(5):
            victim = rng.randrange(2)
            wait_for(
                lambda victim=victim: committed_since_start(victim), f"archiver {victim} to commit", 240, interval=0.2
            )
            time.sleep(rng.uniform(0, 2.0))
            assert streaming.is_alive(), "the stream ended before the kills did"
            procs[victim].send_signal(signal.SIGKILL)
            assert procs[victim].wait() == -signal.SIGKILL
            print(f"kill {kill + 1}: archiver {victim} at table version {deltalake.DeltaTable(str(table)).version()}")
            procs[victim] = start(victim)
        kills_done.set()
        streaming.join()
        for p, offset in coordinates.values():
            last[p] = max(last.get(p, -1), offset)
        wait_for(
            lambda: versions(table, topic) == [last[p] for p in range(4)], "the archive to catch up", 240, interval=0.2
        )
    finally:
        kills_done.set()
        streaming.join()
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        codes = [proc.wait(60) for proc in procs]
    assert codes == [0, 0], [log.read_text()[-3000:] for log in logs]

    expected = sorted(coordinates.values())
    assert len(expected) == len(messages) == 50_000

    # deltalake: every offset exactly once, with the offsets of the last commit in the log.
    dt = deltalake.DeltaTable(str(table))
    rows = dt.to_pyarrow_table(
        columns=["kafka_topic", "kafka_partition", "kafka_offset", "event_type", "decode_error", "event_date", "raw"]
    )
    got = sorted(zip(rows["kafka_partition"].to_pylist(), rows["kafka_offset"].to_pylist(), strict=True))
    assert got == expected, f"{len(got) - len(set(got))} duplicates, {len(set(expected) - set(got))} missing"
    assert set(rows["kafka_topic"].to_pylist()) == {topic}
    assert versions(table, topic) == [last[p] for p in range(4)]
    assert [f.name for f in dt.schema().fields] == SCHEMA.names
    # The undecodable messages are rows too, with their bytes and the reason.
    failed = rows.filter(rows["decode_error"].is_valid()).to_pylist()
    assert sorted(r["raw"] or b"" for r in failed) == sorted(b or b"" for b in BAD.values())
    assert all(r["event_type"] is None for r in failed)
    # Partitioned by the UTC date of the Kafka timestamp.
    first_day = datetime.fromtimestamp(T0_MS / 1000, tz=timezone.utc).date()
    assert set(rows["event_date"].to_pylist()) == {date.fromordinal(first_day.toordinal() + d) for d in range(2)}
    assert all("event_date=" in uri for uri in dt.file_uris())

    # pyarrow over the table's current files (orphans of killed writes are not among them).
    dataset = ds.dataset(dt.file_uris(), format="parquet", partitioning="hive", partition_base_dir=str(table))
    scanned = dataset.to_table(columns=["kafka_partition", "kafka_offset"])
    assert (
        sorted(zip(scanned["kafka_partition"].to_pylist(), scanned["kafka_offset"].to_pylist(), strict=True))
        == expected
    )

    # Spark over the same files; the per-type counts match what was produced.
    from pyspark.sql import functions as F

    frame = spark.read.option("basePath", str(table)).parquet(*dt.file_uris())
    (summary,) = frame.agg(
        F.count("*").alias("rows"),
        F.count_distinct("kafka_partition", "kafka_offset").alias("distinct"),
        F.min("event_date").alias("first"),
        F.max("event_date").alias("last"),
    ).collect()
    assert (summary["rows"], summary["distinct"]) == (50_000, 50_000)
    dates = rows["event_date"].to_pylist()
    assert (summary["first"], summary["last"]) == (min(dates), max(dates))
    with paused_gc():
        produced = Counter(apiary.decode(m).event_type.value for i, m in enumerate(messages) if i not in BAD)
    counted = {r["event_type"]: r["count"] for r in frame.groupBy("event_type").count().collect()}
    assert counted == {**produced, None: len(BAD)}


def test_sigterm_writes_what_is_buffered(kafka: str, tmp_path: Path) -> None:
    topic, table, log = f"archive_{uuid.uuid4().hex[:8]}", tmp_path / "events", tmp_path / "archiver.log"
    out = producer(kafka)
    for i, data in enumerate(mixed_messages(1000, seed=9)):
        out.produce(topic, value=data, partition=i % 4, timestamp=T0_MS + i)
    assert out.flush(30) == 0
    # Thresholds it never reaches: only the graceful stop can write.
    proc = start_archiver(kafka, topic, table, log, "--flush-events", "1000000", "--flush-seconds", "3600")
    try:
        wait_for(lambda: "buffering from" in log.read_text(), "the first message", 240, interval=0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()[-3000:]
    text = log.read_text()
    archived = int(text.split("archived ")[1].split(" rows")[0])
    assert archived > 0 and "SIGTERM: flushing and stopping" in text
    assert deltalake.DeltaTable(str(table)).to_pyarrow_table(columns=["kafka_offset"]).num_rows == archived
    # A second run archives the rest, and nothing twice.
    stats = Archiver(KafkaSource(kafka, topic), str(table)).run(idle_timeout=2)
    rows = deltalake.DeltaTable(str(table)).to_pyarrow_table(columns=["kafka_partition", "kafka_offset"])
    assert (
        rows.num_rows
        == 1000
        == len(set(zip(rows["kafka_partition"].to_pylist(), rows["kafka_offset"].to_pylist(), strict=True)))
    )
    assert stats.rows_written == 1000 - archived


def buffered(archiver: Archiver, topic: str, partition: int, offsets: range) -> None:
    """Put decoded messages into the archiver's buffer as if consumed (the race below needs no broker)."""
    messages = mixed_messages(len(offsets), seed=partition)
    for offset, data in zip(offsets, messages, strict=True):
        origin = Origin(topic, partition, offset, T0_MS + offset)
        archiver._add(partition, apiary.decode(data, origin=origin))


def test_a_lost_race_is_rechecked_not_duplicated(tmp_path: Path) -> None:
    """Two writers of one partition (as in a rebalance that outlived a session): the one that committed
    second against a stale snapshot is refused by delta-rs, re-checks the table and writes only the rest."""
    topic, uri = "race", str(tmp_path / "events")
    source = KafkaSource("localhost:1", topic)
    slow, fast = Archiver(source, uri), Archiver(source, uri)
    buffered(slow, topic, 0, range(100))
    buffered(slow, topic, 1, range(10))
    buffered(fast, topic, 0, range(60))
    stale = slow.table()  # the snapshot slow checks against
    fast.flush()
    assert versions(Path(uri), topic)[:2] == [59, None]
    assert slow._write(stale) is False and slow.stats.conflicts == 1
    slow.flush()
    assert slow.stats.skipped == 60 and slow.stats.rows_written == 50
    rows = deltalake.DeltaTable(uri).to_pyarrow_table(columns=["kafka_partition", "kafka_offset"])
    got = sorted(zip(rows["kafka_partition"].to_pylist(), rows["kafka_offset"].to_pylist(), strict=True))
    assert got == sorted([(0, o) for o in range(100)] + [(1, o) for o in range(10)])
    assert versions(Path(uri), topic)[:2] == [99, 9]
    # Writing again what the table has is a no-op, not a duplicate.
    buffered(fast, topic, 0, range(90, 100))
    fast.flush()
    assert deltalake.DeltaTable(uri).to_pyarrow_table(columns=["kafka_offset"]).num_rows == 110
    assert fast.stats.skipped == 10


def test_undecodable_items_are_rows(tmp_path: Path) -> None:
    archiver = Archiver(KafkaSource("localhost:1", "t"), str(tmp_path / "events"))
    archiver._add(0, Undecodable(Origin("t", 0, 0, T0_MS), b"\xff", "not UTF-8"))
    archiver.flush()
    row = deltalake.DeltaTable(str(tmp_path / "events")).to_pyarrow_table().to_pylist()[0]
    assert (row["raw"], row["decode_error"], row["kafka_offset"], row["event_type"]) == (b"\xff", "not UTF-8", 0, None)


def test_an_archive_of_an_earlier_version_gains_the_appended_columns(tmp_path: Path) -> None:
    """The schema only appends: a table written before the ALTER change columns gets them, and keeps its rows."""
    uri = str(tmp_path / "old")
    first = SCHEMA.names.index("raw") + 1
    old_schema = SCHEMA.empty_table().select(SCHEMA.names[:first]).schema
    deltalake.DeltaTable.create(uri, old_schema, partition_by=["event_date"])
    archiver = Archiver(KafkaSource("localhost:1", "t"), uri)
    assert [f.name for f in archiver.table().schema().fields] == SCHEMA.names
    archiver._add(0, Undecodable(Origin("t", 0, 0, T0_MS), b"\xff", "not UTF-8"))
    archiver.flush()
    (row,) = deltalake.DeltaTable(uri).to_pyarrow_table().to_pylist()
    assert row["decode_error"] == "not UTF-8" and row["columns_added"] is None


def test_refuses_a_foreign_table(tmp_path: Path) -> None:
    import pyarrow as pa

    deltalake.write_deltalake(str(tmp_path / "other"), pa.table({"x": [1]}))
    with pytest.raises(ConfigError, match="not a hivewire event archive"):
        Archiver(KafkaSource("localhost:1", "t"), str(tmp_path / "other")).table()
    shutil.rmtree(tmp_path / "other")


def test_two_jobs_archiving_one_topic_into_two_tables_each_get_all_of_it(kafka: str, tmp_path: Path) -> None:
    """Different tables, default app id and group: each job reads every partition. (With a group named after
    the topic alone, the two joined one group and split the partitions: each table got part of the topic.)"""
    topic = f"archive_{uuid.uuid4().hex[:8]}"
    out = producer(kafka)
    for i, data in enumerate(mixed_messages(400, seed=3)):
        out.produce(topic, value=data, partition=i % 4, timestamp=T0_MS + i)
    assert out.flush(30) == 0
    source = KafkaSource(kafka, topic, consumer_config={"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    jobs = [Archiver(source, str(tmp_path / name), flush_seconds=0.5) for name in ("a", "b")]
    assert jobs[0].group_id != jobs[1].group_id and jobs[0].app_id == jobs[1].app_id == topic
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(job: Archiver) -> None:
        try:
            job.run(stop)
        except BaseException as e:  # re-raised in the test thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    try:
        for name in ("a", "b"):
            wait_for(
                lambda name=name: (
                    (tmp_path / name / "_delta_log").is_dir()
                    and deltalake.DeltaTable(str(tmp_path / name)).to_pyarrow_table(columns=["kafka_offset"]).num_rows
                    >= 400
                ),
                f"table {name} to hold the whole topic",
                timeout=120,
            )
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert errors == []
    for name, job in zip(("a", "b"), jobs, strict=True):
        rows = deltalake.DeltaTable(str(tmp_path / name)).to_pyarrow_table(columns=["kafka_partition", "kafka_offset"])
        got = sorted(zip(rows["kafka_partition"].to_pylist(), rows["kafka_offset"].to_pylist(), strict=True))
        assert got == sorted((p, o) for p in range(4) for o in range(100)), name
        assert job.stats.refused == 0  # every seek from the table took effect
        assert sorted(job.stats.versions) == [0, 1, 2, 3]  # this job wrote all four partitions itself
