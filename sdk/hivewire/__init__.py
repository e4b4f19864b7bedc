"""hivewire: Python functions as Hive Metastore event listeners.

The public API is what this module exports (see ``__all__``); submodules with heavy optional
dependencies (``hivewire.spark``, ``hivewire.arrow``) are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from hivewire.discovery import discover_metastores
from hivewire.errors import (
    AlreadyExistsError,
    ConfigError,
    DecodeError,
    DiscoveryError,
    HivewireError,
    InvalidObjectError,
    InvalidOperationError,
    MetastoreConnectionError,
    MetastoreError,
    NoSuchObjectError,
    PrerequisiteError,
    UnsupportedMethodError,
)
from hivewire.metastore import MetastoreClient, MetastoreClientPool

__version__ = "0.1.0"

__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "DecodeError",
    "DiscoveryError",
    "HivewireError",
    "InvalidObjectError",
    "InvalidOperationError",
    "MetastoreClient",
    "MetastoreClientPool",
    "MetastoreConnectionError",
    "MetastoreError",
    "NoSuchObjectError",
    "PrerequisiteError",
    "UnsupportedMethodError",
    "__version__",
    "discover_metastores",
]

_LAZY_SUBMODULES = {"local", "spark", "testing"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"hivewire.{name}")
    raise AttributeError(f"module 'hivewire' has no attribute {name!r}")
