"""The runtime's hooks per event type: the ``on_*`` methods of
:class:`~hivewire.runtime.MetaStoreEventListener` (:class:`ListenerMethods`) and the ``on_*`` decorators
of :class:`~hivewire.runtime.App` (:class:`AppDecorators`), typed per event class.

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

from hivewire.events._event_type import EventType
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
    IcebergCommitEvent,
    InsertEvent,
    NotificationLogEvent,
    OpenTxnEvent,
    ReloadEvent,
    UpdatePartitionColumnStatEvent,
    UpdateTableColumnStatEvent,
)
from hivewire.runtime._decorators import On


class ListenerMethods:
    """One ``on_*`` method per event type, each doing nothing: a listener overrides those it needs."""

    def on_create_table(self, event: CreateTableEvent) -> None:
        """A table was created. ``table`` is the table as stored."""

    def on_alter_table(self, event: AlterTableEvent) -> None:
        """A table was altered or renamed. ``db_name``/``table_name`` are the new table's."""

    def on_drop_table(self, event: DropTableEvent) -> None:
        """A table was dropped. ``delete_data`` says whether its data was deleted too."""

    def on_add_partition(self, event: AddPartitionEvent) -> None:
        """Partitions were added to ``table``."""

    def on_alter_partition(self, event: AlterPartitionEvent) -> None:
        """A partition of ``table`` was altered."""

    def on_drop_partition(self, event: DropPartitionEvent) -> None:
        """Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first)."""

    def on_insert(self, event: InsertEvent) -> None:
        """Data was inserted into a table or partition (fired by ``fire_listener_event``)."""

    def on_create_database(self, event: CreateDatabaseEvent) -> None:
        """A database was created."""

    def on_alter_database(self, event: AlterDatabaseEvent) -> None:
        """A database was altered."""

    def on_drop_database(self, event: DropDatabaseEvent) -> None:
        """A database was dropped."""

    def on_notification_log(self, event: NotificationLogEvent) -> None:
        """A notification-log entry with no class of its own (Hive 2.3's index events, types newer than hivewire)."""

    def on_iceberg_commit(self, event: IcebergCommitEvent) -> None:
        """An Iceberg table was committed to, created or dropped: what changed, read from its metadata files."""

    def on_create_function(self, event: CreateFunctionEvent) -> None:
        """A function was created. ``function`` is the function as stored."""

    def on_drop_function(self, event: DropFunctionEvent) -> None:
        """A function was dropped (the message names it only)."""

    def on_reload(self, event: ReloadEvent) -> None:
        """A client asked readers to reload a table or partition (``fire_listener_event``, Hive 4)."""

    def on_add_primarykey(self, event: AddPrimaryKeyEvent) -> None:
        """A primary key was added (one entry per column of the key)."""

    def on_add_foreignkey(self, event: AddForeignKeyEvent) -> None:
        """A foreign key was added; ``db_name``/``table_name`` name the referenced table, as Hive logs it."""

    def on_add_uniqueconstraint(self, event: AddUniqueConstraintEvent) -> None:
        """A unique constraint was added (one entry per column)."""

    def on_add_notnullconstraint(self, event: AddNotNullConstraintEvent) -> None:
        """A not-null constraint was added."""

    def on_add_defaultconstraint(self, event: AddDefaultConstraintEvent) -> None:
        """A default-value constraint was added (Hive 4)."""

    def on_add_checkconstraint(self, event: AddCheckConstraintEvent) -> None:
        """A check constraint was added (Hive 4)."""

    def on_drop_constraint(self, event: DropConstraintEvent) -> None:
        """A constraint of a table was dropped."""

    def on_create_catalog(self, event: CreateCatalogEvent) -> None:
        """A catalog was created (Hive's listener does not log catalog events; another writer may)."""

    def on_alter_catalog(self, event: AlterCatalogEvent) -> None:
        """A catalog was altered (Hive's listener does not log catalog events; another writer may)."""

    def on_drop_catalog(self, event: DropCatalogEvent) -> None:
        """A catalog was dropped (Hive's listener does not log catalog events; another writer may)."""

    def on_open_txn(self, event: OpenTxnEvent) -> None:
        """Transactions were opened (the event names no database: ``db_name`` is empty)."""

    def on_commit_txn(self, event: CommitTxnEvent) -> None:
        """A transaction was committed (the event names no database: ``db_name`` is empty)."""

    def on_abort_txn(self, event: AbortTxnEvent) -> None:
        """A transaction was aborted (the event names no database: ``db_name`` is empty)."""

    def on_alloc_write_id(self, event: AllocWriteIdEvent) -> None:
        """Write ids were allocated to transactions for a table (stored as ``ALLOC_WRITE_ID_EVENT``)."""

    def on_acid_write(self, event: AcidWriteEvent) -> None:
        """A transaction wrote to a table or partition (Hive 4 keeps these in TXN_WRITE_NOTIFICATION_LOG)."""

    def on_update_table_column_stat(self, event: UpdateTableColumnStatEvent) -> None:
        """A table's column statistics were updated (stored as ``UPDATE_TBL_COL_STAT_EVENT``)."""

    def on_delete_table_column_stat(self, event: DeleteTableColumnStatEvent) -> None:
        """A column's statistics were deleted from a table (stored as ``DELETE_TBL_COL_STAT_EVENT``)."""

    def on_update_partition_column_stat(self, event: UpdatePartitionColumnStatEvent) -> None:
        """A partition's column statistics were updated (stored as ``UPDATE_PART_COL_STAT_EVENT``)."""

    def on_delete_partition_column_stat(self, event: DeletePartitionColumnStatEvent) -> None:
        """A column's statistics were deleted from a partition (stored as ``DELETE_PART_COL_STAT_EVENT``)."""

    def on_commit_compaction(self, event: CommitCompactionEvent) -> None:
        """A compaction was committed (stored as ``COMMIT_COMPACTION_EVENT``)."""


