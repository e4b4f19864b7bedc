"""One row of :data:`~hivewire.data._schema.SCHEMA` per event, message or undecodable message, as a tuple.

A row is a tuple of plain Python values in the order of :data:`~hivewire.data._schema.COLUMNS`:
:mod:`hivewire.data._columnar` turns a batch of them into Arrow columns. Three kinds of input make rows:

* a :class:`~hivewire.events.ListenerEvent` (:func:`event_row`): its Thrift objects are converted and read;
* an :class:`Undecodable` message (:func:`undecodable_row`): the Kafka columns, ``raw`` and ``decode_error``;
* a raw :class:`Message` the columnar decoder could not take on its fast path (:func:`slow_message_row`):
  decoded by :func:`hivewire.apiary.decode` and then one of the two above, exactly as a consumer loop that
  decodes each message and converts the events would.

Which fields of an event type fill which columns is read from the event types' description once
(:class:`Roles`); :func:`object_columns` reads them from an event or, under their Apiary keys, from the
columnar decoder's envelopes, so both paths fill the columns with one piece of code.

The ``iceberg_*`` columns (:func:`iceberg_columns`) read the message only: the Iceberg table's parameters and
an Iceberg commit's own locations, never a metadata file; a value that is absent or malformed is null, never
an error (``bench/_spark_kafka_anchor.py``'s ``iceberg_columns`` gives the same values in Spark SQL).
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Iterator
from typing import NamedTuple

from hivewire.errors import DecodeError
from hivewire.events import _apiary as apiary
from hivewire.events._changes import Changes, changes
from hivewire.events._description import EventSpec, Kind
from hivewire.events._event import ListenerEvent, Origin
from hivewire.events._event_type import EventType
from hivewire.events._iceberg import METADATA_LOCATION, PREVIOUS_METADATA_LOCATION, is_iceberg
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore.ttypes import Database, FieldSchema, Partition, Table

_MS_PER_DAY = 86_400_000

#: The reason recorded for a Kafka record without a value (a tombstone).
NO_VALUE = "empty message (no value)"


class Roles(NamedTuple):
    """Which of an event type's fields fill which columns, read from the event types' description.

    The table columns come from the type's Table (the new one of a before/after pair), the partition columns
    from its list of Partitions or its new Partition, the location of a database event from its (new)
    Database; ``delete_data``, ``files`` and ``partition_key_values`` fill the columns of those names, and an
    Iceberg commit's own ``metadata_location`` and ``previous_metadata_location`` the ``iceberg_*`` locations.
    Each entry is an attribute name: the event's field, or the Apiary key in the columnar decoder's envelopes.
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
    metadata: str | None = None
    previous_metadata: str | None = None


def _roles(spec: EventSpec, *, by_key: bool) -> Roles:
    roles: dict[str, str] = {}
    for f in spec.fields:
        old = f.name.startswith("old_")
        attribute = f.key if by_key else f.name
        if f.kind is Kind.STRUCT and f.thrift is Table:
            roles["old_table" if old else "table"] = attribute
        elif f.kind is Kind.STRUCT_LIST and f.thrift is Partition:
            roles["partitions"] = attribute
        elif f.kind is Kind.STRUCT and f.thrift is Partition:
            roles["old_partition" if old else "new_partition"] = attribute
        elif f.kind is Kind.STRUCT and f.thrift is Database:
            roles["old_database" if old else "database"] = attribute
        elif f.name in ("delete_data", "files") and f.kind in (Kind.FLAG, Kind.STRING_LIST):
            roles[f.name] = attribute
        elif f.name == "partition_key_values" and f.kind is Kind.STRING_MAP:
            roles["key_values"] = attribute
        elif f.name in ("metadata_location", "previous_metadata_location") and f.kind is Kind.STRING:
            roles["metadata" if f.name == "metadata_location" else "previous_metadata"] = attribute
    return Roles(**roles)


#: The roles of each event type's fields, by field name (events) and by Apiary key (envelopes).
ROLES: dict[EventType, Roles] = {t: _roles(spec, by_key=False) for t, spec in TYPES.items()}
KEY_ROLES: dict[EventType, Roles] = {t: _roles(spec, by_key=True) for t, spec in TYPES.items()}


class Undecodable(NamedTuple):
    """A Kafka message that did not decode: where it came from, its bytes and why (``DecodeError.reason``)."""

    origin: Origin | None
    raw: bytes | None
    error: str


class Message(NamedTuple):
    """A Kafka message not decoded yet: where it came from (or None) and its value (None for a tombstone).

    :func:`hivewire.arrow.to_arrow` decodes these in batches, straight into columns.
    """

    origin: Origin | None
    value: bytes | None


def _fields(schemas: list[FieldSchema] | None) -> list[tuple[str | None, str | None, str | None]]:
    # a null item (Java's list held one: Apiary's JSON keeps it) names no column
    return [(f.name, f.type, f.comment) for f in schemas if f is not None] if schemas is not None else []


