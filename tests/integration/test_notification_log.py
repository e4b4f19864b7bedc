"""NotificationLogSource against a real metastore whose notification log is written by Hive's own classes.

The recorded metastore loads tests/java's NotificationLogListener (Hive 2.3's JSONMessageFactory builds each
message, RawStore.addNotificationEvent stores it) next to the RecordingListener oracle; hivewire reads the log
through the real get_next_notification, and each event is compared with what the metastore fired (the
Apiary listener's view of the same change).
"""

from __future__ import annotations

import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaPartition
from hmsclient import hmsclient
from oracle import Recorded, RecordedMetastore
from runtime_harness import topic_size
from waiting import wait_for

import hivewire as hw
from hivewire.events._notification import from_notification
from hivewire.metastore import MetastoreClient
from hivewire.runtime._notification_log import EVENTS_MISSING, FilePosition, NotificationLogSource, fetch
from hivewire.testing import make_partition, make_table
from hivewire.tools._kafka_broker import create_topic
from hivewire_thrift.hive_metastore import ttypes as hms

FAST = {"hivewire.commit.interval.ms": "50", "hivewire.shutdown.timeout.ms": "10000", "endpoint.port": "0"}
CLEAN_TRIGGER = "hivewire_clean_notification_log"  # NotificationLogListener cleans the log on this database


def current_id(uri: str) -> int:
    with MetastoreClient(uri) as client:
        current = client.call("get_current_notificationEventId")
        assert isinstance(current, hms.CurrentNotificationEventId)
        return current.eventId


def read_all(uri: str, position: Path, **kwargs: Any) -> list[hw.ListenerEvent]:
    """Every event after the saved position, through an app, until the log is read to its end."""
    app = hw.App("notification-test", config=FAST)
    seen: list[hw.ListenerEvent] = []
    lock = threading.Lock()

    @app.on(status=None)
    def collect(event: hw.ListenerEvent) -> None:
        with lock:
            seen.append(event)

    app.run(NotificationLogSource(uri, position=position, stop_at_end=True, **kwargs), handle_signals=False)
    return sorted(seen, key=lambda e: e.origin.offset if e.origin else 0)


def changes_through_real_clients(uri: str, db: str) -> None:
    """Every kind of change the 2.3 log records, made by hivewire's client and by hmsclient (a peer)."""
    with MetastoreClient(uri) as client:
        client.create_database(hms.Database(name=db, description="notification log", parameters={"a": "1"}))
        table = make_table(db, "orders", partition_keys={"dt": "string"}, table_type="EXTERNAL_TABLE")
        client.create_table(table)
        table = client.get_table(db, "orders")
        client.add_partitions([make_partition(table, [d]) for d in ("2024-01-01", "2024-01-02")])
        part = client.get_partitions(db, "orders")[0]
        part.parameters = {**(part.parameters or {}), "numRows": "7"}
        client.alter_partition(db, "orders", part)
        client.create_function(
            hms.Function(
                functionName="to_cents",
                dbName=db,
                className="com.example.ToCents",
                ownerName="etl",
                ownerType=hms.PrincipalType.USER,
                functionType=hms.FunctionType.JAVA,
                resourceUris=[],
                createTime=1700000000,
            )
        )
    host, port = uri.removeprefix("thrift://").split(":")
    with hmsclient.HMSClient(host=host, port=int(port)) as peer:
        from hmsclient.genthrift.hive_metastore import ttypes as peer_types

        # Hive 2.3's InsertEventRequestData has other field ids than later versions; hmsclient speaks 2.x.
        insert = peer_types.InsertEventRequestData(filesAdded=["file:/x/part-0"], filesAddedChecksum=["ab12"])
        peer.fire_listener_event(
            peer_types.FireEventRequest(
                successful=True,
                data=peer_types.FireEventRequestData(insertData=insert),
                dbName=db,
                tableName="orders",
                partitionVals=["2024-01-01"],
            )
        )
        altered = peer.get_table(db, "orders")
        altered.parameters = {**(altered.parameters or {}), "comment": "changed by hmsclient"}
        peer.alter_table(db, "orders", altered)
        peer.drop_partition(db, "orders", ["2024-01-02"], True)
        peer.drop_function(db, "to_cents")
        peer.drop_table(db, "orders", True)
        peer.drop_database(db, True, True)


