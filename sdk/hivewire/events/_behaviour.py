"""What event classes do beyond holding their fields, written by hand: the facts shown in a notebook and the
computed properties that ``idl/events.toml`` names (``AlterTableEvent.is_rename``, ``InsertEvent.table``).

The generated classes of :mod:`hivewire.events._model` call these functions, which name what they read of an
event as protocols (so that this module does not import the classes back). Facts follow from the
description's fields (:func:`fields_summary`) unless the type names a summary of its own here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from hivewire.errors import HivewireError
from hivewire.events._changes import changes
from hivewire.events._description import Kind
from hivewire.events._event import Facts, ListenerEvent
from hivewire.events._iceberg import IcebergCommit
from hivewire.events._logmessage import parse_message
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore.ttypes import ColumnStatistics, Database, Partition, Table, TxnToWriteId

if TYPE_CHECKING:
    from hivewire.metastore import MetastoreClient
    from hivewire_thrift.hive_metastore.ttypes import NotificationEvent

# -- what each function reads of its event (the generated classes of _model.py, which call these, are such) -----


class AlterTableLike(Protocol):
    @property
    def old_table(self) -> Table: ...
    @property
    def new_table(self) -> Table: ...


class AlterPartitionLike(Protocol):
    @property
    def table(self) -> Table: ...
    @property
    def old_partition(self) -> Partition: ...
    @property
    def new_partition(self) -> Partition: ...


class InsertLike(Protocol):
    _values: dict[str, Any]

    @property
    def partition_key_values(self) -> Mapping[str, str]: ...
    @property
    def files(self) -> list[str]: ...
    @property
    def handler(self) -> MetastoreClient | None: ...
    @property
    def qualified_name(self) -> str: ...
    @property
    def db_name(self) -> str | None: ...
    @property
    def table_name(self) -> str | None: ...


class AlterDatabaseLike(Protocol):
    @property
    def old_database(self) -> Database: ...
    @property
    def new_database(self) -> Database: ...


class NotificationLogLike(Protocol):
    @property
    def notification(self) -> NotificationEvent: ...


# -- display facts: read defensively, since events built in Python may hold partial objects ---------------------

_LISTED = 10  # items shown of a long list (partitions, files)


def _listed(items: list[str]) -> list[str]:
    return items if len(items) <= _LISTED else [*items[:_LISTED], f"... and {len(items) - _LISTED} more"]


def _location(obj: object) -> str | None:
    """The storage location of a table or partition."""
    location: str | None = getattr(getattr(obj, "sd", None), "location", None)
    return location


def _facts(**facts: str | list[str] | None) -> Facts:
    """The facts that are known (not None)."""
    return {k.replace("_", " "): v for k, v in facts.items() if v is not None}


def _table_facts(table: object) -> Facts:
    return _facts(table_type=getattr(table, "tableType", None), location=_location(table))


def _partition_name(table: object, partition: object) -> str:
    """``dt=2024-05-01/hour=3`` (just the values when the table's partition keys do not match them)."""
    values = [str(v) for v in getattr(partition, "values", None) or ()]
    keys = [str(getattr(k, "name", k)) for k in getattr(table, "partitionKeys", None) or ()]
    if len(keys) != len(values):
        return "/".join(values)
    return "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


def _partition_facts(table: object, partition: object) -> str:
    location = _location(partition)
    name = _partition_name(table, partition)
    return name if location is None else f"{name} at {location}"


def fields_summary(event: ListenerEvent) -> Facts:
    """The facts of an event, from its type's fields: a table's type and location, a database's location, the
    partitions (name and location), flags and lists of strings."""
    spec = TYPES[event.event_type]
    values = [(f, getattr(event, f.name)) for f in spec.fields]
    table = next((v for f, v in values if f.thrift is Table), None)
    facts: Facts = {}
    for field, value in values:
        if field.name.startswith("old_"):  # a before/after pair: the after is shown
            continue
        if field.kind is Kind.STRUCT and field.thrift is Table:
            facts.update(_table_facts(value))
        elif field.kind is Kind.STRUCT and field.thrift is Database:
            facts.update(_facts(location=getattr(value, "locationUri", None)))
        elif field.kind is Kind.STRUCT_LIST and field.thrift is Partition:
            facts[field.name] = _listed([_partition_facts(table, p) for p in value])
        elif field.kind is Kind.FLAG:
            facts[field.name.replace("_", " ")] = str(value)
        elif field.kind is Kind.STRING or field.kind is Kind.INT:
            if value is not None:
                facts[field.name.replace("_", " ")] = str(value)
        elif field.kind is Kind.STRING_LIST or field.kind is Kind.INT_LIST:
            facts[field.name.replace("_", " ")] = _listed([str(v) for v in value])
        elif field.kind is Kind.STRUCT_LIST:
            facts[field.name.replace("_", " ")] = _listed([_named(v) for v in value])
        elif field.kind is Kind.STRUCT and field.thrift is Partition and value is not None:
            facts[field.name.replace("_", " ")] = _partition_facts(table, value)
        elif field.kind is Kind.STRUCT and value is not None:
            facts[field.name.replace("_", " ")] = _named(value)
    return facts


# What names an object of the notification log's types in a notebook: the first of these it has.
_NAMING = ("functionName", "column_name", "fkcolumn_name", "tableName", "name")


def _named(obj: object) -> str:
    """A short name for a Thrift object (a function, a constraint's column, a catalog, ...)."""
    if isinstance(obj, TxnToWriteId):
        return f"txn {obj.txnId}: write id {obj.writeId}"
    if isinstance(obj, ColumnStatistics):
        return ", ".join(str(o.colName) for o in obj.statsObj or () if o is not None)
    for attr in _NAMING:
        value = getattr(obj, attr, None)
        if value is not None:
            return str(value)
    return type(obj).__name__


def alter_table_summary(event: AlterTableLike) -> Facts:
    old, new = event.old_table, event.new_table
    old_name = (getattr(old, "dbName", None), getattr(old, "tableName", None))
    renamed = old_name != (getattr(new, "dbName", None), getattr(new, "tableName", None))
    return {
        **_facts(renamed_from=".".join(map(str, old_name)) if renamed else None),
        **_table_facts(new),
        **changes(old, new).facts(),
    }


def alter_partition_summary(event: AlterPartitionLike) -> Facts:
    table, old, new = event.table, event.old_partition, event.new_partition
    before, after = _partition_name(table, old), _partition_name(table, new)
    return {
        **_facts(
            table_type=getattr(table, "tableType", None),
            partition=_partition_facts(table, new),
            renamed_from=before if before != after else None,
        ),
        **changes(old, new).facts(),
    }


def insert_summary(event: InsertLike) -> Facts:
    partition = "/".join(f"{k}={v}" for k, v in event.partition_key_values.items())
    return _facts(partition=partition or None, files=_listed([str(f) for f in event.files]))


def alter_database_summary(event: AlterDatabaseLike) -> Facts:
    old = getattr(event.old_database, "locationUri", None)
    new = getattr(event.new_database, "locationUri", None)
    return _facts(location=new, previous_location=old if old != new else None)


def notification_summary(event: NotificationLogLike) -> Facts:
    entry = event.notification
    return _facts(hive_event_type=entry.eventType, event_id=str(entry.eventId), message_format=entry.messageFormat)


# -- computed properties ---------------------------------------------------------------------------------------


def alter_table_is_rename(event: AlterTableLike) -> bool:
    old, new = event.old_table, event.new_table
    return (old.dbName, old.tableName) != (new.dbName, new.tableName)


_INSERT_TABLE = "_table"  # where InsertEvent.table keeps the table it fetched (copies copy it)


def insert_table(event: InsertLike) -> Table:
    table: Table | None = event._values.get(_INSERT_TABLE)
    if table is not None:
        return table
    handler = event.handler
    if handler is None:
        raise HivewireError(
            f"InsertEvent.table for {event.qualified_name} needs a metastore connection: run the app with "
            "metastore URIs configured (metastore.thrift.uris / hivewire run --metastore-uris), or use "
            "db_name/table_name"
        )
    assert event.db_name is not None and event.table_name is not None
    table = handler.get_table(event.db_name, event.table_name)
    event._values[_INSERT_TABLE] = table
    return table


def notification_log_hive_event_type(event: NotificationLogLike) -> str:
    return event.notification.eventType


def notification_log_message(event: NotificationLogLike) -> dict[str, object]:
    entry = event.notification
    return parse_message(entry.message, entry.messageFormat)


def iceberg_commit_summary(event: ListenerEvent) -> Facts:
    """An Iceberg commit: what it changed (its metadata files are read for this, once)."""
    facts = event.facts() if isinstance(event, IcebergCommit) else {}
    new = getattr(event, "metadata_location", None)
    return {**facts, **_facts(metadata=new, previous_metadata=getattr(event, "previous_metadata_location", None))}
