"""The metastore's own view of its events, recorded by tests/java/hivewire/test/RecordingListener.java.

The listener runs inside the test metastore (the ``recorded_metastore`` fixture) and writes one JSON line per
event with every Thrift object in Thrift's binary encoding; :func:`read_recording` turns them back into the
generated types, so a test compares hivewire's events with the metastore's field by field, unset fields
included.

:func:`recorded_hive_metastore` starts a Hive 3.1 or 4.x metastore (tools/_hive_metastore.py) with the same
listener compiled against that release's jars and, with ``notifications=True``, Hive's own
``DbNotificationListener`` configured as Hive configures it (``metastore.transactional.event.listeners``); on
4.x, whose DbNotificationListener no jar served here carries, the tests' own glue in its place
(tests/java_hive4/hivewire/test/Hive4NotificationLog.java: Hive 4.0.1's MessageBuilder, GzipJSONMessageEncoder
and RawStore write the entries, in the same transactional slot).
That one is a server of its own: the notification listener runs first and adds the entry's id
(``DB_NOTIFICATION_EVENT_ID_KEY_NAME``) to every event's parameters, which a metastore without it (what the
shim stands in front of in the fidelity tests) does not.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from hivewire.errors import PrerequisiteError
from hivewire.metastore import MetastoreClient
from hivewire.tools import _jvm
from hivewire.tools._hive_metastore import HiveMetastore, compile_java_for
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


#: Hive's own notification-log writer, as Hive's docs configure it.
DB_NOTIFICATION_LISTENER = "org.apache.hive.hcatalog.listener.DbNotificationListener"

#: Hive 4's message encoder (``metastore.event.message.factory``'s default there): ``gzip(json-2.0)``.
GZIP_JSON_ENCODER = "org.apache.hadoop.hive.metastore.messaging.json.gzip.GzipJSONMessageEncoder"

#: The pom profiles that bring each release's DbNotificationListener (hcatalog's, not the metastore's). None
#: for 4.x: no jar of it that a 4.0.1 metastore here can load is served (tools/jvm/pom.xml says why).
NOTIFICATION_LISTENER_COMPONENTS = {"3": ("hive3-notification-listener",)}

RECORDING_LISTENER = Path(__file__).resolve().parent / "java" / "hivewire" / "test" / "RecordingListener.java"

#: For 4.x, the tests' own glue in DbNotificationListener's place: Hive 4.0.1's MessageBuilder and
#: GzipJSONMessageEncoder build each entry, its RawStore stores it inside the event's transaction.
HIVE4_NOTIFICATION_LOG = (
    Path(__file__).resolve().parent / "java_hive4" / "hivewire" / "test" / "Hive4NotificationLog.java"
)


def recorded_hive_metastore(release: str, workdir: Path, *, notifications: bool = False) -> RecordedMetastore:
    """A started Hive ``release`` ("3" or "4") metastore with the recording listener (and, with
    ``notifications``, Hive's DbNotificationListener, or on 4 the tests' Hive4NotificationLog, writing the
    notification log); close its ``server`` when done."""
    recording = workdir / "events.jsonl"
    recording.touch()
    sources = [RECORDING_LISTENER]
    properties = {"hivewire.test.recording.file": str(recording)}
    extra: list[Path] = []
    if notifications and release == "4":
        sources.append(HIVE4_NOTIFICATION_LOG)
        properties["metastore.transactional.event.listeners"] = "hivewire.test.Hive4NotificationLog"
        # Hive 4's default, named as a deployment names it: entries in gzip(json-2.0)
        properties["metastore.event.message.factory"] = GZIP_JSON_ENCODER
    elif notifications:
        components = NOTIFICATION_LISTENER_COMPONENTS.get(release)
        if components is None:
            raise PrerequisiteError(
                f"no DbNotificationListener for Hive {release!r} (tools/jvm/pom.xml says why): only 3 has one"
            )
        extra = [jar for component in components for jar in _jvm.resolve(component)]
        properties["metastore.transactional.event.listeners"] = DB_NOTIFICATION_LISTENER
    classpath: list[Path] = [compile_java_for(release, sources, workdir / "oracle"), *extra]
    server = HiveMetastore(
        release,
        workdir=workdir,
        classpath=classpath,
        listeners=["hivewire.test.RecordingListener"],
        properties=properties,
    )
    server.start()
    if notifications:
        # The schema is DataNucleus's, made table by table when first used; the listener's first statement is
        # raw SQL on NOTIFICATION_SEQUENCE ("select ... for update"), which fails while that table is missing.
        # Reading the current event id goes through DataNucleus and makes it, as Hive's schema script would.
        with MetastoreClient(server.uri) as client:
            client.call("get_current_notificationEventId")
    return RecordedMetastore(server, recording)
