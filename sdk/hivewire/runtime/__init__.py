"""The listener runtime: apps, listeners, sources (Kafka, in memory), and the workers that run listeners."""

from hivewire.runtime._app import App
from hivewire.runtime._kafka import KafkaSource
from hivewire.runtime._listener import MetaStoreEventListener, RetryPolicy
from hivewire.runtime._source import DeadLetter, MemoryRecord, MemorySource, Record, Source

__all__ = [
    "App",
    "DeadLetter",
    "KafkaSource",
    "MemoryRecord",
    "MemorySource",
    "MetaStoreEventListener",
    "Record",
    "RetryPolicy",
    "Source",
]
