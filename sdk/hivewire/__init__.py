"""hivewire: Python functions as Hive Metastore event listeners.

The public API is what this module exports (see ``__all__``); submodules with heavy optional
dependencies (``hivewire.spark``, ``hivewire.arrow``) are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hivewire import apiary
from hivewire.errors import (
    AlreadyExistsError,
    ConfigError,
    DecodeError,
    DiscoveryError,
    HivewireError,
    InvalidObjectError,
    InvalidOperationError,
    ListenerError,
    MetastoreConnectionError,
    MetastoreError,
    MetastoreServerError,
    NoSuchObjectError,
    PrerequisiteError,
    UnsupportedMethodError,
)
from hivewire.events import (
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
from hivewire.metastore import MetastoreClient, MetastoreClientPool

if TYPE_CHECKING:  # imported on first use (below), so the core model loads without Kafka, ZooKeeper, ...
    from hivewire.app import App
    from hivewire.config import Config
    from hivewire.discovery import discover_metastores
    from hivewire.kafka import KafkaSource
    from hivewire.listener import MetaStoreEventListener, RetryPolicy
    from hivewire.source import MemorySource

__version__ = "0.1.0"

__all__ = [
    "AddPartitionEvent",
    "AlreadyExistsError",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "App",
    "Config",
    "ConfigError",
    "CreateDatabaseEvent",
    "CreateTableEvent",
    "DecodeError",
    "DiscoveryError",
    "DropDatabaseEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "HivewireError",
    "InsertEvent",
    "InvalidObjectError",
    "InvalidOperationError",
    "KafkaSource",
    "ListenerError",
    "ListenerEvent",
    "MemorySource",
    "MetaStoreEventListener",
    "MetastoreClient",
    "MetastoreClientPool",
    "MetastoreConnectionError",
    "MetastoreError",
    "MetastoreServerError",
    "NoSuchObjectError",
    "Origin",
    "PrerequisiteError",
    "RetryPolicy",
    "UnsupportedMethodError",
    "__version__",
    "apiary",
    "discover_metastores",
]

# Modules (and names) of the layers above the core model (docs/architecture.md), imported on first use:
# `import hivewire.apiary` then costs the codec, not confluent-kafka, kazoo and prometheus-client too.
_LAZY_SUBMODULES = {"archive", "arrow", "local", "notebook", "spark", "testing"}
_LAZY_NAMES = {
    "App": "hivewire.app",
    "Config": "hivewire.config",
    "discover_metastores": "hivewire.discovery",
    "KafkaSource": "hivewire.kafka",
    "MetaStoreEventListener": "hivewire.listener",
    "RetryPolicy": "hivewire.listener",
    "MemorySource": "hivewire.source",
    "read_events": "hivewire.notebook",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"hivewire.{name}")
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'hivewire' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _LAZY_SUBMODULES)
