"""Events from the metastore's notification log: :func:`from_notification` turns one log entry into an event.

The ten types hivewire models (tables, partitions, inserts, databases) become their own classes, equal to the
events the Apiary listener gives for the same change where the message carries the same values (Hive 2.3's
messages carry less: a dropped table or database by name only, dropped partitions by their values). Every
other entry (transactions, write ids, constraints, functions, statistics, compactions, ...) becomes a
:class:`NotificationLogEvent` holding the entry, with its decoded ``message``.

The log's ``eventType`` strings are Hive's ``EventMessage.EventType`` names, except nine that Hive 4 stores
under another (``ALLOC_WRITE_ID_EVENT``, ...); those reach :class:`NotificationLogEvent` under the stored
name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hivewire.errors import DecodeError
from hivewire.events._event import ListenerEvent
from hivewire.events._logmessage import parse_message, thrift_object
from hivewire.events._model import (
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropDatabaseEvent,
    DropPartitionEvent,
    DropTableEvent,
    InsertEvent,
    NotificationLogEvent,
)
from hivewire_thrift.hive_metastore.ttypes import Database, NotificationEvent, Partition, Table

__all__ = ["from_notification", "names_of"]

_Message = dict[str, object]


def names_of(entry: NotificationEvent) -> tuple[str | None, str | None]:
    """The database and table an entry names; Hive 3.1's transaction entries store ``"null"`` and ``" "``."""
    db = entry.dbName if entry.dbName not in ("null", "") else None
    table = entry.tableName.strip() if entry.tableName else None
    return db, table or None


def from_notification(entry: NotificationEvent, parameters: Mapping[str, str] | None = None) -> ListenerEvent:
    """The event of one notification-log entry, with ``parameters`` (raises :class:`~hivewire.errors.DecodeError`
    for a bad message)."""
    build = _BUILDERS.get(entry.eventType)
    db, table = names_of(entry)
    if build is None:
        # "" when the entry names no database, as its Apiary message decodes (the runtime routes on names).
        return NotificationLogEvent(notification=entry, db_name=db or "", table_name=table, parameters=parameters)
    message = parse_message(entry.message, entry.messageFormat)
    where = f"notification {entry.eventId} ({entry.eventType})"
    try:
        event = build(message, db or _text(message, "db"), table or _text(message, "table"), where)
    except (KeyError, TypeError, AttributeError) as e:
        raise DecodeError(f"{where}: unexpected message shape ({e!r})") from None
    if parameters:
        object.__setattr__(event, "_parameters", dict(parameters))  # events are immutable once handed out
    return event


def _text(message: _Message, key: str) -> str | None:
    value = message.get(key)
    return value if isinstance(value, str) else None


def _table(message: _Message, key: str, db: str | None, table: str | None, where: str) -> Table:
    """The message's table, or (Hive 2.3 drops carry none) a table known by name only."""
    text = message.get(key)
    if text is None:
        return Table(dbName=db, tableName=table)
    return thrift_object(Table, text, f"{where}.{key}")


def _database(message: _Message, key: str, db: str | None, where: str) -> Database:
    text = message.get(key)
    if text is None:
        return Database(name=db)
    return thrift_object(Database, text, f"{where}.{key}")


def _partition(message: _Message, key: str, where: str) -> Partition:
    return thrift_object(Partition, message[key], f"{where}.{key}")


def _partition_of_values(table: Table, values: Mapping[str, str]) -> Partition:
    """A partition known by its key values only (a drop's message), its values in the table's key order."""
    keys = [str(k.name) for k in (table.partitionKeys or [])] or list(values)
    return Partition(values=[values[k] for k in keys if k in values], dbName=table.dbName, tableName=table.tableName)


def _files(message: _Message) -> tuple[list[str], list[str]]:
    """Files and checksums: Hive writes ``path#checksum`` (2.3) or ``path#checksum#cmroot#subdir`` (3.1+)."""
    files, checksums = [], []
    listed = message.get("files")
    for item in listed if isinstance(listed, list) else []:
        path, _, rest = str(item).partition("#")
        files.append(path)
        checksums.append(rest.partition("#")[0])
    return files, checksums


Builder = Callable[[_Message, "str | None", "str | None", str], ListenerEvent]


def _create_table(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return CreateTableEvent(table=_table(m, "tableObjJson", db, table, where))


def _alter_table(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return AlterTableEvent(
        old_table=_table(m, "tableObjBeforeJson", db, table, where),
        new_table=_table(m, "tableObjAfterJson", db, table, where),
    )


def _drop_table(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DropTableEvent(table=_table(m, "tableObjJson", db, table, where))


def _add_partition(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    texts = m.get("partitionListJson") or []
    assert isinstance(texts, list)
    partitions = [thrift_object(Partition, t, f"{where}.partitionListJson[{i}]") for i, t in enumerate(texts)]
    return AddPartitionEvent(table=_table(m, "tableObjJson", db, table, where), partitions=partitions)


def _alter_partition(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return AlterPartitionEvent(
        table=_table(m, "tableObjJson", db, table, where),
        old_partition=_partition(m, "partitionObjBeforeJson", where),
        new_partition=_partition(m, "partitionObjAfterJson", where),
    )


def _drop_partition(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    t = _table(m, "tableObjJson", db, table, where)
    values = m.get("partitions") or []
    assert isinstance(values, list)
    return DropPartitionEvent(table=t, partitions=[_partition_of_values(t, v) for v in values])


def _insert(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    given = m.get("partKeyVals")  # Hive 2.3
    key_values = {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
    if given is None and m.get("ptnObjJson") is not None:  # Hive 3.1+: the partition, with the table's keys
        t = _table(m, "tableObjJson", db, table, where)
        values = _partition(m, "ptnObjJson", where).values or []
        key_values = dict(zip([str(k.name) for k in (t.partitionKeys or [])], values, strict=False))
    files, checksums = _files(m)
    return InsertEvent(
        db_name=db,
        table_name=table,
        partition_key_values=key_values,
        files=files,
        file_checksums=checksums,
    )


def _create_database(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return CreateDatabaseEvent(database=_database(m, "dbJson", db, where))


def _alter_database(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return AlterDatabaseEvent(
        old_database=_database(m, "dbObjBeforeJson", db, where),
        new_database=_database(m, "dbObjAfterJson", db, where),
    )


def _drop_database(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DropDatabaseEvent(database=_database(m, "dbJson", db, where))


_BUILDERS: Mapping[str, Builder] = {
    "CREATE_TABLE": _create_table,
    "ALTER_TABLE": _alter_table,
    "DROP_TABLE": _drop_table,
    "ADD_PARTITION": _add_partition,
    "ALTER_PARTITION": _alter_partition,
    "DROP_PARTITION": _drop_partition,
    "INSERT": _insert,
    "CREATE_DATABASE": _create_database,
    "ALTER_DATABASE": _alter_database,
    "DROP_DATABASE": _drop_database,
}
