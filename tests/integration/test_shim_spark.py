"""Issue 6's acceptance with real clients: Spark's Hive client talks to the shim, the shim publishes to Kafka,
and a ``hivewire run`` process consuming the topic receives the matching events, in order per table (the order
Kafka keeps, one table per partition), with the objects the metastore holds.

Spark 4's built-in Hive 2.3.10 client makes these modeled calls (seen in the shim's call counts):
CREATE DATABASE -> create_database; CREATE TABLE -> create_table_with_environment_context; INSERT into new
partitions -> add_partitions_req; ALTER TABLE ADD COLUMNS -> alter_table_with_environment_context;
ALTER TABLE DROP PARTITION -> drop_partition_with_environment_context; DROP TABLE ->
drop_table_with_environment_context; DROP DATABASE CASCADE -> drop_database (after Spark dropped the tables).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events._model import EventType, ListenerEvent
from hivewire.tools._local import LocalMetastore
from hivewire_shim import KafkaSink, Shim

LISTENERS = textwrap.dedent('''
    """Writes every event it receives, as Apiary JSON, one per line (line-buffered)."""
    import json, os
    import hivewire as hw

    app = hw.App("shim-spark-acceptance")
    _out = open(os.environ["HW_EVENTS"], "a", buffering=1)

    @app.on(name="record")
    def record(event):
        _out.write(json.dumps(event.to_dict()) + "\\n")
''')


@pytest.fixture(scope="module")
def topic() -> str:
    return f"shim-spark-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def shim(metastore: LocalMetastore, kafka: str, topic: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shim]:
    sink = KafkaSink(kafka, topic, tmp_path_factory.mktemp("spool"))
    with Shim(metastore.uri, sinks=[sink]) as server:
        yield server


@pytest.fixture(scope="module")
def spark(shim: Shim, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("hivewire-shim-test")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", shim.uri)
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .enableHiveSupport()
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture
def runner(kafka: str, topic: str, tmp_path: Path) -> Iterator[Path]:
    """``hivewire run`` on the topic, in its own process; yields the file it writes events to."""
    (tmp_path / "shim_spark_listeners.py").write_text(LISTENERS)
    events, log = tmp_path / "events.jsonl", tmp_path / "run.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hivewire",
                "run",
                "shim_spark_listeners:app",
                "--bootstrap-servers",
                kafka,
                "--topic",
                topic,
                "--instance-name",
                f"shim-spark-{uuid.uuid4().hex[:6]}",
                "--endpoint-port",
                "0",
                "--set",
                "apiary.messaging.consumer.auto.offset.reset=earliest",
            ],
            cwd=tmp_path,
            env={**os.environ, "HW_EVENTS": str(events)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield events
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(120) == 0, log.read_text()


def received(path: Path, count: int, timeout: float = 120) -> list[ListenerEvent]:
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            break
        time.sleep(0.2)
    return [apiary.decode(json.dumps(json.loads(line)).encode()) for line in lines]


def test_spark_statements_reach_a_hivewire_run_listener_in_order(
    spark: Any, shim: Shim, runner: Path, metastore: LocalMetastore, unique: str, tmp_path: Path
) -> None:
    direct = hw.MetastoreClient(metastore.uri, timeout=120)
    db = unique
    spark.sql(f"CREATE DATABASE {db} LOCATION '{(tmp_path / f'{db}.db').as_uri()}'")
    spark.sql(f"CREATE TABLE {db}.sales (id INT, amount DOUBLE, dt STRING) USING parquet PARTITIONED BY (dt)")
    created_table = direct.get_table(db, "sales")
    spark.sql(f"INSERT INTO {db}.sales VALUES (1, 9.5, '2024-01-01'), (2, 3.0, '2024-01-02'), (3, 1.5, '2024-01-02')")
    partitions = {tuple(p.values): p for p in direct.get_partitions(db, "sales")}
    before_alter = direct.get_table(db, "sales")
    spark.sql(f"ALTER TABLE {db}.sales ADD COLUMNS (note STRING)")
    altered_table = direct.get_table(db, "sales")
    spark.sql(f"ALTER TABLE {db}.sales DROP PARTITION (dt='2024-01-01')")
    spark.sql(f"DROP TABLE {db}.sales")
    spark.sql(f"DROP DATABASE {db} CASCADE")
    direct.close()

    events = [e for e in received(runner, 7) if e.db_name == db]
    # Order holds per Kafka partition, i.e. per table (Apiary's promise): the database's events are keyed by
    # the database and may sit on another partition than the table's, so they are checked apart.
    table_events = [e for e in events if e.table_name == "sales"]
    database_events = [e for e in events if e.table_name is None]
    assert len(events) == 7 and len(table_events) == 5
    assert [e.event_type for e in table_events] == [
        EventType.CREATE_TABLE,
        EventType.ADD_PARTITION,
        EventType.ALTER_TABLE,
        EventType.DROP_PARTITION,
        EventType.DROP_TABLE,
    ]
    assert [e.event_type for e in database_events] == [EventType.CREATE_DATABASE, EventType.DROP_DATABASE]
    create, add, alter, drop_part, drop = table_events
    create_db, drop_db = database_events
    assert create_db.database.name == db and create_db.database.locationUri.endswith(f"{db}.db")
    # The event's table is Spark's request as the metastore changed it, like the metastore's own event
    # (test_shim_fidelity compares those field by field); what the metastore set is what it stored.
    fired = create.table
    assert (fired.dbName, fired.tableName, fired.createTime, fired.parameters, fired.sd.location, fired.sd.cols) == (
        created_table.dbName,
        created_table.tableName,
        created_table.createTime,
        created_table.parameters,
        created_table.sd.location,
        created_table.sd.cols,
    )
    assert create.table.parameters["spark.sql.sources.provider"] == "parquet"
    assert add.table.tableName == "sales"
    assert sorted(tuple(p.values) for p in add.partitions) == sorted(partitions) == [("2024-01-01",), ("2024-01-02",)]
    for p in add.partitions:
        stored = partitions[tuple(p.values)]
        assert (p.sd.location, p.createTime, p.parameters) == (stored.sd.location, stored.createTime, stored.parameters)
    assert alter.old_table == before_alter and alter.new_table == altered_table
    assert "note" in alter.new_table.parameters["spark.sql.sources.schema"]
    assert drop_part.partitions[0].values == ["2024-01-01"] and drop_part.table.tableName == "sales"
    assert drop.table.tableName == "sales" and drop.table.sd.location == altered_table.sd.location
    assert drop_db.database.name == db
    assert all(e.status and e.hive_version == "2.3.10" for e in events)
    for method in (
        "create_database",
        "create_table_with_environment_context",
        "add_partitions_req",
        "alter_table_with_environment_context",
        "drop_partition_with_environment_context",
        "drop_table_with_environment_context",
        "drop_database",
    ):
        assert shim.calls[method] >= 1, f"Spark did not call {method}: {dict(shim.calls)}"
