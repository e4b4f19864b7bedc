"""Which calls the shim models and the events they produce, with a stand-in for the upstream's state.

The stand-in (:class:`State`) answers the shim's reads from dictionaries that the "call" changes, so the
before/after logic is tested without a metastore; tests/integration/test_shim_events.py does the same
against a real one.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.protocol import fastbinary as _fastbinary
from thrift.Thrift import TMessageType, TType
from thrift.transport import TTransport

from hivewire.errors import MetastoreConnectionError, NoSuchObjectError
from hivewire.events import EventType, ListenerEvent
from hivewire.testing import make_database, make_partition, make_table
from hivewire_shim.capture import MODELED_METHODS, Capture, Locks, Reply, Settings, succeeded
from hivewire_shim.changes import INCOMPLETE
from hivewire_shim.lookup import Lookup, ReadFailed
from hivewire_shim.names import database_key, partition_name, partition_spec, split_catalog, table_key
from hivewire_shim.wire import Header
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T
from hivewire_thrift.hive_metastore import ttypes as hms


class State:
    """The upstream's objects, read the way :class:`hivewire_shim.lookup.Lookup` reads them."""

    def __init__(self) -> None:
        self.tbls: dict[tuple[str, str], Any] = {}
        self.parts: dict[tuple[str, str], dict[str, Any]] = {}
        self.databases: dict[str, Any] = {}

    def add_table(self, table: Any) -> Any:
        stored = copy.deepcopy(table)
        stored.createTime = 1700000000
        stored.parameters = {**(stored.parameters or {}), "transient_lastDdlTime": "1700000000"}
        self.tbls[(table.dbName, table.tableName)] = stored
        self.parts.setdefault((table.dbName, table.tableName), {})
        return stored

    def add_partition(self, part: Any) -> Any:
        table = self.tbls[(part.dbName, part.tableName)]
        stored = copy.deepcopy(part)
        stored.createTime = 1700000001
        self.parts[(part.dbName, part.tableName)][partition_name([k.name for k in table.partitionKeys],
                                                                 part.values)] = stored
        return stored

    # -- Lookup's interface -------------------------------------------------------------------------------
    def table(self, db: str, name: str) -> Any:
        return copy.deepcopy(self.tbls.get((split_catalog(db)[1], name)))

    def table_names(self, db: str) -> list[str]:
        return [name for (d, name) in self.tbls if d == db]

    def tables(self, db: str, names: Sequence[str]) -> list[Any]:
        return [copy.deepcopy(self.tbls[(db, n)]) for n in names if (db, n) in self.tbls]

    def database(self, name: str) -> Any:
        return copy.deepcopy(self.databases.get(name))

    def partitions(self, db: str, table: str, names: Sequence[str]) -> list[Any]:
        parts = self.parts.get((db, table), {})
        return [copy.deepcopy(parts[n]) for n in names if n in parts]

    def partitions_by_values(self, db: str, table: Any, values: Sequence[Sequence[str]]) -> list[Any]:
        keys = [k.name for k in table.partitionKeys]
        return self.partitions(db, table.tableName, [partition_name(keys, list(v)) for v in values])

    def partition_names(self, db: str, table: str) -> list[str]:
        return list(self.parts.get((db, table), {}))

    def all_partitions(self, db: str, table: str) -> list[Any]:
        return [copy.deepcopy(p) for p in self.parts.get((db, table), {}).values()]


def call_bytes(name: str, args: Any) -> bytes:
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    proto.writeMessageBegin(name, TMessageType.CALL, 1)
    args.write(proto)
    proto.writeMessageEnd()
    return bytes(buf.getvalue())


def run(capture: Capture, name: str, args: Any, apply: Callable[[], Any], *, fail: bool = False) -> None:
    """Plan ``name(args)`` and execute it: ``apply`` changes the state (the upstream running the call)."""
    header = Header(name, TMessageType.CALL, 1)
    change = capture.plan(header, call_bytes(name, args))
    assert change is not None, f"{name} should be modeled"

    def call(result_class: Any) -> Reply:
        if fail:
            result = result_class(o1=hms.MetaException(message="refused"))
        else:
            value = apply()
            result = result_class(success=value) if result_class.thrift_spec[0] is not None else result_class()
        return Capture.reply_of(header, result)
    capture.execute(change, header, call)


