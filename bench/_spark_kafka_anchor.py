"""The anchor of bench_spark_source.py: Spark's own Kafka source plus ``from_json``, projected in Spark SQL onto
the columns of ``hivewire.spark.SPARK_SCHEMA``.

What a Spark user writes without hivewire: ``spark.read.format("kafka")`` (spark-sql-kafka-0-10), ``from_json``
of the value with a hand-made schema of the Apiary message, and expressions for each column: the same names
and types as hivewire's, the same reading of the objects per event type (from hivewire's own description of
the types, so nothing is left out), the ALTER differences with higher-order functions. Every value is
computed in the JVM. Messages that ``from_json`` cannot parse become rows with ``raw`` and ``decode_error``.
It does not reproduce hivewire's error messages or its checks of every Thrift field: it is the measure of the
per-event work, not a replacement.
"""

from __future__ import annotations

from typing import Any

from hivewire.data._rows import KEY_ROLES
from hivewire.events._changes import VOLATILE_PARAMETERS
from hivewire.events._description import Kind
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore.ttypes import Database, Partition, Table

_FIELDS = "array<struct<name:string,type:string,comment:string>>"
_TABLE = (
    "struct<dbName:string,tableName:string,tableType:string,parameters:map<string,string>,"
    f"partitionKeys:{_FIELDS},sd:struct<location:string,cols:{_FIELDS}>>"
)
_PARTITION = (
    "struct<values:array<string>,parameters:map<string,string>,sd:struct<location:string,cols:" + _FIELDS + ">>"
)
_DATABASE = "struct<name:string,locationUri:string>"
_KINDS = {
    Kind.FLAG: "boolean",
    Kind.STRING: "string",
    Kind.INT: "bigint",
    Kind.INT_LIST: "array<bigint>",
    Kind.STRING_LIST: "array<string>",
    Kind.STRING_MAP: "map<string,string>",
}


def message_schema() -> str:
    """The Apiary message as a Spark DDL struct: the envelope and every key the columns read."""
    keys = {
        "eventType": "string",
        "databaseName": "string",
        "tableName": "string",
        "status": "boolean",
        "parameters": "map<string,string>",
    }
    for spec in TYPES.values():
        for f in spec.fields:
            if f.kind is Kind.STRUCT:
                kind = {Table: _TABLE, Partition: _PARTITION, Database: _DATABASE}.get(f.thrift)  # type: ignore[arg-type]
            elif f.kind is Kind.STRUCT_LIST:
                kind = f"array<{_PARTITION}>" if f.thrift is Partition else None
            else:
                kind = _KINDS[f.kind]
            if kind is not None:
                keys.setdefault(f.key, kind)
    return "struct<" + ",".join(f"`{k}`:{v}" for k, v in keys.items()) + ">"


def _by_type(pick: Any) -> str:
    """A SQL CASE over the event type: ``pick(spec, roles)`` gives each type's expression (None: null)."""
    arms = []
    for spec in TYPES.values():
        if spec.wire is None:
            continue
        expr = pick(spec, KEY_ROLES[spec.event_type])
        if expr is not None:
            arms.append(f"WHEN '{spec.wire}' THEN {expr}")
    return f"CASE j.eventType {' '.join(arms)} END" if arms else "NULL"


def _changes(old: str, new: str) -> list[str]:
    volatile = ", ".join(f"'{k}'" for k in sorted(VOLATILE_PARAMETERS))
    cols_new, cols_old = f"coalesce({new}.sd.cols, array())", f"coalesce({old}.sd.cols, array())"
    p_old, p_new = f"coalesce({old}.parameters, map())", f"coalesce({new}.parameters, map())"
    return [
        f"filter({cols_new}, c -> NOT exists({cols_old}, o -> lower(o.name) = lower(c.name)))",
        f"filter({cols_old}, o -> NOT exists({cols_new}, c -> lower(o.name) = lower(c.name)))",
        f"transform(filter({cols_new}, c -> exists({cols_old}, o -> lower(o.name) = lower(c.name) AND "
        f"lower(coalesce(o.type, '')) <> lower(coalesce(c.type, '')))), c -> named_struct('name', c.name, "
        f"'old_type', filter({cols_old}, o -> lower(o.name) = lower(c.name))[0].type, 'new_type', c.type))",
        f"transform(filter(array_sort(array_distinct(concat(map_keys({p_old}), map_keys({p_new})))), k -> "
        f"k NOT IN ({volatile}) AND NOT ({p_old}[k] <=> {p_new}[k])), k -> named_struct('key', k, "
        f"'old_value', {p_old}[k], 'new_value', {p_new}[k]))",
        f"{old}.sd.location",
    ]


