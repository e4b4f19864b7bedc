"""Metastore events as a ``pyarrow.Table``: :func:`to_arrow` and its one stable :data:`SCHEMA`.

Every event type maps onto the same columns (``docs/data.md`` lists them, generated from :data:`COLUMNS`), so
a table can hold any mix of events and a Delta archive never needs a schema change. Columns that do not
apply to an event's type are null; an empty list means "applies, and is empty".

The table is built column-wise: each event becomes one tuple of plain Python values, the tuples are
transposed in C (``zip(*rows)``) and each column is converted by a single ``pyarrow.array`` call. Feeding
pyarrow one dict per event (``Table.from_pylist``) is slower; ``bench/bench_arrow.py`` measures both.

``pyarrow`` is an optional dependency (``pip install 'hivewire[arrow]'``); importing this module without it
raises :class:`~hivewire.errors.PrerequisiteError`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator
from typing import Literal, NamedTuple

from hivewire.errors import DecodeError, PrerequisiteError
from hivewire.events._changes import Changes, changes
from hivewire.events._description import EventSpec, Kind
from hivewire.events._event import ListenerEvent, Origin
from hivewire.events._types import TYPES, EventType
from hivewire_thrift.hive_metastore.ttypes import Database, FieldSchema, Partition, Table

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
)

#: The schema of every table :func:`to_arrow` returns. All columns are nullable.
SCHEMA = pa.schema([pa.field(name, type_) for name, type_, _ in COLUMNS])

_NAMES = tuple(name for name, _, _ in COLUMNS)
_TYPES = tuple(type_ for _, type_, _ in COLUMNS)
_MS_PER_DAY = 86_400_000


class _Roles(NamedTuple):
    """Which of an event type's fields fill which columns, read from the event types' description.

    The table columns come from the type's Table (the new one of a before/after pair), the partition columns
    from its list of Partitions or its new Partition, the location of a database event from its (new)
    Database; ``delete_data``, ``files`` and ``partition_key_values`` fill the columns of those names.
    """

    table: str | None = None
    old_table: str | None = None
    partitions: str | None = None
    new_partition: str | None = None
    old_partition: str | None = None
    database: str | None = None
    old_database: str | None = None
    delete_data: str | None = None
    files: str | None = None
    key_values: str | None = None


def _roles(spec: EventSpec) -> _Roles:
    roles: dict[str, str] = {}
    for f in spec.fields:
        old = f.name.startswith("old_")
        if f.kind is Kind.STRUCT and f.thrift is Table:
            roles["old_table" if old else "table"] = f.name
        elif f.kind is Kind.STRUCT_LIST and f.thrift is Partition:
            roles["partitions"] = f.name
        elif f.kind is Kind.STRUCT and f.thrift is Partition:
            roles["old_partition" if old else "new_partition"] = f.name
        elif f.kind is Kind.STRUCT and f.thrift is Database:
            roles["old_database" if old else "database"] = f.name
        elif f.name in ("delete_data", "files") and f.kind in (Kind.FLAG, Kind.STRING_LIST):
            roles[f.name] = f.name
        elif f.name == "partition_key_values" and f.kind is Kind.STRING_MAP:
            roles["key_values"] = f.name
    return _Roles(**roles)


_ROLES: dict[EventType, _Roles] = {t: _roles(spec) for t, spec in TYPES.items()}


class Undecodable(NamedTuple):
    """A Kafka message that did not decode: where it came from, its bytes and why (``DecodeError.reason``)."""

    origin: Origin | None
    raw: bytes | None
    error: str


def _fields(schemas: list[FieldSchema] | None) -> list[tuple[str | None, str | None, str | None]]:
    return [(f.name, f.type, f.comment) for f in schemas] if schemas is not None else []


def _kafka(origin: Origin | None) -> tuple[int | str | None, ...]:
    """(event_time us, event_date days, topic, partition, offset, timestamp ms) of ``origin``."""
    if origin is None:
        return None, None, None, None, None, None
    ms = origin.timestamp
    if ms is None:
        return None, None, origin.topic, origin.partition, origin.offset, None
    return ms * 1000, ms // _MS_PER_DAY, origin.topic, origin.partition, origin.offset, ms


def _objects(event: ListenerEvent) -> tuple[object, ...]:
    """The columns from ``location`` to ``files`` (the ones that convert the event's objects)."""
    roles = _ROLES[event.event_type]
    table: Table | None = None
    location: str | None = None
    keys: list[tuple[str | None, str | None, str | None]] | None = None
    table_type = cols = values = locations = old_values = old_name = new_name = None
    table_parameters = delete_data = files = None
    altered: Changes | None = None
    # (Events built in Python may leave objects out: a missing one leaves its columns null.)
    if roles.table is not None:
        table = getattr(event, roles.table)
        if roles.old_table is not None:
            old: Table | None = getattr(event, roles.old_table)
            if old is not None and table is not None and (old.dbName, old.tableName) != (table.dbName, table.tableName):
                old_name, new_name = f"{old.dbName}.{old.tableName}", f"{table.dbName}.{table.tableName}"
            altered = changes(old, table)
    if roles.partitions is not None:
        parts: list[Partition] = getattr(event, roles.partitions)
        values = [list(p.values or ()) for p in parts]
        locations = [p.sd.location if p.sd is not None else None for p in parts]
    elif roles.new_partition is not None:
        new: Partition | None = getattr(event, roles.new_partition)
        if new is not None:
            values = [list(new.values or ())]
            locations = [new.sd.location if new.sd is not None else None]
        if roles.old_partition is not None:
            old_part: Partition | None = getattr(event, roles.old_partition)
            if old_part is not None:
                old_values = list(old_part.values or ())
            altered = changes(old_part, new)
    elif roles.key_values is not None:
        # The message carries names only; InsertEvent.table would call the metastore, so it is not read here.
        key_values: dict[str, str] = getattr(event, roles.key_values)
        keys = [(k, None, None) for k in key_values]
        values = [list(key_values.values())] if key_values else []
        locations = [None] if key_values else []
    if roles.delete_data is not None:
        delete_data = getattr(event, roles.delete_data)
    if roles.files is not None:
        files = list(getattr(event, roles.files))
    if roles.database is not None:
        database: Database | None = getattr(event, roles.database)
        location = database.locationUri if database is not None else None
        if roles.old_database is not None:
            old_db: Database | None = getattr(event, roles.old_database)
            if old_db is not None and database is not None and old_db.name != database.name:
                old_name, new_name = old_db.name, database.name
    if table is not None:
        sd = table.sd
        if sd is not None:
            location = sd.location
            cols = _fields(sd.cols)
        keys = _fields(table.partitionKeys)
        table_type = table.tableType
        table_parameters = table.parameters if table.parameters is not None else {}
    return (
        location,
        table_type,
        cols,
        keys,
        values,
        locations,
        old_values,
        old_name,
        new_name,
        table_parameters,
        delete_data,
        files,
        *(_NO_CHANGES if altered is None else _changed(altered)),
    )


_NO_CHANGES = (None,) * 5
_NO_OBJECTS = (None,) * 12 + _NO_CHANGES


def _changed(altered: Changes) -> tuple[object, ...]:
    """The columns from ``columns_added`` to ``old_location``."""
    return (
        altered.columns_added,
        altered.columns_removed,
        altered.columns_retyped,
        altered.parameters,
        altered.old_location,
    )


def _event_row(event: ListenerEvent, on_error: str) -> tuple[object, ...]:
    try:
        objects = _objects(event)
        error = None
    except DecodeError as e:
        if on_error == "raise":
            raise DecodeError(f"{event!r}: {e.reason}") from e  # the repr names the Kafka origin
        objects, error = _NO_OBJECTS, e.reason
    parameters = event.parameters
    return (
        event.event_type.value,
        event.db_name,
        event.table_name,
        event.qualified_name,
        event.status,
        *_kafka(event.origin),
        *objects[:9],
        dict(parameters),
        *objects[9:12],
        parameters.get("hive.version"),
        error,
        event.raw,
        *objects[12:],
    )


def _undecodable_row(item: Undecodable) -> tuple[object, ...]:
    return (
        *(None, None, None, None, None),
        *_kafka(item.origin),
        *_NO_OBJECTS[:9],
        None,
        *_NO_OBJECTS[9:12],
        None,
        item.error,
        item.raw,
        *_NO_CHANGES,
    )


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk conversion, then restore it.

    Converting many events allocates millions of small acyclic objects (Thrift structs, tuples, lists).
    Each allocation burst triggers a collection, and the full ones scan every live event again, so a large
    conversion would spend most of its time in the collector (``bench/README.md`` has the figures). Nothing
    collectable is created here; reference counting still frees everything as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _batch(rows: list[tuple[object, ...]]) -> pa.RecordBatch:
    """One RecordBatch from row tuples: transposed in C, then one pyarrow conversion per column."""
    columns = zip(*rows, strict=True)
    n = len(rows)
    # A column with no value in the batch (most of the ALTER-only ones) is made null at once: pyarrow's
    # conversion of n Nones into a nested type costs as much as real values.
    arrays = [
        pa.nulls(n, type_) if values.count(None) == n else pa.array(values, type=type_)
        for values, type_ in zip(columns, _TYPES, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


def to_arrow(
    events: Iterable[ListenerEvent | Undecodable],
    *,
    on_error: Literal["raise", "record"] = "raise",
    batch_size: int = 65_536,
) -> pa.Table:
    """A ``pyarrow.Table`` with :data:`SCHEMA`, one row per event, in order.

    ``events`` may include :class:`Undecodable` messages: their rows hold the Kafka columns, ``raw`` and
    ``decode_error``, and null everything else. Reading an event's objects converts them (the decoder is
    lazy), so a malformed object raises :class:`~hivewire.errors.DecodeError` here; with
    ``on_error="record"`` the row keeps the event's envelope (type, names, status, parameters) and the reason
    in ``decode_error`` instead. Rows are built ``batch_size`` at a time, which bounds the memory of the
    intermediate Python lists; the result has one chunk per batch.
    """
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', not {on_error!r}")
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    batches = []
    rows: list[tuple[object, ...]] = []
    with paused_gc():
        for item in events:
            if isinstance(item, ListenerEvent):
                rows.append(_event_row(item, on_error))
            elif isinstance(item, Undecodable):
                rows.append(_undecodable_row(item))
            else:
                raise TypeError(f"to_arrow() takes events or Undecodable messages, not {type(item).__name__}")
            if len(rows) >= batch_size:
                batches.append(_batch(rows))
                rows = []
        if rows:
            batches.append(_batch(rows))
    return pa.Table.from_batches(batches, schema=SCHEMA)


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
