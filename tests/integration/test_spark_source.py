"""The ``hivewire`` Spark data source on real Spark: batch reads checked message by message, the history written
through a metastore with its driver killed, and the same read on a standalone cluster.

One SparkSession (``local[2]``, Hive catalog, metastore found in ZooKeeper) serves the module; the history's
drivers and the cluster's driver are separate processes, as they are in production.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

import hivewire.data._spark as hw_spark
import hivewire.spark
from hivewire.arrow import SCHEMA, to_arrow
from hivewire.data import read_events
from hivewire.events._apiary import encode
from hivewire.testing import create_table_event
from hivewire.tools._local import LocalMetastore, LocalZooKeeper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_arrow import mixed_messages
from waiting import wait_for

N = 50_000
PARTITIONS = 4
LATE = N * 3 // 4  # the docs' batch example reads from this message's timestamp on
T0 = 1_700_000_000_000
STEP_MS = 10
#: Message index -> a malformed value: 20 of them, of every kind that fails to decode.
MALFORMED: dict[int, bytes | None] = {
    i * 2_459 + 17: value
    for i, value in enumerate(
        [
            b"{not json",
            b"",
            b"[]",
            b'{"eventType": "ON_NOTHING", "databaseName": "d"}',
            b"\xff\xfe not utf-8",
            b'{"eventType": "ON_CREATE_TABLE"}',
            b'{"eventType": "ON_CREATE_TABLE", "databaseName": 5, "tableName": "t"}',
            b"null",
            b'"a string"',
            b"42",
            None,
            b'{"eventType": "ON_DROP_TABLE", "databaseName": "d", "tableName": "t", "status": "yes"}',
            b'{"eventType": "ON_ADD_PARTITION", "databaseName": "d", "tableName": "t", "partitions": 3}',
            b"{}",
            b'{"eventType": null}',
            b'{"eventType": "ON_CREATE_TABLE", "databaseName": "d", "tableName": "t"',
            b"\x00\x01\x02",
            b'{"eventType": "ON_INSERT", "databaseName": "d", "tableName": "t", "files": "x"}',
            b"true",
            b'{"eventType": ["ON_CREATE_TABLE"]}',
        ]
    )
}
PYTHONPATH = os.pathsep.join(p for p in sys.path if p.startswith(str(Path(__file__).resolve().parents[2])))


@dataclass
class Topic:
    bootstrap: str
    name: str
    values: list[bytes | None]  # by message index; index i went to partition i % 4 with timestamp T0 + i * STEP_MS

    def index(self, partition: int, offset: int) -> int:
        return offset * PARTITIONS + partition


def _producer(bootstrap: str) -> Producer:
    # zstd in large batches: the mock broker keeps only 5 MiB (stored bytes) per partition.
    return Producer(
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


@pytest.fixture(scope="module")
def topic(kafka: str) -> Topic:
    values: list[bytes | None] = list(mixed_messages(N - len(MALFORMED), seed=22))
    for i in sorted(MALFORMED):
        values.insert(i, MALFORMED[i])
    assert len(values) == N
    name = f"spark_{uuid.uuid4().hex[:8]}"
    producer = _producer(kafka)
    for i, value in enumerate(values):
        while True:
            try:
                producer.produce(name, value, partition=i % PARTITIONS, timestamp=T0 + i * STEP_MS)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(60) == 0
    consumer = Consumer({"bootstrap.servers": kafka, "group.id": "hivewire-test-watermarks"})
    try:
        for p in range(PARTITIONS):
            assert consumer.get_watermark_offsets(TopicPartition(name, p), timeout=30) == (0, N // PARTITIONS)
    finally:
        consumer.close()
    return Topic(kafka, name, values)


@pytest.fixture(scope="module")
def namespace(zookeeper: LocalZooKeeper, metastore: LocalMetastore) -> Iterator[str]:
    """The session metastore registered in ZooKeeper under Hive 4's node name (persistent, not ephemeral: a
    ZooKeeper session can expire on a loaded machine during this module's minutes, and its node with it)."""
    name = f"spark_src_{uuid.uuid4().hex[:8]}"
    zk = KazooClient(hosts=zookeeper.quorum, timeout=10)
    zk.start(timeout=30)
    address = metastore.uri.removeprefix("thrift://")
    zk.ensure_path(f"/{name}")
    zk.create(f"/{name}/{address}", address.encode(), sequence=True)
    try:
        yield name
    finally:
        zk.delete(f"/{name}", recursive=True)
        zk.stop()
        zk.close()


SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    # A Python worker must connect back within this; starting one takes far longer than the default 15 s on a
    # loaded 2-core machine.
    "spark.python.authenticate.socketTimeout": "300s",
}


@pytest.fixture(scope="module")
def spark(zookeeper: LocalZooKeeper, namespace: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors' Python: the one with pyarrow
    session = hw_spark.session(
        zookeeper=zookeeper.quorum,
        namespace=namespace,
        master="local[2]",
        app_name="hivewire-source-test",
        conf={**SPARK_CONF, "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse"))},
    )
    yield session
    session.stop()


def _load(spark: Any, topic: Topic, **options: str) -> Any:
    reader = spark.read.format("hivewire").option("kafka.bootstrap.servers", topic.bootstrap)
    reader = reader.option("topic", topic.name)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([("kafka_partition", "ascending"), ("kafka_offset", "ascending")])


@pytest.fixture(scope="module")
def local_table(spark: Any, topic: Topic) -> pa.Table:
    """The whole topic read by the data source on local[2] (maxEventsPerSplit splits each partition in 3)."""
    df = _load(spark, topic, maxEventsPerSplit="20000")
    assert df.schema == hw_spark._events_schema()
    return _sorted(df.toArrow()).cast(SCHEMA)


def test_batch_read_equals_to_arrow_of_the_same_messages(topic: Topic, local_table: pa.Table) -> None:
    table = local_table
    assert table.num_rows == N
    # The single-process path over the same messages: read_events, then to_arrow with the failures as rows.
    events = read_events(bootstrap_servers=topic.bootstrap, topic=topic.name, progress=False, timeout=120)
    assert len(events) + len(events.failures) == N
    items: list[Any] = sorted([*events, *events.failures], key=lambda e: (e.origin.partition, e.origin.offset))
    expected = to_arrow(items, on_error="record")
    for name in SCHEMA.names:
        assert table.column(name).combine_chunks().equals(expected.column(name).combine_chunks()), name

    # Against the messages themselves, parsed with plain json.
    rows = table.select(
        ["kafka_partition", "kafka_offset", "kafka_timestamp", "event_type", "db_name", "status", "parameters",
         "decode_error", "raw"]
    ).to_pylist()  # fmt: skip
    failed = set()
    for row in rows:
        i = topic.index(row["kafka_partition"], row["kafka_offset"])
        value = topic.values[i]
        assert row["raw"] == value
        assert row["kafka_timestamp"] == T0 + i * STEP_MS
        if i in MALFORMED:
            failed.add(i)
            assert row["decode_error"] and row["event_type"] is None
            continue
        assert row["decode_error"] is None
        assert value is not None
        message = json.loads(value)
        assert row["event_type"] == message["eventType"].removeprefix("ON_")
        assert row["db_name"] == message.get("databaseName", message.get("dbName"))
        assert row["status"] == message["status"]
        assert dict(row["parameters"]) == message["parameters"]
    assert failed == set(MALFORMED)


def _keys(df: Any) -> list[tuple[int, int]]:
    return sorted((r[0], r[1]) for r in df.select("kafka_partition", "kafka_offset").collect())