@pytest.fixture
def state() -> State:
    s = State()
    s.databases["db"] = make_database("db")
    s.add_table(make_table("db", "t", columns={"id": "int"}, partition_keys={"dt": "string", "hr": "int"}))
    return s


def capture_for(state: State, **settings: Any) -> tuple[Capture, list[ListenerEvent]]:
    events: list[ListenerEvent] = []
    return Capture(state, events.append, Settings(**settings)), events  # type: ignore[arg-type]


def test_every_modeled_method_exists_in_the_idl_and_others_pass_through(state: State) -> None:
    for name in MODELED_METHODS:
        assert hasattr(T, f"{name}_args") and hasattr(T, f"{name}_result"), name
    capture, _ = capture_for(state)
    for name in ("get_table", "get_partitions", "truncate_table", "lock", "get_catalogs", "set_ugi"):
        assert capture.plan(Header(name, TMessageType.CALL, 1), b"") is None


def test_create_and_alter_table_read_back_what_the_metastore_stored(state: State) -> None:
    capture, events = capture_for(state)
    table = make_table("db", "new", partition_keys={"dt": "string"})
    env = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
    run(capture, "create_table_with_environment_context",
        T.create_table_with_environment_context_args(tbl=table, environment_context=env),
        lambda: state.add_table(table))
    altered = state.table("db", "new")
    altered.sd.cols.append(hms.FieldSchema(name="note", type="string"))
    run(capture, "alter_table_with_cascade",
        T.alter_table_with_cascade_args(dbname="db", tbl_name="new", new_tbl=altered, cascade=True),
        lambda: state.add_table(altered))
    created, alter = events
    assert created.event_type == EventType.CREATE_TABLE
    assert created.table.createTime == 1700000000  # the stored table, not the request's
    assert created.environment_context == env
    assert created.parameters == {"hive.version": "2.3.10"}
    assert [c.name for c in alter.old_table.sd.cols] == ["id"]
    assert [c.name for c in alter.new_table.sd.cols] == ["id", "note"]
    assert alter.environment_context.properties == {"CASCADE": "true"}


def test_a_rename_is_an_alter_table_from_the_old_name_to_the_new(state: State) -> None:
    capture, events = capture_for(state, hive_version="3.1.3")
    renamed = state.table("db", "t")
    renamed.tableName = "t2"

    def apply() -> None:
        state.tbls[("db", "t2")] = state.tbls.pop(("db", "t"))
        state.tbls[("db", "t2")].tableName = "t2"
    req = hms.AlterTableRequest(catName="hive", dbName="@hive#db", tableName="t", table=renamed)
    run(capture, "alter_table_req", T.alter_table_req_args(req=req), apply)
    (event,) = events
    assert (event.old_table.tableName, event.new_table.tableName, event.qualified_name) == ("t", "t2", "db.t2")
    assert event.parameters == {"hive.version": "3.1.3"}


def test_partitions_added_in_bulk_are_one_event_dropped_and_altered_are_one_each(state: State) -> None:
    capture, events = capture_for(state)
    table = state.table("db", "t")
    parts = [make_partition(table, ["2024-01-01", str(h)]) for h in range(3)]
    run(capture, "add_partitions", T.add_partitions_args(new_parts=parts),
        lambda: [state.add_partition(p) for p in parts] and 3)
    new_parts = state.partitions_by_values("db", table, [p.values for p in parts])
    for p in new_parts:
        p.parameters = {"touched": "yes"}
    run(capture, "alter_partitions", T.alter_partitions_args(db_name="db", tbl_name="t", new_parts=new_parts),
        lambda: [state.add_partition(p) for p in new_parts] and None)
    names = [partition_name(["dt", "hr"], p.values) for p in parts[:2]]
    req = hms.DropPartitionsRequest(dbName="db", tblName="t", parts=hms.RequestPartsSpec(names=names),
                                    deleteData=True, needResult=False)
    run(capture, "drop_partitions_req", T.drop_partitions_req_args(req=req),
        lambda: [state.parts[("db", "t")].pop(n) for n in names] and hms.DropPartitionsResult())
    kinds = [e.event_type for e in events]
    assert kinds == [EventType.ADD_PARTITION] + [EventType.ALTER_PARTITION] * 3 + [EventType.DROP_PARTITION] * 2
    assert [p.createTime for p in events[0].partitions] == [1700000001] * 3
    assert [(e.old_partition.parameters, e.new_partition.parameters) for e in events[1:4]] == [
        ({}, {"touched": "yes"})] * 3
    assert [e.partitions[0].values for e in events[4:]] == [["2024-01-01", "0"], ["2024-01-01", "1"]]
    assert all(e.delete_data for e in events[4:])


