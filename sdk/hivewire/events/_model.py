"""The event model: one class per metastore event type, with typed fields.

Names follow Hive's ``MetaStoreEventListener`` API in snake case (``CreateTableEvent.table``,
``AlterTableEvent.old_table``, ...). Table, Partition, Database and EnvironmentContext values are the
generated ``hivewire_thrift`` types. The base class, :class:`ListenerEvent`, is in ``_event.py``; what the
classes compute (notebook facts, ``AlterTableEvent.is_rename``, ``InsertEvent.table``) in ``_behaviour.py``.

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from hivewire.events import _behaviour
from hivewire.events._event import Facts, Field, FlagField, ListenerEvent, ListField, MapField, Origin
from hivewire.events._event_type import EventType
from hivewire.events._iceberg import IcebergCommit
from hivewire_thrift.hive_metastore.ttypes import (
    Catalog,
    ColumnStatistics,
    Database,
    EnvironmentContext,
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

__all__ = [
    "EVENT_CLASSES",
    "AbortTxnEvent",
    "AcidWriteEvent",
    "AddCheckConstraintEvent",
    "AddDefaultConstraintEvent",
    "AddForeignKeyEvent",
    "AddNotNullConstraintEvent",
    "AddPartitionEvent",
    "AddPrimaryKeyEvent",
    "AddUniqueConstraintEvent",
    "AllocWriteIdEvent",
    "AlterCatalogEvent",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "CommitCompactionEvent",
    "CommitTxnEvent",
    "CreateCatalogEvent",
    "CreateDatabaseEvent",
    "CreateFunctionEvent",
    "CreateTableEvent",
    "DeletePartitionColumnStatEvent",
    "DeleteTableColumnStatEvent",
    "DropCatalogEvent",
    "DropConstraintEvent",
    "DropDatabaseEvent",
    "DropFunctionEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "IcebergCommitEvent",
    "InsertEvent",
    "ListenerEvent",
    "NotificationLogEvent",
    "OpenTxnEvent",
    "Origin",
    "ReloadEvent",
    "UpdatePartitionColumnStatEvent",
    "UpdateTableColumnStatEvent",
]


class CreateTableEvent(ListenerEvent):
    """A table was created. ``table`` is the table as stored."""

    __slots__ = ()
    event_type = EventType.CREATE_TABLE
    fields = ("table",)
    names_from = ("table", "table")

    table: Field[Table] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AlterTableEvent(ListenerEvent):
    """A table was altered or renamed. ``db_name``/``table_name`` are the new table's."""

    __slots__ = ()
    event_type = EventType.ALTER_TABLE
    fields = ("old_table", "new_table")
    names_from = ("new_table", "table")

    old_table: Field[Table] = Field()
    new_table: Field[Table] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            old_table: Table | None = None,
            new_table: Table | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    @property
    def is_rename(self) -> bool:
        """Whether the table changed its name or database."""
        return _behaviour.alter_table_is_rename(self)

    def _summary(self) -> Facts:
        return _behaviour.alter_table_summary(self)


class DropTableEvent(ListenerEvent):
    """A table was dropped. ``delete_data`` says whether its data was deleted too."""

    __slots__ = ()
    event_type = EventType.DROP_TABLE
    fields = ("table", "delete_data")
    names_from = ("table", "table")

    table: Field[Table] = Field()
    delete_data: FlagField = FlagField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            delete_data: bool | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddPartitionEvent(ListenerEvent):
    """Partitions were added to ``table``."""

    __slots__ = ()
    event_type = EventType.ADD_PARTITION
    fields = ("table", "partitions")
    names_from = ("table", "table")

    table: Field[Table] = Field()
    partitions: ListField[Partition] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            partitions: list[Partition] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AlterPartitionEvent(ListenerEvent):
    """A partition of ``table`` was altered."""

    __slots__ = ()
    event_type = EventType.ALTER_PARTITION
    fields = ("table", "old_partition", "new_partition")
    names_from = ("table", "table")

    table: Field[Table] = Field()
    old_partition: Field[Partition] = Field()
    new_partition: Field[Partition] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            old_partition: Partition | None = None,
            new_partition: Partition | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.alter_partition_summary(self)


