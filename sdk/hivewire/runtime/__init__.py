"""The listener runtime: apps, listeners, sources (Kafka, in memory, the notification log) and their workers."""

from hivewire.runtime._app import App
from hivewire.runtime._kafka import KafkaSource
from hivewire.runtime._listener import MetaStoreEventListener, RetryPolicy
from hivewire.runtime._notification_log import EVENTS_MISSING, FilePosition, NotificationLogSource, PositionStore
from hivewire.runtime._source import DeadLetter, MemoryRecord, MemorySource, Record, Source

__all__ = [
    "EVENTS_MISSING",
    "App",
    "DeadLetter",
    "FilePosition",
    "KafkaSource",
    "MemoryRecord",
    "MemorySource",
    "MetaStoreEventListener",
    "NotificationLogSource",
    "PositionStore",
    "Record",
    "RetryPolicy",
    "Source",
]
