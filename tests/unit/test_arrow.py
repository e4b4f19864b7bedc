"""hivewire.arrow: every event type onto the one schema, column by column, plus the mixed-event generator.

``mixed_messages`` (Apiary messages of every type over many databases and tables, renames and multi-partition
events included) is shared with tests/integration and bench/, which put this directory on ``sys.path``.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hivewire.data._arrow import COLUMNS, SCHEMA, Undecodable, schema_markdown, to_arrow
from hivewire.errors import DecodeError
from hivewire.events import _apiary as apiary
from hivewire.events._model import (
    EVENT_CLASSES,
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropDatabaseEvent,
    DropPartitionEvent,
    DropTableEvent,
    EventType,
    InsertEvent,
    ListenerEvent,
    NotificationLogEvent,
    Origin,
)
from hivewire.events._types import TYPES
from hivewire.tools._testing import make_database, make_event, make_partition, make_table
from hivewire_thrift.hive_metastore.ttypes import NotificationEvent

sys.path.insert(0, str(Path(__file__).parent))
from apiary_messages import BASE, GOLDEN

ROOT = Path(__file__).resolve().parents[2]
TOPIC = "apiary"
T0_MS = 1_717_171_717_000  # 2024-05-31T16:08:37Z

# -- Mixed events, shared with the integration tests and the benchmarks ------------------------------------


def _table_templates(db: str, name: str, i: int) -> list[ListenerEvent]:
    """Messages of every table event type for one table (some partitioned by dt, some by region and dt)."""
    keys = {"dt": "string"} if i % 3 else {"region": "string", "dt": "string"}
    columns = {f"c{k}": ("bigint", "string", "double", "decimal(10,2)")[k % 4] for k in range(4 + i % 9)}
    params = {"hive.version": "2.3.9", "seq": str(i)}
    table = make_table(
        db,
        name,
        columns=columns,
        partition_keys=keys,
        parameters={"owner.team": f"team{i % 5}"},
        table_type="EXTERNAL_TABLE" if i % 2 else "MANAGED_TABLE",
        create_time=1717000000 + i,
    )
    table.sd.cols[0].comment = f"key of {name}"

    def part(day: int) -> Any:
        values = [f"2024-05-{day:02d}"] if len(keys) == 1 else ["eu", f"2024-05-{day:02d}"]
        return make_partition(table, values, parameters={"numRows": str(day * 10)})

    renamed_from = make_table(db, f"{name}_staging", columns=columns, partition_keys=keys)
    altered = make_table(db, name, columns=columns, partition_keys=keys, parameters={"owner.team": "old"})
    if i % 4 == 0:  # an Iceberg table: its commit's parameters, as one writer or another sets them
        assert table.parameters is not None and altered.parameters is not None
        table.parameters.update(iceberg_parameters(name, i))
        altered.parameters.update({"table_type": "ICEBERG", "metadata_location": f"s3://lake/{name}/m{i - 1}.json"})
    n_parts = 1 + i % 3
    return [
        CreateTableEvent(table=table, parameters=params),
        CreateTableEvent(table=table, parameters=params, status=False),
        AlterTableEvent(old_table=altered, new_table=table, parameters=params),
        AlterTableEvent(old_table=renamed_from, new_table=table, parameters=params),
        DropTableEvent(table=table, delete_data=bool(i % 2), parameters=params),
        AddPartitionEvent(table=table, partitions=[part(d) for d in range(1, 1 + n_parts)], parameters=params),
        AlterPartitionEvent(table=table, old_partition=part(1), new_partition=part(2), parameters=params),
        DropPartitionEvent(
            table=table, partitions=[part(d) for d in range(1, 1 + n_parts)], delete_data=False, parameters=params
        ),
        InsertEvent(
            db_name=db,
            table_name=name,
            partition_key_values=dict(zip(keys, part(3).values, strict=True)),
            files=[f"{table.sd.location}/f{k}.parquet" for k in range(1 + i % 2)],
            parameters=params,
        ),
        NotificationLogEvent(
            notification=NotificationEvent(i, 1717000000 + i, "CREATE_INDEX", db, name, '{"db":"d"}'),
            db_name=db,
            table_name=name,
        ),
        # The types only the notification log carries, as its source's records hold them.
        *(make_event(t, db, name, parameters=params) for t in LOG_TYPES if not TYPES[t].database_event),
    ]


LOG_TYPES = [t for t, spec in TYPES.items() if spec.log_only and t is not EventType.NOTIFICATION_LOG]


def iceberg_parameters(name: str, i: int) -> dict[str, str]:
    """An Iceberg table's parameters after commit ``i``: as Iceberg's Java HiveCatalog writes them, as pyiceberg
    does (no snapshot), and bent ways (numbers in the summary, bad JSON, numbers out of range)."""
    base = {"table_type": "ICEBERG", "metadata_location": f"s3://lake/{name}/m{i}.json"}
    previous = {"previous_metadata_location": f"s3://lake/{name}/m{i - 1}.json"}
    snapshot = {
        "current-snapshot-id": str(8_000_000_000_000_000_000 + i),
        "current-snapshot-timestamp-ms": str(T0_MS + i),
    }
    counts = {"added-records": str(10 * i), "added-data-files": "2", "deleted-data-files": "0", "total-records": "7"}
    variant = (i // 4) % 5
    if variant == 0:  # Java's HiveCatalog: the summary without its operation
        return {**base, **previous, **snapshot, "current-snapshot-summary": json.dumps(counts), "snapshot-count": "3"}
    if variant == 1:  # a writer that records the operation, and counts as JSON numbers
        summary = {"operation": "overwrite", "added-records": 5, "deleted-records": 3, "deleted-data-files": 1}
        return {**base, "table_type": "iceberg", **snapshot, "current-snapshot-summary": json.dumps(summary)}
    if variant == 2:  # pyiceberg 0.12: the locations only
        return {**base, **previous, "EXTERNAL": "TRUE"}
    if variant == 3:
        return {
            **base,
            "current-snapshot-id": "abc",
            "current-snapshot-timestamp-ms": " 5",
            "current-snapshot-summary": "{no",
        }
    bent = {"added-records": "9223372036854775808", "deleted-records": "-3", "added-data-files": "1_000"}
    return {
        **base,
        "metadata_location": "",
        "current-snapshot-id": "9223372036854775807",
        "current-snapshot-timestamp-ms": "-9223372036854775808",
        "current-snapshot-summary": json.dumps({**bent, "deleted-data-files": 5.0, "operation": 7}),
    }


def _database_templates(db: str) -> list[ListenerEvent]:
    database = make_database(db, parameters={"owner.team": "data"})
    return [
        CreateDatabaseEvent(database=database, parameters={"hive.version": "2.3.9"}),
        AlterDatabaseEvent(old_database=make_database(db, description="before"), new_database=database),
        DropDatabaseEvent(database=database),
        *(make_event(t, db) for t in LOG_TYPES if TYPES[t].database_event),
    ]


def mixed_messages(n: int, *, seed: int = 7, databases: int = 8, tables: int = 25) -> list[bytes]:
    """``n`` Apiary messages drawn from every event type over ``databases`` x ``tables`` tables.

    Each distinct message is encoded once and drawn many times, so 100,000 messages take a second to make.
    About 3% are database events.
    """
    rng = random.Random(seed)
    table_messages = [
        [apiary.encode(e) for e in _table_templates(f"db{d}", f"t{t}", d * tables + t)]
        for d in range(databases)
        for t in range(tables)
    ]
    db_messages = [[apiary.encode(e) for e in _database_templates(f"db{d}")] for d in range(databases)]
    out = []
    for _ in range(n):
        group = rng.choice(db_messages) if rng.random() < 0.03 else rng.choice(table_messages)
        out.append(rng.choice(group))
    return out


def decode_all(messages: list[bytes], *, topic: str = TOPIC, partitions: int = 4) -> list[ListenerEvent]:
    """The messages decoded with the origin a Kafka consumer would give them (Apiary's partitioning)."""
    offsets = [0] * partitions
    events = []
    for i, data in enumerate(messages):
        event = apiary.decode(data)
        p = apiary.partition_for(event.qualified_name, partitions)
        events.append(event.copy(origin=Origin(topic, p, offsets[p], T0_MS + i * 10)))
        offsets[p] += 1
    return events


# -- The schema ------------------------------------------------------------------------------------------


def test_schema_is_stable() -> None:
    """Columns are only ever appended: a Delta archive written by an older hivewire stays appendable."""
    assert SCHEMA.names[:27] == [
        "event_type",
        "db_name",
        "table_name",
        "qualified_name",
        "status",
        "event_time",
        "event_date",
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_timestamp",
        "location",
        "table_type",
        "columns",
        "partition_keys",
        "partition_values",
        "partition_locations",
        "old_partition_values",
        "old_name",
        "new_name",
        "parameters",
        "table_parameters",
        "delete_data",
        "files",
        "hive_version",
        "decode_error",
        "raw",
    ]
    assert SCHEMA.names[27:] == [
        "columns_added",
        "columns_removed",
        "columns_retyped",
        "parameters_changed",
        "old_location",
        "iceberg_metadata_location",
        "iceberg_previous_metadata_location",
        "iceberg_snapshot_id",
        "iceberg_committed_at",
        "iceberg_operation",
        "iceberg_added_records",
        "iceberg_deleted_records",
        "iceberg_added_files",
        "iceberg_deleted_files",
    ]
    assert SCHEMA.field("columns").type == pa.list_(
        pa.struct([("name", pa.string()), ("type", pa.string()), ("comment", pa.string())])
    )
    assert SCHEMA.field("parameters").type == pa.map_(pa.string(), pa.string())
    assert SCHEMA.field("event_time").type == pa.timestamp("us", tz="UTC")
    assert all(field.nullable for field in SCHEMA)
    assert [name for name, _, _ in COLUMNS] == SCHEMA.names


def test_docs_hold_the_generated_schema_table() -> None:
    text = (ROOT / "docs" / "data.md").read_text()
    assert schema_markdown() in text, "docs/data.md is stale: paste hivewire.arrow.schema_markdown() into it"
    for name in SCHEMA.names:
        assert f"| `{name}` |" in text


# -- Every type, from the golden Apiary messages ---------------------------------------------------------


def golden(version: str = "2.3") -> dict[str, ListenerEvent]:
    return {
        name.split("-")[0]: apiary.decode(json.dumps(message).encode(), origin=Origin("apiary", 2, 40 + i, T0_MS + i))
        for i, (name, message, _) in enumerate(GOLDEN)
        if name.endswith(f"hive{version}")
    }


def rows_by_type(version: str = "2.3") -> dict[str, dict[str, Any]]:
    events = golden(version)
    table = to_arrow(events.values())
    assert table.schema == SCHEMA
    return dict(zip(events, table.to_pylist(), strict=True))


@pytest.mark.parametrize("version", ["2.3", "3.1", "4.0"])
def test_common_columns(version: str) -> None:
    events = golden(version)
    rows = rows_by_type(version)
    for kind, row in rows.items():
        event = events[kind]
        assert row["event_type"] == event.event_type.value == kind.removeprefix("ON_")
        assert (row["db_name"], row["table_name"], row["qualified_name"]) == (
            event.db_name,
            event.table_name,
            event.qualified_name,
        )
        assert row["status"] is event.status
        assert event.origin is not None and event.origin.timestamp is not None
        assert (row["kafka_topic"], row["kafka_partition"], row["kafka_offset"], row["kafka_timestamp"]) == (
            "apiary",
            2,
            event.origin.offset,
            event.origin.timestamp,
        )
        assert row["event_time"] == datetime.fromtimestamp(event.origin.timestamp / 1000, tz=timezone.utc)
        assert row["event_date"] == date(2024, 5, 31)
        assert dict(row["parameters"]) == dict(event.parameters)
        assert row["hive_version"] == event.hive_version
        assert row["raw"] == event.raw and row["decode_error"] is None


def test_the_notification_logs_own_types_fill_the_columns_of_their_objects() -> None:
    events, rows = golden("4.0"), rows_by_type("4.0")
    acid_files = [f"{BASE}/dt=2024-05-01/delta_0000007_0000007/bucket_00000"]
    for kind in ("ON_RELOAD", "ON_ACID_WRITE", "ON_UPDATE_TABLE_COLUMN_STAT", "ON_UPDATE_PARTITION_COLUMN_STAT"):
        assert rows[kind]["location"] == BASE and rows[kind]["table_type"] == "EXTERNAL_TABLE", kind
        assert [c["name"] for c in rows[kind]["columns"]] == ["id", "country", "amount"], kind
    assert rows["ON_RELOAD"]["partition_values"] == rows["ON_ACID_WRITE"]["partition_values"] == [["2024-05-01"]]
    assert rows["ON_ACID_WRITE"]["files"] == rows["ON_COMMIT_TXN"]["files"] == acid_files
    for kind in ("ON_OPEN_TXN", "ON_CREATE_FUNCTION", "ON_ADD_PRIMARYKEY", "ON_COMMIT_COMPACTION"):
        row = rows[kind]
        assert (row["location"], row["columns"], row["partition_values"], row["files"]) == (None,) * 4, kind
    # Every row keeps its message: it decodes back to the same event.
    assert all(apiary.decode(rows[k]["raw"]) == events[k] for k in rows)


def test_table_columns() -> None:
    rows = rows_by_type()
    create = rows["ON_CREATE_TABLE"]
    assert create["location"] == BASE and create["table_type"] == "EXTERNAL_TABLE"
    assert create["columns"] == [
        {"name": "id", "type": "bigint", "comment": "order id"},
        {"name": "country", "type": "string", "comment": None},
        {"name": "amount", "type": "decimal(10,2)", "comment": "in EUR, ünïcødé ✓"},
    ]
    assert create["partition_keys"] == [{"name": "dt", "type": "string", "comment": "day"}]
    assert dict(create["table_parameters"]) == {
        "EXTERNAL": "TRUE",
        "transient_lastDdlTime": "1717171717",
        "comment": "<orders> & co",
    }
    for column in (
        "partition_values",
        "partition_locations",
        "old_partition_values",
        "old_name",
        "new_name",
        "delete_data",
        "files",
    ):
        assert create[column] is None, column
    alter = rows["ON_ALTER_TABLE"]
    assert (alter["old_name"], alter["new_name"]) == ("sales.orders_staging", "sales.orders")
    assert alter["location"] == BASE
    drop = rows["ON_DROP_TABLE"]
    assert drop["delete_data"] is True and drop["status"] is False


def test_partition_columns() -> None:
    rows = rows_by_type()
    add = rows["ON_ADD_PARTITION"]
    assert add["partition_values"] == [["2024-05-01"], ["2024-05-02"]]
    assert add["partition_locations"] == [f"{BASE}/dt=2024-05-01", f"{BASE}/dt=2024-05-02"]
    assert add["delete_data"] is None
    alter = rows["ON_ALTER_PARTITION"]
    assert alter["partition_values"] == [["2024-05-01"]] and alter["old_partition_values"] == ["2024-05-01"]
    drop = rows["ON_DROP_PARTITION"]
    assert drop["partition_values"] == [["2024-05-02"]] and drop["delete_data"] is False
    insert = rows["ON_INSERT"]
    assert insert["partition_keys"] == [{"name": "dt", "type": None, "comment": None}]
    assert insert["partition_values"] == [["2024-05-01"]] and insert["partition_locations"] == [None]
    assert insert["files"] == [f"{BASE}/dt=2024-05-01/part-00000.parquet", f"{BASE}/dt=2024-05-01/part-00001.parquet"]
    assert insert["columns"] is None and insert["location"] is None and insert["table_parameters"] is None


def test_database_columns() -> None:
    rows = rows_by_type()
    for kind in ("ON_CREATE_DATABASE", "ON_ALTER_DATABASE", "ON_DROP_DATABASE"):
        row = rows[kind]
        assert row["table_name"] is None and row["qualified_name"] == "sales"
        assert row["location"] == "s3://lake/sales.db"
        assert row["columns"] is None and row["table_type"] is None and row["old_name"] is None


def test_events_built_in_python_have_null_kafka_columns() -> None:
    table = make_table("db", "t", partition_keys={"dt": "string"})
    events = [
        AddPartitionEvent(table=table, partitions=[make_partition(table, ["x"])]),
        AlterTableEvent(old_table=make_table("db", "t0"), new_table=make_table("db", "t1")),
        AlterDatabaseEvent(old_database=make_database("a"), new_database=make_database("b")),
        InsertEvent(db_name="db", table_name="plain", files=["f"]),
    ]
    rows = to_arrow(events).to_pylist()
    for column in ("event_time", "event_date", "kafka_topic", "kafka_partition", "kafka_offset", "raw"):
        assert {row[column] for row in rows} == {None}
    assert rows[0]["partition_values"] == [["x"]] and rows[0]["parameters"] == []
    assert (rows[1]["old_name"], rows[1]["new_name"]) == ("db.t0", "db.t1")
    assert (rows[2]["old_name"], rows[2]["new_name"]) == ("a", "b")
    assert rows[3]["partition_values"] == [] and rows[3]["partition_keys"] == []


def test_events_built_in_python_without_objects() -> None:
    rows = to_arrow(
        [
            AlterTableEvent(db_name="db", table_name="t"),
            AlterPartitionEvent(db_name="db", table_name="t"),
            DropDatabaseEvent(db_name="db"),
            AlterDatabaseEvent(db_name="db"),
        ]
    ).to_pylist()
    assert [r["event_type"] for r in rows] == ["ALTER_TABLE", "ALTER_PARTITION", "DROP_DATABASE", "ALTER_DATABASE"]
    assert {r["location"] for r in rows} == {None} and {r["old_name"] for r in rows} == {None}


def test_event_without_timestamp() -> None:
    event = CreateTableEvent(table=make_table("db", "t"), origin=Origin("apiary", 0, 7))
    row = to_arrow([event]).to_pylist()[0]
    assert (row["kafka_offset"], row["kafka_timestamp"], row["event_time"], row["event_date"]) == (7, None, None, None)


# -- Failures ----------------------------------------------------------------------------------------------


def test_undecodable_rows_keep_the_message_and_the_reason() -> None:
    good = apiary.decode(json.dumps(GOLDEN[0][1]).encode(), origin=Origin("apiary", 0, 1, T0_MS))
    bad = Undecodable(Origin("apiary", 0, 2, T0_MS + 1), b"not json", "not JSON: ...")
    rows = to_arrow([good, bad]).to_pylist()
    assert rows[0]["decode_error"] is None
    assert rows[1]["event_type"] is None and rows[1]["decode_error"] == "not JSON: ..."
    assert (rows[1]["kafka_offset"], rows[1]["raw"], rows[1]["event_date"]) == (2, b"not json", date(2024, 5, 31))
    assert rows[1]["parameters"] is None and rows[1]["columns"] is None


def test_a_malformed_object_raises_or_is_recorded() -> None:
    message = json.loads(json.dumps(GOLDEN[0][1]))
    message["table"]["sd"]["cols"][2]["name"] = 5
    event = apiary.decode(json.dumps(message).encode(), origin=Origin("apiary", 1, 9, T0_MS))
    with pytest.raises(DecodeError, match=r"apiary/1@9\): .*table.sd.cols\[2\].name"):
        to_arrow([event])
    row = to_arrow([event], on_error="record").to_pylist()[0]
    assert row["event_type"] == "CREATE_TABLE" and row["qualified_name"] == "sales.orders"
    assert "table.sd.cols[2].name" in row["decode_error"]
    assert row["columns"] is None and row["raw"] == event.raw and row["kafka_offset"] == 9


def test_rejects_other_things() -> None:
    with pytest.raises(TypeError, match="not dict"):
        to_arrow([{"eventType": "ON_CREATE_TABLE"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="on_error"):
        to_arrow([], on_error="ignore")  # type: ignore[arg-type]


# -- Many events -------------------------------------------------------------------------------------------


def test_empty() -> None:
    table = to_arrow([])
    assert table.num_rows == 0 and table.schema == SCHEMA


def test_mixed_events_in_batches() -> None:
    events = decode_all(mixed_messages(2_000, seed=3))
    table = to_arrow(events, batch_size=300)
    assert table.num_rows == 2_000 and table.column("kafka_offset").num_chunks == 7
    assert table == to_arrow(events)
    kinds = table.column("event_type").to_pylist()
    assert kinds == [e.event_type.value for e in events]
    assert set(kinds) == {t.value for t in EventType if not TYPES[t].derived}  # derived types: never on the wire
    renames = sum(1 for e in events if isinstance(e, AlterTableEvent) and e.is_rename)
    assert table.column("old_name").null_count == 2_000 - renames
    assert table.column("db_name").to_pylist() == [e.db_name for e in events]


def test_mixed_messages_are_deterministic() -> None:
    assert mixed_messages(50, seed=1) == mixed_messages(50, seed=1) != mixed_messages(50, seed=2)
    assert type(apiary.decode(mixed_messages(1)[0])) in EVENT_CLASSES.values()


# -- Iceberg commits: the iceberg_* columns, from the message alone -----------------------------------------

ICEBERG_COLUMNS = [name for name in SCHEMA.names if name.startswith("iceberg_")]


def _iceberg_row(event: ListenerEvent) -> dict[str, Any]:
    """The iceberg_* columns of ``event``'s row, through the per-event path and through the message (the
    columnar decoder), which must agree."""
    row = to_arrow([event]).select(ICEBERG_COLUMNS)
    data = apiary.encode(event)
    assert to_arrow([data]).select(ICEBERG_COLUMNS).equals(row)
    return row.to_pylist()[0]


def test_iceberg_columns_of_a_java_commit() -> None:
    """An ALTER_TABLE as Iceberg's Java HiveCatalog makes it: the locations and the current snapshot."""
    old = make_table("lake", "orders", parameters={"table_type": "ICEBERG", "metadata_location": "s3://m/1.json"})
    summary = {"added-data-files": "2", "added-records": "40", "deleted-data-files": "1", "deleted-records": "12"}
    new = make_table(
        "lake",
        "orders",
        parameters={
            "table_type": "ICEBERG",
            "metadata_location": "s3://m/2.json",
            "previous_metadata_location": "s3://m/1.json",
            "current-snapshot-id": "5237198421653218475",
            "current-snapshot-timestamp-ms": str(T0_MS),
            "current-snapshot-summary": json.dumps({**summary, "total-records": "90"}),
        },
    )
    row = _iceberg_row(AlterTableEvent(old_table=old, new_table=new))
    assert row == {
        "iceberg_metadata_location": "s3://m/2.json",
        "iceberg_previous_metadata_location": "s3://m/1.json",
        "iceberg_snapshot_id": 5237198421653218475,
        "iceberg_committed_at": datetime.fromtimestamp(T0_MS / 1000, tz=timezone.utc),
        "iceberg_operation": None,  # Java's summary leaves the operation out
        "iceberg_added_records": 40,
        "iceberg_deleted_records": 12,
        "iceberg_added_files": 2,
        "iceberg_deleted_files": 1,
    }
    with_operation = new.parameters | {"current-snapshot-summary": json.dumps({**summary, "operation": "delete"})}
    new.parameters = with_operation
    assert _iceberg_row(AlterTableEvent(old_table=old, new_table=new))["iceberg_operation"] == "delete"
    # A create and a drop read the table they carry.
    created = _iceberg_row(CreateTableEvent(table=new))
    assert created["iceberg_metadata_location"] == "s3://m/2.json"
    assert created["iceberg_previous_metadata_location"] == "s3://m/1.json"
    assert _iceberg_row(DropTableEvent(table=new))["iceberg_snapshot_id"] == 5237198421653218475


def test_iceberg_columns_without_a_snapshot_and_of_other_tables() -> None:
    """pyiceberg 0.12 records the locations only; a Hive table, a bad value: null, never an error."""
    pyiceberg = make_table("lake", "t", parameters={"table_type": "ICEBERG", "metadata_location": "file:/w/2.json"})
    old = make_table("lake", "t", parameters={"table_type": "ICEBERG", "metadata_location": "file:/w/1.json"})
    row = _iceberg_row(AlterTableEvent(old_table=old, new_table=pyiceberg))
    assert (row["iceberg_metadata_location"], row["iceberg_previous_metadata_location"]) == (
        "file:/w/2.json",
        "file:/w/1.json",
    )
    assert {row[c] for c in ICEBERG_COLUMNS[2:]} == {None}
    hive = make_table("lake", "h", parameters={"metadata_location": "x", "current-snapshot-id": "5"})
    assert set(_iceberg_row(CreateTableEvent(table=hive)).values()) == {None}
    bad = make_table(
        "lake",
        "b",
        parameters={
            "table_type": "Iceberg",
            "metadata_location": "m",
            "current-snapshot-id": "+5",
            "current-snapshot-timestamp-ms": "1e3",
            "current-snapshot-summary": '["added-records"]',
        },
    )
    row = _iceberg_row(CreateTableEvent(table=bad))
    assert row["iceberg_metadata_location"] == "m" and {row[c] for c in ICEBERG_COLUMNS[2:]} == {None}
    # A database event has no table to read.
    database = rows_by_type()["ON_CREATE_DATABASE"]
    assert {database[c] for c in ICEBERG_COLUMNS} == {None}


def test_iceberg_columns_of_an_iceberg_commit_event() -> None:
    """An IcebergCommitEvent's own locations (none after a drop); the snapshot from its table."""
    from hivewire.events._model import IcebergCommitEvent

    table = make_table(
        "lake",
        "t",
        parameters={"table_type": "ICEBERG", "metadata_location": "m2", "current-snapshot-id": "42"},
    )
    commit = IcebergCommitEvent(table=table, previous_metadata_location="m1", metadata_location="m2")
    drop = IcebergCommitEvent(table=table, previous_metadata_location="m2", metadata_location=None)
    rows = to_arrow([commit, drop]).select(ICEBERG_COLUMNS).to_pylist()
    assert [(r["iceberg_previous_metadata_location"], r["iceberg_metadata_location"]) for r in rows] == [
        ("m1", "m2"),
        ("m2", None),
    ]
    assert [r["iceberg_snapshot_id"] for r in rows] == [42, 42]


def test_mixed_messages_fill_the_iceberg_columns() -> None:
    """The shared generator's Iceberg tables reach every iceberg_* column (so the equality tests cover them)."""
    table = to_arrow(decode_all(mixed_messages(3_000, seed=4)))
    for name in ICEBERG_COLUMNS:
        assert table.column(name).null_count < table.num_rows, name