class DropPartitionEvent(ListenerEvent):
    """Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first)."""

    __slots__ = ()
    event_type = EventType.DROP_PARTITION
    fields = ("table", "partitions", "delete_data")
    names_from = ("table", "table")

    table: Field[Table] = Field()
    partitions: ListField[Partition] = ListField()
    delete_data: FlagField = FlagField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            partitions: list[Partition] | None = None,
            delete_data: bool | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class InsertEvent(ListenerEvent):
    """Data was inserted into a table or partition (fired by ``fire_listener_event``)."""

    __slots__ = ()
    event_type = EventType.INSERT
    fields = ("partition_key_values", "files", "file_checksums")

    partition_key_values: MapField = MapField()
    """Partition column to value, in the table's key order (empty when unpartitioned)."""
    files: ListField[str] = ListField()
    """The files written."""
    file_checksums: ListField[str] = ListField()
    """A checksum per file (may be empty strings)."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            partition_key_values: Mapping[str, str] | None = None,
            files: list[str] | None = None,
            file_checksums: list[str] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    @property
    def table(self) -> Table:
        """The table, fetched through ``handler`` on first use as Hive's InsertEvent does (the message carries none)."""
        return _behaviour.insert_table(self)

    def _summary(self) -> Facts:
        return _behaviour.insert_summary(self)


class CreateDatabaseEvent(ListenerEvent):
    """A database was created."""

    __slots__ = ()
    event_type = EventType.CREATE_DATABASE
    fields = ("database",)
    names_from = ("database", "database")

    database: Field[Database] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            database: Database | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AlterDatabaseEvent(ListenerEvent):
    """A database was altered."""

    __slots__ = ()
    event_type = EventType.ALTER_DATABASE
    fields = ("old_database", "new_database")
    names_from = ("new_database", "database")

    old_database: Field[Database] = Field()
    new_database: Field[Database] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            old_database: Database | None = None,
            new_database: Database | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.alter_database_summary(self)


class DropDatabaseEvent(ListenerEvent):
    """A database was dropped."""

    __slots__ = ()
    event_type = EventType.DROP_DATABASE
    fields = ("database",)
    names_from = ("database", "database")

    database: Field[Database] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            database: Database | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class NotificationLogEvent(ListenerEvent):
    """A notification-log entry with no class of its own (Hive 2.3's index events, types newer than hivewire)."""

    __slots__ = ()
    event_type = EventType.NOTIFICATION_LOG
    fields = ("notification",)

    notification: Field[NotificationEvent] = Field()
    """The log's entry: ``eventId``, ``eventTime``, ``eventType`` (Hive's name), ``dbName``, ``tableName``,
    ``message``, ``messageFormat``.
    """

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            notification: NotificationEvent | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    @property
    def hive_event_type(self) -> str:
        """Hive's name of the event type, as the log stores it (``CREATE_INDEX``, ...)."""
        return _behaviour.notification_log_hive_event_type(self)

    @property
    def message(self) -> dict[str, object]:
        """The decoded message (JSON; embedded Thrift objects stay TJSONProtocol strings)."""
        return _behaviour.notification_log_message(self)

    def _summary(self) -> Facts:
        return _behaviour.notification_summary(self)