def test_add_partitions_if_not_exists_reports_only_the_new_ones(state: State) -> None:
    capture, events = capture_for(state)
    table = state.table("db", "t")
    existing = state.add_partition(make_partition(table, ["a", "1"]))
    new = make_partition(table, ["b", "2"])
    req = hms.AddPartitionsRequest(dbName="db", tblName="t", parts=[existing, new], ifNotExists=True,
                                   needResult=False)
    run(capture, "add_partitions_req", T.add_partitions_req_args(request=req),
        lambda: state.add_partition(new) and hms.AddPartitionsResult())
    (event,) = events
    assert [p.values for p in event.partitions] == [["b", "2"]]


def test_failed_calls_publish_nothing_unless_asked_and_then_status_false(state: State) -> None:
    table = make_table("db", "x")
    quiet, none = capture_for(state)
    run(quiet, "create_table", T.create_table_args(tbl=table), lambda: None, fail=True)
    assert none == []
    loud, events = capture_for(state, publish_failures=True)
    run(loud, "create_table", T.create_table_args(tbl=table), lambda: None, fail=True)
    (event,) = events
    assert event.event_type == EventType.CREATE_TABLE and event.status is False and event.table == table


def test_database_events_and_a_cascading_drop(state: State) -> None:
    capture, events = capture_for(state)

    def drop() -> None:
        del state.databases["db"]
        state.tbls.clear()
    run(capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), drop)
    assert [(e.event_type, e.qualified_name) for e in events] == [
        (EventType.DROP_TABLE, "db.t"), (EventType.DROP_DATABASE, "db")]
    assert events[0].delete_data is False  # drop_database_core drops each table with deleteData=false
    state.databases["db"] = make_database("db")
    state.add_table(make_table("db", "t"))
    off, only_tables = capture_for(state, database_events=False)
    assert off.plan(Header("create_database", 1, 1), call_bytes(
        "create_database", T.create_database_args(database=make_database("other")))) is None
    run(off, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), drop)
    assert [e.event_type for e in only_tables] == [EventType.DROP_TABLE]


def _insert_2x(files: list[str], checksums: list[str], values: list[str]) -> bytes:
    """fire_listener_event as a Hive 2.x client writes it: InsertEventRequestData {1: files, 2: checksums}."""
    strings = (TType.STRING, "UTF8", False)
    data = (None, (1, TType.LIST, "filesAdded", strings, None), (2, TType.LIST, "filesAddedChecksum", strings, None))

    class Data:
        thrift_spec = data

        def __init__(self) -> None:
            self.filesAdded, self.filesAddedChecksum = files, checksums

    class Union:
        thrift_spec = (None, (1, TType.STRUCT, "insertData", [Data, data], None))

        def __init__(self) -> None:
            self.insertData = Data()

    class Request:
        thrift_spec = (None, (1, TType.BOOL, "successful", None, None),
                       (2, TType.STRUCT, "data", [Union, Union.thrift_spec], None),
                       (3, TType.STRING, "dbName", "UTF8", None), (4, TType.STRING, "tableName", "UTF8", None),
                       (5, TType.LIST, "partitionVals", strings, None))

        def __init__(self) -> None:
            self.successful, self.data, self.dbName, self.tableName = True, Union(), "db", "t"
            self.partitionVals = values

    class Args:
        thrift_spec = (None, (1, TType.STRUCT, "rqst", [Request, Request.thrift_spec], None))

        def __init__(self) -> None:
            self.rqst = Request()

    body = _fastbinary.encode_binary(Args(), [Args, Args.thrift_spec])
    buf = TTransport.TMemoryBuffer()
    TBinaryProtocol.TBinaryProtocol(buf).writeMessageBegin("fire_listener_event", TMessageType.CALL, 1)
    return bytes(buf.getvalue()) + body


