"""Events from the metastore's notification log: :func:`from_notification` turns one log entry into an event.

The ten types Apiary carries too (tables, partitions, inserts, databases) become their own classes, equal to
the events the Apiary listener gives for the same change where the message carries the same values (Hive 2.3's
messages carry less: a dropped table or database by name only, dropped partitions by their values). The types
whose Hive 3.1/4.x message carries structure (functions, constraints, catalogs, transactions, write ids,
column statistics, compactions, reloads) become classes of their own too, their embedded Thrift objects
decoded. Anything else (Hive 2.3's index events, types newer than this hivewire) becomes a
:class:`NotificationLogEvent` holding the entry, with its decoded ``message``.

The log's ``eventType`` strings are Hive's ``EventMessage.EventType`` names, except those Hive 4 stores under
another (``ALLOC_WRITE_ID_EVENT``, ``UPDATE_TBL_COL_STAT_EVENT``, ...); both spellings are read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from hivewire.errors import DecodeError
from hivewire.events._event import ListenerEvent
from hivewire.events._logmessage import parse_message, thrift_object
from hivewire.events._model import (
    AbortTxnEvent,
    AcidWriteEvent,
    AddCheckConstraintEvent,
    AddDefaultConstraintEvent,
    AddForeignKeyEvent,
    AddNotNullConstraintEvent,
    AddPartitionEvent,
    AddPrimaryKeyEvent,
    AddUniqueConstraintEvent,
    AllocWriteIdEvent,
    AlterCatalogEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CommitCompactionEvent,
    CommitTxnEvent,
    CreateCatalogEvent,
    CreateDatabaseEvent,
    CreateFunctionEvent,
    CreateTableEvent,
    DeletePartitionColumnStatEvent,
    DeleteTableColumnStatEvent,
    DropCatalogEvent,
    DropConstraintEvent,
    DropDatabaseEvent,
    DropFunctionEvent,
    DropPartitionEvent,
    DropTableEvent,
    InsertEvent,
    NotificationLogEvent,
    OpenTxnEvent,
    ReloadEvent,
    UpdatePartitionColumnStatEvent,
    UpdateTableColumnStatEvent,
)
from hivewire_thrift.hive_metastore.ttypes import (
    Catalog,
    ColumnStatistics,
    Database,
    Function,
    NotificationEvent,
    Partition,
    SQLCheckConstraint,
    SQLDefaultConstraint,
    SQLForeignKey,
    SQLNotNullConstraint,
    SQLPrimaryKey,
    SQLUniqueConstraint,
    Table,
    TxnToWriteId,
)

__all__ = ["from_notification", "names_of"]

_Message = dict[str, object]
_T = TypeVar("_T")


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
        event = build(message, db or _first(message, _DB_KEYS), table or _first(message, _TABLE_KEYS), where)
    except (KeyError, TypeError, AttributeError) as e:
        raise DecodeError(f"{where}: unexpected message shape ({e!r})") from None
    if parameters:
        object.__setattr__(event, "_parameters", dict(parameters))  # events are immutable once handed out
    return event


def _text(message: _Message, key: str) -> str | None:
    value = message.get(key)
    return value if isinstance(value, str) else None


# Where messages name their database and table when the entry does not (Hive 3.1 stores a write-id
# allocation's table as " "): each message class has its own keys.
_DB_KEYS = ("db", "dbName", "database", "dbname")
_TABLE_KEYS = ("table", "tableName")


def _first(message: _Message, keys: tuple[str, ...]) -> str | None:
    return next((v for v in map(message.get, keys) if isinstance(v, str) and v.strip()), None)


def _string(message: _Message, key: str, where: str) -> str | None:
    """A string of the message (None when missing or null)."""
    value = message.get(key)
    if value is None or isinstance(value, str):
        return value
    raise DecodeError(f"{where}.{key}: expected a string, got {type(value).__name__}")


def _number(message: _Message, key: str, where: str) -> int | None:
    """A whole number of the message (None when missing or null)."""
    value = message.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise DecodeError(f"{where}.{key}: expected a whole number, got {type(value).__name__}")


def _list(message: _Message, key: str, where: str) -> list[object]:
    """A list of the message (empty when missing or null: Hive 4 writes null lists)."""
    value = message.get(key)
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise DecodeError(f"{where}.{key}: expected a list, got {type(value).__name__}")


def _numbers(message: _Message, key: str, where: str) -> list[int]:
    numbers: list[int] = []
    for i, item in enumerate(_list(message, key, where)):
        if not isinstance(item, int) or isinstance(item, bool):
            raise DecodeError(f"{where}.{key}[{i}]: expected a whole number, got {type(item).__name__}")
        numbers.append(item)
    return numbers


def _strings(message: _Message, key: str, where: str) -> list[str]:
    strings: list[str] = []
    for i, item in enumerate(_list(message, key, where)):
        if not isinstance(item, str):
            raise DecodeError(f"{where}.{key}[{i}]: expected a string, got {type(item).__name__}")
        strings.append(item)
    return strings


def _string_map(message: _Message, key: str, where: str) -> dict[str, str]:
    value = message.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"{where}.{key}: expected an object of strings, got {type(value).__name__}")
    for name, item in value.items():
        if not isinstance(item, str):
            raise DecodeError(f"{where}.{key}[{name!r}]: expected a string, got {type(item).__name__}")
    return value


def _object(cls: type[_T], message: _Message, key: str, where: str) -> _T | None:
    """The embedded Thrift object at ``key`` (TJSONProtocol text), or None when missing or null."""
    text = message.get(key)
    return None if text is None else thrift_object(cls, text, f"{where}.{key}")


def _objects(cls: type[_T], message: _Message, key: str, where: str) -> list[_T]:
    """The embedded Thrift objects listed at ``key`` (TJSONProtocol texts)."""
    return [thrift_object(cls, t, f"{where}.{key}[{i}]") for i, t in enumerate(_list(message, key, where))]


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


def _create_function(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    function = thrift_object(Function, m["functionObjJson"], f"{where}.functionObjJson")
    return CreateFunctionEvent(function=function, db_name=db or function.dbName)


def _drop_function(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DropFunctionEvent(function_name=_string(m, "functionName", where), db_name=db)


def _reload(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return ReloadEvent(
        table=_table(m, "tableObjJson", db, table, where),
        partition=_object(Partition, m, "ptnObjJson", where),
        refresh_event=str(m.get("refreshEvent")).lower() == "true",  # Hive writes the flag as a string
        db_name=db,
        table_name=table,
    )


def _constraints(cls: type[_T], key: str, make: Callable[[list[_T], str | None, str | None], ListenerEvent]) -> Builder:
    """The builder of an ADD_*KEY / ADD_*CONSTRAINT entry: ``make(constraints, db, table)``."""

    def build(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
        objects = _objects(cls, m, key, where)
        if db is None and objects:  # Hive names the entry after the first column's table (a key's: the referenced)
            first = objects[0]
            db = getattr(first, "pktable_db", None) or getattr(first, "table_db", None)
            table = getattr(first, "pktable_name", None) or getattr(first, "table_name", None)
        return make(objects, db, table)

    return build


def _drop_constraint(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DropConstraintEvent(constraint_name=_string(m, "constraintName", where), db_name=db, table_name=table)


def _create_catalog(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return CreateCatalogEvent(catalog=_string(m, "catalog", where), db_name=db or "")


def _alter_catalog(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return AlterCatalogEvent(
        old_catalog=thrift_object(Catalog, m["catObjBeforeJson"], f"{where}.catObjBeforeJson"),
        new_catalog=thrift_object(Catalog, m["catObjAfterJson"], f"{where}.catObjAfterJson"),
        db_name=db or "",
    )


def _drop_catalog(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DropCatalogEvent(catalog=_string(m, "catalog", where), db_name=db or "")


def _open_txn(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    txn_ids = _numbers(m, "txnIds", where)
    first, last = _number(m, "fromTxnId", where), _number(m, "toTxnId", where)
    if not txn_ids and first is not None and last is not None:  # Hive writes the range, as its getTxnIds reads it
        txn_ids = list(range(first, last + 1))
    return OpenTxnEvent(txn_ids=txn_ids, db_name=db or "")


def _commit_txn(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return CommitTxnEvent(
        txn_id=_number(m, "txnid", where),
        write_ids=_numbers(m, "writeIds", where),
        databases=_strings(m, "databases", where),
        tables=_strings(m, "tables", where),
        partitions=_strings(m, "partitions", where),
        table_objs=_objects(Table, m, "tableObjs", where),
        partition_objs=_objects(Partition, m, "partitionObjs", where),
        files=_strings(m, "files", where),
        db_name=db or "",
    )


def _abort_txn(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return AbortTxnEvent(
        txn_id=_number(m, "txnid", where), dbs_updated=_strings(m, "dbsUpdated", where), db_name=db or ""
    )


def _alloc_write_id(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    txn_ids, write_ids = _numbers(m, "txnIdList", where), _numbers(m, "writeIdList", where)
    if len(txn_ids) != len(write_ids):
        raise DecodeError(f"{where}: {len(txn_ids)} transaction ids but {len(write_ids)} write ids")
    pairs = [TxnToWriteId(txnId=t, writeId=w) for t, w in zip(txn_ids, write_ids, strict=True)]
    return AllocWriteIdEvent(txn_to_write_ids=pairs, db_name=db, table_name=table)


def _acid_write(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return AcidWriteEvent(
        txn_id=_number(m, "txnid", where),
        write_id=_number(m, "writeId", where),
        partition=_string(m, "partition", where),
        files=_strings(m, "files", where),
        table=_table(m, "tableObjJson", db, table, where),
        partition_obj=_object(Partition, m, "partitionObjJson", where),
        db_name=db,
        table_name=table,
    )


def _update_table_column_stat(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return UpdateTableColumnStatEvent(
        col_stats=thrift_object(ColumnStatistics, m["colStatsJson"], f"{where}.colStatsJson"),
        write_id=_number(m, "writeId", where),
        table_parameters=_string_map(m, "parameters", where),
        table=_table(m, "tableObjJson", db, table, where),
        db_name=db,
        table_name=table,
    )


def _delete_table_column_stat(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DeleteTableColumnStatEvent(col_name=_string(m, "colName", where), db_name=db, table_name=table)


def _update_partition_column_stat(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return UpdatePartitionColumnStatEvent(
        col_stats=thrift_object(ColumnStatistics, m["colStatsJson"], f"{where}.colStatsJson"),
        write_id=_number(m, "writeId", where),
        partition_parameters=_string_map(m, "parameters", where),
        part_vals=_strings(m, "partVals", where),
        table=_table(m, "tableObjJson", db, table, where),
        db_name=db,
        table_name=table,
    )


def _delete_partition_column_stat(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return DeletePartitionColumnStatEvent(
        col_name=_string(m, "colName", where),
        part_name=_string(m, "partName", where),
        part_values=_strings(m, "partValues", where),
        db_name=db,
        table_name=table,
    )


def _commit_compaction(m: _Message, db: str | None, table: str | None, where: str) -> ListenerEvent:
    return CommitCompactionEvent(
        txn_id=_number(m, "txnid", where),
        compaction_id=_number(m, "compactionId", where),
        type=_string(m, "type", where),
        part_name=_string(m, "partName", where),
        db_name=db,
        table_name=table,
    )


# Keyed by the log's eventType: Hive 4 stores some types under another name (MessageBuilder's constants), so
# both spellings are listed.
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
    "CREATE_FUNCTION": _create_function,
    "DROP_FUNCTION": _drop_function,
    "RELOAD": _reload,
    "ADD_PRIMARYKEY": _constraints(
        SQLPrimaryKey,
        "primaryKeyListJson",
        lambda c, db, t: AddPrimaryKeyEvent(primary_keys=c, db_name=db, table_name=t),
    ),
    "ADD_FOREIGNKEY": _constraints(
        SQLForeignKey,
        "foreignKeyListJson",
        lambda c, db, t: AddForeignKeyEvent(foreign_keys=c, db_name=db, table_name=t),
    ),
    "ADD_UNIQUECONSTRAINT": _constraints(
        SQLUniqueConstraint,
        "uniqueConstraintListJson",
        lambda c, db, t: AddUniqueConstraintEvent(unique_constraints=c, db_name=db, table_name=t),
    ),
    "ADD_NOTNULLCONSTRAINT": _constraints(
        SQLNotNullConstraint,
        "notNullConstraintListJson",
        lambda c, db, t: AddNotNullConstraintEvent(not_null_constraints=c, db_name=db, table_name=t),
    ),
    "ADD_DEFAULTCONSTRAINT": _constraints(
        SQLDefaultConstraint,
        "defaultConstraintListJson",
        lambda c, db, t: AddDefaultConstraintEvent(default_constraints=c, db_name=db, table_name=t),
    ),
    "ADD_CHECKCONSTRAINT": _constraints(
        SQLCheckConstraint,
        "checkConstraintListJson",
        lambda c, db, t: AddCheckConstraintEvent(check_constraints=c, db_name=db, table_name=t),
    ),
    "DROP_CONSTRAINT": _drop_constraint,
    "CREATE_CATALOG": _create_catalog,
    "ALTER_CATALOG": _alter_catalog,
    "DROP_CATALOG": _drop_catalog,
    "OPEN_TXN": _open_txn,
    "COMMIT_TXN": _commit_txn,
    "ABORT_TXN": _abort_txn,
    "ALLOC_WRITE_ID": _alloc_write_id,
    "ALLOC_WRITE_ID_EVENT": _alloc_write_id,
    "ACID_WRITE": _acid_write,
    "ACID_WRITE_EVENT": _acid_write,
    "UPDATE_TABLE_COLUMN_STAT": _update_table_column_stat,
    "UPDATE_TBL_COL_STAT_EVENT": _update_table_column_stat,
    "DELETE_TABLE_COLUMN_STAT": _delete_table_column_stat,
    "DELETE_TBL_COL_STAT_EVENT": _delete_table_column_stat,
    "UPDATE_PARTITION_COLUMN_STAT": _update_partition_column_stat,
    "UPDATE_PART_COL_STAT_EVENT": _update_partition_column_stat,
    "DELETE_PARTITION_COLUMN_STAT": _delete_partition_column_stat,
    "DELETE_PART_COL_STAT_EVENT": _delete_partition_column_stat,
    "COMMIT_COMPACTION": _commit_compaction,
    "COMMIT_COMPACTION_EVENT": _commit_compaction,
}