def kafka_columns(origin: Origin | None) -> tuple[int | str | None, ...]:
    """(event_time us, event_date days, topic, partition, offset, timestamp ms) of ``origin``."""
    if origin is None:
        return None, None, None, None, None, None
    ms = origin.timestamp
    if ms is None:
        return None, None, origin.topic, origin.partition, origin.offset, None
    return ms * 1000, ms // _MS_PER_DAY, origin.topic, origin.partition, origin.offset, ms


#: The table parameters Iceberg's Java HiveCatalog (HiveTableOperations) sets to the table's current snapshot.
CURRENT_SNAPSHOT_ID, CURRENT_SNAPSHOT_TIMESTAMP, CURRENT_SNAPSHOT_SUMMARY = (
    "current-snapshot-id",
    "current-snapshot-timestamp-ms",
    "current-snapshot-summary",
)
#: The keys of ``current-snapshot-summary`` read into ``iceberg_added_records`` ... ``iceberg_deleted_files``.
SUMMARY_COUNTS = ("added-records", "deleted-records", "added-data-files", "deleted-data-files")
#: A whole number as the columns take it: decimal digits, an optional minus, nothing else (no spaces, no ``+``,
#: no ``_``), within int64; anything else reads as null. ``bench/_spark_kafka_anchor.py`` applies the same rule.
WHOLE = re.compile(r"-?[0-9]+")
_INT64 = 1 << 63


def whole(value: object) -> int | None:
    """``value`` as an int64 under :data:`WHOLE`, or None (also for anything but a string)."""
    if type(value) is not str or WHOLE.fullmatch(value) is None:
        return None
    number = int(value)
    return number if -_INT64 <= number < _INT64 else None


def _scalar(value: object) -> str | None:
    """A summary value as text, as Spark's ``from_json`` to ``map<string,string>`` reads it: a string as is, a
    number as written, ``true``/``false``; null and nested values read as None."""
    if type(value) is str:
        return value
    if type(value) is bool:
        return "true" if value else "false"
    return None


def _summary(text: str | None) -> dict[str, object]:
    """The snapshot summary JSON object, or empty when absent or not a JSON object (never raises). Numbers
    keep their text (``parse_int``/``parse_float``), as Spark's reading of the same JSON does."""
    if text is None:
        return {}
    try:
        parsed = json.loads(text, parse_int=str, parse_float=str, parse_constant=str)
    except (ValueError, RecursionError):
        return {}
    return parsed if type(parsed) is dict else {}


def iceberg_columns(roles: Roles, source: object, table: object, old: object) -> tuple[object, ...]:
    """The ``iceberg_*`` columns of an event whose (new) table is ``table`` (old table ``old``), read from the
    message: the table parameters, and an Iceberg commit's own locations. All null unless ``table`` is an
    Iceberg table."""
    if table is None or not is_iceberg(table):  # type: ignore[arg-type]
        return NO_ICEBERG
    parameters: dict[str, str] = getattr(table, "parameters", None) or {}
    if roles.metadata is not None and roles.previous_metadata is not None:
        current = getattr(source, roles.metadata) or None
        previous = getattr(source, roles.previous_metadata) or None
    else:
        current = parameters.get(METADATA_LOCATION) or None
        if roles.old_table is not None:
            previous = (getattr(old, "parameters", None) or {}).get(METADATA_LOCATION) or None
        else:
            previous = parameters.get(PREVIOUS_METADATA_LOCATION) or None
    committed_ms = whole(parameters.get(CURRENT_SNAPSHOT_TIMESTAMP))
    text = parameters.get(CURRENT_SNAPSHOT_SUMMARY)
    summary = _summary(text if type(text) is str else None)
    return (
        current,
        previous,
        whole(parameters.get(CURRENT_SNAPSHOT_ID)),
        # microseconds, as the timestamp column holds them; milliseconds too many for that read as null
        None if committed_ms is None or abs(committed_ms) >= _INT64 // 1000 else committed_ms * 1000,
        _scalar(summary.get("operation")),
        *(whole(_scalar(summary.get(key))) for key in SUMMARY_COUNTS),
    )