def test_inserts_from_hive_2_and_hive_3_clients_decode_to_the_same_event(state: State) -> None:
    header = Header("fire_listener_event", TMessageType.CALL, 1)
    events: list[ListenerEvent] = []
    capture = Capture(state, events.append)  # type: ignore[arg-type]
    old = capture.plan(header, _insert_2x(["f1", "f2"], ["c1", "c2"], ["2024-01-01", "7"]))
    new_args = T.fire_listener_event_args(rqst=hms.FireEventRequest(
        successful=True, dbName="db", tableName="t", partitionVals=["2024-01-01", "7"],
        data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
            replace=False, filesAdded=["f1", "f2"], filesAddedChecksum=["c1", "c2"]))))
    new = capture.plan(header, call_bytes("fire_listener_event", new_args))
    for change in (old, new):
        assert change is not None
        capture.execute(change, header, lambda cls: Capture.reply_of(header, cls(success=hms.FireEventResponse())))
    assert events[0] == events[1]
    assert events[0].files == ["f1", "f2"] and events[0].file_checksums == ["c1", "c2"]
    assert events[0].partition_key_values == {"dt": "2024-01-01", "hr": "7"}


def test_success_is_the_absence_of_a_declared_exception() -> None:
    assert succeeded(T.drop_table_result())
    assert succeeded(T.add_partition_result(success=hms.Partition()))
    assert not succeeded(T.drop_table_result(o3=hms.MetaException(message="x")))


def test_names_follow_hive() -> None:
    assert partition_name(["DT", "city"], ["2024/01", "a=b c"]) == "dt=2024%2F01/city=a%3Db c"
    assert partition_name(["dt"], [""]) == "dt=__HIVE_DEFAULT_PARTITION__"
    assert partition_spec("dt=2024%2F01/city=a%3Db c") == {"dt": "2024/01", "city": "a=b c"}
    assert partition_spec("x=100%") == {"x": "100%"}
    assert split_catalog("@hive#sales") == ("hive", "sales")
    assert split_catalog("sales") == (None, "sales")
    assert table_key("@hive#Sales", "Orders") == table_key("sales", "orders")


