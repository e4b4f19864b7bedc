"""ALTER_TABLE and ALTER_PARTITION show what changed: in the notebook's HTML and as appended Arrow columns."""

from __future__ import annotations

import copy

import hivewire as hw
from hivewire.arrow import SCHEMA, to_arrow
from hivewire.testing import make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

#: The columns of the first release: the schema only ever appends (archives and readers rely on it).
FIRST_COLUMNS = [
    "event_type", "db_name", "table_name", "qualified_name", "status", "event_time", "event_date", "kafka_topic",
    "kafka_partition", "kafka_offset", "kafka_timestamp", "location", "table_type", "columns", "partition_keys",
    "partition_values", "partition_locations", "old_partition_values", "old_name", "new_name", "parameters",
    "table_parameters", "delete_data", "files", "hive_version", "decode_error", "raw",
]  # fmt: skip


def _altered_table() -> hw.AlterTableEvent:
    old = make_table("sales", "orders", columns={"id": "int", "amount": "int", "legacy": "string"})
    old.parameters = {"owner_team": "a", "retention": "30", "transient_lastDdlTime": "1"}
    new = copy.deepcopy(old)
    new.tableName = "orders_v2"
    assert new.sd is not None and new.sd.cols is not None
    new.sd.cols = [
        hms.FieldSchema("id", "int", None),
        hms.FieldSchema("amount", "decimal(10,2)", None),
        hms.FieldSchema("note", "string", "why"),
    ]
    new.sd.location = "s3://lake/sales/orders_v2"
    new.parameters = {"owner_team": "b", "pii": "true", "transient_lastDdlTime": "2"}
    return hw.AlterTableEvent(old_table=old, new_table=new)


def test_the_schema_only_appends() -> None:
    assert SCHEMA.names[: len(FIRST_COLUMNS)] == FIRST_COLUMNS
    assert SCHEMA.names[len(FIRST_COLUMNS) :] == [
        "columns_added", "columns_removed", "columns_retyped", "parameters_changed", "old_location",
        # issue 32: the Iceberg commit's columns, after the ALTER differences
        "iceberg_metadata_location", "iceberg_previous_metadata_location", "iceberg_snapshot_id",
        "iceberg_committed_at", "iceberg_operation", "iceberg_added_records", "iceberg_deleted_records",
        "iceberg_added_files", "iceberg_deleted_files",
    ]  # fmt: skip


def test_alter_table_changes_in_html_and_arrow() -> None:
    event = _altered_table()
    facts = event._summary()
    assert facts["renamed from"] == "sales.orders"
    assert facts["columns added"] == ["note string"] and facts["columns removed"] == ["legacy string"]
    assert facts["columns retyped"] == ["amount: int -> decimal(10,2)"]
    assert facts["parameters"] == ["owner_team: a -> b", "+pii=true", "-retention"]  # not transient_lastDdlTime
    assert facts["location"] == "s3://lake/sales/orders_v2" and facts["previous location"].endswith("/orders")
    page = event._repr_html_()
    assert "columns retyped" in page and "amount: int -&gt; decimal(10,2)" in page

    (row,) = to_arrow([event]).to_pylist()
    assert row["columns_added"] == [{"name": "note", "type": "string", "comment": "why"}]
    assert row["columns_removed"] == [{"name": "legacy", "type": "string", "comment": None}]
    assert row["columns_retyped"] == [{"name": "amount", "old_type": "int", "new_type": "decimal(10,2)"}]
    assert row["parameters_changed"] == [
        {"key": "owner_team", "old_value": "a", "new_value": "b"},
        {"key": "pii", "old_value": None, "new_value": "true"},
        {"key": "retention", "old_value": "30", "new_value": None},
    ]
    assert row["old_location"].endswith("/orders") and row["location"] == "s3://lake/sales/orders_v2"
    assert (row["old_name"], row["new_name"]) == ("sales.orders", "sales.orders_v2")


def test_alter_partition_changes_and_other_types_leave_the_columns_null() -> None:
    table = make_table("sales", "orders", partition_keys={"dt": "string"})
    old = make_partition(table, ["2024-01-01"])
    new = make_partition(table, ["2024-01-01"], location="s3://elsewhere/dt=2024-01-01")
    new.parameters = {"numRows": "10"}
    event = hw.AlterPartitionEvent(table=table, old_partition=old, new_partition=new)
    assert event._summary()["parameters"] == ["+numRows=10"]
    assert old.sd is not None and event._summary()["previous location"] == old.sd.location
    unchanged = hw.AlterTableEvent(old_table=make_table("a", "b"), new_table=make_table("a", "b"))
    created = hw.CreateTableEvent(table=make_table("a", "b"))
    rows = to_arrow([event, unchanged, created]).to_pylist()
    assert rows[0]["parameters_changed"] == [{"key": "numRows", "old_value": None, "new_value": "10"}]
    assert rows[0]["old_location"] == old.sd.location
    assert rows[0]["partition_locations"] == ["s3://elsewhere/dt=2024-01-01"]
    assert rows[1]["columns_added"] == [] and rows[1]["parameters_changed"] == []  # applies, and is empty
    assert all(rows[2][c] is None for c in SCHEMA.names[len(FIRST_COLUMNS) :])
