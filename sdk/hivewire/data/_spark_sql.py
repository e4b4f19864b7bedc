"""The Apiary message in Spark SQL: Kafka records to the columns of ``hivewire.spark.SPARK_SCHEMA`` in the JVM.

:func:`from_kafka` takes a DataFrame with the columns of Spark's Kafka source (``value``, ``topic``,
``partition``, ``offset``, ``timestamp``: Spark's own ``format("kafka")`` or hivewire's ``hivewire_raw``),
parses each value with ``from_json`` and a schema derived from hivewire's description of the event types
(:func:`message_schema`: every key a column reads, so nothing is left out), and computes each column with one
SQL expression (:func:`projection`: the objects read per event type as ``hivewire.data._rows`` reads them, the
ALTER differences with higher-order functions). Nothing runs in Python on the executors.

Invariants: every column of SPARK_SCHEMA has an expression (a new column without one makes :func:`from_kafka`
raise, never a silent null); ``decode_error`` is null exactly where the Python decoder's is for every
message the tests make, with its checks of the envelope (:func:`envelope_error`: not JSON, not UTF-8, too
large, unknown type, a missing or non-object object, no names, a value of the wrong kind, found with
``from_json``'s corrupt-record field and, for those messages only, a second parse with each object as text).
Where SQL cannot check as Python does (a number where a string belongs is read as its text; fields no column
reads are not checked), ``docs/data.md`` says so and the tests pin it. A row with ``decode_error`` keeps the
Kafka columns and ``raw`` (:data:`KEPT`), and the envelope's (:data:`ENVELOPE`) when only an object failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hivewire.data._rows import KEY_ROLES, NO_VALUE
from hivewire.errors import HivewireError
from hivewire.events._apiary import MAX_MESSAGE_BYTES
from hivewire.events._changes import VOLATILE_PARAMETERS
from hivewire.events._description import Kind
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore.ttypes import Database, Partition, Table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_FIELDS = "array<struct<name:string,type:string,comment:string>>"
_TABLE = (
    "struct<dbName:string,tableName:string,tableType:string,parameters:map<string,string>,"
    f"partitionKeys:{_FIELDS},sd:struct<location:string,cols:{_FIELDS}>>"
)
_PARTITION = (
    "struct<values:array<string>,parameters:map<string,string>,sd:struct<location:string,cols:" + _FIELDS + ">>"
)
_DATABASE = "struct<name:string,locationUri:string>"
_ANY_OBJECT = "map<string,string>"
#: The field ``from_json`` fills with the message's text when a value does not have its type.
CORRUPT = "_corrupt_record"
#: ``decode_error`` of a message whose envelope decoded and one of whose objects did not.
OBJECT_ERROR = "an object of the message has a value of the wrong type"
#: Columns kept on a row whose message did not decode; :data:`ENVELOPE` columns are also kept when only one of
#: the message's objects failed; every other column is null on such rows.
KEPT = frozenset(
    {"event_time", "event_date", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "decode_error"}
    | {"raw"}
)
ENVELOPE = frozenset({"event_type", "db_name", "table_name", "qualified_name", "status", "parameters", "hive_version"})
_KINDS = {
    Kind.FLAG: "boolean",
    Kind.STRING: "string",
    Kind.INT: "bigint",
    Kind.INT_LIST: "array<bigint>",
    Kind.STRING_LIST: "array<string>",
    Kind.STRING_MAP: "map<string,string>",
}


def _message_keys(shape: bool) -> dict[str, str]:
    keys = {
        "eventType": "string",
        "databaseName": "string",
        "tableName": "string",
        "status": "boolean",
        "parameters": "map<string,string>",
        "environmentContext": "map<string,string>",  # read for its check only: an object, or null
    }
    for spec in TYPES.values():
        for f in spec.fields:
            if f.kind is Kind.STRUCT:
                # an object no column reads: any object (a non-object makes the message corrupt, as in Python)
                thrift = {Table: _TABLE, Partition: _PARTITION, Database: _DATABASE}.get(f.thrift, _ANY_OBJECT)  # type: ignore[arg-type]
                kind = "string" if shape else thrift
            elif f.kind is Kind.STRUCT_LIST:
                kind = "array<string>" if shape else f"array<{_PARTITION if f.thrift is Partition else _ANY_OBJECT}>"
            else:
                kind = _KINDS[f.kind]
            if kind is not None:
                keys.setdefault(f.key, kind)
    keys[CORRUPT] = "string"
    return keys


def message_schema() -> str:
    """The Apiary message as a Spark DDL struct: the envelope and every key the columns read (``j``)."""
    return "struct<" + ",".join(f"`{k}`:{v}" for k, v in _message_keys(False).items()) + ">"


def shape_schema() -> str:
    """The message with each object as its JSON text (``e``): read only for a message that ``j`` could not
    take whole, to tell a broken envelope from a broken object, as the Python decoder does."""
    return "struct<" + ",".join(f"`{k}`:{v}" for k, v in _message_keys(True).items()) + ">"


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


_PARAMETERS = "map_filter(coalesce(j.parameters, map()), (k, v) -> v IS NOT NULL)"  # Apiary 5.0.x writes nulls


def _db_name() -> str:
    """The envelope's database name, else its main object's (older producers), as the Python decoder reads it."""

    def pick(spec: Any, r: Any) -> str:
        if spec.log_only:
            return "coalesce(j.databaseName, '')"
        if spec.names_from is None:
            return "j.databaseName"
        key = spec.field(spec.names_from).key
        return f"coalesce(j.databaseName, j.`{key}`.{'name' if spec.database_event else 'dbName'})"

    return _by_type(pick)


def _table_name() -> str:
    def pick(spec: Any, r: Any) -> str:
        if spec.database_event:
            return "CAST(NULL AS STRING)"
        if spec.log_only or spec.names_from is None:
            return "j.tableName"
        return f"coalesce(j.tableName, j.`{spec.field(spec.names_from).key}`.tableName)"

    return _by_type(pick)


def _objects_error(on: str) -> str:
    """Why the message's objects are missing or not objects (``on``: ``j``, or ``e`` with each object as text)."""

    def pick(spec: Any, r: Any) -> str | None:
        arms = []
        for f in spec.fields:
            value = f"{on}.`{f.key}`"
            if f.kind is Kind.STRUCT:
                if f.required:
                    arms.append(f"WHEN {value} IS NULL THEN '{spec.wire} message has no {f.key}'")
                if on == "e":
                    arms.append(f"WHEN NOT startswith({value}, '{{') THEN '{f.key}: expected an object'")
            elif f.kind is Kind.STRUCT_LIST and on == "e":
                arms.append(f"WHEN exists({value}, x -> NOT startswith(x, '{{')) THEN '{f.key}[]: expected an object'")
        return f"CASE {' '.join(arms)} END" if arms else None

    return _by_type(pick).replace("j.eventType", f"{on}.eventType", 1)


