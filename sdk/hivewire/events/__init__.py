"""The event model: one typed event per metastore change, whatever wire format it arrived in.

The Apiary Kafka JSON codec is :mod:`hivewire.apiary`.
"""

from hivewire.events._model import (
    EVENT_CLASSES,
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropDatabaseEvent,
    DropPartitionEvent,
    DropTableEvent,
    EventType,
    InsertEvent,
    ListenerEvent,
    Origin,
)

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
    "Origin",
]
