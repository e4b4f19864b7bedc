"""The one schema of every events table: :data:`COLUMNS` (name, Arrow type, meaning) and :data:`SCHEMA`.

Every event type maps onto the same columns, so a table can hold any mix of events and a Delta archive never
needs a schema change. Columns are only ever appended, here and nowhere else: the row builders
(:mod:`hivewire.data._rows`), the columnar builders (:mod:`hivewire.data._columnar`), the Spark schema and
``docs/data.md`` (:func:`schema_markdown`) all follow :data:`COLUMNS`. A new column needs its entry here and
its value in the rows (``_rows.envelope_row``, ``_rows.undecodable_row``, and ``_rows.object_columns`` for
values read from the objects).

The ``iceberg_*`` columns are read from the message alone (the table parameters an Iceberg writer sets), never
from Iceberg metadata files, so every path (the columnar decoder, per-event ``to_arrow``, the archive, the Spark
source) fills them alike; a value the writer did not record is null.

``pyarrow`` is an optional dependency (``pip install 'hivewire[arrow]'``); importing this module without it
raises :class:`~hivewire.errors.PrerequisiteError`.
"""

from __future__ import annotations

from hivewire.errors import PrerequisiteError

try:
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - depends on the environment
    raise PrerequisiteError(
        "hivewire.arrow needs pyarrow, which is not installed: pip install 'hivewire[arrow]'"
    ) from e


_FIELD_SCHEMA = pa.struct([("name", pa.string()), ("type", pa.string()), ("comment", pa.string())])
_STR_MAP = pa.map_(pa.string(), pa.string())
_RETYPED = pa.struct([("name", pa.string()), ("old_type", pa.string()), ("new_type", pa.string())])
_PARAMETER_CHANGE = pa.struct([("key", pa.string()), ("old_value", pa.string()), ("new_value", pa.string())])

