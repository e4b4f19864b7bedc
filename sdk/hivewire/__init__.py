"""hivewire: Python functions as Hive Metastore event listeners.

The public API is what this module exports (see ``__all__``); submodules with heavy optional
dependencies (``hivewire.spark``, ``hivewire.arrow``) are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hivewire import apiary
from hivewire._version import __version__
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
    EventType,
    IcebergCommitEvent,
    InsertEvent,
    ListenerEvent,
    NotificationLogEvent,
    OpenTxnEvent,
    Origin,
    ReloadEvent,
    UpdatePartitionColumnStatEvent,
    UpdateTableColumnStatEvent,
)
from hivewire.metastore import MetastoreClient, MetastoreClientPool

if TYPE_CHECKING:  # imported on first use (below), so the core model loads without Kafka, ZooKeeper, ...
    from hivewire import arrow as arrow
    from hivewire import spark as spark
    from hivewire import testing as testing
    from hivewire.config import Config
    from hivewire.data import read_events
    from hivewire.metastore import discover_metastores
    from hivewire.runtime import App, KafkaSource, MemorySource, MetaStoreEventListener, RetryPolicy


__all__ = [
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
    "AlreadyExistsError",
    "AlterCatalogEvent",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "App",
    "CommitCompactionEvent",
    "CommitTxnEvent",
    "Config",
    "ConfigError",
    "CreateCatalogEvent",
    "CreateDatabaseEvent",
    "CreateFunctionEvent",
    "CreateTableEvent",
    "DecodeError",
    "DeletePartitionColumnStatEvent",
    "DeleteTableColumnStatEvent",
    "DiscoveryError",
    "DropCatalogEvent",
    "DropConstraintEvent",
    "DropDatabaseEvent",
    "DropFunctionEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "HivewireError",
    "IcebergCommitEvent",
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
    "NotificationLogEvent",
    "NotificationLogSource",
    "OpenTxnEvent",
    "Origin",
    "PrerequisiteError",
    "ReloadEvent",
    "RetryPolicy",
    "UnsupportedMethodError",
    "UpdatePartitionColumnStatEvent",
    "UpdateTableColumnStatEvent",
    "__version__",
    "apiary",
    "discover_metastores",
    "read_events",
]

# Modules (and names) of the layers above the core model (docs/architecture.md), imported on first use:
# `import hivewire.apiary` then costs the codec, not confluent-kafka, kazoo and prometheus-client too.
_LAZY_SUBMODULES = {"arrow", "spark", "testing"}
_LAZY_NAMES = {
    "App": "hivewire.runtime",
    "Config": "hivewire.config",
    "discover_metastores": "hivewire.metastore",
    "KafkaSource": "hivewire.runtime",
    "MetaStoreEventListener": "hivewire.runtime",
    "NotificationLogSource": "hivewire.runtime",
    "RetryPolicy": "hivewire.runtime",
    "MemorySource": "hivewire.runtime",
    "read_events": "hivewire.data",
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
