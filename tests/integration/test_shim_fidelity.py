"""Issue 19: the shim's events equal the metastore's own, field by field and in order.

The shim stands in front of ``recorded_metastore``, whose Java listener records what the metastore itself
fires (``tests/oracle.py``); each test makes calls through the shim and compares both sides with
:func:`fidelity.compare`. The shim here publishes failures too (``publish_failures``), so the status=false
events are compared as well.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fidelity import Captured, compare
from oracle import RecordedMetastore
from thrift.protocol import TBinaryProtocol
from thrift.protocol import fastbinary as _fastbinary
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

import hivewire as hw
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import Shim
from hivewire_shim.methods import _FireArgs2, _FireData2, _FireRequest2, _InsertData2
from hivewire_shim.wire import MessageReader
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T
from hivewire_thrift.hive_metastore import ttypes as hms

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def captured() -> Captured:
    return Captured()


@pytest.fixture(scope="module")
def shim(recorded_metastore: RecordedMetastore, captured: Captured) -> Iterator[Shim]:
    with Shim(recorded_metastore.uri, sinks=[captured], publish_failures=True) as server:
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
def side(shim: Shim, captured: Captured, recorded_metastore: RecordedMetastore, unique: str) -> Iterator[Side]:
    s = Side(shim, captured, recorded_metastore)
    yield s
    s.client.close()


def _location(oracle: RecordedMetastore, *parts: str) -> str:
    return (oracle.server.warehouse.joinpath(*parts)).as_uri()


def test_a_database_and_a_minimal_table_with_privileges(
    side: Side, recorded_metastore: RecordedMetastore, unique: str
) -> None:
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
    assert side.compare() == 2
    side.client.drop_database(unique, True, True)
    assert side.compare() == 1


def test_partitions_added_if_not_exists_altered_and_dropped(
    side: Side, recorded_metastore: RecordedMetastore, unique: str
) -> None:
    side.client.create_database(make_database(unique, location=_location(recorded_metastore, f"{unique}.db")))
    table = make_table(
        unique,
        "sales",
        partition_keys={"dt": "string", "region": "string"},
        location=_location(recorded_metastore, unique, "sales"),
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
    assert side.compare() == 4
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


def test_a_cascading_drop_database_on_the_server(
    side: Side, recorded_metastore: RecordedMetastore, unique: str
) -> None:
    side.client.create_database(make_database(unique, location=_location(recorded_metastore, f"{unique}.db")))
    for name in ("a", "b"):
        side.client.create_table(make_table(unique, name, location=_location(recorded_metastore, unique, name)))
    assert side.compare() == 3
    # A raw drop_database with cascade: the metastore drops the tables inside its transaction.
    side.client.drop_database(unique, True, True)
    assert side.compare() == 3


def test_an_insert_event(side: Side, shim: Shim, recorded_metastore: RecordedMetastore, unique: str) -> None:
    side.client.create_database(make_database(unique, location=_location(recorded_metastore, f"{unique}.db")))
    table = make_table(
        unique, "t", partition_keys={"dt": "string"}, location=_location(recorded_metastore, unique, "t")
    )
    side.client.create_table(table)
    side.client.add_partition(make_partition(table, ["1"]))
    assert side.compare() == 3
    # As a Hive 2 client fires it; names as the client sent them (the metastore does not lowercase them).
    args = _FireArgs2(
        rqst=_FireRequest2(
            successful=True,
            dbName=unique.upper(),
            tableName="T",
            partitionVals=["1"],
            data=_FireData2(insertData=_InsertData2(filesAdded=["file:/x/1"])),
        )
    )
    buf = TTransport.TMemoryBuffer()
    TBinaryProtocol.TBinaryProtocol(buf).writeMessageBegin("fire_listener_event", TMessageType.CALL, 5)
    request = bytes(buf.getvalue()) + _fastbinary.encode_binary(args, [_FireArgs2, _FireArgs2.thrift_spec])
    host, port = shim.uri.removeprefix("thrift://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        reader = MessageReader(sock, side="shim")
        assert reader.read_header().type == TMessageType.REPLY
        assert reader.decode_struct(T.fire_listener_event_result).success is not None
    assert side.compare() == 1
    side.client.drop_database(unique, True, True)
    side.compare()


def test_pyspark_ddl_and_dml(side: Side, recorded_metastore: RecordedMetastore, unique: str, tmp_path: Path) -> None:
    """Every event of PySpark 4's DDL and DML through the shim equals the metastore's own, in order."""
    script = Path(__file__).with_name("spark_statements.py")
    run = subprocess.run(
        [sys.executable, str(script), side.shim_uri, str(tmp_path / "warehouse"), unique.lower()],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    assert side.compare() >= 25