def object_columns(roles: Roles, source: object) -> tuple[object, ...]:
    """The columns from ``location`` to ``files`` and from ``columns_added`` to the ``iceberg_*`` ones, read from
    ``source``'s attributes named by ``roles``: an event's Thrift objects, or the columnar decoder's structs
    (which have the same attribute names). Missing lists, maps and flags read as empty and false, as an
    event's fields do."""
    table = old_table = None
    location: str | None = None
    keys: list[tuple[str | None, str | None, str | None]] | None = None
    table_type = cols = values = locations = old_values = old_name = new_name = None
    table_parameters = delete_data = files = None
    altered: Changes | None = None
    # (Events built in Python may leave objects out: a missing one leaves its columns null.)
    if roles.table is not None:
        table = getattr(source, roles.table)
        if roles.old_table is not None:
            old = old_table = getattr(source, roles.old_table)
            if old is not None and table is not None and (old.dbName, old.tableName) != (table.dbName, table.tableName):
                old_name, new_name = f"{old.dbName}.{old.tableName}", f"{table.dbName}.{table.tableName}"
            altered = changes(old, table)
    if roles.partitions is not None:
        parts = [p for p in getattr(source, roles.partitions) or () if p is not None]
        values = [list(p.values or ()) for p in parts]
        locations = [p.sd.location if p.sd is not None else None for p in parts]
    elif roles.new_partition is not None:
        new = getattr(source, roles.new_partition)
        if new is not None:
            values = [list(new.values or ())]
            locations = [new.sd.location if new.sd is not None else None]
        if roles.old_partition is not None:
            old_part = getattr(source, roles.old_partition)
            if old_part is not None:
                old_values = list(old_part.values or ())
            altered = changes(old_part, new)
    elif roles.key_values is not None:
        # The message carries names only; InsertEvent.table would call the metastore, so it is not read here.
        key_values: dict[str, str] = getattr(source, roles.key_values) or {}
        keys = [(k, None, None) for k in key_values]
        values = [list(key_values.values())] if key_values else []
        locations = [None] if key_values else []
    if roles.delete_data is not None:
        delete_data = bool(getattr(source, roles.delete_data))
    if roles.files is not None:
        files = list(getattr(source, roles.files) or ())
    if roles.database is not None:
        database = getattr(source, roles.database)
        location = database.locationUri if database is not None else None
        if roles.old_database is not None:
            old_db = getattr(source, roles.old_database)
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
        *(NO_CHANGES if altered is None else _changed(altered)),
        *iceberg_columns(roles, source, table, old_table),
    )


NO_CHANGES = (None,) * 5
NO_ICEBERG = (None,) * 9
NO_OBJECTS = (None,) * 12 + NO_CHANGES + NO_ICEBERG


def _changed(altered: Changes) -> tuple[object, ...]:
    """The columns from ``columns_added`` to ``old_location``."""
    return (
        altered.columns_added,
        altered.columns_removed,
        altered.columns_retyped,
        altered.parameters,
        altered.old_location,
    )


def envelope_row(
    event_type: EventType,
    db_name: str | None,
    table_name: str | None,
    qualified_name: str,
    status: bool,
    origin: Origin | None,
    objects: tuple[object, ...],
    parameters: dict[str, str],
    error: str | None,
    raw: bytes | None,
) -> tuple[object, ...]:
    """The row of an event (or a message decoded as far as its envelope), its objects' columns given."""
    return (
        event_type.value,
        db_name,
        table_name,
        qualified_name,
        status,
        *kafka_columns(origin),
        *objects[:9],
        parameters,
        *objects[9:12],
        parameters.get("hive.version"),
        error,
        raw,
        *objects[12:],
    )


def event_row(event: ListenerEvent, on_error: str) -> tuple[object, ...]:
    """The row of ``event``: its objects are converted; one that does not convert raises DecodeError, or with
    ``on_error="record"`` leaves the objects' columns null and its reason in ``decode_error``."""
    try:
        objects = object_columns(ROLES[event.event_type], event)
        error = None
    except DecodeError as e:
        if on_error == "raise":
            raise DecodeError(f"{event!r}: {e.reason}") from e  # the repr names the Kafka origin
        objects, error = NO_OBJECTS, e.reason
    return envelope_row(
        event.event_type,
        event.db_name,
        event.table_name,
        event.qualified_name,
        event.status,
        event.origin,
        objects,
        dict(event.parameters),
        error,
        event.raw,
    )


def undecodable_row(item: Undecodable) -> tuple[object, ...]:
    """The row of a message that did not decode: Kafka columns, ``raw`` and ``decode_error``; the rest null."""
    return (
        *(None, None, None, None, None),
        *kafka_columns(item.origin),
        *NO_OBJECTS[:9],
        None,
        *NO_OBJECTS[9:12],
        None,
        item.error,
        item.raw,
        *NO_CHANGES,
        *NO_ICEBERG,
    )


def slow_message_row(message: Message, on_error: str) -> tuple[object, ...]:
    """The row of a raw message through the per-event path: :func:`hivewire.apiary.decode`, then
    :func:`event_row`; a message that does not decode is an :class:`Undecodable` row, or raises with
    ``on_error="raise"``."""
    origin, value = message
    if value is None:
        error = NO_VALUE
    else:
        try:
            event = apiary.decode(value, origin=origin)
        except DecodeError as e:
            error = e.reason
        else:
            return event_row(event, on_error)
    if on_error == "raise":
        raise DecodeError(f"the message {'' if origin is None else f'at {origin} '}did not decode: {error}")
    return undecodable_row(Undecodable(origin, value, error))


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk conversion, then restore it.

    Converting many events allocates millions of small acyclic objects (Thrift structs, tuples, lists).
    Each allocation burst triggers a collection, and the full ones scan every live event again, so a large
    conversion would spend much of its time in the collector. Nothing collectable is created here; reference
    counting still frees everything as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