class IcebergCommitEvent(IcebergCommit):
    """An Iceberg table was committed to, created or dropped: what changed, read from its metadata files."""

    __slots__ = ()
    event_type = EventType.ICEBERG_COMMIT
    fields = ("table", "previous_metadata_location", "metadata_location")
    names_from = ("table", "table")

    table: Field[Table] = Field()
    """The table as the metastore holds it after the change (before it, for a drop)."""
    previous_metadata_location: Field[str | None] = Field()
    """The metadata file before the commit; None when the table was created."""
    metadata_location: Field[str | None] = Field()
    """The metadata file after the commit; None when the table was dropped."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            previous_metadata_location: str | None = None,
            metadata_location: str | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.iceberg_commit_summary(self)


class CreateFunctionEvent(ListenerEvent):
    """A function was created. ``function`` is the function as stored."""

    __slots__ = ()
    event_type = EventType.CREATE_FUNCTION
    fields = ("function",)

    function: Field[Function] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            function: Function | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class DropFunctionEvent(ListenerEvent):
    """A function was dropped (the message names it only)."""

    __slots__ = ()
    event_type = EventType.DROP_FUNCTION
    fields = ("function_name",)

    function_name: Field[str | None] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            function_name: str | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class ReloadEvent(ListenerEvent):
    """A client asked readers to reload a table or partition (``fire_listener_event``, Hive 4)."""

    __slots__ = ()
    event_type = EventType.RELOAD
    fields = ("table", "partition", "refresh_event")
    names_from = ("table", "table")

    table: Field[Table] = Field()
    partition: Field[Partition | None] = Field()
    """The partition, or None for the whole table."""
    refresh_event: FlagField = FlagField()
    """True for a refresh, False for an invalidation."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            table: Table | None = None,
            partition: Partition | None = None,
            refresh_event: bool | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddPrimaryKeyEvent(ListenerEvent):
    """A primary key was added (one entry per column of the key)."""

    __slots__ = ()
    event_type = EventType.ADD_PRIMARYKEY
    fields = ("primary_keys",)

    primary_keys: ListField[SQLPrimaryKey] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            primary_keys: list[SQLPrimaryKey] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddForeignKeyEvent(ListenerEvent):
    """A foreign key was added; ``db_name``/``table_name`` name the referenced table, as Hive logs it."""

    __slots__ = ()
    event_type = EventType.ADD_FOREIGNKEY
    fields = ("foreign_keys",)

    foreign_keys: ListField[SQLForeignKey] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            foreign_keys: list[SQLForeignKey] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddUniqueConstraintEvent(ListenerEvent):
    """A unique constraint was added (one entry per column)."""

    __slots__ = ()
    event_type = EventType.ADD_UNIQUECONSTRAINT
    fields = ("unique_constraints",)

    unique_constraints: ListField[SQLUniqueConstraint] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            unique_constraints: list[SQLUniqueConstraint] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddNotNullConstraintEvent(ListenerEvent):
    """A not-null constraint was added."""

    __slots__ = ()
    event_type = EventType.ADD_NOTNULLCONSTRAINT
    fields = ("not_null_constraints",)

    not_null_constraints: ListField[SQLNotNullConstraint] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            not_null_constraints: list[SQLNotNullConstraint] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddDefaultConstraintEvent(ListenerEvent):
    """A default-value constraint was added (Hive 4)."""

    __slots__ = ()
    event_type = EventType.ADD_DEFAULTCONSTRAINT
    fields = ("default_constraints",)

    default_constraints: ListField[SQLDefaultConstraint] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            default_constraints: list[SQLDefaultConstraint] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AddCheckConstraintEvent(ListenerEvent):
    """A check constraint was added (Hive 4)."""

    __slots__ = ()
    event_type = EventType.ADD_CHECKCONSTRAINT
    fields = ("check_constraints",)

    check_constraints: ListField[SQLCheckConstraint] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            check_constraints: list[SQLCheckConstraint] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class DropConstraintEvent(ListenerEvent):
    """A constraint of a table was dropped."""

    __slots__ = ()
    event_type = EventType.DROP_CONSTRAINT
    fields = ("constraint_name",)

    constraint_name: Field[str | None] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            constraint_name: str | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class CreateCatalogEvent(ListenerEvent):
    """A catalog was created (Hive's listener does not log catalog events; another writer may)."""

    __slots__ = ()
    event_type = EventType.CREATE_CATALOG
    fields = ("catalog",)

    catalog: Field[str | None] = Field()
    """The catalog's name."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            catalog: str | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AlterCatalogEvent(ListenerEvent):
    """A catalog was altered (Hive's listener does not log catalog events; another writer may)."""

    __slots__ = ()
    event_type = EventType.ALTER_CATALOG
    fields = ("old_catalog", "new_catalog")

    old_catalog: Field[Catalog] = Field()
    new_catalog: Field[Catalog] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            old_catalog: Catalog | None = None,
            new_catalog: Catalog | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class DropCatalogEvent(ListenerEvent):
    """A catalog was dropped (Hive's listener does not log catalog events; another writer may)."""

    __slots__ = ()
    event_type = EventType.DROP_CATALOG
    fields = ("catalog",)

    catalog: Field[str | None] = Field()
    """The catalog's name."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            catalog: str | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class OpenTxnEvent(ListenerEvent):
    """Transactions were opened (the event names no database: ``db_name`` is empty)."""

    __slots__ = ()
    event_type = EventType.OPEN_TXN
    fields = ("txn_ids",)

    txn_ids: ListField[int] = ListField()
    """The transactions opened."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            txn_ids: list[int] | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class CommitTxnEvent(ListenerEvent):
    """A transaction was committed (the event names no database: ``db_name`` is empty)."""

    __slots__ = ()
    event_type = EventType.COMMIT_TXN
    fields = ("txn_id", "write_ids", "databases", "tables", "partitions", "table_objs", "partition_objs", "files")

    txn_id: Field[int | None] = Field()
    write_ids: ListField[int] = ListField()
    """Empty in the log: Hive fills the lists only in replication dumps."""
    databases: ListField[str] = ListField()
    tables: ListField[str] = ListField()
    partitions: ListField[str] = ListField()
    table_objs: ListField[Table] = ListField()
    partition_objs: ListField[Partition] = ListField()
    files: ListField[str] = ListField()
    """As Hive writes them: ``path#checksum#cmroot#subdir``."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            txn_id: int | None = None,
            write_ids: list[int] | None = None,
            databases: list[str] | None = None,
            tables: list[str] | None = None,
            partitions: list[str] | None = None,
            table_objs: list[Table] | None = None,
            partition_objs: list[Partition] | None = None,
            files: list[str] | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AbortTxnEvent(ListenerEvent):
    """A transaction was aborted (the event names no database: ``db_name`` is empty)."""

    __slots__ = ()
    event_type = EventType.ABORT_TXN
    fields = ("txn_id", "dbs_updated")

    txn_id: Field[int | None] = Field()
    dbs_updated: ListField[str] = ListField()
    """The databases the transaction wrote to (Hive 4)."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            txn_id: int | None = None,
            dbs_updated: list[str] | None = None,
            db_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AllocWriteIdEvent(ListenerEvent):
    """Write ids were allocated to transactions for a table (stored as ``ALLOC_WRITE_ID_EVENT``)."""

    __slots__ = ()
    event_type = EventType.ALLOC_WRITE_ID
    fields = ("txn_to_write_ids",)

    txn_to_write_ids: ListField[TxnToWriteId] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            txn_to_write_ids: list[TxnToWriteId] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class AcidWriteEvent(ListenerEvent):
    """A transaction wrote to a table or partition (Hive 4 keeps these in TXN_WRITE_NOTIFICATION_LOG)."""

    __slots__ = ()
    event_type = EventType.ACID_WRITE
    fields = ("txn_id", "write_id", "partition", "files", "table", "partition_obj")
    names_from = ("table", "table")

    txn_id: Field[int | None] = Field()
    write_id: Field[int | None] = Field()
    partition: Field[str | None] = Field()
    """The partition's name (``dt=2024-01-01``), or None."""
    files: ListField[str] = ListField()
    """As Hive writes them: ``path#checksum#cmroot#subdir``."""
    table: Field[Table] = Field()
    partition_obj: Field[Partition | None] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            txn_id: int | None = None,
            write_id: int | None = None,
            partition: str | None = None,
            files: list[str] | None = None,
            table: Table | None = None,
            partition_obj: Partition | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class UpdateTableColumnStatEvent(ListenerEvent):
    """A table's column statistics were updated (stored as ``UPDATE_TBL_COL_STAT_EVENT``)."""

    __slots__ = ()
    event_type = EventType.UPDATE_TABLE_COLUMN_STAT
    fields = ("col_stats", "write_id", "table_parameters", "table")
    names_from = ("table", "table")

    col_stats: Field[ColumnStatistics] = Field()
    write_id: Field[int | None] = Field()
    table_parameters: MapField = MapField()
    """The table's parameters after the update."""
    table: Field[Table] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            col_stats: ColumnStatistics | None = None,
            write_id: int | None = None,
            table_parameters: Mapping[str, str] | None = None,
            table: Table | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class DeleteTableColumnStatEvent(ListenerEvent):
    """A column's statistics were deleted from a table (stored as ``DELETE_TBL_COL_STAT_EVENT``)."""

    __slots__ = ()
    event_type = EventType.DELETE_TABLE_COLUMN_STAT
    fields = ("col_name",)

    col_name: Field[str | None] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            col_name: str | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class UpdatePartitionColumnStatEvent(ListenerEvent):
    """A partition's column statistics were updated (stored as ``UPDATE_PART_COL_STAT_EVENT``)."""

    __slots__ = ()
    event_type = EventType.UPDATE_PARTITION_COLUMN_STAT
    fields = ("col_stats", "write_id", "partition_parameters", "part_vals", "table")
    names_from = ("table", "table")

    col_stats: Field[ColumnStatistics] = Field()
    write_id: Field[int | None] = Field()
    partition_parameters: MapField = MapField()
    """The partition's parameters after the update."""
    part_vals: ListField[str] = ListField()
    table: Field[Table] = Field()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            col_stats: ColumnStatistics | None = None,
            write_id: int | None = None,
            partition_parameters: Mapping[str, str] | None = None,
            part_vals: list[str] | None = None,
            table: Table | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class DeletePartitionColumnStatEvent(ListenerEvent):
    """A column's statistics were deleted from a partition (stored as ``DELETE_PART_COL_STAT_EVENT``)."""

    __slots__ = ()
    event_type = EventType.DELETE_PARTITION_COLUMN_STAT
    fields = ("col_name", "part_name", "part_values")

    col_name: Field[str | None] = Field()
    part_name: Field[str | None] = Field()
    part_values: ListField[str] = ListField()

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            col_name: str | None = None,
            part_name: str | None = None,
            part_values: list[str] | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


class CommitCompactionEvent(ListenerEvent):
    """A compaction was committed (stored as ``COMMIT_COMPACTION_EVENT``)."""

    __slots__ = ()
    event_type = EventType.COMMIT_COMPACTION
    fields = ("txn_id", "compaction_id", "type", "part_name")

    txn_id: Field[int | None] = Field()
    compaction_id: Field[int | None] = Field()
    type: Field[str | None] = Field()
    """Hive's CompactionType name: ``MINOR``, ``MAJOR``, ..."""
    part_name: Field[str | None] = Field()
    """The partition compacted, or None for a table."""

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            txn_id: int | None = None,
            compaction_id: int | None = None,
            type: str | None = None,
            part_name: str | None = None,
            db_name: str | None = None,
            table_name: str | None = None,
            status: bool = True,
            parameters: Mapping[str, str] | None = None,
            environment_context: EnvironmentContext | None = None,
            raw: bytes | None = None,
            origin: Origin | None = None,
        ) -> None: ...

    def _summary(self) -> Facts:
        return _behaviour.fields_summary(self)


