"""URI parsing, argument rendering and error mapping of MetastoreClient (no server needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import hivewire as hw
from hivewire.errors import MetastoreServerError
from hivewire.metastore import parse_uri, parse_uris
from hivewire.metastore._client import _ERROR_TYPES
from hivewire.metastore._describe import _describe, _unencodable_field
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.hive_metastore import ThriftHiveMetastore
from hivewire_thrift.hive_metastore import ttypes as hms

IDL = Path(__file__).resolve().parents[2] / "idl" / "hive_metastore.thrift"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thrift://h1:9083", ("h1", 9083)),
        ("thrift://h1", ("h1", 9083)),
        ("h1:1234", ("h1", 1234)),
        ("  metastore.example.com:9084 ", ("metastore.example.com", 9084)),
        ("thrift://[::1]:9083", ("::1", 9083)),
    ],
)
def test_parse_uri(text: str, expected: tuple[str, int]) -> None:
    assert parse_uri(text) == expected


@pytest.mark.parametrize("bad", ["", "http://h1:9083", "thrift://h1:notaport", "thrift://:9083"])
def test_parse_uri_rejects_with_config_error(bad: str) -> None:
    with pytest.raises(hw.ConfigError) as exc:
        parse_uri(bad)
    assert "metastore uri" in str(exc.value)


def test_parse_uris_normalises_and_rejects_empty() -> None:
    assert parse_uris("thrift://a:1, b:2 ,,c") == ["thrift://a:1", "thrift://b:2", "thrift://c:9083"]
    assert parse_uris(["a:1"]) == ["thrift://a:1"]
    with pytest.raises(hw.ConfigError):
        parse_uris(" , ")


@pytest.mark.parametrize(
    ("given", "normalised", "parsed"),
    [
        ("thrift://[::1]:9083", "thrift://[::1]:9083", ("::1", 9083)),
        ("[fe80::1%eth0]:1234", "thrift://[fe80::1%eth0]:1234", ("fe80::1%eth0", 1234)),
        ("thrift://[2001:db8::7]", "thrift://[2001:db8::7]:9083", ("2001:db8::7", 9083)),
        ("thrift://10.0.0.1:9083", "thrift://10.0.0.1:9083", ("10.0.0.1", 9083)),
    ],
)
def test_parse_uris_keeps_ipv6_brackets_so_the_uri_reads_back(
    given: str, normalised: str, parsed: tuple[str, int]
) -> None:
    assert parse_uris(given) == [normalised]
    assert parse_uris(parse_uris(given)) == [normalised]  # a round trip changes nothing
    assert parse_uri(normalised) == parsed


def test_client_validates_options_before_connecting() -> None:
    with pytest.raises(hw.ConfigError, match="transport"):
        hw.MetastoreClient("h:1", transport="http")  # type: ignore[arg-type]
    with pytest.raises(hw.ConfigError, match="protocol"):
        hw.MetastoreClient("h:1", protocol="json")  # type: ignore[arg-type]
    with pytest.raises(hw.ConfigError, match="ugi"):
        hw.MetastoreClient("h:1", ugi=":staff")
    client = hw.MetastoreClient("h:1")
    assert not client.is_open and client.uri is None


def test_describe_names_objects_briefly() -> None:
    table = make_table("sales", "orders")
    assert _describe(("sales", "orders", True)) == "sales, orders"
    assert _describe((table,)) == "sales.orders"
    assert _describe((["a", "b", "c", "d"],)) == "[4 items]"
    assert _describe(("x" * 200,)).endswith("...")


def test_describe_names_the_objects_inside_requests() -> None:
    table = make_table("sales", "orders", partition_keys={"dt": "string"})
    part = make_partition(table, ["2024-01-01"])
    cases = [
        (hms.GetTablesRequest(dbName="sales", tblNames=["orders", "items"]), "sales: orders, items"),
        (hms.GetTablesRequest(dbName="sales", tblNames=[f"t{i}" for i in range(9)]), "sales: [9 items]"),
        (hms.GetTableRequest(dbName="sales", tblName="orders"), "sales.orders"),
        (hms.CreateTableRequest(table=table), "sales.orders"),
        (hms.AlterTableRequest(dbName="sales", tableName="orders", table=table), "sales.orders"),
        (hms.DropTableRequest(dbName="sales", tableName="orders"), "sales.orders"),
        (hms.TruncateTableRequest(dbName="sales", tableName="orders"), "sales.orders"),
        (hms.CreateDatabaseRequest(databaseName="sales"), "sales"),
        (hms.GetDatabaseRequest(name="sales"), "sales"),
        (hms.DropDatabaseRequest(name="sales", ignoreUnknownDb=False, deleteData=True, cascade=True), "sales"),
        (hms.AlterDatabaseRequest(oldDbName="sales", newDb=make_database("sales")), "sales"),
        (
            hms.GetPartitionsByNamesRequest(db_name="sales", tbl_name="orders", names=["dt=1", "dt=2"]),
            "sales.orders partition dt=1, dt=2",
        ),
        (
            hms.AddPartitionsRequest(dbName="sales", tblName="orders", parts=[part] * 1000, ifNotExists=False),
            "sales.orders partition [1000 partitions]",
        ),
        (
            hms.DropPartitionsRequest(dbName="sales", tblName="orders", parts=hms.RequestPartsSpec(names=["dt=1"])),
            "sales.orders partition dt=1",
        ),
        (hms.DropPartitionRequest(dbName="sales", tblName="orders", partName="dt=1"), "sales.orders partition dt=1"),
        (
            hms.AppendPartitionsRequest(dbName="sales", tableName="orders", partVals=["2024", "01"]),
            "sales.orders partition 2024/01",
        ),
        (part, "sales.orders partition 2024-01-01"),
        (make_database("sales"), "sales"),
    ]
    for request, expected in cases:
        assert _describe((request,)) == expected, request
    assert _describe(([part, part],)) == "sales.orders partition 2024-01-01, sales.orders partition 2024-01-01"
    assert _describe((hms.EnvironmentContext(),)) == "EnvironmentContext"


def test_every_exception_the_idl_declares_maps_to_a_server_error() -> None:
    declared = re.findall(r"^exception (\w+)", IDL.read_text(), flags=re.MULTILINE)
    assert "MetaException" in declared and len(declared) >= 15
    mapped = {cls.__name__: ours for cls, ours in _ERROR_TYPES.items()}
    assert sorted(mapped) == sorted(declared)
    assert all(issubclass(ours, MetastoreServerError) for ours in mapped.values())
    assert mapped["MetaException"] is MetastoreServerError
    assert mapped["ConfigValSecurityException"] is MetastoreServerError
    assert mapped["InvalidInputException"] is hw.InvalidObjectError
    assert mapped["UnknownDBException"] is hw.NoSuchObjectError
    assert mapped["InvalidOperationException"] is hw.InvalidOperationError
    assert mapped["AlreadyExistsException"] is hw.AlreadyExistsError


@pytest.mark.parametrize(
    ("table", "where"),
    [
        (hms.Table(partitionKeys=[None]), "tbl.partitionKeys[0] is None where a FieldSchema belongs"),
        (hms.Table(partitionKeys="dt"), "tbl.partitionKeys is a str where a list belongs"),
        (hms.Table(tableName=5), "tbl.tableName is a int where a str belongs"),
        (hms.Table(parameters={"a": 1}), "tbl.parameters['a'] is a int where a str belongs"),
        (hms.Table(createTime=1 << 40), "tbl.createTime = 1099511627776 does not fit the IDL's i32"),
        (
            hms.Table(sd=hms.StorageDescriptor(cols=[hms.FieldSchema(name="\ud800")])),
            "tbl.sd.cols[0].name is not valid UTF-8 text",
        ),
    ],
)
def test_an_unencodable_request_names_the_field(table: hms.Table, where: str) -> None:
    assert _unencodable_field(ThriftHiveMetastore.create_table_args(tbl=table), "") == where


def test_get_table_objects_takes_names_and_get_tables_a_pattern() -> None:
    client = hw.MetastoreClient("h:1")  # both refuse before connecting
    with pytest.raises(TypeError, match=r"list of table names, not the string 'orders'.*\['orders'\]"):
        client.get_table_objects("sales", "orders")
    with pytest.raises(TypeError, match="get_table_objects"):
        client.get_tables("sales", ["orders"])  # type: ignore[arg-type]
    assert not client.is_open


def test_generated_client_names_are_exposed_and_private_ones_are_not() -> None:
    client = hw.MetastoreClient("h:1")
    assert callable(client.get_all_databases)
    with pytest.raises(AttributeError):
        client.no_such_method  # noqa: B018
    with pytest.raises(AttributeError):
        client._oprot  # noqa: B018
