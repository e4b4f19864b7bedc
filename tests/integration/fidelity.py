"""Comparing the shim's events with the metastore's own, field by field (the oracle: tests/oracle.py)."""

from __future__ import annotations

import re
import time
from typing import Any

from oracle import Recorded, RecordedMetastore

from hivewire.events._model import ListenerEvent

#: The recorded metastore fixture of each Hive release (tests/conftest.py, tests/oracle.py): 2.3 is pyspark's.
#: The shim's events equal the metastore's on these; on 4.x they do not (test_shim_fidelity_hive4.py).
RECORDED = {"2.3": "recorded_metastore", "3.1": "recorded_hive3_metastore"}

#: The keys the recording listener writes per event type, and the attribute of hivewire's event for each.
KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "CREATE_TABLE": (("table", "table"),),
    "ALTER_TABLE": (("oldTable", "old_table"), ("newTable", "new_table")),
    "DROP_TABLE": (("table", "table"), ("deleteData", "delete_data")),
    "ADD_PARTITION": (("table", "table"), ("partitions", "partitions")),
    "ALTER_PARTITION": (("table", "table"), ("oldPartition", "old_partition"), ("newPartition", "new_partition")),
    "DROP_PARTITION": (("table", "table"), ("partitions", "partitions"), ("deleteData", "delete_data")),
    "INSERT": (
        ("databaseName", "db_name"),
        ("tableName", "table_name"),
        ("partitionKeyValues", "partition_key_values"),
        ("files", "files"),
        ("fileChecksums", "file_checksums"),
    ),
    "CREATE_DATABASE": (("database", "database"),),
    "DROP_DATABASE": (("database", "database"),),
}


class Captured:
    """A sink that keeps the shim's events as they were published (no encoding in between)."""

    def __init__(self) -> None:
        self.events: list[ListenerEvent] = []

    def publish(self, event: ListenerEvent) -> None:
        self.events.append(event)

    def close(self, timeout: float | None = None) -> None:
        return None


def published(e: Recorded) -> bool:
    """Whether Apiary's listener publishes the metastore's event: not when it has no table (a failed drop)."""
    return (
        e.event_type in ("CREATE_DATABASE", "DROP_DATABASE", "INSERT")
        or e.values.get("table") is not None
        or (e.event_type == "ALTER_TABLE")
    )


def differences(ours: ListenerEvent, theirs: Recorded) -> list[str]:
    """What differs between the shim's event and the metastore's, one line per field."""
    out = []
    if ours.event_type.name != theirs.event_type:
        return [f"event type {ours.event_type.name} != {theirs.event_type}"]
    if ours.status != theirs.status:
        out.append(f"status {ours.status} != {theirs.status}")
    params = {k: v for k, v in ours.parameters.items() if k != "hive.version"}
    if params != theirs.parameters:
        out.append(f"parameters {params} != {theirs.parameters}")
    if ours.environment_context != theirs.values.get("environmentContext"):
        out.append(f"environmentContext {ours.environment_context} != {theirs.values.get('environmentContext')}")
    for key, attr in KEYS[theirs.event_type]:
        mine, expected = getattr(ours, attr), theirs.values.get(key)
        if key == "partitions":
            mine = list(mine or [])
        if mine != expected:
            out.append(f"{key}: {_diff(mine, expected)}")
    return out


def _diff(mine: Any, expected: Any, path: str = "") -> str:
    if isinstance(mine, list) and isinstance(expected, list) and len(mine) == len(expected):
        return "; ".join(
            _diff(a, b, f"{path}[{i}]") for i, (a, b) in enumerate(zip(mine, expected, strict=True)) if a != b
        )
    if hasattr(mine, "__dict__") and type(mine) is type(expected):
        return "; ".join(
            _diff(v, getattr(expected, k), f"{path}.{k}") for k, v in vars(mine).items() if v != getattr(expected, k)
        )
    return f"{path or 'value'}: shim {mine!r} != metastore {expected!r}"


#: A known gap on Hive 3.1+ (issue 29): the metastore fills an unset catalog with its default (``hive``) in the
#: objects it fires; the shim publishes the request's objects, whose catalog the client left unset.
CATALOG_GAP = re.compile(r"\.(catName|catalogName): shim None != metastore 'hive'")


def catalog_gaps(report: list[str]) -> list[str]:
    """The lines of ``report`` that differ only by :data:`CATALOG_GAP`'s unset catalog (in every part)."""
    return [line for line in report if all(CATALOG_GAP.search(part) for part in line.split("; "))]


def compare(
    captured: Captured, since: int, oracle: RecordedMetastore, mark: int, *, timeout: float = 60,
    catalog_gap: bool = False,
) -> int:  # fmt: skip
    """Assert the shim's events since ``since`` equal, in order, the metastore's since ``mark`` that Apiary
    publishes (every one when the shim publishes failures). Returns how many were compared. With
    ``catalog_gap`` (Hive 3.1+), a difference in an unset catalog alone (:data:`CATALOG_GAP`) is allowed."""
    deadline = time.monotonic() + timeout
    while True:
        theirs = [e for e in oracle.events(mark) if published(e)]
        ours = captured.events[since:]
        if len(ours) >= len(theirs) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    report = [f"{len(ours)} shim events, {len(theirs)} metastore events"] if len(ours) != len(theirs) else []
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        lines = differences(a, b)
        if catalog_gap:
            lines = [line for line in lines if line not in catalog_gaps(lines)]
        for line in lines:
            report.append(f"#{i} {b.event_type}: {line}")
    if len(ours) != len(theirs):
        report.append(f"shim: {[(e.event_type.name, e.status) for e in ours]}")
        report.append(f"metastore: {[(e.event_type, e.status) for e in theirs]}")
    assert not report, "\n".join(report)
    return len(theirs)
