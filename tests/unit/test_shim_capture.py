"""Which calls the shim models and the events they produce, with a stand-in for the upstream's state.

The stand-in (:class:`State`) answers the shim's reads from dictionaries that the "call" changes, so the
before/after logic is tested without a metastore; tests/integration/test_shim_events.py does the same
against a real one.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.protocol import fastbinary as _fastbinary
from thrift.Thrift import TMessageType, TType
from thrift.transport import TTransport

from hivewire.errors import MetastoreConnectionError, NoSuchObjectError
from hivewire.events._model import EventType, ListenerEvent
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim.capture import Capture, EventOptions, Plan
from hivewire_shim.changes import INCOMPLETE, OUTCOME, TRANSACTION_ACTIVE
from hivewire_shim.locks import Locks
from hivewire_shim.lookup import Lookup, ReadFailed
from hivewire_shim.methods import MODELED_METHODS
from hivewire_shim.names import database_key, partition_name, partition_spec, split_catalog, table_key
from hivewire_shim.release import HIVE_2, Release
from hivewire_shim.reply import Reply, succeeded
from hivewire_shim.upstream import Upstream
from hivewire_shim.wire import Header
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T
from hivewire_thrift.hive_metastore import ttypes as hms


class State:
    """The upstream's objects, read the way :class:`hivewire_shim.lookup.Lookup` reads them."""

    def __init__(self) -> None:
        self.tbls: dict[tuple[str, str], Any] = {}
        self.parts: dict[tuple[str, str], dict[str, Any]] = {}
        self.databases: dict[str, Any] = {}
        #: The upstream's release; these tests model Hive 2.3 unless one says otherwise (3.1 and 4.0.1 against
        #: real metastores: tests/integration/test_shim_fidelity.py).
        self.released = HIVE_2

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
        self.parts[(part.dbName, part.tableName)][
            partition_name([k.name for k in table.partitionKeys], part.values)
        ] = stored
        return stored

    # -- Lookup's interface -------------------------------------------------------------------------------
    def release(self) -> Release:
        return self.released

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


def execute(plan: Plan, call: Callable[[Any], Reply]) -> None:
    """Carry out ``plan`` as a connection does; ``call(result_class)`` stands in for the upstream's reply."""
    with plan.locked():
        plan.read_before()
        plan.publish(call(plan.result_class))


def run(capture: Capture, name: str, args: Any, apply: Callable[[], Any], *, fail: bool = False) -> None:
    """Plan ``name(args)`` and execute it: ``apply`` changes the state (the upstream running the call)."""
    header = Header(name, TMessageType.CALL, 1)
    plan = capture.plan(header, call_bytes(name, args))
    assert plan is not None, f"{name} should be modeled"

    def call(result_class: Any) -> Reply:
        if fail:
            result = result_class(o1=hms.MetaException(message="refused"))
        else:
            value = apply()
            result = result_class(success=value) if result_class.thrift_spec[0] is not None else result_class()
        return Reply.of(Header(name, TMessageType.REPLY, 1), result)

    execute(plan, call)


@pytest.fixture
def state() -> State:
    s = State()
    s.databases["db"] = make_database("db")
    s.add_table(make_table("db", "t", columns={"id": "int"}, partition_keys={"dt": "string", "hr": "int"}))
    return s


def capture_for(state: State, **settings: Any) -> tuple[Capture, list[ListenerEvent]]:
    events: list[ListenerEvent] = []
    return Capture(state, events.append, EventOptions(**settings)), events  # type: ignore[arg-type]


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
    run(
        capture,
        "create_table_with_environment_context",
        T.create_table_with_environment_context_args(tbl=table, environment_context=env),
        lambda: state.add_table(table),
    )
    altered = state.table("db", "new")
    altered.sd.cols.append(hms.FieldSchema(name="note", type="string"))
    run(
        capture,
        "alter_table_with_cascade",
        T.alter_table_with_cascade_args(dbname="db", tbl_name="new", new_tbl=altered, cascade=True),
        lambda: state.add_table(altered),
    )
    created, alter = events
    assert created.event_type == EventType.CREATE_TABLE
    assert created.table.createTime == 1700000000  # the stored table, not the request's
    assert created.environment_context == env
    assert created.parameters == {"hive.version": "2.3.10", TRANSACTION_ACTIVE: "false"}
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
    assert event.parameters == {"hive.version": "3.1.3", TRANSACTION_ACTIVE: "false"}


def test_partitions_added_in_bulk_are_one_event_dropped_and_altered_are_one_each(state: State) -> None:
    capture, events = capture_for(state)
    table = state.table("db", "t")
    parts = [make_partition(table, ["2024-01-01", str(h)]) for h in range(3)]
    run(
        capture,
        "add_partitions",
        T.add_partitions_args(new_parts=parts),
        lambda: [state.add_partition(p) for p in parts] and 3,
    )
    new_parts = state.partitions_by_values("db", table, [p.values for p in parts])
    for p in new_parts:
        p.parameters = {"touched": "yes"}
    run(
        capture,
        "alter_partitions",
        T.alter_partitions_args(db_name="db", tbl_name="t", new_parts=new_parts),
        lambda: [state.add_partition(p) for p in new_parts] and None,
    )
    names = [partition_name(["dt", "hr"], p.values) for p in parts[:2]]
    req = hms.DropPartitionsRequest(
        dbName="db", tblName="t", parts=hms.RequestPartsSpec(names=names), deleteData=True, needResult=False
    )
    run(
        capture,
        "drop_partitions_req",
        T.drop_partitions_req_args(req=req),
        lambda: [state.parts[("db", "t")].pop(n) for n in names] and hms.DropPartitionsResult(),
    )
    kinds = [e.event_type for e in events]
    assert kinds == [EventType.ADD_PARTITION] + [EventType.ALTER_PARTITION] * 3 + [EventType.DROP_PARTITION] * 2
    assert [p.createTime for p in events[0].partitions] == [1700000001] * 3
    assert [(e.old_partition.parameters, e.new_partition.parameters) for e in events[1:4]] == [
        ({}, {"touched": "yes"})
    ] * 3
    assert [e.partitions[0].values for e in events[4:]] == [["2024-01-01", "0"], ["2024-01-01", "1"]]
    assert all(e.delete_data for e in events[4:])


