"""The metastore event types: :class:`EventType`, and their description as data (:data:`TYPES`).

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from hivewire.events._description import EventSpec, FieldSpec, Kind
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

__all__ = ["TYPES", "EventType"]


class EventType(str, enum.Enum):
    """The metastore change an event reports (the names of Hive's ``EventMessage.EventType``)."""

    CREATE_TABLE = "CREATE_TABLE"
    """A table was created. ``table`` is the table as stored."""
    ALTER_TABLE = "ALTER_TABLE"
    """A table was altered or renamed. ``db_name``/``table_name`` are the new table's."""
    DROP_TABLE = "DROP_TABLE"
    """A table was dropped. ``delete_data`` says whether its data was deleted too."""
    ADD_PARTITION = "ADD_PARTITION"
    """Partitions were added to ``table``."""
    ALTER_PARTITION = "ALTER_PARTITION"
    """A partition of ``table`` was altered."""
    DROP_PARTITION = "DROP_PARTITION"
    """Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first)."""
    INSERT = "INSERT"
    """Data was inserted into a table or partition (fired by ``fire_listener_event``)."""
    CREATE_DATABASE = "CREATE_DATABASE"
    """A database was created."""
    ALTER_DATABASE = "ALTER_DATABASE"
    """A database was altered."""
    DROP_DATABASE = "DROP_DATABASE"
    """A database was dropped."""
    NOTIFICATION_LOG = "NOTIFICATION_LOG"
    """A notification-log entry with no class of its own (Hive 2.3's index events, types newer than hivewire)."""
    ICEBERG_COMMIT = "ICEBERG_COMMIT"
    """An Iceberg table was committed to, created or dropped: what changed, read from its metadata files."""
    CREATE_FUNCTION = "CREATE_FUNCTION"
    """A function was created. ``function`` is the function as stored."""
    DROP_FUNCTION = "DROP_FUNCTION"
    """A function was dropped (the message names it only)."""
    RELOAD = "RELOAD"
    """A client asked readers to reload a table or partition (``fire_listener_event``, Hive 4)."""
    ADD_PRIMARYKEY = "ADD_PRIMARYKEY"
    """A primary key was added (one entry per column of the key)."""
    ADD_FOREIGNKEY = "ADD_FOREIGNKEY"
    """A foreign key was added; ``db_name``/``table_name`` name the referenced table, as Hive logs it."""
    ADD_UNIQUECONSTRAINT = "ADD_UNIQUECONSTRAINT"
    """A unique constraint was added (one entry per column)."""
    ADD_NOTNULLCONSTRAINT = "ADD_NOTNULLCONSTRAINT"
    """A not-null constraint was added."""
    ADD_DEFAULTCONSTRAINT = "ADD_DEFAULTCONSTRAINT"
    """A default-value constraint was added (Hive 4)."""
    ADD_CHECKCONSTRAINT = "ADD_CHECKCONSTRAINT"
    """A check constraint was added (Hive 4)."""
    DROP_CONSTRAINT = "DROP_CONSTRAINT"
    """A constraint of a table was dropped."""
    CREATE_CATALOG = "CREATE_CATALOG"
    """A catalog was created (Hive's listener does not log catalog events; another writer may)."""
    ALTER_CATALOG = "ALTER_CATALOG"
    """A catalog was altered (Hive's listener does not log catalog events; another writer may)."""
    DROP_CATALOG = "DROP_CATALOG"
    """A catalog was dropped (Hive's listener does not log catalog events; another writer may)."""
    OPEN_TXN = "OPEN_TXN"
    """Transactions were opened (the event names no database: ``db_name`` is empty)."""
    COMMIT_TXN = "COMMIT_TXN"
    """A transaction was committed (the event names no database: ``db_name`` is empty)."""
    ABORT_TXN = "ABORT_TXN"
    """A transaction was aborted (the event names no database: ``db_name`` is empty)."""
    ALLOC_WRITE_ID = "ALLOC_WRITE_ID"
    """Write ids were allocated to transactions for a table (stored as ``ALLOC_WRITE_ID_EVENT``)."""
    ACID_WRITE = "ACID_WRITE"
    """A transaction wrote to a table or partition (Hive 4 keeps these in TXN_WRITE_NOTIFICATION_LOG)."""
    UPDATE_TABLE_COLUMN_STAT = "UPDATE_TABLE_COLUMN_STAT"
    """A table's column statistics were updated (stored as ``UPDATE_TBL_COL_STAT_EVENT``)."""
    DELETE_TABLE_COLUMN_STAT = "DELETE_TABLE_COLUMN_STAT"
    """A column's statistics were deleted from a table (stored as ``DELETE_TBL_COL_STAT_EVENT``)."""
    UPDATE_PARTITION_COLUMN_STAT = "UPDATE_PARTITION_COLUMN_STAT"
    """A partition's column statistics were updated (stored as ``UPDATE_PART_COL_STAT_EVENT``)."""
    DELETE_PARTITION_COLUMN_STAT = "DELETE_PARTITION_COLUMN_STAT"
    """A column's statistics were deleted from a partition (stored as ``DELETE_PART_COL_STAT_EVENT``)."""
    COMMIT_COMPACTION = "COMMIT_COMPACTION"
    """A compaction was committed (stored as ``COMMIT_COMPACTION_EVENT``)."""

    def __str__(self) -> str:
        return self.value


#: Every event type's description (idl/events.toml), in its order.
TYPES: Mapping[EventType, EventSpec] = MappingProxyType(
    {
        EventType.CREATE_TABLE: EventSpec(
            event_type=EventType.CREATE_TABLE,
            class_name="CreateTableEvent",
            doc="A table was created. ``table`` is the table as stored.",
            wire="ON_CREATE_TABLE",
            fields=(FieldSpec("table", Kind.STRUCT, "table", Table, required=True),),
            names_from="table",
        ),
        EventType.ALTER_TABLE: EventSpec(
            event_type=EventType.ALTER_TABLE,
            class_name="AlterTableEvent",
            doc="A table was altered or renamed. ``db_name``/``table_name`` are the new table's.",
            wire="ON_ALTER_TABLE",
            fields=(
                FieldSpec("old_table", Kind.STRUCT, "oldTable", Table, required=True),
                FieldSpec("new_table", Kind.STRUCT, "newTable", Table, required=True),
            ),
            names_from="new_table",
        ),
        EventType.DROP_TABLE: EventSpec(
            event_type=EventType.DROP_TABLE,
            class_name="DropTableEvent",
            doc="A table was dropped. ``delete_data`` says whether its data was deleted too.",
            wire="ON_DROP_TABLE",
            fields=(
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("delete_data", Kind.FLAG, "deleteData"),
            ),
            names_from="table",
        ),
        EventType.ADD_PARTITION: EventSpec(
            event_type=EventType.ADD_PARTITION,
            class_name="AddPartitionEvent",
            doc="Partitions were added to ``table``.",
            wire="ON_ADD_PARTITION",
            fields=(
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("partitions", Kind.STRUCT_LIST, "partitions", Partition),
            ),
            names_from="table",
        ),
        EventType.ALTER_PARTITION: EventSpec(
            event_type=EventType.ALTER_PARTITION,
            class_name="AlterPartitionEvent",
            doc="A partition of ``table`` was altered.",
            wire="ON_ALTER_PARTITION",
            fields=(
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("old_partition", Kind.STRUCT, "oldPartition", Partition, required=True),
                FieldSpec("new_partition", Kind.STRUCT, "newPartition", Partition, required=True),
            ),
            names_from="table",
        ),
        EventType.DROP_PARTITION: EventSpec(
            event_type=EventType.DROP_PARTITION,
            class_name="DropPartitionEvent",
            doc="Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first).",
            wire="ON_DROP_PARTITION",
            fields=(
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("partitions", Kind.STRUCT_LIST, "partitions", Partition),
                FieldSpec("delete_data", Kind.FLAG, "deleteData"),
            ),
            names_from="table",
        ),
        EventType.INSERT: EventSpec(
            event_type=EventType.INSERT,
            class_name="InsertEvent",
            doc="Data was inserted into a table or partition (fired by ``fire_listener_event``).",
            wire="ON_INSERT",
            fields=(
                FieldSpec("partition_key_values", Kind.STRING_MAP, "partitionKeyValues"),
                FieldSpec("files", Kind.STRING_LIST, "files"),
                FieldSpec("file_checksums", Kind.STRING_LIST, "fileChecksums"),
            ),
        ),
        EventType.CREATE_DATABASE: EventSpec(
            event_type=EventType.CREATE_DATABASE,
            class_name="CreateDatabaseEvent",
            doc="A database was created.",
            wire="ON_CREATE_DATABASE",
            fields=(FieldSpec("database", Kind.STRUCT, "database", Database, required=True),),
            names_from="database",
            database_event=True,
        ),
        EventType.ALTER_DATABASE: EventSpec(
            event_type=EventType.ALTER_DATABASE,
            class_name="AlterDatabaseEvent",
            doc="A database was altered.",
            wire="ON_ALTER_DATABASE",
            fields=(
                FieldSpec("old_database", Kind.STRUCT, "oldDatabase", Database, required=True),
                FieldSpec("new_database", Kind.STRUCT, "newDatabase", Database, required=True),
            ),
            names_from="new_database",
            database_event=True,
        ),
        EventType.DROP_DATABASE: EventSpec(
            event_type=EventType.DROP_DATABASE,
            class_name="DropDatabaseEvent",
            doc="A database was dropped.",
            wire="ON_DROP_DATABASE",
            fields=(FieldSpec("database", Kind.STRUCT, "database", Database, required=True),),
            names_from="database",
            database_event=True,
        ),
        EventType.NOTIFICATION_LOG: EventSpec(
            event_type=EventType.NOTIFICATION_LOG,
            class_name="NotificationLogEvent",
            doc=(
                "A notification-log entry with no class of its own (Hive 2.3's index events, types newer than "
                "hivewire)."
            ),
            wire="ON_NOTIFICATION_LOG",
            fields=(FieldSpec("notification", Kind.STRUCT, "notification", NotificationEvent, required=True),),
            log_only=True,
        ),
        EventType.ICEBERG_COMMIT: EventSpec(
            event_type=EventType.ICEBERG_COMMIT,
            class_name="IcebergCommitEvent",
            doc="An Iceberg table was committed to, created or dropped: what changed, read from its metadata files.",
            wire="ON_ICEBERG_COMMIT",
            fields=(
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("previous_metadata_location", Kind.STRING, "previousMetadataLocation"),
                FieldSpec("metadata_location", Kind.STRING, "metadataLocation"),
            ),
            names_from="table",
            derived=True,
        ),
        EventType.CREATE_FUNCTION: EventSpec(
            event_type=EventType.CREATE_FUNCTION,
            class_name="CreateFunctionEvent",
            doc="A function was created. ``function`` is the function as stored.",
            wire="ON_CREATE_FUNCTION",
            fields=(FieldSpec("function", Kind.STRUCT, "function", Function, required=True),),
            database_event=True,
            log_only=True,
        ),
        EventType.DROP_FUNCTION: EventSpec(
            event_type=EventType.DROP_FUNCTION,
            class_name="DropFunctionEvent",
            doc="A function was dropped (the message names it only).",
            wire="ON_DROP_FUNCTION",
            fields=(FieldSpec("function_name", Kind.STRING, "functionName"),),
            database_event=True,
            log_only=True,
        ),
        EventType.RELOAD: EventSpec(
            event_type=EventType.RELOAD,
            class_name="ReloadEvent",
            doc="A client asked readers to reload a table or partition (``fire_listener_event``, Hive 4).",
            wire="ON_RELOAD",
            fields=(
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("partition", Kind.STRUCT, "partition", Partition),
                FieldSpec("refresh_event", Kind.FLAG, "refreshEvent"),
            ),
            names_from="table",
            log_only=True,
        ),
        EventType.ADD_PRIMARYKEY: EventSpec(
            event_type=EventType.ADD_PRIMARYKEY,
            class_name="AddPrimaryKeyEvent",
            doc="A primary key was added (one entry per column of the key).",
            wire="ON_ADD_PRIMARYKEY",
            fields=(FieldSpec("primary_keys", Kind.STRUCT_LIST, "primaryKeys", SQLPrimaryKey),),
            log_only=True,
        ),
        EventType.ADD_FOREIGNKEY: EventSpec(
            event_type=EventType.ADD_FOREIGNKEY,
            class_name="AddForeignKeyEvent",
            doc="A foreign key was added; ``db_name``/``table_name`` name the referenced table, as Hive logs it.",
            wire="ON_ADD_FOREIGNKEY",
            fields=(FieldSpec("foreign_keys", Kind.STRUCT_LIST, "foreignKeys", SQLForeignKey),),
            log_only=True,
        ),
        EventType.ADD_UNIQUECONSTRAINT: EventSpec(
            event_type=EventType.ADD_UNIQUECONSTRAINT,
            class_name="AddUniqueConstraintEvent",
            doc="A unique constraint was added (one entry per column).",
            wire="ON_ADD_UNIQUECONSTRAINT",
            fields=(FieldSpec("unique_constraints", Kind.STRUCT_LIST, "uniqueConstraints", SQLUniqueConstraint),),
            log_only=True,
        ),
        EventType.ADD_NOTNULLCONSTRAINT: EventSpec(
            event_type=EventType.ADD_NOTNULLCONSTRAINT,
            class_name="AddNotNullConstraintEvent",
            doc="A not-null constraint was added.",
            wire="ON_ADD_NOTNULLCONSTRAINT",
            fields=(FieldSpec("not_null_constraints", Kind.STRUCT_LIST, "notNullConstraints", SQLNotNullConstraint),),
            log_only=True,
        ),
        EventType.ADD_DEFAULTCONSTRAINT: EventSpec(
            event_type=EventType.ADD_DEFAULTCONSTRAINT,
            class_name="AddDefaultConstraintEvent",
            doc="A default-value constraint was added (Hive 4).",
            wire="ON_ADD_DEFAULTCONSTRAINT",
            fields=(FieldSpec("default_constraints", Kind.STRUCT_LIST, "defaultConstraints", SQLDefaultConstraint),),
            log_only=True,
        ),
        EventType.ADD_CHECKCONSTRAINT: EventSpec(
            event_type=EventType.ADD_CHECKCONSTRAINT,
            class_name="AddCheckConstraintEvent",
            doc="A check constraint was added (Hive 4).",
            wire="ON_ADD_CHECKCONSTRAINT",
            fields=(FieldSpec("check_constraints", Kind.STRUCT_LIST, "checkConstraints", SQLCheckConstraint),),
            log_only=True,
        ),
        EventType.DROP_CONSTRAINT: EventSpec(
            event_type=EventType.DROP_CONSTRAINT,
            class_name="DropConstraintEvent",
            doc="A constraint of a table was dropped.",
            wire="ON_DROP_CONSTRAINT",
            fields=(FieldSpec("constraint_name", Kind.STRING, "constraintName"),),
            log_only=True,
        ),
        EventType.CREATE_CATALOG: EventSpec(
            event_type=EventType.CREATE_CATALOG,
            class_name="CreateCatalogEvent",
            doc="A catalog was created (Hive's listener does not log catalog events; another writer may).",
            wire="ON_CREATE_CATALOG",
            fields=(FieldSpec("catalog", Kind.STRING, "catalog"),),
            database_event=True,
            log_only=True,
        ),
        EventType.ALTER_CATALOG: EventSpec(
            event_type=EventType.ALTER_CATALOG,
            class_name="AlterCatalogEvent",
            doc="A catalog was altered (Hive's listener does not log catalog events; another writer may).",
            wire="ON_ALTER_CATALOG",
            fields=(
                FieldSpec("old_catalog", Kind.STRUCT, "oldCatalog", Catalog, required=True),
                FieldSpec("new_catalog", Kind.STRUCT, "newCatalog", Catalog, required=True),
            ),
            database_event=True,
            log_only=True,
        ),
        EventType.DROP_CATALOG: EventSpec(
            event_type=EventType.DROP_CATALOG,
            class_name="DropCatalogEvent",
            doc="A catalog was dropped (Hive's listener does not log catalog events; another writer may).",
            wire="ON_DROP_CATALOG",
            fields=(FieldSpec("catalog", Kind.STRING, "catalog"),),
            database_event=True,
            log_only=True,
        ),
        EventType.OPEN_TXN: EventSpec(
            event_type=EventType.OPEN_TXN,
            class_name="OpenTxnEvent",
            doc="Transactions were opened (the event names no database: ``db_name`` is empty).",
            wire="ON_OPEN_TXN",
            fields=(FieldSpec("txn_ids", Kind.INT_LIST, "txnIds"),),
            database_event=True,
            log_only=True,
        ),
        EventType.COMMIT_TXN: EventSpec(
            event_type=EventType.COMMIT_TXN,
            class_name="CommitTxnEvent",
            doc="A transaction was committed (the event names no database: ``db_name`` is empty).",
            wire="ON_COMMIT_TXN",
            fields=(
                FieldSpec("txn_id", Kind.INT, "txnId"),
                FieldSpec("write_ids", Kind.INT_LIST, "writeIds"),
                FieldSpec("databases", Kind.STRING_LIST, "databases"),
                FieldSpec("tables", Kind.STRING_LIST, "tables"),
                FieldSpec("partitions", Kind.STRING_LIST, "partitions"),
                FieldSpec("table_objs", Kind.STRUCT_LIST, "tableObjs", Table),
                FieldSpec("partition_objs", Kind.STRUCT_LIST, "partitionObjs", Partition),
                FieldSpec("files", Kind.STRING_LIST, "files"),
            ),
            database_event=True,
            log_only=True,
        ),
        EventType.ABORT_TXN: EventSpec(
            event_type=EventType.ABORT_TXN,
            class_name="AbortTxnEvent",
            doc="A transaction was aborted (the event names no database: ``db_name`` is empty).",
            wire="ON_ABORT_TXN",
            fields=(
                FieldSpec("txn_id", Kind.INT, "txnId"),
                FieldSpec("dbs_updated", Kind.STRING_LIST, "dbsUpdated"),
            ),
            database_event=True,
            log_only=True,
        ),
        EventType.ALLOC_WRITE_ID: EventSpec(
            event_type=EventType.ALLOC_WRITE_ID,
            class_name="AllocWriteIdEvent",
            doc="Write ids were allocated to transactions for a table (stored as ``ALLOC_WRITE_ID_EVENT``).",
            wire="ON_ALLOC_WRITE_ID",
            fields=(FieldSpec("txn_to_write_ids", Kind.STRUCT_LIST, "txnToWriteIds", TxnToWriteId),),
            log_only=True,
        ),
        EventType.ACID_WRITE: EventSpec(
            event_type=EventType.ACID_WRITE,
            class_name="AcidWriteEvent",
            doc="A transaction wrote to a table or partition (Hive 4 keeps these in TXN_WRITE_NOTIFICATION_LOG).",
            wire="ON_ACID_WRITE",
            fields=(
                FieldSpec("txn_id", Kind.INT, "txnId"),
                FieldSpec("write_id", Kind.INT, "writeId"),
                FieldSpec("partition", Kind.STRING, "partition"),
                FieldSpec("files", Kind.STRING_LIST, "files"),
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
                FieldSpec("partition_obj", Kind.STRUCT, "partitionObj", Partition),
            ),
            names_from="table",
            log_only=True,
        ),
        EventType.UPDATE_TABLE_COLUMN_STAT: EventSpec(
            event_type=EventType.UPDATE_TABLE_COLUMN_STAT,
            class_name="UpdateTableColumnStatEvent",
            doc="A table's column statistics were updated (stored as ``UPDATE_TBL_COL_STAT_EVENT``).",
            wire="ON_UPDATE_TABLE_COLUMN_STAT",
            fields=(
                FieldSpec("col_stats", Kind.STRUCT, "colStats", ColumnStatistics, required=True),
                FieldSpec("write_id", Kind.INT, "writeId"),
                FieldSpec("table_parameters", Kind.STRING_MAP, "tableParameters"),
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
            ),
            names_from="table",
            log_only=True,
        ),
        EventType.DELETE_TABLE_COLUMN_STAT: EventSpec(
            event_type=EventType.DELETE_TABLE_COLUMN_STAT,
            class_name="DeleteTableColumnStatEvent",
            doc="A column's statistics were deleted from a table (stored as ``DELETE_TBL_COL_STAT_EVENT``).",
            wire="ON_DELETE_TABLE_COLUMN_STAT",
            fields=(FieldSpec("col_name", Kind.STRING, "colName"),),
            log_only=True,
        ),
        EventType.UPDATE_PARTITION_COLUMN_STAT: EventSpec(
            event_type=EventType.UPDATE_PARTITION_COLUMN_STAT,
            class_name="UpdatePartitionColumnStatEvent",
            doc="A partition's column statistics were updated (stored as ``UPDATE_PART_COL_STAT_EVENT``).",
            wire="ON_UPDATE_PARTITION_COLUMN_STAT",
            fields=(
                FieldSpec("col_stats", Kind.STRUCT, "colStats", ColumnStatistics, required=True),
                FieldSpec("write_id", Kind.INT, "writeId"),
                FieldSpec("partition_parameters", Kind.STRING_MAP, "partitionParameters"),
                FieldSpec("part_vals", Kind.STRING_LIST, "partVals"),
                FieldSpec("table", Kind.STRUCT, "table", Table, required=True),
            ),
            names_from="table",
            log_only=True,
        ),
        EventType.DELETE_PARTITION_COLUMN_STAT: EventSpec(
            event_type=EventType.DELETE_PARTITION_COLUMN_STAT,
            class_name="DeletePartitionColumnStatEvent",
            doc="A column's statistics were deleted from a partition (stored as ``DELETE_PART_COL_STAT_EVENT``).",
            wire="ON_DELETE_PARTITION_COLUMN_STAT",
            fields=(
                FieldSpec("col_name", Kind.STRING, "colName"),
                FieldSpec("part_name", Kind.STRING, "partName"),
                FieldSpec("part_values", Kind.STRING_LIST, "partValues"),
            ),
            log_only=True,
        ),
        EventType.COMMIT_COMPACTION: EventSpec(
            event_type=EventType.COMMIT_COMPACTION,
            class_name="CommitCompactionEvent",
            doc="A compaction was committed (stored as ``COMMIT_COMPACTION_EVENT``).",
            wire="ON_COMMIT_COMPACTION",
            fields=(
                FieldSpec("txn_id", Kind.INT, "txnId"),
                FieldSpec("compaction_id", Kind.INT, "compactionId"),
                FieldSpec("type", Kind.STRING, "type"),
                FieldSpec("part_name", Kind.STRING, "partName"),
            ),
            log_only=True,
        ),
    }
)