#: ``(name, Arrow type, description)`` of every column, in order. :data:`SCHEMA` and the table in
#: ``docs/data.md`` are generated from this; new columns are only ever appended (the schema is stable).
COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    (
        "event_type",
        pa.string(),
        "`EventType` value: `CREATE_TABLE`, `ADD_PARTITION`, ... Null only for a message "
        "that did not decode (see `decode_error`).",
    ),
    ("db_name", pa.string(), "Database name (the new table's database for `ALTER_TABLE`)."),
    ("table_name", pa.string(), "Table name (the new name for `ALTER_TABLE`); null for database events."),
    ("qualified_name", pa.string(), "`db.table`, or `db` for database events."),
    ("status", pa.bool_(), "Whether the metastore operation succeeded (Apiary publishes failures too)."),
    (
        "event_time",
        pa.timestamp("us", tz="UTC"),
        "When the event was published: the Kafka record timestamp. Null for events not read from Kafka.",
    ),
    ("event_date", pa.date32(), "UTC date of `event_time`; the archive's partition column."),
    ("kafka_topic", pa.string(), "Kafka topic the event was read from."),
    ("kafka_partition", pa.int32(), "Kafka partition."),
    (
        "kafka_offset",
        pa.int64(),
        "Kafka offset. (`kafka_topic`, `kafka_partition`, `kafka_offset`) identifies a message.",
    ),
    ("kafka_timestamp", pa.int64(), "Kafka record timestamp as Kafka reports it: milliseconds since the epoch."),
    (
        "location",
        pa.string(),
        "The table's `sd.location` (the new table's for `ALTER_TABLE`); the database's "
        "`locationUri` for database events; null for `INSERT`.",
    ),
    (
        "table_type",
        pa.string(),
        "`MANAGED_TABLE`, `EXTERNAL_TABLE`, `VIRTUAL_VIEW`, ...; null for `INSERT` and database events.",
    ),
    (
        "columns",
        pa.list_(_FIELD_SCHEMA),
        "The table's data columns (`sd.cols`) as `{name, type, comment}`; null for `INSERT` and database events.",
    ),
    (
        "partition_keys",
        pa.list_(_FIELD_SCHEMA),
        "The table's partition columns as `{name, type, comment}`. For "
        "`INSERT`, the keys of `partition_key_values` (type null).",
    ),
    (
        "partition_values",
        pa.list_(pa.list_(pa.string())),
        "One list of values per partition: every partition of `ADD_PARTITION`/`DROP_PARTITION`, the new "
        "partition of `ALTER_PARTITION`, the inserted partition of `INSERT` (empty when unpartitioned), the "
        "partition of `RELOAD`/`ACID_WRITE`. Null for other types.",
    ),
    (
        "partition_locations",
        pa.list_(pa.string()),
        "`sd.location` of each partition in `partition_values` (null entries for `INSERT`, which carries none).",
    ),
    (
        "old_partition_values",
        pa.list_(pa.string()),
        "`ALTER_PARTITION` only: the old partition's values (different from the new ones for a partition rename).",
    ),
    ("old_name", pa.string(), "Renames only (`ALTER_TABLE`, `ALTER_DATABASE`): the old qualified name."),
    ("new_name", pa.string(), "Renames only: the new qualified name."),
    ("parameters", _STR_MAP, "The event's parameters (Apiary adds `hive.version`)."),
    (
        "table_parameters",
        _STR_MAP,
        "The table's parameters (the new table's for `ALTER_TABLE`); null for `INSERT` and database events.",
    ),
    ("delete_data", pa.bool_(), "`DROP_TABLE`/`DROP_PARTITION` only: whether the data was deleted too."),
    ("files", pa.list_(pa.string()), "`INSERT`, `ACID_WRITE`, `COMMIT_TXN`: the files written."),
    ("hive_version", pa.string(), "The metastore's Hive version (the `hive.version` parameter)."),
    (
        "decode_error",
        pa.string(),
        "Why the message or one of its objects did not decode; null for every "
        "decoded event. Such rows keep `raw` and the Kafka columns.",
    ),
    ("raw", pa.binary(), "The message exactly as read (Apiary JSON bytes); null for events built in Python."),
    (
        "columns_added",
        pa.list_(_FIELD_SCHEMA),
        "`ALTER_TABLE`/`ALTER_PARTITION` only: data columns in the new object and not the old (by name).",
    ),
    ("columns_removed", pa.list_(_FIELD_SCHEMA), "`ALTER_*` only: data columns in the old object and not the new."),
    (
        "columns_retyped",
        pa.list_(_RETYPED),
        "`ALTER_*` only: columns in both whose type changed, as `{name, old_type, new_type}`.",
    ),
    (
        "parameters_changed",
        pa.list_(_PARAMETER_CHANGE),
        "`ALTER_*` only: the object's parameters added (`old_value` null), removed (`new_value` null) or changed, "
        "without those the metastore rewrites on every ALTER (`transient_lastDdlTime`, `last_modified_*`).",
    ),
    (
        "old_location",
        pa.string(),
        "`ALTER_*` only: the old table's (or partition's) location; compare with `location` "
        "(`partition_locations` for a partition).",
    ),
    (
        "iceberg_metadata_location",
        pa.string(),
        "Iceberg tables only (`table_type=ICEBERG`): the table's `metadata_location` parameter, its metadata file "
        "(the new table's for `ALTER_TABLE`; the event's own for `ICEBERG_COMMIT`, null after a drop). Null for "
        "other tables and events.",
    ),
    (
        "iceberg_previous_metadata_location",
        pa.string(),
        "Iceberg tables only: the metadata file before the event: the old table's `metadata_location` for "
        "`ALTER_TABLE`, the event's own for `ICEBERG_COMMIT`, else the table's `previous_metadata_location` "
        "parameter.",
    ),
    (
        "iceberg_snapshot_id",
        pa.int64(),
        "Iceberg tables only: the table's current snapshot after the event, as the writer recorded it in the table "
        "parameters (`current-snapshot-id`: Iceberg's Java HiveCatalog and Spark do; pyiceberg 0.12 does not, and "
        "then this and the next columns are null). The complete view is `read_events(...).iceberg_commits()`.",
    ),
    (
        "iceberg_committed_at",
        pa.timestamp("us", tz="UTC"),
        "When that snapshot was committed (`current-snapshot-timestamp-ms`).",
    ),
    (
        "iceberg_operation",
        pa.string(),
        "That snapshot's operation, when the writer put it in `current-snapshot-summary` (Iceberg's Java "
        "HiveCatalog does not).",
    ),
    ("iceberg_added_records", pa.int64(), "Records that snapshot added (`added-records` of its summary)."),
    ("iceberg_deleted_records", pa.int64(), "Records that snapshot removed (`deleted-records`)."),
    ("iceberg_added_files", pa.int64(), "Data files that snapshot added (`added-data-files`)."),
    ("iceberg_deleted_files", pa.int64(), "Data files that snapshot removed (`deleted-data-files`)."),
)

#: The schema of every table :func:`to_arrow` returns. All columns are nullable.
SCHEMA = pa.schema([pa.field(name, type_) for name, type_, _ in COLUMNS])


def _type_name(type_: pa.DataType) -> str:
    """An Arrow type as written in the docs: ``list<struct<name: string, ...>>``, ``map<string, string>``."""
    if pa.types.is_list(type_):
        return f"list<{_type_name(type_.value_type)}>"
    if pa.types.is_struct(type_):
        return "struct<" + ", ".join(f"{f.name}: {_type_name(f.type)}" for f in type_) + ">"
    if pa.types.is_map(type_):
        return f"map<{_type_name(type_.key_type)}, {_type_name(type_.item_type)}>"
    return str(type_)


def schema_markdown() -> str:
    """The schema as a Markdown table (column, Arrow type, meaning): the one in ``docs/data.md``."""
    lines = ["| column | Arrow type | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | `{_type_name(type_)}` | {text} |" for name, type_, text in COLUMNS]
    return "\n".join(lines)
