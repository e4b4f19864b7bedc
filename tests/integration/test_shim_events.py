"""Every modeled call, made through the shim against a real Hive Metastore 2.3, and the events it publishes.

Each event is checked against what the metastore holds (read directly, not through the shim): the stored
object after the change, the old one for alters, one event per partition where Hive fires one per partition.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.protocol import fastbinary as _fastbinary
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

import hivewire as hw
from hivewire.events._model import EventType, ListenerEvent
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import AppSink, Shim
from hivewire_shim.methods import _FireArgs2, _FireData2, _FireRequest2, _InsertData2
from hivewire_shim.server import UNKNOWN_METHOD
from hivewire_shim.wire import MessageReader
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T
from hivewire_thrift.hive_metastore import ttypes as hms


class Recorder:
    def __init__(self) -> None:
        self.events: list[ListenerEvent] = []

    def dispatch(self, event: ListenerEvent) -> None:
        self.events.append(event)


class Probe:
    """The shim, its recorded events, a client through it and one straight to the metastore."""

    def __init__(self, shim: Shim, recorder: Recorder, metastore: LocalMetastore, db: str) -> None:
        self.shim, self.recorder, self.metastore, self.db = shim, recorder, metastore, db
        self.client = hw.MetastoreClient(shim.uri, timeout=120)
        self.direct = hw.MetastoreClient(metastore.uri, timeout=120)
        self.mark = len(recorder.events)

    def table(self, name: str, keys: dict[str, str] | None = None, **kw: Any) -> Any:
        return make_table(
            self.db,
            name,
            partition_keys=keys if keys is not None else {"dt": "string"},
            location=(self.metastore.warehouse / self.db / name).as_uri(),
            **kw,
        )

    def new_events(self, count: int, timeout: float = 60) -> list[ListenerEvent]:
        """The next ``count`` events (and no more, once the shim is quiet)."""
        deadline = time.monotonic() + timeout
        while len(self.recorder.events) - self.mark < count and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # an extra event would have been published by now
        got = self.recorder.events[self.mark :]
        self.mark = len(self.recorder.events)
        assert len(got) == count, f"expected {count} events, got {got}"
        return got

    def close(self) -> None:
        self.client.close()
        self.direct.close()


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def shim(metastore: LocalMetastore, recorder: Recorder) -> Iterator[Shim]:
    with Shim(metastore.uri, sinks=[AppSink(recorder)]) as server:
        yield server


@pytest.fixture
def probe(shim: Shim, recorder: Recorder, metastore: LocalMetastore, unique: str) -> Iterator[Probe]:
    p = Probe(shim, recorder, metastore, unique)
    p.direct.create_database(make_database(unique, location=(metastore.warehouse / f"{unique}.db").as_uri()))
    yield p
    p.close()
    with hw.MetastoreClient(metastore.uri, timeout=120) as direct:
        try:
            direct.drop_database(unique, True, True)
        except hw.MetastoreError:
            pass  # the test dropped it


def as_stored(fired: Any, stored: Any) -> bool:
    """The CREATE_TABLE event's table is the request's as the metastore changed it (test_shim_fidelity compares
    it with the metastore's own event field by field): what the metastore set is what it stored."""
    return (fired.dbName, fired.tableName, fired.createTime, fired.parameters, fired.sd.location, fired.sd.cols) == (
        stored.dbName,
        stored.tableName,
        stored.createTime,
        stored.parameters,
        stored.sd.location,
        stored.sd.cols,
    )


def kinds(events: list[ListenerEvent]) -> list[EventType]:
    return [e.event_type for e in events]


def test_database_events(probe: Probe, unique: str) -> None:
    name = f"{unique}_x"
    probe.client.create_database(make_database(name, description="first"))
    (created,) = probe.new_events(1)
    assert created.event_type == EventType.CREATE_DATABASE and created.database == probe.direct.get_database(name)
    changed = probe.direct.get_database(name)
    changed.parameters = {"team": "core"}
    probe.client.alter_database(name, changed)
    (altered,) = probe.new_events(1)
    assert altered.old_database.parameters == {} and altered.new_database == probe.direct.get_database(name)
    for t in ("a", "b"):
        probe.direct.create_table(make_table(name, t))
    probe.client.drop_database(name, True, True)
    events = probe.new_events(3)
    assert kinds(events) == [EventType.DROP_TABLE, EventType.DROP_TABLE, EventType.DROP_DATABASE]
    assert {e.table_name for e in events[:2]} == {"a", "b"} and not any(e.delete_data for e in events[:2])
    assert events[2].database.parameters == {"team": "core"}


def test_table_events(probe: Probe) -> None:
    env = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
    probe.client.create_table_with_environment_context(probe.table("t"), env)
    probe.client.create_table(probe.table("plain", keys={}))
    created, plain = probe.new_events(2)
    assert as_stored(created.table, probe.direct.get_table(probe.db, "t")) and created.environment_context == env
    assert as_stored(plain.table, probe.direct.get_table(probe.db, "plain")) and plain.environment_context is None

    before = probe.direct.get_table(probe.db, "t")
    after = probe.direct.get_table(probe.db, "t")
    after.sd.cols.append(hms.FieldSchema(name="note", type="string"))
    probe.client.alter_table_with_environment_context(probe.db, "t", after, env)
    after2 = probe.direct.get_table(probe.db, "t")
    after2.parameters["k"] = "v"
    probe.client.alter_table_with_cascade(probe.db, "t", after2, True)
    altered, cascaded = probe.new_events(2)
    assert altered.old_table == before and altered.new_table == cascaded.old_table
    assert [c.name for c in altered.new_table.sd.cols][-1] == "note" and altered.environment_context == env
    assert cascaded.new_table == probe.direct.get_table(probe.db, "t")
    assert cascaded.environment_context.properties == {"CASCADE": "true"}

    renamed = probe.direct.get_table(probe.db, "plain")
    renamed.tableName = "renamed"
    probe.client.alter_table(probe.db, "plain", renamed)
    (rename,) = probe.new_events(1)
    assert (rename.old_table.tableName, rename.new_table.tableName) == ("plain", "renamed")
    assert rename.qualified_name == f"{probe.db}.renamed"

    stored = probe.direct.get_table(probe.db, "t")
    probe.client.drop_table_with_environment_context(probe.db, "t", False, env)
    (dropped,) = probe.new_events(1)
    assert dropped.table == stored and dropped.delete_data is False and dropped.environment_context == env


def names(events: list[ListenerEvent]) -> list[list[str]]:
    return [p.values for e in events for p in e.partitions]


def test_partition_add_events(probe: Probe) -> None:
    table = probe.table("p", keys={"dt": "string", "city": "string"})
    probe.direct.create_table(table)
    part = lambda *v: make_partition(table, list(v))  # noqa: E731
    probe.client.add_partition(part("1", "ams"))
    probe.client.add_partition_with_environment_context(part("1", "par"), hms.EnvironmentContext(properties={}))
    probe.client.add_partitions([part("2", "ams"), part("2", "par")])
    probe.client.add_partitions_req(
        hms.AddPartitionsRequest(
            dbName=probe.db, tblName="p", parts=[part("2", "ams"), part("3", "ams")], ifNotExists=True, needResult=False
        )
    )
    spec = hms.PartitionSpec(
        dbName=probe.db,
        tableName="p",
        rootPath=table.sd.location,
        partitionList=hms.PartitionListComposingSpec(partitions=[part("4", "ams")]),
    )
    probe.client.add_partitions_pspec([spec])
    probe.client.append_partition(probe.db, "p", ["5", "ams"])
    probe.client.append_partition_by_name(probe.db, "p", "dt=6/city=a%2Fb")
    events = probe.new_events(7)
    assert kinds(events) == [EventType.ADD_PARTITION] * 7
    assert names(events) == [
        ["1", "ams"],
        ["1", "par"],
        ["2", "ams"],
        ["2", "par"],
        ["3", "ams"],
        ["4", "ams"],
        ["5", "ams"],
        ["6", "a/b"],
    ]
    stored = {tuple(p.values): p for p in probe.direct.get_partitions(probe.db, "p")}
    for event in events:
        assert event.table == probe.direct.get_table(probe.db, "p")
        for p in event.partitions:
            # As stored (createTime, location filled in by the server). A partition the reply carries is the
            # metastore's in-memory object, as a Java listener gets it: no empty SkewedInfo as reads add.
            if p.sd.skewedInfo is None:
                p.sd.skewedInfo = hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
            assert p == stored[tuple(p.values)]


def test_partition_alter_and_drop_events(probe: Probe) -> None:
    table = probe.table("p")
    probe.direct.create_table(table)
    probe.direct.add_partitions([make_partition(table, [str(d)]) for d in range(8)])
    old = {p.values[0]: p for p in probe.direct.get_partitions(probe.db, "p")}

    def touched(*values: str) -> list[Any]:
        parts = probe.direct.get_partitions_by_names(probe.db, "p", [f"dt={v}" for v in values])
        for p in parts:
            p.parameters["touched"] = "yes"
        return parts

    probe.client.alter_partition(probe.db, "p", touched("0")[0])
    probe.client.alter_partitions(probe.db, "p", touched("1", "2", "3"))
    renamed = probe.direct.get_partitions_by_names(probe.db, "p", ["dt=4"])[0]
    renamed.values = ["40"]
    probe.client.rename_partition(probe.db, "p", ["4"], renamed)
    events = probe.new_events(5)
    assert kinds(events) == [EventType.ALTER_PARTITION] * 5  # one per partition, as HMS fires them
    assert [e.old_partition for e in events[:4]] == [old[v] for v in "0123"]
    now = {p.values[0]: p for p in probe.direct.get_partitions(probe.db, "p")}
    assert [e.new_partition for e in events[:4]] == [now[v] for v in "0123"]
    assert events[4].old_partition == old["4"] and events[4].new_partition == now["40"]

    probe.client.drop_partition(probe.db, "p", ["0"], True)
    probe.client.drop_partition_by_name(probe.db, "p", "dt=1", False)
    probe.client.drop_partitions_req(
        hms.DropPartitionsRequest(
            dbName=probe.db, tblName="p", parts=hms.RequestPartsSpec(names=["dt=2", "dt=3", "dt=5"]), deleteData=True
        )
    )
    events = probe.new_events(5)
    assert kinds(events) == [EventType.DROP_PARTITION] * 5
    assert [e.partitions for e in events] == [[now[v]] for v in "01235"]
    assert [e.delete_data for e in events] == [True, False, True, True, True]


def test_exchange_partition_is_an_add_and_a_drop(probe: Probe) -> None:
    source, dest = probe.table("src"), probe.table("dst")
    probe.direct.create_table(source)
    probe.direct.create_table(dest)
    probe.direct.add_partitions([make_partition(source, ["2024"])])
    moving = probe.direct.get_partitions(probe.db, "src")
    probe.client.exchange_partition({"dt": "2024"}, probe.db, "src", probe.db, "dst")
    added, dropped = probe.new_events(2)
    assert added.event_type == EventType.ADD_PARTITION and added.table_name == "dst"
    assert added.partitions == probe.direct.get_partitions(probe.db, "dst")
    assert dropped.event_type == EventType.DROP_PARTITION and dropped.table_name == "src"
    assert dropped.partitions == moving and dropped.delete_data is True


def test_the_environment_context_and_constraint_forms(probe: Probe) -> None:
    env = hms.EnvironmentContext(properties={"origin": "hivewire-test"})
    probe.client.create_table_with_constraints(probe.table("c"), [], [], None, None, None, None)
    (created,) = probe.new_events(1)
    assert created.event_type == EventType.CREATE_TABLE and as_stored(
        created.table, probe.direct.get_table(probe.db, "c")
    )

    probe.client.append_partition_with_environment_context(probe.db, "c", ["1"], env)
    probe.client.append_partition_by_name_with_environment_context(probe.db, "c", "dt=2", env)
    probe.client.append_partition_by_name_with_environment_context(probe.db, "c", "dt=3", env)
    events = probe.new_events(3)
    assert kinds(events) == [EventType.ADD_PARTITION] * 3 and names(events) == [["1"], ["2"], ["3"]]
    stored = {p.values[0]: p for p in probe.direct.get_partitions(probe.db, "c")}
    for event in events:
        for p in event.partitions:  # the partition the reply carries: no empty SkewedInfo as reads add
            if p.sd.skewedInfo is None:
                p.sd.skewedInfo = hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    assert [e.partitions for e in events] == [[stored[v]] for v in "123"]
    assert all(e.environment_context == env and e.table == probe.direct.get_table(probe.db, "c") for e in events)

    def touched(*values: str) -> list[Any]:
        parts = probe.direct.get_partitions_by_names(probe.db, "c", [f"dt={v}" for v in values])
        for p in parts:
            p.parameters["touched"] = "yes"
        return parts

    probe.client.alter_partition_with_environment_context(probe.db, "c", touched("1")[0], env)
    after_first = {p.values[0]: p for p in probe.direct.get_partitions(probe.db, "c")}
    probe.client.alter_partitions_with_environment_context(probe.db, "c", touched("2", "3"), env)
    now = {p.values[0]: p for p in probe.direct.get_partitions(probe.db, "c")}
    events = probe.new_events(3)
    assert kinds(events) == [EventType.ALTER_PARTITION] * 3 and all(e.environment_context == env for e in events)
    assert [e.old_partition for e in events] == [stored["1"], after_first["2"], after_first["3"]]
    assert [e.new_partition for e in events] == [now["1"], now["2"], now["3"]]

    probe.client.drop_partition_by_name_with_environment_context(probe.db, "c", "dt=1", True, env)
    (dropped,) = probe.new_events(1)
    assert dropped.event_type == EventType.DROP_PARTITION and dropped.partitions == [now["1"]]
    assert dropped.delete_data is True and dropped.environment_context == env


def test_exchange_partitions_is_an_add_and_a_drop_per_partition(probe: Probe) -> None:
    source, dest = (
        probe.table("src", keys={"dt": "string", "city": "string"}),
        probe.table("dst", keys={"dt": "string", "city": "string"}),
    )
    probe.direct.create_table(source)
    probe.direct.create_table(dest)
    probe.direct.add_partitions([make_partition(source, ["2024", c]) for c in ("ams", "par")])
    moving = probe.direct.get_partitions(probe.db, "src")
    probe.client.exchange_partitions({"dt": "2024"}, probe.db, "src", probe.db, "dst")
    added, *dropped = probe.new_events(3)
    assert added.event_type == EventType.ADD_PARTITION and added.table_name == "dst"
    assert added.partitions == probe.direct.get_partitions(probe.db, "dst")
    assert kinds(dropped) == [EventType.DROP_PARTITION] * 2 and {e.table_name for e in dropped} == {"src"}
    assert [e.partitions for e in dropped] == [[p] for p in moving] and all(e.delete_data for e in dropped)


def test_request_forms_hms_2_3_does_not_know_pass_through_and_publish_nothing(probe: Probe) -> None:
    # These _req forms came with Hive 3.x/4.x; tests/unit/test_shim_capture.py covers their events.
    probe.direct.create_table(probe.table("r"))
    probe.direct.add_partitions([make_partition(probe.table("r"), ["1"])])
    stored = probe.direct.get_table(probe.db, "r")
    part = probe.direct.get_partitions(probe.db, "r")[0]
    calls = {
        "create_table_req": hms.CreateTableRequest(table=probe.table("r2")),
        "drop_table_req": hms.DropTableRequest(dbName=probe.db, tableName="r", deleteData=True),
        "alter_table_req": hms.AlterTableRequest(dbName=probe.db, tableName="r", table=stored),
        "append_partition_req": hms.AppendPartitionsRequest(dbName=probe.db, tableName="r", partVals=["2"]),
        "alter_partitions_req": hms.AlterPartitionsRequest(dbName=probe.db, tableName="r", partitions=[part]),
        "rename_partition_req": hms.RenamePartitionRequest(
            dbName=probe.db, tableName="r", partVals=["1"], newPart=part
        ),
        "drop_partition_req": hms.DropPartitionRequest(dbName=probe.db, tblName="r", partName="dt=1"),
        "create_database_req": hms.CreateDatabaseRequest(databaseName=f"{probe.db}_req"),
        "alter_database_req": hms.AlterDatabaseRequest(oldDbName=probe.db, newDb=probe.direct.get_database(probe.db)),
        "drop_database_req": hms.DropDatabaseRequest(
            name=probe.db, ignoreUnknownDb=False, deleteData=True, cascade=True
        ),
    }
    for method, request in calls.items():
        with pytest.raises(hw.UnsupportedMethodError):
            probe.client.call(method, request)
    probe.new_events(0)
    assert probe.direct.get_table(probe.db, "r") == stored  # nothing happened


def test_method_names_nobody_knows_are_counted_together(probe: Probe) -> None:
    host, port = probe.shim.uri.removeprefix("thrift://").rsplit(":", 1)
    before = probe.shim.calls[UNKNOWN_METHOD]
    junk = [f"no_such_method_{probe.db}_{i}" for i in range(3)]
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        reader = MessageReader(sock, side="shim")
        for name in junk:
            buf = TTransport.TMemoryBuffer()
            proto = TBinaryProtocol.TBinaryProtocol(buf)
            proto.writeMessageBegin(name, TMessageType.CALL, 1)
            proto.writeStructBegin("args")
            proto.writeFieldStop()
            proto.writeStructEnd()
            proto.writeMessageEnd()
            sock.sendall(bytes(buf.getvalue()))
            assert reader.read_header().type == TMessageType.EXCEPTION  # "Invalid method name", as the HMS says
            reader.skip_struct()
    deadline = time.monotonic() + 30  # counted once the reply went out
    while probe.shim.calls[UNKNOWN_METHOD] < before + 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert probe.shim.calls[UNKNOWN_METHOD] == before + 3
    assert not any(name in probe.shim.calls for name in junk)


def test_an_insert_fired_by_a_hive_2_client(probe: Probe) -> None:
    probe.direct.create_table(probe.table("ins", keys={"dt": "string", "hr": "string"}))
    args = _FireArgs2(
        rqst=_FireRequest2(
            successful=True,
            dbName=probe.db,
            tableName="ins",
            partitionVals=["2024-01-01", "07"],
            data=_FireData2(
                insertData=_InsertData2(
                    filesAdded=["file:/w/ins/f1", "file:/w/ins/f2"], filesAddedChecksum=["ab", "cd"]
                )
            ),
        )
    )
    buf = TTransport.TMemoryBuffer()
    TBinaryProtocol.TBinaryProtocol(buf).writeMessageBegin("fire_listener_event", TMessageType.CALL, 5)
    request = bytes(buf.getvalue()) + _fastbinary.encode_binary(args, [_FireArgs2, _FireArgs2.thrift_spec])
    host, port = probe.shim.uri.removeprefix("thrift://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        reader = MessageReader(sock, side="shim")
        assert reader.read_header().type == TMessageType.REPLY
        result = reader.decode_struct(T.fire_listener_event_result)
    assert result.success is not None  # the metastore took it
    (insert,) = probe.new_events(1)
    assert insert.event_type == EventType.INSERT and insert.qualified_name == f"{probe.db}.ins"
    assert insert.files == ["file:/w/ins/f1", "file:/w/ins/f2"] and insert.file_checksums == ["ab", "cd"]
    assert insert.partition_key_values == {"dt": "2024-01-01", "hr": "07"}


def test_failures_are_silent_by_default_and_status_false_when_asked(probe: Probe, metastore: LocalMetastore) -> None:
    table = probe.table("dup")
    probe.direct.create_table(table)
    with pytest.raises(hw.AlreadyExistsError):
        probe.client.create_table(table)
    probe.new_events(0)
    seen = Recorder()
    with (
        Shim(metastore.uri, sinks=[AppSink(seen)], publish_failures=True, database_events=False) as loud,
        hw.MetastoreClient(loud.uri) as client,
    ):
        with pytest.raises(hw.AlreadyExistsError):
            client.create_table(table)
        client.create_database(make_database(f"{probe.db}_quiet"))  # no database events from this shim
        client.drop_database(f"{probe.db}_quiet", True, True)
        deadline = time.monotonic() + 30
        while not seen.events and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
    (failed,) = seen.events
    assert failed.event_type == EventType.CREATE_TABLE and failed.status is False
    assert failed.table.tableName == "dup"


def test_a_client_that_leaves_before_its_reply_still_gets_its_event_published(probe: Probe) -> None:
    table = probe.table("gone")
    probe.direct.create_table(table)
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    proto.writeMessageBegin("add_partition", TMessageType.CALL, 1)
    T.add_partition_args(new_part=make_partition(table, ["left"])).write(proto)
    host, port = probe.shim.uri.removeprefix("thrift://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(bytes(buf.getvalue()))  # and leave at once, without reading the reply
    (added,) = probe.new_events(1)
    assert added.event_type == EventType.ADD_PARTITION and added.partitions[0].values == ["left"]
    assert probe.direct.get_partition_names(probe.db, "gone") == ["dt=left"]


def test_changes_sent_as_oneway_messages_are_carried_out_and_the_connection_stays_in_step(probe: Probe) -> None:
    """A client may send a change as a ONEWAY message: the metastore still replies (only fb303's oneway methods
    do not), so the shim reads that reply, publishes the event with the final state and relays nothing."""
    probe.direct.create_table(probe.table("ow"))
    table = probe.direct.get_table(probe.db, "ow")
    request = b""
    for i in range(20):
        table.parameters = {**(table.parameters or {}), "step": str(i)}
        buf = TTransport.TMemoryBuffer()
        TBinaryProtocol.TBinaryProtocol(buf).writeMessageBegin("alter_table", TMessageType.ONEWAY, i)
        args = T.alter_table_args(dbname=probe.db, tbl_name="ow", new_tbl=table)
        request += bytes(buf.getvalue()) + _fastbinary.encode_binary(
            args, [T.alter_table_args, T.alter_table_args.thrift_spec]
        )
    buf = TTransport.TMemoryBuffer()
    TBinaryProtocol.TBinaryProtocol(buf).writeMessageBegin("get_table", TMessageType.CALL, 99)
    request += bytes(buf.getvalue()) + _fastbinary.encode_binary(
        T.get_table_args(dbname=probe.db, tbl_name="ow"), [T.get_table_args, T.get_table_args.thrift_spec]
    )
    host, port = probe.shim.uri.removeprefix("thrift://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=120) as sock:
        sock.sendall(request)
        reader = MessageReader(sock, side="shim")
        header = reader.read_header()
        assert (header.name, header.type, header.seqid) == ("get_table", TMessageType.REPLY, 99)
        assert reader.decode_struct(T.get_table_result).success.parameters["step"] == "19"
    events = probe.new_events(20)
    assert kinds(events) == [EventType.ALTER_TABLE] * 20
    assert [e.new_table.parameters["step"] for e in events] == [str(i) for i in range(20)]
    assert [e.old_table.parameters.get("step") for e in events] == [None] + [str(i) for i in range(19)]
