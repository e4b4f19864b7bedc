"""The oracle works: the Java RecordingListener inside a real metastore records what the metastore fires."""

from __future__ import annotations

from oracle import RecordedMetastore

from hivewire.metastore import MetastoreClient
from hivewire.testing import make_table
from hivewire_thrift.hive_metastore import ttypes as hms


def test_the_recording_listener_sees_what_the_metastore_fires(
    recorded_metastore: RecordedMetastore, unique: str
) -> None:
    since = recorded_metastore.mark()
    with MetastoreClient(recorded_metastore.uri) as client:
        # ownerType left unset: the metastore stores USER but fires the event with the client's object.
        client.create_database(hms.Database(name=unique, description="oracle", parameters={}))
        client.create_table(make_table(unique, "orders", partition_keys={"dt": "string"}))
        client.drop_table(unique, "orders", True)
        client.drop_database(unique, True, True)
    events = recorded_metastore.events(since)
    assert [e.event_type for e in events] == ["CREATE_DATABASE", "CREATE_TABLE", "DROP_TABLE", "DROP_DATABASE"]
    assert all(e.status for e in events)
    created = events[0]["database"]
    assert isinstance(created, hms.Database)
    assert (created.name, created.description, created.ownerType) == (unique, "oracle", None)
    table = events[1]["table"]
    assert isinstance(table, hms.Table)
    assert (table.dbName, table.tableName, [k.name for k in table.partitionKeys or []]) == (unique, "orders", ["dt"])
    assert events[2]["deleteData"] is True