def test_offsets_and_timestamps_bound_the_range(spark: Any, topic: Topic) -> None:
    df = _load(
        spark,
        topic,
        startingOffsets=json.dumps({"0": 1000, "1": N // PARTITIONS - 10, "3": -2}),
        endingOffsets=json.dumps({"0": 1500, "2": 7, "3": 3}),
    )
    expected = (
        [(0, o) for o in range(1000, 1500)]
        + [(1, o) for o in range(N // PARTITIONS - 10, N // PARTITIONS)]  # no end given: latest
        + [(2, o) for o in range(7)]  # no start given: earliest
        + [(3, o) for o in range(3)]
    )
    assert _keys(df) == expected

    # Timestamps: since <= timestamp < until, as read_events bounds them (the mock broker cannot look offsets
    # up by time, so this also runs the timestamp search).
    since, until = T0 + 4_001 * STEP_MS, T0 + 4_800 * STEP_MS
    df = _load(spark, topic, startingTimestamp=str(since), endingTimestamp=str(until))
    assert _keys(df) == sorted((i % PARTITIONS, i // PARTITIONS) for i in range(4_001, 4_800))


def test_bad_options_fail_with_the_option_named(spark: Any, topic: Topic) -> None:
    with pytest.raises(Exception, match="startingOffsets"):
        _load(spark, topic, startingOffsets="{oops").count()
    with pytest.raises(Exception, match=r"kafka\.bootstrap\.servers"):
        spark.read.format("hivewire").option("topic", topic.name).load().count()


# -- the same rows decoded in the JVM: hivewire.spark.read -------------------------------------------------------


def _fast(spark: Any, bootstrap: str, name: str, **options: str) -> Any:
    return hivewire.spark.read(spark, bootstrap_servers=bootstrap, topic=name, options=options)


def _assert_same_rows(fast: pa.Table, python: pa.Table) -> None:
    """Every column equal; decode_error null on the same rows (its text may differ: docs/data.md)."""
    assert fast.num_rows == python.num_rows
    for name in SCHEMA.names:
        if name != "decode_error":
            assert fast.column(name).combine_chunks().equals(python.column(name).combine_chunks()), name
    assert pc.is_valid(fast["decode_error"]).equals(pc.is_valid(python["decode_error"]))


def test_the_jvm_path_gives_the_python_paths_rows(spark: Any, topic: Topic, local_table: pa.Table) -> None:
    df = _fast(spark, topic.bootstrap, topic.name, maxEventsPerSplit="20000")
    assert df.schema == hw_spark._events_schema()
    table = _sorted(df.toArrow()).cast(SCHEMA)
    _assert_same_rows(table, local_table)
    assert pc.sum(pc.is_valid(table["decode_error"])).as_py() == len(MALFORMED)
    assert set(pc.unique(table["event_type"]).to_pylist()) == set(pc.unique(local_table["event_type"]).to_pylist())
    # the same bounds mean the same rows
    bounds = {
        "startingOffsets": json.dumps({"0": 1000, "1": N // PARTITIONS - 10}),
        "endingOffsets": json.dumps({"0": 1500}),
    }
    assert _keys(_fast(spark, topic.bootstrap, topic.name, **bounds)) == _keys(_load(spark, topic, **bounds))


def _unusual() -> tuple[list[bytes], list[bytes]]:
    """Messages off the generator's path: (those both paths read alike, those the JVM path reads differently)."""
    messages = [json.loads(m) for m in mixed_messages(400, seed=3)]
    create = next(m for m in messages if m["eventType"] == "ON_CREATE_TABLE")
    add = next(m for m in messages if m["eventType"] == "ON_ADD_PARTITION")

    def changed(base: dict[str, Any], change: Any) -> bytes:
        message = json.loads(json.dumps(base))
        change(message)
        return json.dumps(message).encode()

    alike = [
        changed(create, lambda m: m["table"]["sd"].update(cols="x")),  # an object's field of the wrong kind
        changed(create, lambda m: m["table"].update(parameters={"a": None, "b": "x"})),
        changed(create, lambda m: m.update(table=[1])),  # the object is not an object
        changed(create, lambda m: m.update(status=None)),
        changed(create, lambda m: m.update(parameters={**m["parameters"], "x": None})),  # Apiary 5.0.x's nulls
        changed(create, lambda m: m.update(environmentContext=3)),
        changed(create, lambda m: m.pop("databaseName")),  # older producers: the names from the table
        changed(create, lambda m: (m.pop("databaseName"), m.pop("tableName"))),
        changed(create, lambda m: m.update(tableName=None)),
        changed(add, lambda m: m.update(partitions=[3])),
        changed(add, lambda m: m["partitions"][0].update(values="a")),
        changed(add, lambda m: m.pop("partitions")),
    ]
    # documented in docs/data.md: from_json reads a number where a string belongs as its text, and the columns
    # check only the fields they read
    different = [
        changed(create, lambda m: m.update(databaseName=5)),
        changed(create, lambda m: m["table"]["sd"]["cols"][0].update(name=5)),
        changed(create, lambda m: m.update(parameters={"a": 5})),
        changed(create, lambda m: m["table"].update(createTime="soon")),
    ]
    return alike, different


def test_the_jvm_path_on_unusual_messages_and_as_a_stream(spark: Any, kafka: str, tmp_path: Path) -> None:
    alike, different = _unusual()
    name = f"spark_unusual_{uuid.uuid4().hex[:8]}"
    producer = _producer(kafka)
    for value in [*alike, *different]:
        producer.produce(name, value, partition=0, timestamp=T0)
    assert producer.flush(60) == 0
    python = spark.read.format("hivewire").option("kafka.bootstrap.servers", kafka).option("topic", name).load()
    expected = _sorted(python.toArrow()).cast(SCHEMA)
    fast = _sorted(_fast(spark, kafka, name).toArrow()).cast(SCHEMA)
    n = len(alike)
    _assert_same_rows(fast.slice(0, n), expected.slice(0, n))
    assert pc.is_valid(expected["decode_error"]).to_pylist()[n:] == [True] * len(different)
    assert fast["decode_error"].to_pylist()[n:] == [None] * len(different)
    assert fast["db_name"].to_pylist()[n] == "5"
    assert fast["columns"].to_pylist()[n + 1][0]["name"] == "5"
    assert fast["parameters"].to_pylist()[n + 2] == [("a", "5")]

    # readStream: the same rows, through a checkpoint
    stream = hivewire.spark.read_stream(spark, bootstrap_servers=kafka, topic=name)
    query = (
        stream.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(600)
    streamed = _sorted(spark.table(name).toArrow()).cast(SCHEMA)
    assert streamed.equals(fast)


# -- the history, with its driver killed -----------------------------------------------------------------------


class Trickle:
    """Produces small events to a topic until stopped, as a live metastore would."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        # zstd over batches of a few hundred ms: the mock broker keeps only 5 MiB per partition, and the test
        # runs for minutes.
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 250, "compression.type": "zstd"}
        )
        self.topic = topic
        self.stop = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            for _ in range(20):
                self.producer.produce(self.topic, encode(create_table_event("live", f"t{self.sent}")))
                self.sent += 1
            self.producer.poll(0)
            time.sleep(0.25)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)
        assert self.producer.flush(60) == 0


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _commits(checkpoint: Path) -> int:
    return len(list((checkpoint / "commits").glob("[0-9]*"))) if (checkpoint / "commits").exists() else 0


# Four driver starts (each a Hive-catalog SparkSession): minutes on a loaded 2-core machine.
@pytest.mark.timeout(2400)
def test_history_is_exactly_once_across_kill_9(
    spark: Any, kafka: str, zookeeper: LocalZooKeeper, namespace: str, tmp_path: Path
) -> None:
    name = f"live_{uuid.uuid4().hex[:8]}"
    database = f"history_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {database} LOCATION '{(tmp_path / 'db').as_uri()}'")
    checkpoint = tmp_path / "checkpoint"
    command = [
        sys.executable, "-m", "hivewire", "spark-history",
        "--bootstrap-servers", kafka, "--topic", name,
        "--table", f"{database}.events", "--checkpoint", str(checkpoint),
        "--zookeeper", zookeeper.quorum, "--namespace", namespace, "--master", "local[1]",
        "--trigger-interval", "1", "--max-events-per-trigger", "400",
        *(a for k, v in SPARK_CONF.items() for a in ("--conf", f"{k}={v}")),
        "--conf", f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}",
    ]  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": PYTHONPATH}
    rng = random.Random()
    log = tmp_path / "driver.log"
    trickle = Trickle(kafka, name)
    try:
        # Stopped by SIGINT while Spark starts: exits 0 once the session is up, no traceback, nothing written.
        with open(log, "ab") as out:
            driver = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=out)
        # the signal handlers are in place before Spark's JVM, a child of the driver, is launched
        wait_for(lambda: _children(driver.pid) or driver.poll() is not None, "Spark's JVM to be launched", 300)
        driver.send_signal(signal.SIGINT)
        assert driver.wait(600) == 0, log.read_text(errors="replace")[-5000:]
        said = log.read_text(errors="replace")
        assert "SIGINT: stopping the query" in said and "Traceback" not in said, said[-5000:]
        assert _commits(checkpoint) == 0
        for _ in range(2):
            before = _commits(checkpoint)
            with open(log, "ab") as out:
                driver = subprocess.Popen(
                    command, cwd=tmp_path, env=env, stdout=out, stderr=out, start_new_session=True
                )
            # Kill at a random moment once this driver has committed a batch of its own.
            deadline = time.monotonic() + 400
            while _commits(checkpoint) <= before and driver.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert driver.poll() is None, log.read_text(errors="replace")[-5000:]
            assert _commits(checkpoint) > before, f"no batch within 400 s:\n{log.read_text(errors='replace')[-5000:]}"
            time.sleep(rng.uniform(0.0, 4.0))
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(60)
    finally:
        trickle.close()
    # Once more, to the end of the topic.
    with open(log, "ab") as out:
        done = subprocess.run(
            [*command, "--available-now"], cwd=tmp_path, env=env, stdout=out, stderr=out, timeout=600, check=False
        )
    assert done.returncode == 0, log.read_text(errors="replace")[-5000:]

    consumer = Consumer({"bootstrap.servers": kafka, "group.id": "hivewire-test-watermarks"})
    try:
        highs = {p: consumer.get_watermark_offsets(TopicPartition(name, p), timeout=30)[1] for p in range(PARTITIONS)}
    finally:
        consumer.close()
    assert sum(highs.values()) == trickle.sent

    # The table, found by name through the metastore by this module's session (created with
    # hivewire.spark.session(zookeeper=...)), not by the process that wrote it.
    spark.catalog.refreshTable(f"{database}.events")
    df = spark.table(f"{database}.events")
    assert df.count() == trickle.sent
    assert _keys(df) == sorted((p, o) for p, high in highs.items() for o in range(high))
    assert df.where("decode_error IS NOT NULL").count() == 0
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {database}.events").where("col_name = 'Location'").first()[1]
    assert location == f"file:{tmp_path / 'db' / 'events'}"  # Hadoop's spelling of the database's location


# -- the standalone cluster -------------------------------------------------------------------------------------

CLUSTER_DRIVER = """
import sys
import pyarrow as pa
from pyspark.sql import SparkSession
import hivewire.spark

master, bootstrap, topic, out, pythonpath = sys.argv[1:]
spark = (SparkSession.Builder().master(master).appName("hivewire-cluster-test")
         .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
         .config("spark.executorEnv.PYTHONPATH", pythonpath)
         .config("spark.python.authenticate.socketTimeout", "300s").getOrCreate())
hivewire.spark.register(spark)
df = (spark.read.format("hivewire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
      .option("maxEventsPerSplit", "20000").load())
table = df.toArrow()
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
with pa.OSFile(out, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
    writer.write_table(table)
print("executors", executors)
spark.stop()
"""


@pytest.mark.timeout(1800)
def test_cluster_read_equals_local(spark_cluster: Any, topic: Topic, local_table: pa.Table, tmp_path: Path) -> None:
    out = tmp_path / "cluster.arrow"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": PYTHONPATH, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(
        [sys.executable, "-c", CLUSTER_DRIVER, spark_cluster.url, topic.bootstrap, topic.name, str(out), PYTHONPATH],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    assert "executors 1" in done.stdout  # the read ran on the worker's executor, not in the driver
    with pa.memory_map(str(out)) as source:
        table = _sorted(pa.ipc.open_file(source).read_all()).cast(SCHEMA)
    assert table.num_rows == N
    assert table.equals(local_table)
    assert pc.sum(pc.is_valid(table["decode_error"])).as_py() == len(MALFORMED)


# -- the docs' example -------------------------------------------------------------------------------------------


def _docs_example(name: str) -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / "data.md").read_text()
    after = text.split(f"<!-- example: {name} ", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def test_docs_batch_example_runs(spark: Any, topic: Topic, zookeeper: LocalZooKeeper, namespace: str) -> None:
    since = T0 + LATE * STEP_MS
    code = (
        _docs_example("spark-batch")
        .replace('zookeeper="zk1:2181,zk2:2181"', f"zookeeper={zookeeper.quorum!r}, namespace={namespace!r}")
        .replace('"kafka:9092"', repr(topic.bootstrap))
        .replace('"apiary"', repr(topic.name))
        .replace('"2024-05-31T00:00:00Z"', repr(datetime.fromtimestamp(since / 1000, tz=timezone.utc).isoformat()))
    )
    scope: dict[str, Any] = {}
    exec(compile(code, "docs/data.md", "exec"), scope)
    assert scope["spark"] is spark  # the running session, with the source registered
    assert sum(scope["counts"].values()) == N - LATE
    assert scope["failed"].count() == sum(1 for i in MALFORMED if i >= LATE)


def test_docs_fast_example_runs(
    spark: Any, topic: Topic, zookeeper: LocalZooKeeper, namespace: str, local_table: pa.Table
) -> None:
    code = (
        _docs_example("spark-fast")
        .replace('zookeeper="zk1:2181,zk2:2181"', f"zookeeper={zookeeper.quorum!r}, namespace={namespace!r}")
        .replace('"kafka:9092"', repr(topic.bootstrap))
        .replace('"apiary"', repr(topic.name))
    )
    scope: dict[str, Any] = {}
    exec(compile(code, "docs/data.md", "exec"), scope)
    assert scope["spark"] is spark
    expected = pc.sum(pc.equal(local_table["event_type"], "CREATE_TABLE")).as_py()
    assert expected > 0 and scope["creates"].count() == expected


EMPTY_READS = """\
import sys
from pyspark.sql import SparkSession
import hivewire.spark
from hivewire import read_events

bootstrap, topic = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
hivewire.spark.register(spark)
events = read_events(bootstrap_servers=bootstrap, topic=topic, start_offsets={0: 0}, end_offsets={0: 0}, progress=False)
frames = {
    "to_spark": events.to_spark(spark),
    "to_dataframe": hivewire.spark.to_dataframe(spark, []),
    "source": spark.read.format("hivewire").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).load(),
    "source-range": spark.read.format("hivewire").option("kafka.bootstrap.servers", bootstrap)
    .option("topic", topic).option("startingOffsets", '{"0": 0}').option("endingOffsets", '{"0": 0}').load(),
}
for name, frame in frames.items():
    print(name, frame.count(), frame.schema == hivewire.spark.SPARK_SCHEMA)
"""


def test_empty_reads_give_an_empty_dataframe_with_the_full_schema_in_every_path(kafka: str, tmp_path: Path) -> None:
    # Issue 40, item 2: a window with no events (docs/data.md's read_events example) and an empty topic.
    name = f"empty_{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka})  # kept: the future fails if the client is collected first
    admin.create_topics([NewTopic(name, 2, 1)])[name].result(30)
    script = tmp_path / "empty.py"
    script.write_text(EMPTY_READS)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": PYTHONPATH}
    done = subprocess.run(
        [sys.executable, str(script), kafka, name], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [line for line in done.stdout.splitlines() if line]
    assert lines == ["to_spark 0 True", "to_dataframe 0 True", "source 0 True", "source-range 0 True"], done.stdout