def _location(spec: Any, r: Any) -> str | None:
    if r.table:
        return f"j.`{r.table}`.sd.location"
    return f"j.`{r.database}`.locationUri" if r.database else None


def _partition_values(spec: Any, r: Any) -> str | None:
    if r.partitions:
        return f"transform(coalesce(j.`{r.partitions}`, array()), p -> coalesce(p.`values`, array()))"
    if r.new_partition:
        new = f"j.`{r.new_partition}`"
        return f"CASE WHEN {new} IS NULL THEN NULL ELSE array(coalesce({new}.`values`, array())) END"
    if r.key_values:
        kv = f"coalesce(j.`{r.key_values}`, map())"
        return f"CASE WHEN size({kv}) > 0 THEN array(map_values({kv})) ELSE array() END"
    return None


def _partition_locations(spec: Any, r: Any) -> str | None:
    if r.partitions:
        return f"transform(coalesce(j.`{r.partitions}`, array()), p -> p.sd.location)"
    if r.new_partition:
        return f"CASE WHEN j.`{r.new_partition}` IS NULL THEN NULL ELSE array(j.`{r.new_partition}`.sd.location) END"
    if r.key_values:
        return (
            f"CASE WHEN size(coalesce(j.`{r.key_values}`, map())) > 0 THEN array(CAST(NULL AS STRING)) ELSE array() END"
        )
    return None


def _names(spec: Any, r: Any, which: int) -> str | None:
    if r.table and r.old_table:
        old, new = f"j.`{r.old_table}`", f"j.`{r.table}`"
        value = (
            f"concat({old}.dbName, '.', {old}.tableName)"
            if which == 0
            else f"concat({new}.dbName, '.', {new}.tableName)"
        )
        return (
            f"CASE WHEN {old} IS NOT NULL AND {new} IS NOT NULL AND NOT ({old}.dbName <=> {new}.dbName AND "
            f"{old}.tableName <=> {new}.tableName) THEN {value} END"
        )
    if r.database and r.old_database:
        old, new = f"j.`{r.old_database}`", f"j.`{r.database}`"
        value = f"{old}.name" if which == 0 else f"{new}.name"
        return f"CASE WHEN {old} IS NOT NULL AND {new} IS NOT NULL AND NOT ({old}.name <=> {new}.name) THEN {value} END"
    return None


def _altered(index: int) -> Any:
    def pick(spec: Any, r: Any) -> str | None:
        if r.table and r.old_table:
            return _changes(f"j.`{r.old_table}`", f"j.`{r.table}`")[index]
        if r.new_partition and r.old_partition:
            return _changes(f"j.`{r.old_partition}`", f"j.`{r.new_partition}`")[index]
        return None

    return pick


def _whole(text: str) -> str:
    """SQL: ``text`` as a bigint under hivewire's rule (``hivewire.data._rows.WHOLE``: an optional minus and
    digits, nothing else, within bigint), else null."""
    return (
        f"CASE WHEN regexp_replace({text}, '^-?[0-9]+', '') = '' AND {text} <> '' THEN try_cast({text} AS BIGINT) END"
    )


def iceberg_columns() -> dict[str, str]:
    """``{column: SQL}`` for the ``iceberg_*`` columns, over ``j`` (the parsed message): the table parameters an
    Iceberg writer sets (``hivewire.data._rows.iceberg_columns`` in Python). Nested JSON values in the snapshot
    summary are text here and null there; no Iceberg writer puts any at the keys read."""

    def of_table(pick: Any) -> str:
        def arm(spec: Any, r: Any) -> str | None:
            if not r.table:
                return None
            params = f"j.`{r.table}`.parameters"
            return f"CASE WHEN upper(coalesce({params}['table_type'], '')) = 'ICEBERG' THEN {pick(r, params)} END"

        return _by_type(arm)

    def current(r: Any, params: str) -> str:
        if r.metadata and r.previous_metadata:
            return f"nullif(j.`{r.metadata}`, '')"
        return f"nullif({params}['metadata_location'], '')"

    def previous(r: Any, params: str) -> str:
        if r.metadata and r.previous_metadata:
            return f"nullif(j.`{r.previous_metadata}`, '')"
        if r.old_table:
            return f"nullif(j.`{r.old_table}`.parameters['metadata_location'], '')"
        return f"nullif({params}['previous_metadata_location'], '')"

    def summary(key: str) -> Any:
        return lambda r, params: f"from_json({params}['current-snapshot-summary'], 'map<string,string>')['{key}']"

    def committed(r: Any, params: str) -> str:
        ms = _whole(f"{params}['current-snapshot-timestamp-ms']")
        return f"CASE WHEN {ms} > -9223372036854775 AND {ms} < 9223372036854775 THEN timestamp_millis({ms}) END"

    return {
        "iceberg_metadata_location": of_table(current),
        "iceberg_previous_metadata_location": of_table(previous),
        "iceberg_snapshot_id": of_table(lambda r, params: _whole(f"{params}['current-snapshot-id']")),
        "iceberg_committed_at": of_table(committed),
        "iceberg_operation": of_table(summary("operation")),
        "iceberg_added_records": of_table(lambda r, p: _whole(summary("added-records")(r, p))),
        "iceberg_deleted_records": of_table(lambda r, p: _whole(summary("deleted-records")(r, p))),
        "iceberg_added_files": of_table(lambda r, p: _whole(summary("added-data-files")(r, p))),
        "iceberg_deleted_files": of_table(lambda r, p: _whole(summary("deleted-data-files")(r, p))),
    }


