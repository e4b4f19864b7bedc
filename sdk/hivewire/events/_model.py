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
from hivewire.events._types import EventType
from hivewire_thrift.hive_metastore.ttypes import Database, EnvironmentContext, NotificationEvent, Partition, Table

__all__ = [
    "EVENT_CLASSES",
    "AddPartitionEvent",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "CreateDatabaseEvent",
    "CreateTableEvent",
    "DropDatabaseEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "InsertEvent",
    "ListenerEvent",
    "NotificationLogEvent",
    "Origin",
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
    """A notification-log entry with no class of its own (transactions, constraints, functions, ...)."""

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
        """Hive's name of the event type, as the log stores it (``OPEN_TXN``, ``ALLOC_WRITE_ID_EVENT``, ...)."""
        return _behaviour.notification_log_hive_event_type(self)

    @property
    def message(self) -> dict[str, object]:
        """The decoded message (JSON; embedded Thrift objects stay TJSONProtocol strings)."""
        return _behaviour.notification_log_message(self)

    def _summary(self) -> Facts:
        return _behaviour.notification_summary(self)


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
    }
)