def test_on_hive_3_an_unset_catalog_is_the_default_and_on_hive_4_a_drop_call_is_one_event(state: State) -> None:
    state.released = Release(catalog="cat")
    capture, events = capture_for(state)
    table = make_table("db", "new", partition_keys={"dt": "string"})
    run(capture, "create_table", T.create_table_args(tbl=table), lambda: state.add_table(table))
    stored = state.table("db", "new")
    parts = [make_partition(stored, [d]) for d in ("a", "b")]
    run(
        capture,
        "add_partitions",
        T.add_partitions_args(new_parts=parts),
        lambda: [state.add_partition(p) for p in parts] and 2,
    )
    assert events[0].table.catName == "cat" and [p.catName for p in events[1].partitions] == ["cat", "cat"]
    state.released = Release(catalog="cat", fills_new_objects=True)
    capture, events = capture_for(state)
    req = hms.DropPartitionsRequest(dbName="db", tblName="new", parts=hms.RequestPartsSpec(names=["dt=a", "dt=b"]))
    run(
        capture,
        "drop_partitions_req",
        T.drop_partitions_req_args(req=req),
        lambda: [state.parts[("db", "new")].pop(n) for n in ("dt=a", "dt=b")] and hms.DropPartitionsResult(),
    )
    (dropped,) = events
    assert [p.values for p in dropped.partitions] == [["a"], ["b"]]


def test_add_partitions_if_not_exists_reports_only_the_new_ones(state: State) -> None:
    capture, events = capture_for(state)
    table = state.table("db", "t")
    existing = state.add_partition(make_partition(table, ["a", "1"]))
    new = make_partition(table, ["b", "2"])
    req = hms.AddPartitionsRequest(dbName="db", tblName="t", parts=[existing, new], ifNotExists=True, needResult=False)
    run(
        capture,
        "add_partitions_req",
        T.add_partitions_req_args(request=req),
        lambda: state.add_partition(new) and hms.AddPartitionsResult(),
    )
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
        (EventType.DROP_TABLE, "db.t"),
        (EventType.DROP_DATABASE, "db"),
    ]
    assert events[0].delete_data is False  # drop_database_core drops each table with deleteData=false
    state.databases["db"] = make_database("db")
    state.add_table(make_table("db", "t"))
    off, only_tables = capture_for(state, database_events=False)
    assert (
        off.plan(
            Header("create_database", 1, 1),
            call_bytes("create_database", T.create_database_args(database=make_database("other"))),
        )
        is None
    )
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
        thrift_spec = (
            None,
            (1, TType.BOOL, "successful", None, None),
            (2, TType.STRUCT, "data", [Union, Union.thrift_spec], None),
            (3, TType.STRING, "dbName", "UTF8", None),
            (4, TType.STRING, "tableName", "UTF8", None),
            (5, TType.LIST, "partitionVals", strings, None),
        )

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
    new_args = T.fire_listener_event_args(
        rqst=hms.FireEventRequest(
            successful=True,
            dbName="db",
            tableName="t",
            partitionVals=["2024-01-01", "7"],
            data=hms.FireEventRequestData(
                insertData=hms.InsertEventRequestData(
                    replace=False, filesAdded=["f1", "f2"], filesAddedChecksum=["c1", "c2"]
                )
            ),
        )
    )
    new = capture.plan(header, call_bytes("fire_listener_event", new_args))
    for plan in (old, new):
        assert plan is not None
        execute(plan, lambda cls: Reply.of(header, cls(success=hms.FireEventResponse())))
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


