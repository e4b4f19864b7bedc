"""hmsclient, a client we did not write, behaves through the shim exactly as against the metastore directly.

Same results, same errors (no such table, already exists), methods the shim does not model, and a method
the upstream does not know: for those the reply bytes must be identical to the metastore's own.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes as peer_types
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TTransport
from thrift.TSerialization import deserialize, serialize

import hivewire as hw
from hivewire.events._model import EventType, ListenerEvent
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import AppSink, Shim
from hivewire_shim.wire import MessageReader
from hivewire_thrift.fb303 import FacebookService
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T


class Recorder:
    def __init__(self) -> None:
        self.events: list[ListenerEvent] = []

    def dispatch(self, event: ListenerEvent) -> None:
        self.events.append(event)

    def wait(self, count: int, timeout: float = 60) -> list[ListenerEvent]:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.events) >= count, f"expected {count} events, got {self.events}"
        return self.events[:count]


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def shim(metastore: LocalMetastore, recorder: Recorder) -> Iterator[Shim]:
    with Shim(metastore.uri, sinks=[AppSink(recorder)]) as server:
        yield server


def peer(uri: str) -> Any:
    host, port = uri.removeprefix("thrift://").rsplit(":", 1)
    return hmsclient.HMSClient(host=host, port=int(port))


def as_peer(obj: Any, cls: Any) -> Any:
    """One of our Thrift objects as hmsclient's class (same wire format)."""
    return deserialize(cls(), serialize(obj))


@pytest.fixture(scope="module")
def db(metastore: LocalMetastore) -> Iterator[str]:
    name = f"hmsc_{int(time.time() * 1000) % 10**8}"
    with hw.MetastoreClient(metastore.uri) as client:
        client.create_database(make_database(name, location=(metastore.warehouse / f"{name}.db").as_uri()))
        table = make_table(
            name,
            "base",
            columns={"id": "bigint", "city": "string"},
            partition_keys={"dt": "string"},
            location=(metastore.warehouse / name / "base").as_uri(),
        )
        client.create_table(table)
        client.add_partitions([make_partition(table, [f"2024-01-0{d}"]) for d in range(1, 4)])
    yield name
    with hw.MetastoreClient(metastore.uri) as client:
        client.drop_database(name, True, True)