def envelope_error() -> str:
    """Why the message is not an Apiary message, or null: the checks the Python decoder makes before an event
    exists (as far as SQL can make them: see docs/architecture.md), each with the same or a shorter text."""
    known = ", ".join(f"'{spec.wire}'" for spec in TYPES.values() if spec.wire is not None)
    database_event = _by_type(lambda s, r: "true" if s.database_event else "false")
    basic = (
        "CASE "
        f"WHEN value IS NULL THEN '{NO_VALUE}' "
        f"WHEN octet_length(value) > {MAX_MESSAGE_BYTES} THEN concat('message is ', octet_length(value), "
        f"' bytes, above the {MAX_MESSAGE_BYTES}-byte limit') "
        "WHEN NOT is_valid_utf8(s) THEN 'not UTF-8' "
        "WHEN j IS NULL THEN 'not JSON: empty' "
        f"WHEN j.{CORRUPT} IS NOT NULL AND (e IS NULL OR e.{CORRUPT} IS NOT NULL) THEN "
        "'not an Apiary message: not a JSON object, or a value of its envelope has the wrong type' "
        f"WHEN j.eventType IS NULL OR j.eventType NOT IN ({known}) THEN "
        "concat('unknown eventType ', coalesce(j.eventType, 'null')) "
        "END"
    )
    objects = f"CASE WHEN j.{CORRUPT} IS NULL THEN {_objects_error('j')} ELSE {_objects_error('e')} END"
    names = (
        f"CASE WHEN {_db_name()} IS NULL THEN concat(j.eventType, ' message has no databaseName') "
        f"WHEN {_table_name()} IS NULL AND NOT {database_event} THEN concat(j.eventType, ' message has no tableName') "
        "END"
    )
    return f"coalesce({basic}, {objects}, {names})"


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
    event_type = _by_type(lambda s, r: f"'{s.event_type.value}'")
    db_name, table_name = _db_name(), _table_name()
    return [
        ("event_type", event_type),
        ("db_name", db_name),
        ("table_name", table_name),
        (
            "qualified_name",
            f"CASE WHEN {table_name} IS NULL THEN {db_name} ELSE concat({db_name}, '.', {table_name}) END",
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
        ("parameters", f"CASE WHEN {event_type} IS NULL THEN NULL ELSE {_PARAMETERS} END"),
        ("table_parameters", _by_type(lambda s, r: f"coalesce(j.`{r.table}`.parameters, map())" if r.table else None)),
        ("delete_data", _by_type(lambda s, r: f"coalesce(j.`{r.delete_data}`, false)" if r.delete_data else None)),
        ("files", _by_type(lambda s, r: f"coalesce(j.`{r.files}`, array())" if r.files else None)),
        ("hive_version", f"{_PARAMETERS}['hive.version']"),
        ("decode_error", "problem"),
        ("raw", "value"),
        ("columns_added", _by_type(_altered(0))),
        ("columns_removed", _by_type(_altered(1))),
        ("columns_retyped", _by_type(_altered(2))),
        ("parameters_changed", _by_type(_altered(3))),
        ("old_location", _by_type(_altered(4))),
        *iceberg_columns().items(),
    ]


def from_kafka(frame: DataFrame) -> DataFrame:
    """The events of ``frame``, Kafka records with the columns of Spark's Kafka source (``value``, ``topic``,
    ``partition``, ``offset``, ``timestamp``; others are ignored), as a DataFrame of SPARK_SCHEMA computed in
    the JVM: ``from_json`` of each value and one SQL expression per column."""
    from pyspark.sql import functions as F

    from hivewire.data._spark_schema import _events_schema

    text = F.col("value").cast("string")
    parsed = frame.select(
        "topic",
        "partition",
        "offset",
        "timestamp",
        "value",
        text.alias("s"),
        F.from_json(text, message_schema(), {"columnNameOfCorruptRecord": CORRUPT}).alias("j"),
    )
    # the shape, only for the few messages that j could not take whole
    shaped = parsed.withColumn(
        "e",
        F.when(
            F.col(f"j.{CORRUPT}").isNotNull(),
            F.from_json(F.col("s"), shape_schema(), {"columnNameOfCorruptRecord": CORRUPT}),
        ),
    )
    checked = shaped.withColumn("envelope_error", F.expr(envelope_error())).withColumn(
        "problem", F.expr(f"coalesce(envelope_error, CASE WHEN j.{CORRUPT} IS NOT NULL THEN '{OBJECT_ERROR}' END)")
    )
    expressions = dict(projection())
    columns = []
    for field in _events_schema().fields:
        expression = expressions.get(field.name)
        if expression is None:
            raise HivewireError(f"hivewire.data._spark_sql has no expression for the column {field.name!r}")
        if field.name in ENVELOPE:
            expression = f"CASE WHEN envelope_error IS NULL THEN {expression} END"
        elif field.name not in KEPT:
            expression = f"CASE WHEN problem IS NULL THEN {expression} END"
        columns.append(F.expr(expression).cast(field.dataType).alias(field.name))
    return checked.select(*columns)