class Hung:
    """A metastore that accepts connections and never answers (a stand-in: a real one cannot be made to hang
    for one test without stopping it for every other test of the session)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.uri = f"thrift://127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                self.accepted.append(self.listener.accept()[0])

    def close(self) -> None:
        for sock in [self.listener, *self.accepted]:
            sock.close()


def test_a_read_of_a_hung_metastore_gives_up_after_the_read_timeout_without_retrying() -> None:
    hung = Hung()
    try:
        lookup = Lookup(lambda: Upstream(hung.uri).client(0.3), timeout=0.3)
        with pytest.raises(ReadFailed, match=r"could not read table db\.t .*read-timeout"):
            lookup.table("db", "t")
        assert len(hung.accepted) == 1  # one attempt: no reconnect-and-retry once the time is up
        assert lookup.failures == 1
        # A change whose reads time out still publishes, with what the request carried, and the call goes on.
        events: list[ListenerEvent] = []
        capture = Capture(lookup, events.append)
        table = make_table("db", "t", parameters={"k": "v"})
        run(capture, "alter_table", T.alter_table_args(dbname="db", tbl_name="t", new_tbl=table), lambda: None)
        (event,) = events
        assert event.new_table == table and event.old_table.tableName == "t"
        # What the upstream is could not be asked either (one more read; not asked again for a while).
        assert event.parameters[INCOMPLETE] == "old_table,release,table" and lookup.failures == 4
        lookup.close()
    finally:
        hung.close()


def test_a_read_that_finds_every_pooled_connection_busy_gives_up_after_the_read_timeout() -> None:
    lookup = Lookup(Absent, size=1, timeout=0.2)  # type: ignore[arg-type]
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lookup._pool.client():
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(30)
    with pytest.raises(ReadFailed, match="no metastore client became free"):
        lookup.table("db", "t")
    release.set()
    holder.join(30)
    assert lookup.table("db", "t") is None and lookup.failures == 1


def unreadable_capture(**settings: Any) -> tuple[Capture, list[ListenerEvent]]:
    events: list[ListenerEvent] = []
    return Capture(Lookup(Unreachable), events.append, EventOptions(**settings)), events  # type: ignore[arg-type]


def test_when_the_upstream_cannot_be_read_changes_still_publish_what_the_request_carried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    capture, events = unreadable_capture()
    table = make_table("db", "t", partition_keys={"dt": "string"})
    parts = [make_partition(table, ["2024-01-01"]), make_partition(table, ["2024-01-02"])]
    with caplog.at_level(logging.WARNING, logger="hivewire_shim.changes"):
        run(capture, "create_table", T.create_table_args(tbl=table), lambda: None)
        run(capture, "add_partitions", T.add_partitions_args(new_parts=parts), lambda: 2)
        run(
            capture,
            "alter_partition",
            T.alter_partition_args(db_name="db", tbl_name="t", new_part=parts[0]),
            lambda: None,
        )
        run(
            capture,
            "drop_partition",
            T.drop_partition_args(db_name="db", tbl_name="t", part_vals=["2024-01-02"], deleteData=True),
            lambda: True,
        )
        run(capture, "alter_table", T.alter_table_args(dbname="db", tbl_name="t", new_tbl=table), lambda: None)
        run(capture, "drop_table", T.drop_table_args(dbname="db", name="t", deleteData=True), lambda: None)
    kinds = [e.event_type for e in events]
    assert kinds == [
        EventType.CREATE_TABLE,
        EventType.ADD_PARTITION,
        EventType.ALTER_PARTITION,
        EventType.DROP_PARTITION,
        EventType.ALTER_TABLE,
        EventType.DROP_TABLE,
    ]
    created, added, altered, dropped_part, altered_table, dropped = events
    assert created.table == table and created.parameters[INCOMPLETE] == "release,table"
    assert added.partitions == parts and added.table.tableName == "t"
    assert altered.new_partition == parts[0] and altered.old_partition.values == ["2024-01-01"]
    assert altered.parameters[INCOMPLETE] == "old_partitions,release,table"
    assert dropped_part.partitions[0].values == ["2024-01-02"] and dropped_part.delete_data is True
    assert altered_table.old_table.tableName == "t" and altered_table.new_table == table
    assert (dropped.table.dbName, dropped.table.tableName, dropped.delete_data) == ("db", "t", True)
    assert all(e.parameters["hive.version"] == "2.3.10" for e in events)
    assert all("release" in e.parameters[INCOMPLETE].split(",") for e in events)  # not asked: unknown
    assert "could not read table db.t from the upstream metastore" in caplog.text
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_a_cascading_drop_whose_tables_cannot_be_read_still_publishes_the_database_drop() -> None:
    capture, events = unreadable_capture()
    run(capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), lambda: None)
    (event,) = events
    assert event.event_type == EventType.DROP_DATABASE and event.database.name == "db"
    assert event.parameters[INCOMPLETE] == "database,release,tables"


def test_a_missing_object_is_not_a_failed_read(caplog: pytest.LogCaptureFixture) -> None:
    events: list[ListenerEvent] = []
    capture = Capture(Lookup(Absent), events.append)  # type: ignore[arg-type]
    table = make_table("db", "t")
    run(capture, "alter_table", T.alter_table_args(dbname="db", tbl_name="t", new_tbl=table), lambda: None)
    assert events == []  # nothing to alter: no event (the metastore would have refused the call anyway)
    assert "did not exist before" in caplog.text


def test_an_upstream_that_fails_after_the_call_was_sent_publishes_an_unknown_outcome_event(
    state: State, caplog: pytest.LogCaptureFixture
) -> None:
    capture, events = capture_for(state)
    header = Header("create_table", TMessageType.CALL, 1)
    plan = capture.plan(header, call_bytes("create_table", T.create_table_args(tbl=make_table("db", "x"))))
    assert plan is not None
    died = Reply(header, False, error="upstream closed the connection", from_upstream=False, maybe_applied=True)
    with caplog.at_level(logging.WARNING, logger="hivewire_shim.capture"):
        execute(plan, lambda cls: died)
    # Neither status would be true: the event shows what the metastore holds now, marked as such.
    (event,) = events
    assert event.event_type == EventType.CREATE_TABLE and event.parameters[OUTCOME] == "unknown"
    assert "may or may not have been made" in caplog.text
    events.clear()
    unreachable = Reply(header, False, error="upstream metastore unavailable", from_upstream=False)
    execute(plan, lambda cls: unreachable)  # never reached the metastore: nothing to report
    assert events == []


def test_a_cascading_drop_database_holds_its_database_exclusively(state: State) -> None:
    capture, events = capture_for(state)
    state.add_table(make_table("db", "u"))
    held: list[bool] = []

    def drop() -> None:
        held.append(capture.locks.held_exclusively(database_key("db")))
        del state.databases["db"]
        state.tbls.clear()

    run(capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), drop)
    assert held == [True]
    assert [e.qualified_name for e in events] == ["db.t", "db.u", "db"]
    assert not any(capture.locks.held(k) for k in (table_key("db", "t"), database_key("db")))


def _in_thread(capture: Capture, name: str, args: Any, apply: Callable[[], Any]) -> threading.Thread:
    """Run ``name(args)`` through ``capture`` on a thread; ``apply`` raising MetaException fails the call."""
    header = Header(name, TMessageType.CALL, 1)
    plan = capture.plan(header, call_bytes(name, args))
    assert plan is not None

    def call(result_class: Any) -> Reply:
        try:
            value = apply()
        except hms.MetaException as e:
            return Reply.of(header, result_class(o3=e))
        return Reply.of(header, result_class(success=value) if result_class.thrift_spec[0] else result_class())

    thread = threading.Thread(target=execute, args=(plan, call), daemon=True)
    thread.start()
    return thread


def _until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (a state another thread reaches), failing if it never does."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the other thread never got there"
        time.sleep(0.005)


def _create_u(state: State) -> Callable[[], None]:
    def create() -> None:
        if "db" not in state.databases:
            raise hms.MetaException(message="database db does not exist")
        state.add_table(make_table("db", "u"))

    return create


def _drop(state: State) -> None:
    del state.databases["db"]
    state.tbls.clear()


def test_a_table_created_while_its_database_is_dropped_waits_and_then_fails(state: State) -> None:
    capture, events = capture_for(state)
    in_drop, release = threading.Event(), threading.Event()

    def drop() -> None:
        in_drop.set()
        assert release.wait(30)
        _drop(state)

    dropper = _in_thread(capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), drop)
    assert in_drop.wait(30)  # the drop listed db's tables and is at the metastore, holding db exclusively
    creator = _in_thread(capture, "create_table", T.create_table_args(tbl=make_table("db", "u")), _create_u(state))
    _until(lambda: capture.locks.waiting(database_key("db")) == 1)  # the create waits for the database
    assert ("db", "u") not in state.tbls
    release.set()
    for thread in (dropper, creator):
        thread.join(30)
    # The create ran after the drop and failed: no table without its drop event.
    assert [(e.event_type, e.qualified_name) for e in events] == [
        (EventType.DROP_TABLE, "db.t"),
        (EventType.DROP_DATABASE, "db"),
    ]


def test_a_table_created_just_before_its_database_is_dropped_gets_its_drop_event(state: State) -> None:
    capture, events = capture_for(state)
    in_create, release = threading.Event(), threading.Event()
    create_u = _create_u(state)

    def create() -> None:
        in_create.set()
        assert release.wait(30)
        create_u()

    creator = _in_thread(capture, "create_table", T.create_table_args(tbl=make_table("db", "u")), create)
    assert in_create.wait(30)  # the create holds db shared (and db.u exclusively)
    dropper = _in_thread(
        capture, "drop_database", T.drop_database_args(name="db", deleteData=True, cascade=True), lambda: _drop(state)
    )
    _until(lambda: capture.locks.waiting(database_key("db")) == 1)  # the drop waits for the create to finish
    assert "db" in state.databases
    release.set()
    for thread in (creator, dropper):
        thread.join(30)
    assert [(e.event_type, e.qualified_name) for e in events] == [
        (EventType.CREATE_TABLE, "db.u"),
        (EventType.DROP_TABLE, "db.t"),
        (EventType.DROP_TABLE, "db.u"),
        (EventType.DROP_DATABASE, "db"),
    ]


def test_changes_to_different_tables_of_one_database_run_side_by_side(state: State) -> None:
    capture, events = capture_for(state)
    state.add_table(make_table("db", "u", partition_keys={"dt": "string", "hr": "int"}))
    both_in_call = threading.Barrier(2, timeout=30)  # broken (and the test fails) if they run one at a time

    def add(table: str) -> Callable[[], Any]:
        def apply() -> Any:
            both_in_call.wait()
            return state.add_partition(make_partition(state.table("db", table), ["2024-01-01", "1"]))

        return apply

    threads = [
        _in_thread(
            capture,
            "add_partition",
            T.add_partition_args(new_part=make_partition(state.table("db", t), ["2024-01-01", "1"])),
            add(t),
        )
        for t in ("t", "u")
    ]
    for thread in threads:
        thread.join(30)
    assert sorted(e.qualified_name for e in events) == ["db.t", "db.u"]


def test_shared_holders_coexist_and_an_exclusive_one_waits_for_them_and_goes_first() -> None:
    locks = Locks(stripes=64)
    order: list[str] = []
    with locks.holding([], shared=["database:db"]), locks.holding([], shared=["database:db"]):
        assert locks.held("database:db") and not locks.held_exclusively("database:db")

        def exclusive() -> None:
            with locks.holding(["database:db"]):
                order.append("exclusive")

        writer = threading.Thread(target=exclusive)
        writer.start()
        _until(lambda: locks.waiting("database:db") == 1)

        def shared() -> None:
            with locks.holding(["table:db.t"], shared=["database:db"]):
                order.append("shared")

        reader = threading.Thread(target=shared)
        reader.start()
        _until(lambda: locks.waiting("database:db") == 2)  # a new shared holder queues behind the writer
        assert order == []
    writer.join(30)
    reader.join(30)
    assert order == ["exclusive", "shared"]


# -- every modeled method: the events it publishes ------------------------------------------------------------
# One case per entry of MODELED_METHODS (the parameter list comes from the table itself, so a method added
# there without a case here fails). tests/integration/test_shim_events.py makes the calls HMS 2.3 serves
# against a real metastore; the _req forms of Hive 3.x/4.x (create/drop_table_req, create/alter/
# drop_database_req, alter_table_req, alter_partitions_req, rename_partition_req, append_partition_req,
# drop_partition_req) exist only here, because the test metastore (2.3) answers them "Invalid method name".

ENV = hms.EnvironmentContext(properties={"origin": "test"})
P1, P2 = ["2024-01-01", "1"], ["2024-01-01", "2"]
NAME1, NAME2 = "dt=2024-01-01/hr=1", "dt=2024-01-01/hr=2"
NEW = ["2024-02-01", "0"]
NEW_NAME = "dt=2024-02-01/hr=0"
Events = list[ListenerEvent]


@dataclass(frozen=True)
class Case:
    """``args(state)``: the call's ``*_args``; ``apply(state)``: the upstream making the change (returns
    the reply's ``success``); ``expect``: (type, ``db.table``) of each event; ``check(before, after,
    events)``: the objects (``before``/``after``: the state around the call)."""

    args: Callable[[State], Any]
    apply: Callable[[State], Any]
    expect: list[tuple[EventType, str]]
    check: Callable[[State, State, Events], None]


@pytest.fixture
def full_state(state: State) -> State:
    """The ``state`` fixture plus partitions P1 and P2 of db.t and an empty table db.dst like it."""
    table = state.table("db", "t")
    for values in (P1, P2):
        state.add_partition(make_partition(table, values))
    state.add_table(make_table("db", "dst", columns={"id": "int"}, partition_keys={"dt": "string", "hr": "int"}))
    return state


def _t(s: State) -> Any:
    return s.table("db", "t")


def _part(s: State, name: str, table: str = "t") -> Any:
    (p,) = s.partitions("db", table, [name])
    return p


def _touched(s: State, *names: str) -> list[Any]:
    parts = s.partitions("db", "t", list(names))
    for p in parts:
        p.parameters = {**(p.parameters or {}), "touched": "yes"}
    return parts


def _store_parts(s: State, parts: Sequence[Any]) -> list[Any]:
    return [s.add_partition(p) for p in parts]


def _new_table() -> Any:
    return make_table("db", "new", columns={"id": "int"}, partition_keys={"dt": "string"})


def _altered_table(s: State) -> Any:
    table = _t(s)
    table.parameters = {**table.parameters, "owner.team": "core"}
    return table


def _store_table(s: State, table: Any) -> None:
    stored = copy.deepcopy(table)
    stored.parameters = {**stored.parameters, "transient_lastDdlTime": "1700000002"}
    s.tbls[(table.dbName, table.tableName)] = stored


def _altered_db(s: State) -> Any:
    db = s.database("db")
    db.parameters = {"team": "core"}
    return db


def _drop_db(s: State) -> None:
    del s.databases["db"]
    s.tbls.clear()
    s.parts.clear()


def _drop_parts(s: State, *names: str) -> bool:
    for name in names:
        del s.parts[("db", "t")][name]
    return True


def _rename(s: State) -> Any:
    renamed = _part(s, NAME1)
    renamed.values = ["2024-01-01", "9"]
    return renamed


def _apply_rename(s: State) -> None:
    renamed = _rename(s)
    del s.parts[("db", "t")][NAME1]
    s.add_partition(renamed)


def _exchange(s: State) -> list[Any]:
    moved = []
    for name in (NAME1, NAME2):
        part = s.parts[("db", "t")].pop(name)
        part = copy.deepcopy(part)
        part.tableName, part.createTime = "dst", 1700000003
        s.parts[("db", "dst")][name] = part
        moved.append(part)
    return moved


def _check_created_table(env: Any) -> Callable[[State, State, Events], None]:
    def check(before: State, after: State, events: Events) -> None:
        (event,) = events
        assert event.table == after.table("db", "new") and event.table.createTime == 1700000000  # read back
        assert event.environment_context == env

    return check


def _check_altered_table(env: Any) -> Callable[[State, State, Events], None]:
    def check(before: State, after: State, events: Events) -> None:
        (event,) = events
        # The new table is the request's (the metastore changes nothing of a partitioned table's that already
        # has its transient_lastDdlTime, so it is not read back); the old one as stored before.
        assert event.old_table == _t(before) and event.new_table.parameters == _altered_table(before).parameters
        assert event.environment_context == env

    return check


def _check_dropped_table(delete_data: bool, env: Any) -> Callable[[State, State, Events], None]:
    def check(before: State, after: State, events: Events) -> None:
        (event,) = events
        assert event.table == _t(before) and event.delete_data is delete_data and event.environment_context == env

    return check


def _check_added(*names: str, env: Any = None) -> Callable[[State, State, Events], None]:
    def check(before: State, after: State, events: Events) -> None:
        (event,) = events
        assert event.table == _t(after)
        assert event.partitions == after.partitions("db", "t", list(names))  # as stored: createTime set
        assert all(p.createTime == 1700000001 for p in event.partitions)
        assert event.environment_context == env

    return check


def _check_altered(*names: str, env: Any = None) -> Callable[[State, State, Events], None]:
    def check(before: State, after: State, events: Events) -> None:
        assert [e.old_partition for e in events] == before.partitions("db", "t", list(names))
        assert [e.new_partition for e in events] == after.partitions("db", "t", list(names))
        assert all(e.new_partition.parameters["touched"] == "yes" and e.table == _t(before) for e in events)
        assert all(e.environment_context == env for e in events)

    return check


def _check_renamed(before: State, after: State, events: Events) -> None:
    (event,) = events
    assert event.old_partition == _part(before, NAME1)
    assert event.new_partition == _part(after, "dt=2024-01-01/hr=9")


def _check_dropped(*names: str, delete_data: bool, env: Any = None) -> Callable[[State, State, Events], None]:
    def check(before: State, after: State, events: Events) -> None:
        assert [e.partitions for e in events] == [[_part(before, n)] for n in names]
        assert all(e.delete_data is delete_data and e.environment_context == env for e in events)
        assert all(e.table == _t(before) for e in events)

    return check


def _check_exchanged(before: State, after: State, events: Events) -> None:
    added, *dropped = events
    assert added.table == after.table("db", "dst")
    assert added.partitions == after.partitions("db", "dst", [NAME1, NAME2])
    assert [e.partitions for e in dropped] == [[_part(before, NAME1)], [_part(before, NAME2)]]
    assert all(e.delete_data is True and e.table == _t(before) for e in dropped)


def _check_created_db(before: State, after: State, events: Events) -> None:
    (event,) = events
    # The request's database, with the location the metastore gave it (not what it stored besides).
    assert event.database.name == "newdb" and event.database.description == "new"
    assert event.database.locationUri == after.database("newdb").locationUri
    assert event.database.parameters != {"created": "yes"}


def _store_db(s: State, name: str = "newdb") -> None:
    s.databases[name] = make_database(name, description="new", parameters={"created": "yes"})


def _check_altered_db(before: State, after: State, events: Events) -> None:
    (event,) = events
    assert event.old_database == before.database("db") and event.new_database == after.database("db")
    assert event.new_database.parameters == {"team": "core"}


def _check_dropped_db(before: State, after: State, events: Events) -> None:
    *tables, database = events
    assert [e.table for e in tables] == [_t(before), before.table("db", "dst")]
    assert all(e.delete_data is False for e in tables)  # drop_database_core drops each with deleteData=false
    assert database.database == before.database("db")
    # The tables are dropped inside drop_database_core's transaction.
    assert [e.parameters[TRANSACTION_ACTIVE] for e in events] == ["true", "true", "false"]


def _check_insert(before: State, after: State, events: Events) -> None:
    (event,) = events
    assert (event.files, event.file_checksums) == (["f1"], ["c1"])
    assert event.partition_key_values == {"dt": "2024-01-01", "hr": "1"} and event.status is True


ADDED = [(EventType.ADD_PARTITION, "db.t")]
ALTERED = [(EventType.ALTER_PARTITION, "db.t")]
DROPPED = [(EventType.DROP_PARTITION, "db.t")]
EXCHANGED = [
    (EventType.ADD_PARTITION, "db.dst"),
    (EventType.DROP_PARTITION, "db.t"),
    (EventType.DROP_PARTITION, "db.t"),
]
DB_DROPPED = [(EventType.DROP_TABLE, "db.t"), (EventType.DROP_TABLE, "db.dst"), (EventType.DROP_DATABASE, "db")]

CASES: dict[str, Case] = {
    "create_database": Case(
        lambda s: T.create_database_args(database=make_database("newdb", description="new")),
        _store_db,
        [(EventType.CREATE_DATABASE, "newdb")],
        _check_created_db,
    ),
    "create_database_req": Case(
        lambda s: T.create_database_req_args(
            createDatabaseRequest=hms.CreateDatabaseRequest(databaseName="newdb", description="new")
        ),
        _store_db,
        [(EventType.CREATE_DATABASE, "newdb")],
        _check_created_db,
    ),
    "alter_database": Case(
        lambda s: T.alter_database_args(dbname="db", db=_altered_db(s)),
        lambda s: s.databases.__setitem__("db", _altered_db(s)),
        [(EventType.ALTER_DATABASE, "db")],
        _check_altered_db,
    ),
    "alter_database_req": Case(
        lambda s: T.alter_database_req_args(alterDbReq=hms.AlterDatabaseRequest(oldDbName="db", newDb=_altered_db(s))),
        lambda s: s.databases.__setitem__("db", _altered_db(s)),
        [(EventType.ALTER_DATABASE, "db")],
        _check_altered_db,
    ),
    "drop_database": Case(
        lambda s: T.drop_database_args(name="db", deleteData=True, cascade=True),
        _drop_db,
        DB_DROPPED,
        _check_dropped_db,
    ),
    "drop_database_req": Case(
        lambda s: T.drop_database_req_args(
            req=hms.DropDatabaseRequest(name="db", ignoreUnknownDb=False, deleteData=True, cascade=True)
        ),
        _drop_db,
        DB_DROPPED,
        _check_dropped_db,
    ),
    "create_table": Case(
        lambda s: T.create_table_args(tbl=_new_table()),
        lambda s: s.add_table(_new_table()) and None,
        [(EventType.CREATE_TABLE, "db.new")],
        _check_created_table(None),
    ),
    "create_table_with_environment_context": Case(
        lambda s: T.create_table_with_environment_context_args(tbl=_new_table(), environment_context=ENV),
        lambda s: s.add_table(_new_table()) and None,
        [(EventType.CREATE_TABLE, "db.new")],
        _check_created_table(ENV),
    ),
    "create_table_with_constraints": Case(
        lambda s: T.create_table_with_constraints_args(tbl=_new_table(), primaryKeys=[], foreignKeys=[]),
        lambda s: s.add_table(_new_table()) and None,
        [(EventType.CREATE_TABLE, "db.new")],
        _check_created_table(None),
    ),
    "create_table_req": Case(
        lambda s: T.create_table_req_args(request=hms.CreateTableRequest(table=_new_table(), envContext=ENV)),
        lambda s: s.add_table(_new_table()) and None,
        [(EventType.CREATE_TABLE, "db.new")],
        _check_created_table(ENV),
    ),
    "alter_table": Case(
        lambda s: T.alter_table_args(dbname="db", tbl_name="t", new_tbl=_altered_table(s)),
        lambda s: _store_table(s, _altered_table(s)),
        [(EventType.ALTER_TABLE, "db.t")],
        _check_altered_table(None),
    ),
    "alter_table_with_environment_context": Case(
        lambda s: T.alter_table_with_environment_context_args(
            dbname="db", tbl_name="t", new_tbl=_altered_table(s), environment_context=ENV
        ),
        lambda s: _store_table(s, _altered_table(s)),
        [(EventType.ALTER_TABLE, "db.t")],
        _check_altered_table(ENV),
    ),
    "alter_table_with_cascade": Case(
        lambda s: T.alter_table_with_cascade_args(dbname="db", tbl_name="t", new_tbl=_altered_table(s), cascade=True),
        lambda s: _store_table(s, _altered_table(s)),
        [(EventType.ALTER_TABLE, "db.t")],
        _check_altered_table(hms.EnvironmentContext(properties={"CASCADE": "true"})),
    ),
    "alter_table_req": Case(
        lambda s: T.alter_table_req_args(
            req=hms.AlterTableRequest(dbName="db", tableName="t", table=_altered_table(s), environmentContext=ENV)
        ),
        lambda s: _store_table(s, _altered_table(s)) or hms.AlterTableResponse(),
        [(EventType.ALTER_TABLE, "db.t")],
        _check_altered_table(ENV),
    ),
    "drop_table": Case(
        lambda s: T.drop_table_args(dbname="db", name="t", deleteData=True),
        lambda s: s.tbls.pop(("db", "t")) and None,
        [(EventType.DROP_TABLE, "db.t")],
        _check_dropped_table(True, None),
    ),
    "drop_table_with_environment_context": Case(
        lambda s: T.drop_table_with_environment_context_args(
            dbname="db", name="t", deleteData=False, environment_context=ENV
        ),
        lambda s: s.tbls.pop(("db", "t")) and None,
        [(EventType.DROP_TABLE, "db.t")],
        _check_dropped_table(False, ENV),
    ),
    "drop_table_req": Case(
        lambda s: T.drop_table_req_args(
            dropTableReq=hms.DropTableRequest(dbName="db", tableName="t", deleteData=True, envContext=ENV)
        ),
        lambda s: s.tbls.pop(("db", "t")) and None,
        [(EventType.DROP_TABLE, "db.t")],
        _check_dropped_table(True, ENV),
    ),
    "add_partition": Case(
        lambda s: T.add_partition_args(new_part=make_partition(_t(s), NEW)),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME),
    ),
    "add_partition_with_environment_context": Case(
        lambda s: T.add_partition_with_environment_context_args(
            new_part=make_partition(_t(s), NEW), environment_context=ENV
        ),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME, env=ENV),
    ),
    "add_partitions": Case(
        lambda s: T.add_partitions_args(new_parts=[make_partition(_t(s), NEW), make_partition(_t(s), ["x", "3"])]),
        lambda s: len(_store_parts(s, [make_partition(_t(s), NEW), make_partition(_t(s), ["x", "3"])])),
        ADDED,
        _check_added(NEW_NAME, "dt=x/hr=3"),
    ),
    "add_partitions_req": Case(
        lambda s: T.add_partitions_req_args(
            request=hms.AddPartitionsRequest(
                dbName="db", tblName="t", parts=[make_partition(_t(s), NEW)], ifNotExists=False, needResult=True
            )
        ),
        lambda s: hms.AddPartitionsResult(partitions=_store_parts(s, [make_partition(_t(s), NEW)])),
        ADDED,
        _check_added(NEW_NAME),
    ),
    "add_partitions_pspec": Case(
        lambda s: T.add_partitions_pspec_args(
            new_parts=[
                hms.PartitionSpec(
                    dbName="db",
                    tableName="t",
                    rootPath=_t(s).sd.location,
                    partitionList=hms.PartitionListComposingSpec(partitions=[make_partition(_t(s), NEW)]),
                )
            ]
        ),
        lambda s: len(_store_parts(s, [make_partition(_t(s), NEW)])),
        ADDED,
        _check_added(NEW_NAME),
    ),
    "append_partition": Case(
        lambda s: T.append_partition_args(db_name="db", tbl_name="t", part_vals=NEW),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME),
    ),
    "append_partition_with_environment_context": Case(
        lambda s: T.append_partition_with_environment_context_args(
            db_name="db", tbl_name="t", part_vals=NEW, environment_context=ENV
        ),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME, env=ENV),
    ),
    "append_partition_by_name": Case(
        lambda s: T.append_partition_by_name_args(db_name="db", tbl_name="t", part_name=NEW_NAME),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME),
    ),
    "append_partition_by_name_with_environment_context": Case(
        lambda s: T.append_partition_by_name_with_environment_context_args(
            db_name="db", tbl_name="t", part_name=NEW_NAME, environment_context=ENV
        ),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME, env=ENV),
    ),
    "append_partition_req": Case(
        lambda s: T.append_partition_req_args(
            appendPartitionsReq=hms.AppendPartitionsRequest(
                dbName="db", tableName="t", partVals=NEW, environmentContext=ENV
            )
        ),
        lambda s: s.add_partition(make_partition(_t(s), NEW)),
        ADDED,
        _check_added(NEW_NAME, env=ENV),
    ),
    "alter_partition": Case(
        lambda s: T.alter_partition_args(db_name="db", tbl_name="t", new_part=_touched(s, NAME1)[0]),
        lambda s: _store_parts(s, _touched(s, NAME1)) and None,
        ALTERED,
        _check_altered(NAME1),
    ),
    "alter_partition_with_environment_context": Case(
        lambda s: T.alter_partition_with_environment_context_args(
            db_name="db", tbl_name="t", new_part=_touched(s, NAME1)[0], environment_context=ENV
        ),
        lambda s: _store_parts(s, _touched(s, NAME1)) and None,
        ALTERED,
        _check_altered(NAME1, env=ENV),
    ),
    "alter_partitions": Case(
        lambda s: T.alter_partitions_args(db_name="db", tbl_name="t", new_parts=_touched(s, NAME1, NAME2)),
        lambda s: _store_parts(s, _touched(s, NAME1, NAME2)) and None,
        ALTERED * 2,
        _check_altered(NAME1, NAME2),
    ),
    "alter_partitions_with_environment_context": Case(
        lambda s: T.alter_partitions_with_environment_context_args(
            db_name="db", tbl_name="t", new_parts=_touched(s, NAME1, NAME2), environment_context=ENV
        ),
        lambda s: _store_parts(s, _touched(s, NAME1, NAME2)) and None,
        ALTERED * 2,
        _check_altered(NAME1, NAME2, env=ENV),
    ),
    "alter_partitions_req": Case(
        lambda s: T.alter_partitions_req_args(
            req=hms.AlterPartitionsRequest(
                dbName="db", tableName="t", partitions=_touched(s, NAME1, NAME2), environmentContext=ENV
            )
        ),
        lambda s: _store_parts(s, _touched(s, NAME1, NAME2)) and hms.AlterPartitionsResponse(),
        ALTERED * 2,
        _check_altered(NAME1, NAME2, env=ENV),
    ),
    "rename_partition": Case(
        lambda s: T.rename_partition_args(db_name="db", tbl_name="t", part_vals=P1, new_part=_rename(s)),
        _apply_rename,
        ALTERED,
        _check_renamed,
    ),
    "rename_partition_req": Case(
        lambda s: T.rename_partition_req_args(
            req=hms.RenamePartitionRequest(dbName="db", tableName="t", partVals=P1, newPart=_rename(s))
        ),
        lambda s: _apply_rename(s) or hms.RenamePartitionResponse(),
        ALTERED,
        _check_renamed,
    ),
    "drop_partition": Case(
        lambda s: T.drop_partition_args(db_name="db", tbl_name="t", part_vals=P1, deleteData=True),
        lambda s: _drop_parts(s, NAME1),
        DROPPED,
        _check_dropped(NAME1, delete_data=True),
    ),
    "drop_partition_with_environment_context": Case(
        lambda s: T.drop_partition_with_environment_context_args(
            db_name="db", tbl_name="t", part_vals=P1, deleteData=False, environment_context=ENV
        ),
        lambda s: _drop_parts(s, NAME1),
        DROPPED,
        _check_dropped(NAME1, delete_data=False, env=ENV),
    ),
    "drop_partition_req": Case(
        lambda s: T.drop_partition_req_args(
            dropPartitionReq=hms.DropPartitionRequest(
                dbName="db", tblName="t", partName=NAME1, deleteData=True, environmentContext=ENV
            )
        ),
        lambda s: _drop_parts(s, NAME1),
        DROPPED,
        _check_dropped(NAME1, delete_data=True, env=ENV),
    ),
    "drop_partition_by_name": Case(
        lambda s: T.drop_partition_by_name_args(db_name="db", tbl_name="t", part_name=NAME1, deleteData=True),
        lambda s: _drop_parts(s, NAME1),
        DROPPED,
        _check_dropped(NAME1, delete_data=True),
    ),
    "drop_partition_by_name_with_environment_context": Case(
        lambda s: T.drop_partition_by_name_with_environment_context_args(
            db_name="db", tbl_name="t", part_name=NAME1, deleteData=False, environment_context=ENV
        ),
        lambda s: _drop_parts(s, NAME1),
        DROPPED,
        _check_dropped(NAME1, delete_data=False, env=ENV),
    ),
    "drop_partitions_req": Case(
        lambda s: T.drop_partitions_req_args(
            req=hms.DropPartitionsRequest(
                dbName="db",
                tblName="t",
                parts=hms.RequestPartsSpec(names=[NAME1, NAME2]),
                deleteData=True,
                needResult=False,
                environmentContext=ENV,
            )
        ),
        lambda s: _drop_parts(s, NAME1, NAME2) and hms.DropPartitionsResult(),
        DROPPED * 2,
        _check_dropped(NAME1, NAME2, delete_data=True, env=ENV),
    ),
    "exchange_partition": Case(
        lambda s: T.exchange_partition_args(
            partitionSpecs={"dt": "2024-01-01"},
            source_db="db",
            source_table_name="t",
            dest_db="db",
            dest_table_name="dst",
        ),
        lambda s: _exchange(s)[0],
        EXCHANGED,
        _check_exchanged,
    ),
    "exchange_partitions": Case(
        lambda s: T.exchange_partitions_args(
            partitionSpecs={"dt": "2024-01-01"},
            source_db="db",
            source_table_name="t",
            dest_db="db",
            dest_table_name="dst",
        ),
        _exchange,
        EXCHANGED,
        _check_exchanged,
    ),
    "fire_listener_event": Case(
        lambda s: T.fire_listener_event_args(
            rqst=hms.FireEventRequest(
                successful=True,
                dbName="db",
                tableName="t",
                partitionVals=P1,
                data=hms.FireEventRequestData(
                    insertData=hms.InsertEventRequestData(replace=False, filesAdded=["f1"], filesAddedChecksum=["c1"])
                ),
            )
        ),
        lambda s: hms.FireEventResponse(),
        [(EventType.INSERT, "db.t")],
        _check_insert,
    ),
}


@pytest.mark.parametrize("method", sorted(MODELED_METHODS))
def test_every_modeled_method_publishes_its_events(method: str, full_state: State) -> None:
    case = CASES.get(method)
    assert case is not None, (
        f"{method} is modeled but has no case in CASES: add one (and an integration test if HMS 2.3 serves it)"
    )
    before = copy.deepcopy(full_state)
    capture, events = capture_for(full_state)
    run(capture, method, case.args(full_state), lambda: case.apply(full_state))
    assert [(e.event_type, e.qualified_name) for e in events] == case.expect
    # Hive 2.3 adds HIVE_METASTORE_TRANSACTION_ACTIVE to all but these (MetaStoreListenerNotifier's callers).
    plain = (EventType.ALTER_PARTITION, EventType.INSERT, EventType.ALTER_DATABASE)
    assert all(e.status is True and e.parameters["hive.version"] == "2.3.10" for e in events)
    assert all((TRANSACTION_ACTIVE in e.parameters) is (e.event_type not in plain) for e in events)
    case.check(before, full_state, events)


def test_the_cases_cover_exactly_the_modeled_methods() -> None:
    assert set(CASES) == set(MODELED_METHODS)
