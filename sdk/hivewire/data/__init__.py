"""Events as data: Arrow tables, Spark DataFrames and sessions, notebook helpers, and the Delta archive.

Each needs an optional dependency (pyarrow, pyspark, deltalake): names are imported on first use, and a
missing dependency raises :class:`~hivewire.errors.PrerequisiteError` naming the extra to install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hivewire.data._archive import Archiver, ArchiveStats
    from hivewire.data._notebook import EventList, read_events
    from hivewire.data._offsets import MissingRange

__all__ = ["ArchiveStats", "Archiver", "EventList", "MissingRange", "read_events"]

_LAZY = {
    "ArchiveStats": "_archive",
    "Archiver": "_archive",
    "EventList": "_notebook",
    "MissingRange": "_offsets",
    "read_events": "_notebook",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hivewire.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"hivewire.data.{module}"), name)
    globals()[name] = value
    return value