#: The class of each event type.
EVENT_CLASSES: Mapping[EventType, type[ListenerEvent]] = MappingProxyType(
    {
        EventType.CREATE_TABLE: CreateTableEvent,
        EventType.ALTER_TABLE: AlterTableEvent,
        EventType.DROP_TABLE: DropTableEvent,
        EventType.ADD_PARTITION: AddPartitionEvent,
        EventType.ALTER_PARTITION: AlterPartitionEvent,
        EventType.DROP_PARTITION: DropPartitionEvent,
        EventType.INSERT: InsertEvent,
        EventType.CREATE_DATABASE: CreateDatabaseEvent,
        EventType.ALTER_DATABASE: AlterDatabaseEvent,
        EventType.DROP_DATABASE: DropDatabaseEvent,
        EventType.NOTIFICATION_LOG: NotificationLogEvent,
        EventType.ICEBERG_COMMIT: IcebergCommitEvent,
        EventType.CREATE_FUNCTION: CreateFunctionEvent,
        EventType.DROP_FUNCTION: DropFunctionEvent,
        EventType.RELOAD: ReloadEvent,
        EventType.ADD_PRIMARYKEY: AddPrimaryKeyEvent,
        EventType.ADD_FOREIGNKEY: AddForeignKeyEvent,
        EventType.ADD_UNIQUECONSTRAINT: AddUniqueConstraintEvent,
        EventType.ADD_NOTNULLCONSTRAINT: AddNotNullConstraintEvent,
        EventType.ADD_DEFAULTCONSTRAINT: AddDefaultConstraintEvent,
        EventType.ADD_CHECKCONSTRAINT: AddCheckConstraintEvent,
        EventType.DROP_CONSTRAINT: DropConstraintEvent,
        EventType.CREATE_CATALOG: CreateCatalogEvent,
        EventType.ALTER_CATALOG: AlterCatalogEvent,
        EventType.DROP_CATALOG: DropCatalogEvent,
        EventType.OPEN_TXN: OpenTxnEvent,
        EventType.COMMIT_TXN: CommitTxnEvent,
        EventType.ABORT_TXN: AbortTxnEvent,
        EventType.ALLOC_WRITE_ID: AllocWriteIdEvent,
        EventType.ACID_WRITE: AcidWriteEvent,
        EventType.UPDATE_TABLE_COLUMN_STAT: UpdateTableColumnStatEvent,
        EventType.DELETE_TABLE_COLUMN_STAT: DeleteTableColumnStatEvent,
        EventType.UPDATE_PARTITION_COLUMN_STAT: UpdatePartitionColumnStatEvent,
        EventType.DELETE_PARTITION_COLUMN_STAT: DeletePartitionColumnStatEvent,
        EventType.COMMIT_COMPACTION: CommitCompactionEvent,
    }
)