def both(metastore: LocalMetastore, shim: Shim, fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``fn(client)`` against the metastore and through the shim: each result, or the exception raised."""
    out = []
    for uri in (metastore.uri, shim.uri):
        with peer(uri) as client:
            try:
                out.append(fn(client))
            except Exception as e:
                out.append(e)
    return out[0], out[1]


def test_reads_and_unmodeled_methods_return_the_same(metastore: LocalMetastore, shim: Shim, db: str) -> None:
    calls: list[Callable[[Any], Any]] = [
        lambda c: c.get_all_databases(),
        lambda c: c.get_database(db),
        lambda c: c.get_table(db, "base"),
        lambda c: c.get_partitions(db, "base", -1),
        lambda c: c.get_partition_names(db, "base", -1),
        lambda c: c.get_partitions_by_filter(db, "base", 'dt > "2024-01-01"', -1),
        lambda c: c.get_fields(db, "base"),
        lambda c: c.get_schema(db, "base"),
        lambda c: c.get_config_value("hive.metastore.warehouse.dir", "none"),
        lambda c: c.get_all_functions(),
        lambda c: c.get_current_notificationEventId(),
        lambda c: c.getStatus(),
        lambda c: c.set_ugi("hivewire", ["users"]),
    ]
    for fn in calls:
        direct, through = both(metastore, shim, fn)
        assert not isinstance(direct, Exception), direct
        assert through == direct


def test_errors_arrive_as_the_metastore_raised_them(metastore: LocalMetastore, shim: Shim, db: str) -> None:
    cases: list[tuple[Callable[[Any], Any], type]] = [
        (lambda c: c.get_table(db, "no_such_table"), peer_types.NoSuchObjectException),
        (lambda c: c.get_database("no_such_db_hmsc"), peer_types.NoSuchObjectException),
        (
            lambda c: c.create_database(as_peer(make_database(db), peer_types.Database)),
            peer_types.AlreadyExistsException,
        ),
        (
            lambda c: c.create_table(as_peer(make_table(db, "base"), peer_types.Table)),
            peer_types.AlreadyExistsException,
        ),
        (lambda c: c.get_partition(db, "base", ["1999-01-01"]), peer_types.NoSuchObjectException),
    ]
    for fn, kind in cases:
        direct, through = both(metastore, shim, fn)
        assert type(direct) is kind and type(through) is kind
        assert through.message == direct.message


def exchange(uri: str, request: bytes) -> bytes:
    """Send raw request bytes; return the raw reply bytes (one message)."""
    host, port = uri.removeprefix("thrift://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        reader = MessageReader(sock, side="server")
        pieces: list[bytes] = []
        reader.begin(pieces.append)
        reader.read_header()
        reader.skip_struct()
        reader.finish()
        return b"".join(pieces)


def call(name: str, args: Any) -> bytes:
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    proto.writeMessageBegin(name, TMessageType.CALL, 77)
    args.write(proto)
    proto.writeMessageEnd()
    return bytes(buf.getvalue())


def test_replies_are_relayed_byte_for_byte(metastore: LocalMetastore, shim: Shim, db: str) -> None:
    requests = {
        "a table": call("get_table", T.get_table_args(dbname=db, tbl_name="base")),
        "partitions": call("get_partitions", T.get_partitions_args(db_name=db, tbl_name="base", max_parts=-1)),
        "no such table": call("get_table", T.get_table_args(dbname=db, tbl_name="nope")),
        "unknown to Hive 2.3": call("get_catalogs", T.get_catalogs_args()),
        "unknown anywhere": call("no_such_method", T.get_catalogs_args()),
    }
    for what, request in requests.items():
        direct, through = exchange(metastore.uri, request), exchange(shim.uri, request)
        assert through == direct, what
    proto = TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(exchange(shim.uri, requests["unknown anywhere"])))
    assert proto.readMessageBegin() == ("no_such_method", TMessageType.EXCEPTION, 77)
    exc = TApplicationException()
    exc.read(proto)
    assert exc.type == TApplicationException.UNKNOWN_METHOD and "no_such_method" in exc.message


def test_changes_made_with_hmsclient_publish_the_stored_objects(
    metastore: LocalMetastore, shim: Shim, db: str, recorder: Recorder
) -> None:
    start = len(recorder.events)
    table = make_table(
        db,
        "from_peer",
        columns={"id": "int"},
        partition_keys={"dt": "string"},
        location=(metastore.warehouse / db / "from_peer").as_uri(),
    )
    with peer(shim.uri) as client:
        client.create_table(as_peer(table, peer_types.Table))
        client.add_partition(client.get_table(db, "from_peer"), ["2024-02-01"])  # hmsclient's own helper
        stored = client.get_table(db, "from_peer")
        stored.parameters["owner.team"] = "peers"
        client.alter_table(db, "from_peer", stored)
        client.drop_partitions(db, "from_peer", ["dt=2024-02-01"])  # drop_partitions_req
        client.drop_table(db, "from_peer", True)
    created, added, altered, dropped_part, dropped = recorder.wait(start + 5)[start:]
    assert [e.event_type for e in (created, added, altered, dropped_part, dropped)] == [
        EventType.CREATE_TABLE,
        EventType.ADD_PARTITION,
        EventType.ALTER_TABLE,
        EventType.DROP_PARTITION,
        EventType.DROP_TABLE,
    ]
    # The table as stored: the metastore set createTime and normalised the location (file:/// -> file:/).
    assert created.table.createTime > 0 and created.table.sd.location == table.sd.location.replace("file:///", "file:/")
    assert added.partitions[0].values == ["2024-02-01"] and added.partitions[0].createTime > 0
    assert "owner.team" not in altered.old_table.parameters
    assert altered.new_table.parameters["owner.team"] == "peers"
    assert dropped_part.partitions == added.partitions
    assert dropped.delete_data is True and dropped.table.parameters["owner.team"] == "peers"


def test_a_framed_client_and_a_oneway_call_work_on_a_buffered_metastore(
    metastore: LocalMetastore, shim: Shim, db: str
) -> None:
    with hw.MetastoreClient(shim.uri, transport="framed") as framed, hw.MetastoreClient(metastore.uri) as direct:
        assert framed.get_table(db, "base") == direct.get_table(db, "base")
        assert framed.get_partition_names(db, "base") == direct.get_partition_names(db, "base")
        with pytest.raises(hw.NoSuchObjectError):
            framed.get_table(db, "nope")
    with hw.MetastoreClient(shim.uri) as client:
        raw = client.raw
        FacebookService.Client.shutdown(raw)  # oneway: no reply, and the connection goes on
        assert client.get_all_databases() == direct_databases(metastore)


def direct_databases(metastore: LocalMetastore) -> list[str]:
    with hw.MetastoreClient(metastore.uri) as client:
        return list(client.get_all_databases())
