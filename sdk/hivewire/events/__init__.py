"""The event model: one typed event per metastore change, whatever wire format it arrived in.

The Apiary Kafka JSON codec is :mod:`hivewire.apiary`.

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

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
    NotificationLogEvent,
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
    "NotificationLogEvent",
    "Origin",
]
