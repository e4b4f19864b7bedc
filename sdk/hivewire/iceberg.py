"""Iceberg commits as events: :class:`IcebergCommitEvent` and the details it carries (the public face of
``hivewire.events._iceberg``; see docs/iceberg.md)."""

from hivewire.events._iceberg import (
    OPERATIONS,
    CommitDetails,
    IcebergColumn,
    IcebergSnapshot,
    RefChange,
    SchemaChange,
    SpecChange,
    is_iceberg,
    metadata_location,
)
from hivewire.events._model import IcebergCommitEvent

__all__ = [
    "OPERATIONS",
    "CommitDetails",
    "IcebergColumn",
    "IcebergCommitEvent",
    "IcebergSnapshot",
    "RefChange",
    "SchemaChange",
    "SpecChange",
    "is_iceberg",
    "metadata_location",
]
