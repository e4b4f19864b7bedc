"""Issues 19 and 29: the shim's events equal the metastore's own, field by field and in order, on Hive 2.3,
3.1 and 4.0.1 (test_shim_fidelity_hive4.py runs Hive 4's own workload too).

The shim stands in front of a recorded metastore of each release (``oracle``: ``recorded_metastore`` for
2.3, ``recorded_hive3_metastore`` for 3.1, ``recorded_hive4_metastore`` for 4.0.1; the test id names the
release), whose Java listener records what the metastore itself fires (``tests/oracle.py``); each test makes
calls through the shim and compares both sides with :func:`fidelity.compare`, with no tolerance. The shim
here publishes failures too (``publish_failures``), so the status=false events are compared as well; a
second shim without it shows the one known gap of 2.3: ``fire_listener_event`` with ``successful=false`` is
a call that succeeds, the metastore fires a status=false INSERT for it, and the shim publishes that only
with ``--publish-failures``. Where releases fire differently (3.1+ fills an unset catalog and names an
insert by its stored table; 4.x fills in new objects, refuses an existing table before firing, and fires one
DROP_PARTITION per drop call) the shim does as the upstream's release does (``hivewire_shim/release.py``).

PySpark's statements run on 2.3 and 3.1 with Spark's built-in Hive client, which is 2.3's: against a 3.1
metastore that is what a user of a stock Spark runs (``spark.sql.hive.metastore.version`` left at its
default). Against 4.0.1 that client cannot work at all (it reads tables with ``get_table``, which Hive 4.0.1
removed), so there Spark runs its own client for 4.0 (``spark.sql.hive.metastore.version=4.0.1``, the
released Hive jars of the JVM harness's ``hive4-spark-client``). On every release the workload runs through
the shim and directly, and both give the same rows; on 4.0.1 Spark refuses its two TRUNCATEs, both ways
(Hive 4 makes the managed tables external).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fidelity import RECORDED, REFUSED_ON_HIVE4, Captured, compare, spark_workload
from oracle import RecordedMetastore
from thrift.protocol import TBinaryProtocol
from thrift.protocol import fastbinary as _fastbinary
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

import hivewire as hw
from hivewire.tools._hive_metastore import HiveMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import Shim
from hivewire_shim.methods import _FireArgs2, _FireData2, _FireRequest2, _InsertData2
from hivewire_shim.wire import MessageReader
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T
from hivewire_thrift.hive_metastore import ttypes as hms

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=list(RECORDED))
def oracle(request: pytest.FixtureRequest) -> RecordedMetastore:
    """The recorded metastore of one release in turn (the test id names it)."""
    recorded: RecordedMetastore = request.getfixturevalue(RECORDED[request.param])
    return recorded


@pytest.fixture(scope="module")
def captured(oracle: RecordedMetastore) -> Captured:
    return Captured()


@pytest.fixture(scope="module")
def shim(oracle: RecordedMetastore, captured: Captured) -> Iterator[Shim]:
    with Shim(oracle.uri, sinks=[captured], publish_failures=True) as server:
        yield server


class Side:
    """A client through the shim, and the marks both sides' event lists are compared from."""

    def __init__(self, shim: Shim, captured: Captured, oracle: RecordedMetastore) -> None:
        self.client = hw.MetastoreClient(shim.uri, timeout=120)
        self.shim_uri = shim.uri
        self.captured, self.oracle = captured, oracle
        self.mark()

    def mark(self) -> None:
        self.since, self.oracle_mark = len(self.captured.events), self.oracle.mark()

    def compare(self) -> int:
        count = compare(self.captured, self.since, self.oracle, self.oracle_mark)
        self.mark()
        return count


@pytest.fixture
def side(shim: Shim, captured: Captured, oracle: RecordedMetastore, unique: str) -> Iterator[Side]:
    s = Side(shim, captured, oracle)
    yield s
    s.client.close()


def _location(oracle: RecordedMetastore, *parts: str) -> str:
    # Hive 4 refuses an external table inside the managed warehouse (and makes a managed one external).
    server = oracle.server
    root = server.external_warehouse if isinstance(server, HiveMetastore) else server.warehouse
    return (root.joinpath(*parts)).as_uri()


def release(oracle: RecordedMetastore) -> str:
    return oracle.server.release if isinstance(oracle.server, HiveMetastore) else "2.3"


