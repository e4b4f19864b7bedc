"""The notification-log workload: one change of every kind Hive's log writer records, made through hivewire's client.

:func:`workload` makes them under one database of its own (``db``) in a metastore of the ``oracle`` fixtures
(tests/oracle.py), Hive 3.1's or 4.x's; :data:`TYPED` is the class each of their types must arrive as. The
release tests (tests/integration/test_notification_log_releases.py) and the Drone Fly peers test of the Hive 4
log (tests/peers/test_dronefly_notification_log.py) share it.
"""

from __future__ import annotations

from oracle import RecordedMetastore

import hivewire as hw
from hivewire.metastore import MetastoreClient
from hivewire.testing import make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

#: The class each event type of the workload must arrive as (never the untyped NotificationLogEvent).
TYPED: dict[str, type[hw.ListenerEvent]] = {
    "CREATE_DATABASE": hw.CreateDatabaseEvent,
    "ALTER_DATABASE": hw.AlterDatabaseEvent,
    "CREATE_TABLE": hw.CreateTableEvent,
    "ALTER_TABLE": hw.AlterTableEvent,
    "ADD_PARTITION": hw.AddPartitionEvent,
    "ALTER_PARTITION": hw.AlterPartitionEvent,
    "INSERT": hw.InsertEvent,
    "DROP_PARTITION": hw.DropPartitionEvent,
    "CREATE_FUNCTION": hw.CreateFunctionEvent,
    "DROP_FUNCTION": hw.DropFunctionEvent,
    "DROP_TABLE": hw.DropTableEvent,
    "DROP_DATABASE": hw.DropDatabaseEvent,
}


def workload(server: RecordedMetastore, db: str) -> None:
    """Every kind of change of ``TYPED``, through hivewire's client (3.x's InsertEventRequestData)."""
    external = server.server.workdir / "external"
    with MetastoreClient(server.uri, timeout=300) as client:
        client.create_database(hms.Database(name=db, locationUri=(external / f"{db}.db").as_uri(), parameters={}))
        database = client.get_database(db)
        database.parameters = {"owner.team": "data"}
        client.alter_database(db, database)
        table = make_table(
            db, "orders", partition_keys={"dt": "string"}, table_type="EXTERNAL_TABLE",
            location=f"file:{external / db / 'orders'}",
        )  # fmt: skip
        client.create_table(table)
        table = client.get_table(db, "orders")
        client.add_partitions([make_partition(table, [d]) for d in ("2024-01-01", "2024-01-02")])
        part = client.get_partitions(db, "orders")[0]
        part.parameters = {**(part.parameters or {}), "numRows": "7"}
        client.alter_partition(db, "orders", part)
        client.fire_listener_event(
            hms.FireEventRequest(
                successful=True,
                data=hms.FireEventRequestData(
                    insertData=hms.InsertEventRequestData(filesAdded=["file:/x/part-0"], filesAddedChecksum=["ab12"])
                ),
                dbName=db,
                tableName="orders",
                partitionVals=["2024-01-01"],
            )
        )
        table.parameters = {**(table.parameters or {}), "comment": "changed"}
        client.alter_table(db, "orders", table)
        client.create_function(
            hms.Function("to_cents", db, "com.example.ToCents", "etl", hms.PrincipalType.USER, 1700000000,
                         hms.FunctionType.JAVA, [])
        )  # fmt: skip
        client.drop_partition(db, "orders", ["2024-01-02"], True)
        client.drop_function(db, "to_cents")
        client.drop_table(db, "orders", True)
        client.drop_database(db, True, True)