def same_change(recorded: Recorded, event: hw.ListenerEvent) -> None:
    """The event read from the log holds what the metastore fired, wherever Hive 2.3's message carries it."""
    assert event.event_type.value == recorded.event_type and event.status
    if isinstance(event, hw.CreateTableEvent):
        assert event.table == recorded["table"]
    elif isinstance(event, hw.AlterTableEvent):
        assert (event.old_table, event.new_table) == (recorded["oldTable"], recorded["newTable"])
    elif isinstance(event, hw.DropTableEvent):  # 2.3's message names the table only
        table = recorded["table"]
        assert isinstance(table, hms.Table)
        assert (event.table.dbName, event.table.tableName) == (table.dbName, table.tableName)
    elif isinstance(event, hw.AddPartitionEvent):
        assert (event.table, event.partitions) == (recorded["table"], recorded["partitions"])
    elif isinstance(event, hw.AlterPartitionEvent):
        assert event.table == recorded["table"]
        assert (event.old_partition, event.new_partition) == (recorded["oldPartition"], recorded["newPartition"])
    elif isinstance(event, hw.DropPartitionEvent):  # 2.3's message has the partitions' values only
        partitions = recorded["partitions"]
        assert isinstance(partitions, list)
        assert event.table == recorded["table"] and [p.values for p in event.partitions] == [
            p.values for p in partitions
        ]
    elif isinstance(event, hw.InsertEvent):
        assert (event.db_name, event.table_name) == (recorded["databaseName"], recorded["tableName"])
        assert event.partition_key_values == recorded["partitionKeyValues"]
        assert (event.files, event.file_checksums) == (recorded["files"], recorded["fileChecksums"])
    elif isinstance(event, (hw.CreateDatabaseEvent, hw.DropDatabaseEvent)):  # 2.3: by name only
        database = recorded["database"]
        assert isinstance(database, hms.Database) and event.database.name == database.name
    else:
        raise AssertionError(f"unexpected {event!r}")


def test_every_change_through_real_clients_reaches_a_listener(
    recorded_metastore: RecordedMetastore, unique: str, tmp_path: Path
) -> None:
    uri = recorded_metastore.uri
    position = tmp_path / "position"
    FilePosition(position).save(current_id(uri))
    since = recorded_metastore.mark()
    changes_through_real_clients(uri, unique)
    recorded = [r for r in recorded_metastore.events(since) if r.event_type not in ("LOAD_PARTITION_DONE",)]
    events = read_all(uri, position)
    functions = [e for e in events if isinstance(e, (hw.CreateFunctionEvent, hw.DropFunctionEvent))]
    modeled = [e for e in events if e not in functions]
    assert [e.event_type.value for e in modeled] == [r.event_type for r in recorded]
    for r, e in zip(recorded, modeled, strict=True):
        same_change(r, e)
    # Functions are not Apiary's (the oracle records none): they arrive typed, as the metastore stored them.
    created, dropped = functions
    assert isinstance(created, hw.CreateFunctionEvent) and isinstance(dropped, hw.DropFunctionEvent)
    stored = created.function
    assert (stored.functionName, stored.dbName, stored.className) == ("to_cents", unique, "com.example.ToCents")
    assert (stored.ownerName, stored.ownerType, stored.functionType) == (
        "etl",
        hms.PrincipalType.USER,
        hms.FunctionType.JAVA,
    )
    assert (created.db_name, created.table_name) == (unique, None)
    assert (dropped.function_name, dropped.db_name) == ("to_cents", unique)
    # Offsets are event ids: consecutive, and the position file holds the last one.
    ids = [e.origin.offset for e in events if e.origin]
    assert ids == list(range(ids[0], ids[0] + len(ids)))
    assert FilePosition(position).load() == ids[-1]
    # A second run from the saved position finds nothing new: nothing is delivered twice.
    assert read_all(uri, position) == []


