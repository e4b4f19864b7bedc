"""Comparing the shim's events with the metastore's own, field by field (the oracle: tests/oracle.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from oracle import Recorded, RecordedMetastore

from hivewire.events._model import ListenerEvent
from hivewire.tools import _jvm
from hivewire.tools._hive_metastore import HiveMetastore

#: The recorded metastore fixture of each Hive release (tests/conftest.py, tests/oracle.py): 2.3 is pyspark's.
#: The shim's events equal the metastore's on each (test_shim_fidelity.py).
RECORDED = {"2.3": "recorded_metastore", "3.1": "recorded_hive3_metastore", "4.0": "recorded_hive4_metastore"}

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


#: Spark's Hive client per Hive release: None for Spark's built-in 2.3 client (also what a stock Spark uses
#: against 3.1), else the JVM harness's component with the client jars of that release. Hive 4.0.1 removed
#: ``get_table``, which the built-in client reads tables with, so 4.x needs Spark's own client for 4.0.
SPARK_HIVE_CLIENT = {"2.3": None, "3.1": None, "4.0": "hive4-spark-client"}

#: The statements of spark_statements.py that Spark refuses on Hive 4: the metastore makes a managed table
#: external (MetastoreDefaultTransformer), and Spark does not truncate an external table.
REFUSED_ON_HIVE4 = ("TRUNCATE TABLE DB.plain_v2", "TRUNCATE TABLE DB.sales PARTITION (dt='2024-01-02')")


def spark_workload(uri: str, warehouse: Path, db: str, oracle: RecordedMetastore) -> list[tuple[str, list[list[str]]]]:
    """Runs spark_statements.py's PySpark workload against ``uri`` in a process of its own, with the Hive client
    of ``oracle``'s release (:data:`SPARK_HIVE_CLIENT`), and returns every statement with its rows."""
    release = "2.3" if not isinstance(oracle.server, HiveMetastore) else oracle.server.version.rsplit(".", 1)[0]
    args = [sys.executable, str(Path(__file__).with_name("spark_statements.py")), uri, str(warehouse), db]
    component = SPARK_HIVE_CLIENT[release]
    if component is not None:
        assert isinstance(oracle.server, HiveMetastore)
        jars = os.pathsep.join(str(jar) for jar in _jvm.resolve(component))
        args += [oracle.server.version, jars]
    run = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("ROWS ")]
    return [(statement, rows) for statement, rows in json.loads(line.removeprefix("ROWS "))]


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


def compare(captured: Captured, since: int, oracle: RecordedMetastore, mark: int, *, timeout: float = 60) -> int:
    """Assert the shim's events since ``since`` equal, in order, the metastore's since ``mark`` that Apiary
    publishes (every one when the shim publishes failures). Returns how many were compared."""
    deadline = time.monotonic() + timeout
    while True:
        theirs = [e for e in oracle.events(mark) if published(e)]
        ours = captured.events[since:]
        if len(ours) >= len(theirs) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    report = [f"{len(ours)} shim events, {len(theirs)} metastore events"] if len(ours) != len(theirs) else []
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        for line in differences(a, b):
            report.append(f"#{i} {b.event_type}: {line}")
    if len(ours) != len(theirs):
        report.append(f"shim: {[(e.event_type.name, e.status) for e in ours]}")
        report.append(f"metastore: {[(e.event_type, e.status) for e in theirs]}")
    assert not report, "\n".join(report)
    return len(theirs)
