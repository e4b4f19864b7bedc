"""100,000 mixed events -> Arrow -> a Spark DataFrame (local Spark, one session for the module).

Every aggregate is computed twice: by Spark over the DataFrame, and in Python straight from the events'
accessors, so the Arrow conversion and Spark's Arrow path are both checked against the event model.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hivewire.data import _spark as hw_spark
from hivewire.data._arrow import SCHEMA, paused_gc, to_arrow
from hivewire.data._notebook import EventList
from hivewire.events._model import (
    AcidWriteEvent,
    AddPartitionEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CommitTxnEvent,
    DropPartitionEvent,
    EventType,
    InsertEvent,
    ListenerEvent,
    ReloadEvent,
)
from hivewire.events._types import TYPES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from spark_local import local_session
from test_arrow import decode_all, mixed_messages

N = 100_000


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with local_session("hivewire-arrow-test") as session:
        yield session


@pytest.fixture(scope="module")
def messages() -> list[bytes]:
    return mixed_messages(N, seed=2024)


@pytest.fixture(scope="module")
def events(messages: list[bytes]) -> list[ListenerEvent]:
    with paused_gc():
        return decode_all(messages)


@pytest.fixture(scope="module")
def frame(spark: Any, events: list[ListenerEvent]) -> Any:
    table = to_arrow(events)
    assert table.num_rows == N and table.schema == SCHEMA
    df = hw_spark.to_dataframe(spark, table).cache()
    assert df.count() == N
    return df


def spark_counts(frame: Any, column: str) -> dict[Any, int]:
    return {row[column]: row["count"] for row in frame.groupBy(column).count().collect()}


def test_schema(frame: Any) -> None:
    from pyspark.sql.pandas.types import from_arrow_schema

    assert frame.schema == hw_spark.SPARK_SCHEMA
    # The same mapping pyspark itself derives from the Arrow schema.
    assert from_arrow_schema(SCHEMA) == hw_spark.SPARK_SCHEMA
    assert hw_spark.SPARK_SCHEMA.fieldNames() == SCHEMA.names


def test_counts_match_the_generated_messages(frame: Any, messages: list[bytes]) -> None:
    """Against the input itself, read with the standard library's json, not through hivewire's decoder."""
    envelopes = [json.loads(m) for m in messages]
    assert spark_counts(frame, "event_type") == Counter(e["eventType"].removeprefix("ON_") for e in envelopes)
    assert spark_counts(frame, "qualified_name") == Counter(e["qualifiedTableName"] for e in envelopes)
    assert spark_counts(frame, "db_name") == Counter(e["databaseName"] for e in envelopes)
    assert spark_counts(frame, "status") == Counter(e["status"] for e in envelopes)
    assert sum(spark_counts(frame, "event_type").values()) == N


def test_counts_per_type_database_and_table(frame: Any, events: list[ListenerEvent]) -> None:
    assert spark_counts(frame, "event_type") == Counter(e.event_type.value for e in events)
    assert spark_counts(frame, "db_name") == Counter(e.db_name for e in events)
    assert spark_counts(frame, "qualified_name") == Counter(e.qualified_name for e in events)
    assert spark_counts(frame, "table_name") == Counter(e.table_name for e in events)
    assert spark_counts(frame, "status") == Counter(e.status for e in events)
    # every type that travels on the wire is in the mix (derived ones, Iceberg commits, never do)
    assert len(spark_counts(frame, "event_type")) == len([t for t in EventType if not TYPES[t].derived])


def test_renames_round_trip(frame: Any, events: list[ListenerEvent]) -> None:
    expected = Counter(
        (f"{e.old_table.dbName}.{e.old_table.tableName}", e.qualified_name)
        for e in events
        if isinstance(e, AlterTableEvent) and e.is_rename
    )
    got = frame.where("old_name IS NOT NULL").groupBy("old_name", "new_name").count().collect()
    assert {(r["old_name"], r["new_name"]): r["count"] for r in got} == expected
    assert sum(expected.values()) > 1000


def test_partitions_round_trip(frame: Any, events: list[ListenerEvent]) -> None:
    from pyspark.sql import functions as F

    def partitions(e: ListenerEvent) -> list[tuple[tuple[str, ...], str | None]]:
        if isinstance(e, (AddPartitionEvent, DropPartitionEvent)):
            return [(tuple(p.values), p.sd.location) for p in e.partitions]
        if isinstance(e, AlterPartitionEvent):
            return [(tuple(e.new_partition.values), e.new_partition.sd.location)]
        if isinstance(e, InsertEvent):
            return [(tuple(e.partition_key_values.values()), None)]
        # The notification log's types that carry partitions: a reload's, an ACID write's, a commit's.
        one = e.partition if isinstance(e, ReloadEvent) else e.partition_obj if isinstance(e, AcidWriteEvent) else None
        listed = e.partition_objs if isinstance(e, CommitTxnEvent) else [one] if one is not None else []
        return [(tuple(p.values), p.sd.location) for p in listed]

    expected = Counter(p for e in events for p in partitions(e))
    exploded = (
        frame.select(F.explode(F.arrays_zip("partition_values", "partition_locations")).alias("p"))
        .select(F.col("p.partition_values").alias("values"), F.col("p.partition_locations").alias("loc"))
        .groupBy("values", "loc")
        .count()
        .collect()
    )
    assert {(tuple(r["values"]), r["loc"]): r["count"] for r in exploded} == expected
    old = Counter(tuple(e.old_partition.values) for e in events if isinstance(e, AlterPartitionEvent))
    got = frame.where("old_partition_values IS NOT NULL").groupBy("old_partition_values").count().collect()
    assert {tuple(r["old_partition_values"]): r["count"] for r in got} == old
    keys = Counter(
        tuple(k.name for k in e.table.partitionKeys)
        for e in events
        if isinstance(e, (AddPartitionEvent, DropPartitionEvent, AlterPartitionEvent))
    )
    got = (
        frame.where("event_type IN ('ADD_PARTITION', 'DROP_PARTITION', 'ALTER_PARTITION')")
        .select(F.col("partition_keys.name").alias("keys"))
        .groupBy("keys")
        .count()
        .collect()
    )
    assert {tuple(r["keys"]): r["count"] for r in got} == keys


def test_parameters_round_trip(frame: Any, events: list[ListenerEvent]) -> None:
    expected = Counter(tuple(sorted(e.parameters.items())) for e in events)
    got = (
        frame.groupBy(
            frame["parameters"]["seq"].alias("seq"),
            frame["parameters"]["hive.version"].alias("v"),
            frame["hive_version"],
        )
        .count()
        .collect()
    )
    assert {(r["seq"], r["v"], r["hive_version"]): r["count"] for r in got} == Counter(
        (dict(p).get("seq"), dict(p).get("hive.version"), dict(p).get("hive.version")) for p in expected.elements()
    )

    def table_of(e: ListenerEvent) -> Any:
        if isinstance(e, InsertEvent):
            return None  # its table is not in the message
        return e.new_table if isinstance(e, AlterTableEvent) else getattr(e, "table", None)

    tables = Counter(t.parameters.get("owner.team") for t in map(table_of, events) if t is not None)
    got = (
        frame.where("table_parameters IS NOT NULL")
        .groupBy(frame["table_parameters"]["owner.team"].alias("team"))
        .count()
        .collect()
    )
    assert {r["team"]: r["count"] for r in got} == tables


def test_rows_match_the_events(frame: Any, events: list[ListenerEvent]) -> None:
    """A sample of whole rows, every column, against the Arrow table's rows (Spark changes nothing)."""
    sample = list(range(0, N, 997))
    keys = [e.origin.partition * 1_000_000_000 + e.origin.offset for e in (events[i] for i in sample)]  # type: ignore
    arrow_rows = to_arrow([events[i] for i in sample]).to_pylist()
    got = {
        (r["kafka_partition"], r["kafka_offset"]): r.asDict(recursive=True)
        for r in frame.where(
            (frame["kafka_partition"].cast("long") * 1_000_000_000 + frame["kafka_offset"]).isin(keys)
        ).collect()
    }
    assert len(got) == len(sample)
    for expected in arrow_rows:
        row = got[(expected["kafka_partition"], expected["kafka_offset"])]
        for name in ("parameters", "table_parameters"):
            expected[name] = dict(expected[name]) if expected[name] is not None else None
        for name in ("event_time", "iceberg_committed_at"):  # Spark: naive, in the session time zone (UTC)
            expected[name] = expected[name].replace(tzinfo=None) if expected[name] is not None else None
        assert row == expected


def test_event_list_to_spark_and_without_raw(spark: Any, events: list[ListenerEvent]) -> None:
    small = EventList(events[:500])
    df = small.to_spark(spark)
    assert df.schema == hw_spark.SPARK_SCHEMA
    assert [r["kafka_offset"] for r in df.select("kafka_offset").collect()] == [e.origin.offset for e in small]  # type: ignore[union-attr]
    assert df.where("raw IS NULL").count() == 0
    no_raw = hw_spark.to_dataframe(spark, small, raw=False)
    assert no_raw.where("raw IS NULL").count() == 500 and no_raw.schema == df.schema