def test_every_change_through_spark_sql_reaches_a_listener(
    recorded_metastore: RecordedMetastore, unique: str, tmp_path: Path
) -> None:
    from pyspark.sql import SparkSession

    uri = recorded_metastore.uri
    position = tmp_path / "position"
    FilePosition(position).save(current_id(uri))
    since = recorded_metastore.mark()
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("hivewire-notification-log-test")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", uri)
        .config("spark.sql.warehouse.dir", str(tmp_path / "warehouse"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .enableHiveSupport()
        .getOrCreate()
    )
    try:
        for statement in (
            f"CREATE DATABASE {unique}",
            f"CREATE TABLE {unique}.orders (id BIGINT, amount DOUBLE) PARTITIONED BY (dt STRING) STORED AS PARQUET",
            f"INSERT INTO {unique}.orders PARTITION (dt='2024-01-01') VALUES (1, 2.5)",
            f"ALTER TABLE {unique}.orders ADD PARTITION (dt='2024-01-02')",
            f"ALTER TABLE {unique}.orders SET TBLPROPERTIES ('owner.team'='data')",
            f"ALTER TABLE {unique}.orders DROP PARTITION (dt='2024-01-02')",
            f"DROP TABLE {unique}.orders",
            f"DROP DATABASE {unique}",
        ):
            spark.sql(statement)
    finally:
        spark.stop()
    recorded = [r for r in recorded_metastore.events(since) if r.status and r.event_type != "LOAD_PARTITION_DONE"]
    events = [e for e in read_all(uri, position) if not isinstance(e, hw.NotificationLogEvent)]
    kinds = [e.event_type.value for e in events]
    assert kinds == [r.event_type for r in recorded]
    assert {"CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION", "ALTER_TABLE", "DROP_PARTITION"} <= set(kinds)
    for r, e in zip(recorded, events, strict=True):
        same_change(r, e)


def test_filters_select_entries_even_where_the_server_ignores_them(
    recorded_metastore: RecordedMetastore, unique: str, tmp_path: Path
) -> None:
    uri = recorded_metastore.uri
    position = tmp_path / "position"
    FilePosition(position).save(current_id(uri))
    with MetastoreClient(uri) as client:
        for db in (f"{unique}_a", f"{unique}_b"):
            client.create_database(hms.Database(name=db, parameters={}))
            for name in ("kept", "other"):
                table = make_table(db, name, partition_keys={"dt": "string"})
                client.create_table(table)
                client.add_partitions([make_partition(table, ["2024-01-01"])])
        client.create_database(hms.Database(name=f"{unique}_c", parameters={}))  # the log ends on a filtered entry
    last = current_id(uri)
    # Hive 2.3 ignores the request's filter fields: the source filters every entry itself.
    events = read_all(uri, position, db=f"{unique}_A", tables=["KEPT"], skip_types=["ADD_PARTITION"])
    assert [(e.event_type.value, e.qualified_name) for e in events] == [("CREATE_TABLE", f"{unique}_a.kept")]
    assert FilePosition(position).load() == last  # the filtered tail counts as read: no gap, nothing again
    assert read_all(uri, position, db=f"{unique}_a") == []


def test_a_position_behind_the_retention_is_reported_as_a_gap(
    recorded_metastore: RecordedMetastore, unique: str, tmp_path: Path
) -> None:
    uri = recorded_metastore.uri
    position = tmp_path / "position"
    FilePosition(position).save(current_id(uri))
    with MetastoreClient(uri) as client:
        for i in range(3):
            client.create_database(hms.Database(name=f"{unique}_{i}", parameters={}))
        missed = current_id(uri)
        # The cleaner removes entries older than the current second; let the three above get that old.
        threading.Event().wait(1.5)
        client.create_database(hms.Database(name=CLEAN_TRIGGER, parameters={}))
        client.drop_database(CLEAN_TRIGGER, True, True)
    with MetastoreClient(uri) as client:
        first_kept = fetch(client, 0, 1)[0].eventId
    assert first_kept > missed  # the log really lost them
    saved = FilePosition(position).load()
    assert saved is not None
    events = read_all(uri, position)
    gap = events[0]
    assert isinstance(gap, hw.NotificationLogEvent) and gap.hive_event_type == EVENTS_MISSING
    assert gap.message["firstEventId"] == saved + 1 and gap.message["lastEventId"] == first_kept - 1
    assert "timetolive" in str(gap.message["reason"])
    created = [e for e in events[1:] if isinstance(e, hw.CreateDatabaseEvent)]
    assert [e.db_name for e in created] == [CLEAN_TRIGGER]
    # With on_gap=stop the app stops with the reason instead, and its position stays where it was.
    FilePosition(position).save(saved)
    with pytest.raises(hw.errors.SourceError, match=r"on.gap=stop.*no longer in the notification log"):
        read_all(uri, position, on_gap="stop")
    assert FilePosition(position).load() == saved


# -- kill -9 ------------------------------------------------------------------------------------------------

APP = """
import os, sys, time
import hivewire as hw
from hivewire.runtime import NotificationLogSource

uri, position, handled = sys.argv[1], sys.argv[2], sys.argv[3]
app = hw.App("notification-kill", config={"hivewire.commit.interval.ms": "20", "endpoint.port": "0"})
out = open(handled, "a")

@app.on(status=None)
def record(event):
    time.sleep(0.01)  # slow enough for a kill to land mid-stream
    out.write(f"{event.origin.offset}\\n")
    out.flush()
    os.fsync(out.fileno())

app.run(NotificationLogSource(uri, position=position, batch_size=7, stop_at_end=len(sys.argv) > 4),
        handle_signals=False)
"""


def handled_ids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_kill_9_at_random_moments_never_skips_an_event(
    recorded_metastore: RecordedMetastore, unique: str, tmp_path: Path
) -> None:
    uri = recorded_metastore.uri
    position, handled, script = tmp_path / "position", tmp_path / "handled", tmp_path / "app.py"
    script.write_text(APP)
    first = current_id(uri) + 1
    FilePosition(position).save(first - 1)
    with MetastoreClient(uri) as client:
        client.create_database(hms.Database(name=unique, parameters={}))
        table = make_table(unique, "t", partition_keys={"dt": "string"})
        client.create_table(table)
        for i in range(80):
            client.add_partitions([make_partition(table, [f"d{i}"])])
    last = current_id(uri)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    rng = random.Random(unique)
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, str(script), uri, str(position), str(handled)], env=env)
        try:
            target = len(handled_ids(handled)) + rng.randint(3, 20)
            wait_for(lambda p=proc, t=target: len(handled_ids(handled)) >= t or p.poll() is not None, "events", 120)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
    saved = FilePosition(position).load()
    assert saved is not None and saved < last  # killed before the end: the last run has work left
    subprocess.run([sys.executable, str(script), uri, str(position), str(handled), "to-end"], env=env, check=True)
    ids = handled_ids(handled)
    assert set(ids) >= set(range(first, last + 1))  # every event id handled at least once
    assert min(ids) == first and FilePosition(position).load() == last