def test_a_database_and_a_minimal_table_with_privileges(side: Side, oracle: RecordedMetastore, unique: str) -> None:
    # ownerType unset: the metastore stores USER, its event has none.
    side.client.create_database(hms.Database(name=unique, description="fidelity"))
    # Only names, columns, formats and a serde; privileges as Spark sends them with every CREATE TABLE.
    minimal = hms.Table(
        dbName=unique,
        tableName="minimal",
        sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema("id", "int")],
            inputFormat="org.apache.hadoop.mapred.TextInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            serdeInfo=hms.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
        ),
        privileges=hms.PrincipalPrivilegeSet(
            userPrivileges={
                "bob": [hms.PrivilegeGrantInfo("ALL", 0, "bob", hms.PrincipalType.USER, True)],
            }
        ),
    )
    side.client.create_table(minimal)
    assert side.compare() == 2
    with pytest.raises(hw.MetastoreError):
        side.client.create_database(hms.Database(name=unique))  # exists: the metastore fires nothing
    with pytest.raises(hw.MetastoreError):
        side.client.create_table(minimal)  # exists: a status=false CREATE_TABLE with the request's table
    side.client.drop_table(unique, "minimal", False)
    # Hive 4 refuses an existing table before it fires anything: its DROP_TABLE alone.
    assert side.compare() == (1 if release(oracle) == "4" else 2)
    side.client.drop_database(unique, True, True)
    assert side.compare() == 1


def test_an_unset_catalog_is_the_metastores_default(side: Side, oracle: RecordedMetastore, unique: str) -> None:
    """On 3.1+ the metastore fires its default catalog where the client left it unset, and so does the shim
    (2.3 has no catalogs: both unset)."""
    side.client.create_database(make_database(unique, location=_location(oracle, f"{unique}.db")))
    side.client.create_table(make_table(unique, "t", location=_location(oracle, unique, "t")))
    assert side.compare() == 2
    ours, theirs = side.captured.events[-1], oracle.events()[-1]
    assert isinstance(ours, hw.CreateTableEvent) and isinstance(theirs["table"], hms.Table)
    expected = None if release(oracle) == "2.3" else "hive"
    assert (ours.table.catName, theirs["table"].catName) == (expected, expected)
    side.client.drop_database(unique, True, True)
    side.compare()


def test_partitions_added_if_not_exists_altered_and_dropped(side: Side, oracle: RecordedMetastore, unique: str) -> None:
    side.client.create_database(make_database(unique, location=_location(oracle, f"{unique}.db")))
    table = make_table(
        unique,
        "sales",
        partition_keys={"dt": "string", "region": "string"},
        location=_location(oracle, unique, "sales"),
    )
    side.client.create_table(table)
    p1, p2, p3 = (make_partition(table, [f"2024-01-0{i}", "eu"]) for i in (1, 2, 3))
    side.client.add_partition(p1)
    side.client.add_partitions([p2])
    assert side.compare() == 4
    # One new and one existing; then all existing (a status=true event with no partitions, as HMS fires it).
    for parts in ([p1, p3], [p1, p2]):
        side.client.add_partitions_req(
            hms.AddPartitionsRequest(unique, "sales", parts, ifNotExists=True, needResult=False)
        )
    assert side.compare() == 4
    with pytest.raises(hw.MetastoreError):
        side.client.add_partitions([p1])  # without ifNotExists: one status=false event with all of them
    assert side.compare() == 1
    stored = side.client.get_partition(unique, "sales", p1.values)
    stored.parameters = {**(stored.parameters or {}), "note": "x"}
    side.client.alter_partition(unique, "sales", stored)
    side.client.drop_partition(unique, "sales", p3.values, True)
    side.client.drop_partitions_req(
        hms.DropPartitionsRequest(
            unique,
            "sales",
            hms.RequestPartsSpec(names=["dt=2024-01-01/region=eu", "dt=2024-01-02/region=eu"]),
            deleteData=False,
        )
    )
    assert side.compare() == (3 if release(oracle) == "4" else 4)  # Hive 4: one DROP_PARTITION per drop call
    changed = side.client.get_table(unique, "sales")
    changed.parameters = {**(changed.parameters or {}), "owner_team": "core"}
    side.client.alter_table_with_environment_context(
        unique, "sales", changed, hms.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})
    )
    renamed = side.client.get_table(unique, "sales")
    renamed.tableName = "sales_v2"
    side.client.alter_table(unique, "sales", renamed)
    side.client.drop_table(unique, "sales_v2", True)
    assert side.compare() == 3
    side.client.drop_database(unique, True, True)
    assert side.compare() == 1


def test_a_cascading_drop_database_on_the_server(side: Side, oracle: RecordedMetastore, unique: str) -> None:
    side.client.create_database(make_database(unique, location=_location(oracle, f"{unique}.db")))
    for name in ("a", "b"):
        side.client.create_table(make_table(unique, name, location=_location(oracle, unique, name)))
    assert side.compare() == 3
    # A raw drop_database with cascade: the metastore drops the tables inside its transaction.
    side.client.drop_database(unique, True, True)
    assert side.compare() == 3