class AppDecorators:
    """One decorator per event type (``@app.on_create_table``), used bare or with filter options."""

    on_create_table: On[CreateTableEvent] = On(EventType.CREATE_TABLE)
    """Register a function for CREATE_TABLE events: a table was created. ``table`` is the table as stored."""
    on_alter_table: On[AlterTableEvent] = On(EventType.ALTER_TABLE)
    """Register a function for ALTER_TABLE events: a table was altered or renamed. ``db_name``/``table_name`` are the
    new table's.
    """
    on_drop_table: On[DropTableEvent] = On(EventType.DROP_TABLE)
    """Register a function for DROP_TABLE events: a table was dropped. ``delete_data`` says whether its data was
    deleted too.
    """
    on_add_partition: On[AddPartitionEvent] = On(EventType.ADD_PARTITION)
    """Register a function for ADD_PARTITION events: partitions were added to ``table``."""
    on_alter_partition: On[AlterPartitionEvent] = On(EventType.ALTER_PARTITION)
    """Register a function for ALTER_PARTITION events: a partition of ``table`` was altered."""
    on_drop_partition: On[DropPartitionEvent] = On(EventType.DROP_PARTITION)
    """Register a function for DROP_PARTITION events: partitions of ``table`` were dropped (all of them, unlike Drone
    Fly, which keeps only the first).
    """
    on_insert: On[InsertEvent] = On(EventType.INSERT)
    """Register a function for INSERT events: data was inserted into a table or partition (fired by
    ``fire_listener_event``).
    """
    on_create_database: On[CreateDatabaseEvent] = On(EventType.CREATE_DATABASE)
    """Register a function for CREATE_DATABASE events: a database was created."""
    on_alter_database: On[AlterDatabaseEvent] = On(EventType.ALTER_DATABASE)
    """Register a function for ALTER_DATABASE events: a database was altered."""
    on_drop_database: On[DropDatabaseEvent] = On(EventType.DROP_DATABASE)
    """Register a function for DROP_DATABASE events: a database was dropped."""
    on_notification_log: On[NotificationLogEvent] = On(EventType.NOTIFICATION_LOG)
    """Register a function for NOTIFICATION_LOG events: a notification-log entry with no class of its own (Hive 2.3's
    index events, types newer than hivewire).
    """
    on_iceberg_commit: On[IcebergCommitEvent] = On(EventType.ICEBERG_COMMIT)
    """Register a function for ICEBERG_COMMIT events: an Iceberg table was committed to, created or dropped: what
    changed, read from its metadata files.
    """
    on_create_function: On[CreateFunctionEvent] = On(EventType.CREATE_FUNCTION)
    """Register a function for CREATE_FUNCTION events: a function was created. ``function`` is the function as
    stored.
    """
    on_drop_function: On[DropFunctionEvent] = On(EventType.DROP_FUNCTION)
    """Register a function for DROP_FUNCTION events: a function was dropped (the message names it only)."""
    on_reload: On[ReloadEvent] = On(EventType.RELOAD)
    """Register a function for RELOAD events: a client asked readers to reload a table or partition
    (``fire_listener_event``, Hive 4).
    """
    on_add_primarykey: On[AddPrimaryKeyEvent] = On(EventType.ADD_PRIMARYKEY)
    """Register a function for ADD_PRIMARYKEY events: a primary key was added (one entry per column of the key)."""
    on_add_foreignkey: On[AddForeignKeyEvent] = On(EventType.ADD_FOREIGNKEY)
    """Register a function for ADD_FOREIGNKEY events: a foreign key was added; ``db_name``/``table_name`` name the
    referenced table, as Hive logs it.
    """
    on_add_uniqueconstraint: On[AddUniqueConstraintEvent] = On(EventType.ADD_UNIQUECONSTRAINT)
    """Register a function for ADD_UNIQUECONSTRAINT events: a unique constraint was added (one entry per column)."""
    on_add_notnullconstraint: On[AddNotNullConstraintEvent] = On(EventType.ADD_NOTNULLCONSTRAINT)
    """Register a function for ADD_NOTNULLCONSTRAINT events: a not-null constraint was added."""
    on_add_defaultconstraint: On[AddDefaultConstraintEvent] = On(EventType.ADD_DEFAULTCONSTRAINT)
    """Register a function for ADD_DEFAULTCONSTRAINT events: a default-value constraint was added (Hive 4)."""
    on_add_checkconstraint: On[AddCheckConstraintEvent] = On(EventType.ADD_CHECKCONSTRAINT)
    """Register a function for ADD_CHECKCONSTRAINT events: a check constraint was added (Hive 4)."""
    on_drop_constraint: On[DropConstraintEvent] = On(EventType.DROP_CONSTRAINT)
    """Register a function for DROP_CONSTRAINT events: a constraint of a table was dropped."""
    on_create_catalog: On[CreateCatalogEvent] = On(EventType.CREATE_CATALOG)
    """Register a function for CREATE_CATALOG events: a catalog was created (Hive's listener does not log catalog
    events; another writer may).
    """
    on_alter_catalog: On[AlterCatalogEvent] = On(EventType.ALTER_CATALOG)
    """Register a function for ALTER_CATALOG events: a catalog was altered (Hive's listener does not log catalog
    events; another writer may).
    """
    on_drop_catalog: On[DropCatalogEvent] = On(EventType.DROP_CATALOG)
    """Register a function for DROP_CATALOG events: a catalog was dropped (Hive's listener does not log catalog
    events; another writer may).
    """
    on_open_txn: On[OpenTxnEvent] = On(EventType.OPEN_TXN)
    """Register a function for OPEN_TXN events: transactions were opened (the event names no database: ``db_name`` is
    empty).
    """
    on_commit_txn: On[CommitTxnEvent] = On(EventType.COMMIT_TXN)
    """Register a function for COMMIT_TXN events: a transaction was committed (the event names no database:
    ``db_name`` is empty).
    """
    on_abort_txn: On[AbortTxnEvent] = On(EventType.ABORT_TXN)
    """Register a function for ABORT_TXN events: a transaction was aborted (the event names no database: ``db_name``
    is empty).
    """
    on_alloc_write_id: On[AllocWriteIdEvent] = On(EventType.ALLOC_WRITE_ID)
    """Register a function for ALLOC_WRITE_ID events: write ids were allocated to transactions for a table (stored as
    ``ALLOC_WRITE_ID_EVENT``).
    """
    on_acid_write: On[AcidWriteEvent] = On(EventType.ACID_WRITE)
    """Register a function for ACID_WRITE events: a transaction wrote to a table or partition (Hive 4 keeps these in
    TXN_WRITE_NOTIFICATION_LOG).
    """
    on_update_table_column_stat: On[UpdateTableColumnStatEvent] = On(EventType.UPDATE_TABLE_COLUMN_STAT)
    """Register a function for UPDATE_TABLE_COLUMN_STAT events: a table's column statistics were updated (stored as
    ``UPDATE_TBL_COL_STAT_EVENT``).
    """
    on_delete_table_column_stat: On[DeleteTableColumnStatEvent] = On(EventType.DELETE_TABLE_COLUMN_STAT)
    """Register a function for DELETE_TABLE_COLUMN_STAT events: a column's statistics were deleted from a table
    (stored as ``DELETE_TBL_COL_STAT_EVENT``).
    """
    on_update_partition_column_stat: On[UpdatePartitionColumnStatEvent] = On(EventType.UPDATE_PARTITION_COLUMN_STAT)
    """Register a function for UPDATE_PARTITION_COLUMN_STAT events: a partition's column statistics were updated
    (stored as ``UPDATE_PART_COL_STAT_EVENT``).
    """
    on_delete_partition_column_stat: On[DeletePartitionColumnStatEvent] = On(EventType.DELETE_PARTITION_COLUMN_STAT)
    """Register a function for DELETE_PARTITION_COLUMN_STAT events: a column's statistics were deleted from a
    partition (stored as ``DELETE_PART_COL_STAT_EVENT``).
    """
    on_commit_compaction: On[CommitCompactionEvent] = On(EventType.COMMIT_COMPACTION)
    """Register a function for COMMIT_COMPACTION events: a compaction was committed (stored as
    ``COMMIT_COMPACTION_EVENT``).
    """
