"""The metastore's own view of its events, recorded by tests/java/hivewire/test/RecordingListener.java.

The listener runs inside the test metastore (the ``recorded_metastore`` fixture) and writes one JSON line per
event with every Thrift object in Thrift's binary encoding; :func:`read_recording` turns them back into the
generated types, so a test compares hivewire's events with the metastore's field by field, unset fields
included.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from hivewire.tools._local import LocalMetastore
from hivewire_thrift.hive_metastore import ttypes as hms

_T = TypeVar("_T")

#: The Thrift class of each object key the listener writes.
OBJECTS: dict[str, type] = {
    "table": hms.Table,
    "oldTable": hms.Table,
    "newTable": hms.Table,
    "partitions": hms.Partition,
    "oldPartition": hms.Partition,
    "newPartition": hms.Partition,
    "database": hms.Database,
    "environmentContext": hms.EnvironmentContext,
}


def thrift(cls: type[_T], encoded: str) -> _T:
    """An object of ``cls`` from base64 of its Thrift binary encoding."""
    obj = cls()
    obj.read(TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(base64.b64decode(encoded))))
    return obj


@dataclass
class Recorded:
    """One event as the metastore's listener API received it."""

    event_type: str
    status: bool
    parameters: dict[str, str]
    values: dict[str, object] = field(default_factory=dict)

    def __getitem__(self, key: str) -> object:
        return self.values[key]


def read_recording(path: Path) -> list[Recorded]:
    """Every event recorded so far, in the order the metastore fired them."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        values: dict[str, object] = {}
        for key, value in data.items():
            if key in ("event", "status", "parameters"):
                continue
            cls = OBJECTS.get(key)
            if cls is None or value is None:
                values[key] = value
            elif isinstance(value, list):
                values[key] = [thrift(cls, item) for item in value]
            else:
                values[key] = thrift(cls, value)
        out.append(Recorded(data["event"], data["status"], data["parameters"], values))
    return out


class RecordedMetastore:
    """A test metastore with the recording listener loaded: :attr:`uri`, and :meth:`events` it fired."""

    def __init__(self, server: LocalMetastore, recording: Path) -> None:
        self.server = server
        self.recording = recording

    @property
    def uri(self) -> str:
        return self.server.uri

    def mark(self) -> int:
        """The number of events recorded so far: pass it to :meth:`events` to see only later ones."""
        return len(read_recording(self.recording))

    def events(self, since: int = 0) -> list[Recorded]:
        return read_recording(self.recording)[since:]