def projection() -> list[tuple[str, str]]:
    """``(column, SQL expression)`` for every column of SPARK_SCHEMA, over ``j`` (the parsed message) and the
    Kafka source's own columns."""
    database_event = _by_type(lambda s, r: "true" if s.database_event else "false")
    event_type = _by_type(lambda s, r: f"'{s.event_type.value}'")
    table_name = f"CASE WHEN {database_event} THEN NULL ELSE j.tableName END"
    return [
        ("event_type", event_type),
        ("db_name", "j.databaseName"),
        ("table_name", table_name),
        (
            "qualified_name",
            f"CASE WHEN {table_name} IS NULL THEN j.databaseName ELSE concat(j.databaseName, '.', j.tableName) END",
        ),
        ("status", f"CASE WHEN {event_type} IS NULL THEN NULL ELSE coalesce(j.status, true) END"),
        ("event_time", "timestamp"),
        ("event_date", "to_date(timestamp)"),
        ("kafka_topic", "topic"),
        ("kafka_partition", "partition"),
        ("kafka_offset", "offset"),
        ("kafka_timestamp", "unix_millis(timestamp)"),
        ("location", _by_type(_location)),
        ("table_type", _by_type(lambda s, r: f"j.`{r.table}`.tableType" if r.table else None)),
        ("columns", _by_type(lambda s, r: f"j.`{r.table}`.sd.cols" if r.table else None)),
        (
            "partition_keys",
            _by_type(
                lambda s, r: (
                    f"coalesce(j.`{r.table}`.partitionKeys, array())"
                    if r.table
                    else f"transform(map_keys(coalesce(j.`{r.key_values}`, map())), k -> named_struct('name', k, "
                    "'type', CAST(NULL AS STRING), 'comment', CAST(NULL AS STRING)))"
                    if r.key_values
                    else None
                )
            ),
        ),
        ("partition_values", _by_type(_partition_values)),
        ("partition_locations", _by_type(_partition_locations)),
        ("old_partition_values", _by_type(lambda s, r: f"j.`{r.old_partition}`.`values`" if r.old_partition else None)),
        ("old_name", _by_type(lambda s, r: _names(s, r, 0))),
        ("new_name", _by_type(lambda s, r: _names(s, r, 1))),
        ("parameters", f"CASE WHEN {event_type} IS NULL THEN NULL ELSE coalesce(j.parameters, map()) END"),
        ("table_parameters", _by_type(lambda s, r: f"coalesce(j.`{r.table}`.parameters, map())" if r.table else None)),
        ("delete_data", _by_type(lambda s, r: f"coalesce(j.`{r.delete_data}`, false)" if r.delete_data else None)),
        ("files", _by_type(lambda s, r: f"coalesce(j.`{r.files}`, array())" if r.files else None)),
        ("hive_version", "j.parameters['hive.version']"),
        ("decode_error", f"CASE WHEN {event_type} IS NULL THEN 'not an Apiary message' END"),
        ("raw", "value"),
        ("columns_added", _by_type(_altered(0))),
        ("columns_removed", _by_type(_altered(1))),
        ("columns_retyped", _by_type(_altered(2))),
        ("parameters_changed", _by_type(_altered(3))),
        ("old_location", _by_type(_altered(4))),
        *iceberg_columns().items(),
    ]


def kafka_frame(spark: Any, bootstrap: str, topic: str, partitions: int) -> Any:
    """Spark's Kafka source and from_json, projected onto SPARK_SCHEMA (name for name, type for type)."""
    from pyspark.sql import functions as F

    from hivewire.spark import SPARK_SCHEMA

    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("minPartitions", str(partitions))
        .load()
    )
    parsed = frame.select(
        "topic",
        "partition",
        "offset",
        "timestamp",
        "value",
        F.from_json(F.col("value").cast("string"), message_schema()).alias("j"),
    )
    types = {f.name: f.dataType for f in SPARK_SCHEMA.fields}
    return parsed.select(*[F.expr(expr).cast(types[name]).alias(name) for name, expr in projection()])
