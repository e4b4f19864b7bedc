"""The Python side of the Drone Fly comparison: a hivewire listener that records what the tests' Java recorder
(tests/peers/java/hivewire/peers/CallbackRecorder.java) records, in the same JSON line format, and
:func:`comparable`, which reduces a line of either to what both can say.

Run it as ``hivewire run --config <the properties file Drone Fly reads> callback_recorder:app`` with this
directory importable; it appends to the file ``$HIVEWIRE_PEERS_RECORDING`` and, like Drone Fly, delivers
changes that failed too (``status=None``).

Invariants: one line per delivered event, written and flushed before the listener returns; the Java class
names are Hive's (``org.apache.hadoop.hive.metastore.events.<class>``), so a line of either side names the same
``eventClass`` for the same event.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import hivewire as hw
from hivewire_thrift.hive_metastore import ttypes as hms

EVENTS_PACKAGE = "org.apache.hadoop.hive.metastore.events."
RECORDING_ENV = "HIVEWIRE_PEERS_RECORDING"

#: Hive's callback for each event type Drone Fly delivers.
CALLBACKS = {
    "CREATE_TABLE": "onCreateTable",
    "ALTER_TABLE": "onAlterTable",
    "DROP_TABLE": "onDropTable",
    "ADD_PARTITION": "onAddPartition",
    "ALTER_PARTITION": "onAlterPartition",
    "DROP_PARTITION": "onDropPartition",
    "INSERT": "onInsert",
}


def table(t: hms.Table | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "db": t.dbName,
        "name": t.tableName,
        "tableType": t.tableType,
        "location": t.sd.location if t.sd is not None else None,
        "parameters": t.parameters,
        "partitionKeys": [k.name for k in t.partitionKeys or []],
    }


def partition(p: hms.Partition | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "db": p.dbName,
        "table": p.tableName,
        "values": p.values,
        "location": p.sd.location if p.sd is not None else None,
        "parameters": p.parameters,
    }


def record(event: hw.ListenerEvent) -> dict[str, Any]:
    """The line the Java recorder writes for the same callback (``isTruncateOp``: hivewire has none, null)."""
    kind = event.event_type.value
    line: dict[str, Any] = {
        "callback": CALLBACKS.get(kind, f"on_{kind.lower()}"),
        "eventClass": EVENTS_PACKAGE + type(event).__name__,
        "status": event.status,
        "parameters": dict(event.parameters),
        "db": event.db_name,
        "tableName": event.table_name,
    }
    if isinstance(event, hw.AlterTableEvent):
        line.update(oldTable=table(event.old_table), newTable=table(event.new_table), isTruncateOp=None)
    elif isinstance(event, hw.AlterPartitionEvent):
        line.update(
            table=table(event.table),
            oldPartition=partition(event.old_partition),
            newPartition=partition(event.new_partition),
            isTruncateOp=None,
        )
    elif isinstance(event, (hw.AddPartitionEvent, hw.DropPartitionEvent)):
        line.update(table=table(event.table), partitions=[partition(p) for p in event.partitions])
        if isinstance(event, hw.DropPartitionEvent):
            line["deleteData"] = event.delete_data
    elif isinstance(event, (hw.CreateTableEvent, hw.DropTableEvent)):
        line["table"] = table(event.table)
        if isinstance(event, hw.DropTableEvent):
            line["deleteData"] = event.delete_data
    elif isinstance(event, hw.InsertEvent):
        line.update(
            table=None,
            partitionValues=list(event.partition_key_values.values()),
            files=list(event.files),
            fileChecksums=list(event.file_checksums),
        )
    return line


#: Drone Fly 1.0.9 builds Hive 4's AlterPartitionEvent with (status, isTruncateOp) swapped (its
#: HiveEventConverterService passes ``(status, false)`` where the constructor takes ``(isTruncateOp, status)``).
SWAPS_ALTER_PARTITION_STATUS = {"1.0.9"}


def comparable(line: dict[str, Any], dronefly: str | None = None) -> dict[str, Any]:
    """What both sides can say of a callback: the line less ``parameters`` (Drone Fly drops the message's),
    ``isTruncateOp`` (hivewire has none) and INSERT's ``table`` (Drone Fly 1.0.9 looks it up in a metastore of
    its own, 1.0.8 and hivewire without a metastore have none). For a line of Drone Fly release ``dronefly``
    that swaps ALTER_PARTITION's status and isTruncateOp, the status is the one it carried in isTruncateOp."""
    out = {k: v for k, v in line.items() if k not in ("parameters", "isTruncateOp")}
    if dronefly in SWAPS_ALTER_PARTITION_STATUS and out.get("callback") == "onAlterPartition":
        out["status"] = line["isTruncateOp"]
    if out.get("callback") == "onInsert":
        out.pop("table", None)
    return out


class _Recorder:
    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __call__(self, event: hw.ListenerEvent) -> None:
        path = os.environ.get(RECORDING_ENV)
        if not path:
            raise RuntimeError(f"set {RECORDING_ENV} to the file the recorder appends to")
        text = json.dumps(record(event)) + "\n"
        with self._lock, open(path, "a", encoding="utf-8") as f:
            f.write(text)


app = hw.App("hivewire-peers")
app.add_listener(_Recorder(), name="callback-recorder", status=None)