def fire_insert(shim_uri: str, oracle: RecordedMetastore, db: str, table: str, *, successful: bool = True) -> None:
    """fire_listener_event with one insert through the shim at ``shim_uri``, as a client of the release fires
    it: Hive 2.x's InsertEventRequestData (raw bytes: the generated types are 3.x's) on 2.3, 3.x's after."""
    if release(oracle) != "2.3":
        request = hms.FireEventRequest(
            successful=successful,
            data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(filesAdded=["file:/x/1"])),
            dbName=db,
            tableName=table,
            partitionVals=["1"],
        )
        with hw.MetastoreClient(shim_uri, timeout=120) as client:
            assert isinstance(client.fire_listener_event(request), hms.FireEventResponse)
        return
    args = _FireArgs2(
        rqst=_FireRequest2(
            successful=successful,
            dbName=db,
            tableName=table,
            partitionVals=["1"],
            data=_FireData2(insertData=_InsertData2(filesAdded=["file:/x/1"])),
        )
    )
    buf = TTransport.TMemoryBuffer()
    TBinaryProtocol.TBinaryProtocol(buf).writeMessageBegin("fire_listener_event", TMessageType.CALL, 5)
    request2 = bytes(buf.getvalue()) + _fastbinary.encode_binary(args, [_FireArgs2, _FireArgs2.thrift_spec])
    host, port = shim_uri.removeprefix("thrift://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request2)
        reader = MessageReader(sock, side="shim")
        assert reader.read_header().type == TMessageType.REPLY
        assert reader.decode_struct(T.fire_listener_event_result).success is not None


def test_an_insert_event(side: Side, shim: Shim, oracle: RecordedMetastore, unique: str) -> None:
    side.client.create_database(make_database(unique, location=_location(oracle, f"{unique}.db")))
    table = make_table(unique, "t", partition_keys={"dt": "string"}, location=_location(oracle, unique, "t"))
    side.client.create_table(table)
    side.client.add_partition(make_partition(table, ["1"]))
    assert side.compare() == 3
    fire_insert(shim.uri, oracle, unique, "t")
    assert side.compare() == 1
    # Names in upper case: 2.3 fires them as sent, 3.1+ as its table object has them (lower case); the shim
    # does the same.
    mark = oracle.mark()
    fire_insert(shim.uri, oracle, unique.upper(), "T")
    assert side.compare() == 1
    ours = side.captured.events[-1]
    (theirs,) = oracle.events(mark)
    assert isinstance(ours, hw.InsertEvent)
    expected = (unique.upper(), "T") if release(oracle) == "2.3" else (unique, "t")
    assert (ours.db_name, ours.table_name) == (theirs["databaseName"], theirs["tableName"]) == expected
    side.client.drop_database(unique, True, True)
    side.compare()


def test_a_failed_insert_is_published_by_default_as_apiary_publishes_it(
    side: Side, shim: Shim, oracle: RecordedMetastore, unique: str
) -> None:
    """The gap known since 2.3: fire_listener_event(successful=false) succeeds, the metastore fires INSERT
    status=false, and Apiary 8.2.2 publishes it (tests/peers/test_dronefly_side_by_side.py): so does the shim,
    without --publish-failures."""
    side.client.create_database(make_database(unique, location=_location(oracle, f"{unique}.db")))
    table = make_table(unique, "t", partition_keys={"dt": "string"}, location=_location(oracle, unique, "t"))
    side.client.create_table(table)
    side.client.add_partition(make_partition(table, ["1"]))
    assert side.compare() == 3
    fire_insert(shim.uri, oracle, unique, "t", successful=False)
    assert side.captured.events[-1].status is False
    assert side.compare() == 1  # equal to the metastore's status=false INSERT
    plain_events = Captured()
    with Shim(oracle.uri, sinks=[plain_events]) as plain:  # the default: no --publish-failures
        mark = oracle.mark()
        fire_insert(plain.uri, oracle, unique, "t", successful=False)
        fired = oracle.events(mark)
        assert [(e.event_type, e.status) for e in fired] == [("INSERT", False)]
        compare(plain_events, 0, oracle, mark)
        assert [(e.event_type.name, e.status) for e in plain_events.events] == [("INSERT", False)]
    side.mark()
    side.client.drop_database(unique, True, True)
    side.compare()


def test_pyspark_ddl_and_dml(side: Side, oracle: RecordedMetastore, unique: str, tmp_path: Path) -> None:
    """Every event of PySpark 4's DDL and DML through the shim equals the metastore's own, in order, and every
    statement gives the same rows through the shim as directly (Spark's Hive client of the release:
    ``fidelity.SPARK_HIVE_CLIENT``)."""
    db = unique.lower()
    through_shim = spark_workload(side.shim_uri, tmp_path / "shim", db, oracle)
    assert side.compare() >= 25
    direct = spark_workload(oracle.uri, tmp_path / "direct", db, oracle)
    assert through_shim == direct
    refused = tuple(statement for statement, rows in direct if rows and rows[0][0] == "ERROR")
    assert refused == (REFUSED_ON_HIVE4 if release(oracle) == "4" else ())
    rows = dict(direct)
    assert rows["SHOW PARTITIONS DB.sales"] == [["dt=2024-01-01"], ["dt=2024-01-02"], ["dt=2024-01-03"]]
    assert [row[0] for row in rows["SELECT * FROM DB.ctas ORDER BY id"]] == ["1", "2", "3"]
