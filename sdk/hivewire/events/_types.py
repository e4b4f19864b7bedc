"""The metastore event types: :class:`EventType`, and their description as data (:data:`TYPES`).

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from hivewire.events._description import EventSpec, FieldSpec, Kind
from hivewire_thrift.hive_metastore.ttypes import Database, NotificationEvent, Partition, Table

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
    """A notification-log entry with no class of its own (transactions, constraints, functions, ...)."""

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
            doc="A notification-log entry with no class of its own (transactions, constraints, functions, ...).",
            wire="ON_NOTIFICATION_LOG",
            fields=(FieldSpec("notification", Kind.STRUCT, "notification", NotificationEvent, required=True),),
        ),
    }
)
