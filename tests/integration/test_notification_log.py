"""NotificationLogSource against a real metastore whose notification log is written by Hive's own classes.

The recorded metastore loads tests/java's NotificationLogListener (Hive 2.3's JSONMessageFactory builds each
message, RawStore.addNotificationEvent stores it) next to the RecordingListener oracle; hivewire reads the log
through the real get_next_notification, and each event is compared with what the metastore fired (the
Apiary listener's view of the same change).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hmsclient import hmsclient
from oracle import Recorded, RecordedMetastore

import hivewire as hw
from hivewire.metastore import MetastoreClient
from hivewire.runtime._notification_log import EVENTS_MISSING, FilePosition, NotificationLogSource, fetch
from hivewire.testing import make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

FAST = {"hivewire.commit.interval.ms": "50", "hivewire.shutdown.timeout.ms": "10000"}
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
    functions = [e for e in events if isinstance(e, hw.NotificationLogEvent)]
    modeled = [e for e in events if not isinstance(e, hw.NotificationLogEvent)]
    assert [e.event_type.value for e in modeled] == [r.event_type for r in recorded]
    for r, e in zip(recorded, modeled, strict=True):
        same_change(r, e)
    assert [f.hive_event_type for f in functions] == ["CREATE_FUNCTION", "DROP_FUNCTION"]
    assert functions[1].message["functionName"] == "to_cents" and functions[0].db_name == unique
    # Offsets are event ids: consecutive, and the position file holds the last one.
    ids = [e.origin.offset for e in events if e.origin]
    assert ids == list(range(ids[0], ids[0] + len(ids)))
    assert FilePosition(position).load() == ids[-1]
    # A second run from the saved position finds nothing new: nothing is delivered twice.
    assert read_all(uri, position) == []


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