# -- the bridge ---------------------------------------------------------------------------------------------


def topic_records(bootstrap: str, topic: str) -> list[Any]:
    """Every record of ``topic``, read from the start of each partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex}"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        ends = {p: consumer.get_watermark_offsets(KafkaPartition(topic, p), timeout=10)[1] for p in metadata.partitions}
        consumer.assign([KafkaPartition(topic, p, 0) for p, end in ends.items() if end > 0])
        out: list[Any] = []
        while len(out) < sum(ends.values()):
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            out.append(message)
        return out
    finally:
        consumer.close()


def test_the_bridge_publishes_each_event_once_across_kill_9(
    recorded_metastore: RecordedMetastore, kafka: str, unique: str, tmp_path: Path
) -> None:
    uri, topic = recorded_metastore.uri, f"bridge-{unique}"
    checkpoint = tmp_path / "checkpoint"
    first = current_id(uri) + 1
    with MetastoreClient(uri) as client:
        client.create_database(hms.Database(name=unique, parameters={}))
        for t in range(4):
            table = make_table(unique, f"t{t}", partition_keys={"dt": "string"})
            client.create_table(table)
            for i in range(40):  # enough that neither kill below comes after the bridge's last event
                client.add_partitions([make_partition(table, [f"d{i}"])])
        client.create_function(
            hms.Function("f", unique, "com.example.F", "etl", hms.PrincipalType.USER, 0, hms.FunctionType.JAVA, [])
        )
    last = current_id(uri)
    # Where the bridge starts: just before this test's events (its checkpoint, with no offsets yet).
    checkpoint.write_text(json.dumps({"eventId": first - 1, "offsets": {}}))
    command = [sys.executable, "-m", "hivewire", "bridge", "--to-kafka", "--bootstrap-servers", kafka, "--topic", topic,
               "--metastore-uris", uri, "--checkpoint", str(checkpoint), "--batch-size", "3"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # The topic first, as a deployment has it: a first run finding none would stop at once, not be killed.
    assert create_topic(kafka, topic, 4) == 4
    for target in (10, 30):
        proc = subprocess.Popen(command, env=env)
        try:
            wait_for(lambda p=proc, t=target: topic_size(kafka, topic) >= t or p.poll() is not None, "messages", 120)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
    assert topic_size(kafka, topic) < last - first  # the kills left work for the last run
    subprocess.run([*command, "--until-end"], env=env, check=True)
    records = topic_records(kafka, topic)
    ids = [int(dict(r.headers())["hivewire.notification.event.id"]) for r in records]
    assert sorted(ids) == sorted(set(ids))  # once per event id
    with MetastoreClient(uri) as client:
        entries = {e.eventId: e for e in fetch(client, first - 1, last - first + 1)}
    apiary_ids = [i for i, e in entries.items() if e.eventType != "CREATE_FUNCTION"]
    assert sorted(ids) == apiary_ids  # every event Apiary carries, and nothing else
    for record in records:
        event = hw.apiary.decode(record.value())
        event_id = int(dict(record.headers())["hivewire.notification.event.id"])
        expected = from_notification(entries[event_id], {"DB_NOTIFICATION_EVENT_ID_KEY_NAME": str(event_id)})
        assert event == expected
        # Placed and keyed as the Apiary listener does: partition of the qualified name, key the time in ms.
        assert record.partition() == hw.apiary.partition_for(event.qualified_name, 4)
        assert struct.unpack(">q", record.key()) == (entries[event_id].eventTime * 1000,)