def test_locks_on_several_keys_do_not_deadlock() -> None:
    locks = Locks(stripes=8)
    keys = [f"table:db.t{i}" for i in range(20)]
    counter = {"n": 0}

    def work(order: list[str]) -> None:
        for _ in range(500):
            with locks.holding(order):
                counter["n"] += 1
    threads = [threading.Thread(target=work, args=(keys if i % 2 else keys[::-1],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert counter["n"] == 2000


# -- reads that fail are not objects that are absent ---------------------------------------------------------

class Unreachable:
    """A MetastoreClient whose every read fails the way a timeout or a restarting metastore does."""

    def __getattr__(self, method: str) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            raise MetastoreConnectionError(f"{method}: timed out", uri="thrift://hms:9083", method=method)
        return call

    def close(self) -> None:
        pass


class Absent(Unreachable):
    """A MetastoreClient for a metastore that holds nothing."""

    def __getattr__(self, method: str) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            raise NoSuchObjectError(f"{method}: no such object")
        return call


def test_a_failed_read_raises_and_a_missing_object_is_none() -> None:
    with pytest.raises(ReadFailed, match=r"could not read table db\.t .*timed out"):
        Lookup(Unreachable).table("db", "t")  # type: ignore[arg-type]
    assert Lookup(Absent).table("db", "t") is None  # type: ignore[arg-type]
    assert Lookup(Absent).partitions("db", "t", ["dt=1"]) == []  # type: ignore[arg-type]


def unreadable_capture(**settings: Any) -> tuple[Capture, list[ListenerEvent]]:
    events: list[ListenerEvent] = []
    return Capture(Lookup(Unreachable), events.append, Settings(**settings)), events  # type: ignore[arg-type]


def test_when_the_upstream_cannot_be_read_changes_still_publish_what_the_request_carried(
        caplog: pytest.LogCaptureFixture) -> None:
    capture, events = unreadable_capture()
    table = make_table("db", "t", partition_keys={"dt": "string"})
    parts = [make_partition(table, ["2024-01-01"]), make_partition(table, ["2024-01-02"])]
    with caplog.at_level(logging.WARNING, logger="hivewire_shim.changes"):
        run(capture, "create_table", T.create_table_args(tbl=table), lambda: None)
        run(capture, "add_partitions", T.add_partitions_args(new_parts=parts), lambda: 2)
        run(capture, "alter_partition", T.alter_partition_args(db_name="db", tbl_name="t", new_part=parts[0]),
            lambda: None)
        run(capture, "drop_partition", T.drop_partition_args(db_name="db", tbl_name="t", part_vals=["2024-01-02"],
                                                             deleteData=True), lambda: True)
        run(capture, "alter_table", T.alter_table_args(dbname="db", tbl_name="t", new_tbl=table), lambda: None)
        run(capture, "drop_table", T.drop_table_args(dbname="db", name="t", deleteData=True), lambda: None)
    kinds = [e.event_type for e in events]
    assert kinds == [EventType.CREATE_TABLE, EventType.ADD_PARTITION, EventType.ALTER_PARTITION,
                     EventType.DROP_PARTITION, EventType.ALTER_TABLE, EventType.DROP_TABLE]
    created, added, altered, dropped_part, altered_table, dropped = events
    assert created.table == table and created.parameters[INCOMPLETE] == "table"
    assert added.partitions == parts and added.table.tableName == "t"
    assert altered.new_partition == parts[0] and altered.old_partition.values == ["2024-01-01"]
    assert altered.parameters[INCOMPLETE] == "old_partitions,table"
    assert dropped_part.partitions[0].values == ["2024-01-02"] and dropped_part.delete_data is True
    assert altered_table.old_table.tableName == "t" and altered_table.new_table == table
    assert (dropped.table.dbName, dropped.table.tableName, dropped.delete_data) == ("db", "t", True)
    assert all(e.parameters["hive.version"] == "2.3.10" for e in events)
    assert "could not read table db.t from the upstream metastore" in caplog.text
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_a_cascading_drop_whose_tables_cannot_be_read_still_publishes_the_database_drop() -> None:
    capture, events = unreadable_capture()
    run(capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), lambda: None)
    (event,) = events
    assert event.event_type == EventType.DROP_DATABASE and event.database.name == "db"
    assert event.parameters[INCOMPLETE] == "database,tables"


def test_a_missing_object_is_not_a_failed_read(caplog: pytest.LogCaptureFixture) -> None:
    events: list[ListenerEvent] = []
    capture = Capture(Lookup(Absent), events.append)  # type: ignore[arg-type]
    table = make_table("db", "t")
    run(capture, "alter_table", T.alter_table_args(dbname="db", tbl_name="t", new_tbl=table), lambda: None)
    assert events == []  # nothing to alter: no event (the metastore would have refused the call anyway)
    assert "did not exist before" in caplog.text


def test_an_upstream_that_fails_after_the_call_was_sent_publishes_nothing_even_with_publish_failures(
        state: State, caplog: pytest.LogCaptureFixture) -> None:
    capture, events = capture_for(state, publish_failures=True)
    header = Header("create_table", TMessageType.CALL, 1)
    change = capture.plan(header, call_bytes("create_table", T.create_table_args(tbl=make_table("db", "x"))))
    assert change is not None
    died = Reply(header, False, error="upstream closed the connection", from_upstream=False, maybe_applied=True)
    with caplog.at_level(logging.WARNING, logger="hivewire_shim.capture"):
        capture.execute(change, header, lambda cls: died)
    assert events == []
    assert "may or may not have been made" in caplog.text
    unreachable = Reply(header, False, error="upstream metastore unavailable", from_upstream=False)
    capture.execute(change, header, lambda cls: unreachable)  # never reached the metastore: nothing to report
    assert events == []


def test_a_cascading_drop_database_holds_the_locks_of_its_tables(state: State) -> None:
    capture, events = capture_for(state)
    state.add_table(make_table("db", "u"))
    held: list[bool] = []

    def drop() -> None:
        held.extend(capture._locks.held(table_key("db", t)) for t in ("t", "u"))
        held.append(capture._locks.held(database_key("db")))
        del state.databases["db"]
        state.tbls.clear()
    run(capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), drop)
    assert held == [True, True, True]
    assert [e.qualified_name for e in events] == ["db.t", "db.u", "db"]
    assert not any(capture._locks.held(k) for k in (table_key("db", "t"), database_key("db")))
