"""The metastore event types: :class:`EventType`, one member per type of idl/events.toml.

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

import enum

__all__ = ["EventType"]


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
