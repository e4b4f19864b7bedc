"""Every MetastoreClient call docs/metastore.md shows, against real Hive Metastores 2.3, 3.1 and 4.x.

2.3 is pyspark's (the suite's ``metastore``); 3.1.3 and 4.0.1 are the standalone releases from Maven Central
(``hive3_metastore``, ``hive4_metastore``; tools/_hive_metastore.py). Each test runs once per release (the
test id names it). Hive 4.0.1 removed ``get_table``: the portable call must use the request form there.
Catalogs exist from 3.0: the ``catalog=`` argument reaches Hive's default catalog ``hive`` through the
request forms' ``catName`` and, for calls without that field, the ``@catalog#db`` name Hive's own client
sends. (The IDL has no ``create_catalog``, so no second catalog is made here.)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import hivewire as hw
from hivewire.metastore import MetastoreClientPool
from hivewire.tools._hive_metastore import HiveMetastore
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.fb303.ttypes import fb_status
from hivewire_thrift.hive_metastore import ttypes as hms


def release(server: LocalMetastore) -> str:
    return f"{server.release}.x" if isinstance(server, HiveMetastore) else "2.3"


@pytest.fixture
def client(any_release_metastore: LocalMetastore) -> Iterator[hw.MetastoreClient]:
    with hw.MetastoreClient(any_release_metastore.uri, timeout=300) as c:
        yield c


@pytest.fixture
def db(client: hw.MetastoreClient, unique: str, any_release_metastore: LocalMetastore) -> Iterator[str]:
    location = (any_release_metastore.warehouse / f"{unique}.db").as_uri()
    client.create_database(make_database(unique, location=location))
    yield unique
    client.drop_database(unique, True, True)


def orders_table(server: LocalMetastore, db: str, name: str = "orders") -> hms.Table:
    # External on every release, outside the managed warehouse (Hive 4 refuses one inside it). Hive 4 turns a
    # managed table without transactional properties into an external one for clients that declare no
    # capabilities (its MetastoreDefaultTransformer).
    return make_table(
        db,
        name,
        columns={"id": "bigint", "amount": "double"},
        partition_keys={"dt": "string"},
        location=f"file:{server.workdir / 'external' / db / name}",
        table_type="EXTERNAL_TABLE",
    )


def test_the_calls_of_the_docs_example(
    client: hw.MetastoreClient, db: str, any_release_metastore: LocalMetastore
) -> None:
    client.create_table(orders_table(any_release_metastore, db))
    client.create_table(orders_table(any_release_metastore, db, "orders_eu"))
    client.create_table(orders_table(any_release_metastore, db, "items"))

    table = client.get_table(db, "orders")
    assert (table.dbName, table.tableName, table.tableType) == (db, "orders", "EXTERNAL_TABLE")
    assert [c.name for c in table.partitionKeys] == ["dt"]
    assert sorted(client.get_tables(db, "orders_*")) == ["orders_eu"]
    assert sorted(client.get_tables(db, "orders*|items")) == ["items", "orders", "orders_eu"]
    objects = client.get_table_objects(db, ["orders", "items", "missing"])
    assert sorted(t.tableName for t in objects) == ["items", "orders"]

    parts = [make_partition(table, [f"2024-01-0{d}"]) for d in range(1, 5)]
    client.add_partitions_req(
        hms.AddPartitionsRequest(dbName=db, tblName="orders", parts=parts, ifNotExists=False, needResult=False)
    )
    names = client.get_partition_names(db, "orders")
    assert sorted(names) == [f"dt=2024-01-0{d}" for d in range(1, 5)]

    table.parameters["retention.days"] = "30"
    client.alter_table(db, "orders", table)
    assert client.get_table(db, "orders").parameters["retention.days"] == "30"
    assert len(client.get_partition_names(db, "orders")) == 4  # altering the table keeps its partitions

    assert db in client.get_all_databases()
    assert client.getStatus() == fb_status.ALIVE
    assert db in client.raw.get_all_databases()  # the generated client itself, on the same connection


def test_portable_calls_learn_what_each_release_lacks(
    client: hw.MetastoreClient, db: str, any_release_metastore: LocalMetastore
) -> None:
    table = orders_table(any_release_metastore, db)
    client.create_table(table)
    client.add_partitions([make_partition(table, ["2024-02-01"]), make_partition(table, ["2024-02-02"])])
    by_name = client.get_partitions_by_names(db, "orders", ["dt=2024-02-02", "dt=1999-01-01"])
    assert [p.values for p in by_name] == [["2024-02-02"]]
    stored = client.get_table(db, "orders")
    stored.parameters["checked"] = "yes"
    client.alter_table(db, "orders", stored)
    assert client.get_table_objects(db, ["orders"])[0].parameters["checked"] == "yes"

    # 2.3 and 3.1 lack the request forms Hive 4 added; 4.x has every request form the client prefers.
    expected = {
        "2.3": {"alter_table_req", "get_partitions_by_names_req"},
        "3.x": {"alter_table_req", "get_partitions_by_names_req"},
        "4.x": set(),
    }[release(any_release_metastore)]
    assert client.unsupported_methods == expected
    if release(any_release_metastore) == "4.x":
        # Hive 4.0.1 removed get_table: only the request form the portable call uses is left.
        with pytest.raises(hw.UnsupportedMethodError, match="get_table"):
            client.call("get_table", db, "orders")
    else:
        assert client.call("get_table", db, "orders").tableName == "orders"


def test_partition_reads_and_max_parts(
    client: hw.MetastoreClient, db: str, any_release_metastore: LocalMetastore
) -> None:
    client.create_table(orders_table(any_release_metastore, db))
    table = client.get_table(db, "orders")
    client.add_partitions([make_partition(table, [f"2024-03-{d:02d}"]) for d in range(1, 11)])
    assert len(client.get_partitions(db, "orders")) == 10
    assert len(client.get_partitions(db, "orders", 3)) == 3
    assert len(client.get_partition_names(db, "orders", 4)) == 4
    found = client.get_partitions_by_filter(db, "orders", 'dt >= "2024-03-08"')
    assert sorted(p.values[0] for p in found) == ["2024-03-08", "2024-03-09", "2024-03-10"]
    with pytest.raises(hw.ConfigError, match="max_parts"):  # an i16 on the wire: refused before sending
        client.get_partitions(db, "orders", 40_000)
    dropped = client.drop_partitions_req(
        hms.DropPartitionsRequest(
            dbName=db, tblName="orders", parts=hms.RequestPartsSpec(names=["dt=2024-03-01"]), needResult=True
        )
    )
    assert [p.values for p in dropped.partitions] == [["2024-03-01"]]
    assert len(client.get_partition_names(db, "orders")) == 9


def test_errors_name_the_metastore_the_method_and_the_object(
    client: hw.MetastoreClient, db: str, any_release_metastore: LocalMetastore
) -> None:
    with pytest.raises(hw.NoSuchObjectError) as missing:
        client.get_table(db, "absent")
    assert client.uri in str(missing.value) and f"{db}.absent" in str(missing.value)
    with pytest.raises(hw.AlreadyExistsError) as exists:
        client.create_database(make_database(db))
    assert db in str(exists.value)
    with pytest.raises(hw.MetastoreServerError) as meta:
        client.getMetaConf("no.such.key")
    assert "MetaException" in str(meta.value) and meta.value.method == "getMetaConf"
    assert db in client.get_all_databases()  # a declared server error keeps the connection


def test_ugi_is_sent_on_connect(any_release_metastore: LocalMetastore, unique: str) -> None:
    with hw.MetastoreClient(any_release_metastore.uri, ugi="alice:staff") as c:
        c.get_databases(unique)
    audit = [line for line in any_release_metastore.log_tail(600).splitlines() if f"get_databases: {unique}" in line]
    assert audit and all("ugi=alice" in line for line in audit if "ugi=" in line), audit


def test_catalogs(client: hw.MetastoreClient, db: str, any_release_metastore: LocalMetastore) -> None:
    if release(any_release_metastore) == "2.3":
        with pytest.raises(hw.UnsupportedMethodError, match="get_catalogs"):  # catalogs came with 3.0
            client.get_catalogs()
        return
    assert "hive" in client.get_catalogs().names
    table = orders_table(any_release_metastore, db)
    client.create_table(table)
    client.add_partitions([make_partition(table, ["2024-04-01"])])
    assert client.get_table(db, "orders", catalog="hive").catName == "hive"
    assert client.get_tables(db, "ord*", catalog="hive") == ["orders"]
    assert [t.tableName for t in client.get_table_objects(db, ["orders"], catalog="hive")] == ["orders"]
    assert client.get_partition_names(db, "orders", catalog="hive") == ["dt=2024-04-01"]
    assert len(client.get_partitions(db, "orders", catalog="hive")) == 1
    assert len(client.get_partitions_by_filter(db, "orders", 'dt = "2024-04-01"', catalog="hive")) == 1
    assert len(client.get_partitions_by_names(db, "orders", ["dt=2024-04-01"], catalog="hive")) == 1
    stored = client.get_table(db, "orders", catalog="hive")
    stored.parameters["in.catalog"] = "hive"
    client.alter_table(db, "orders", stored, catalog="hive")
    assert client.get_table(db, "orders").parameters["in.catalog"] == "hive"
    with pytest.raises(hw.MetastoreServerError) as nowhere:  # a catalog that does not exist
        client.get_table(db, "orders", catalog="nowhere")
    assert "nowhere" in str(nowhere.value)
    if release(any_release_metastore) == "4.x":
        # Hive 4 answers a list call in a catalog that does not exist with nothing rather than an error.
        assert client.get_partition_names(db, "orders", catalog="nowhere") == []
    else:
        with pytest.raises(hw.MetastoreServerError):
            client.get_partition_names(db, "orders", catalog="nowhere")


def test_fire_listener_event_and_notifications(
    client: hw.MetastoreClient, db: str, any_release_metastore: LocalMetastore
) -> None:
    table = orders_table(any_release_metastore, db)
    client.create_table(table)
    client.add_partitions([make_partition(table, ["2024-05-01"])])
    assert client.get_current_notificationEventId().eventId >= 0
    request = hms.FireEventRequest(
        successful=True,
        data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(filesAdded=["file:/tmp/part-0"])),
        dbName=db,
        tableName="orders",
        partitionVals=["2024-05-01"],
    )
    if release(any_release_metastore) == "2.3":
        # docs/metastore.md, Limits: the 3.x layout of InsertEventRequestData; 2.x reads its ids differently.
        with pytest.raises(hw.MetastoreError, match="filesAdded"):
            client.fire_listener_event(request)
        # The server stopped reading part way and dropped the connection: the client closed it too, so the
        # next call (a write, which is never retried) gets a fresh connection.
        assert not client.is_open
        client.drop_table(db, "orders", True)
        assert client.get_all_tables(db) == []
    else:
        assert isinstance(client.fire_listener_event(request), hms.FireEventResponse)


def test_pool_and_hive_conf(any_release_metastore: LocalMetastore, db: str) -> None:
    pool = MetastoreClientPool(lambda: hw.MetastoreClient(any_release_metastore.uri), size=2)
    with pool.client() as c:
        assert db in c.get_all_databases()
    pool.close()
    with hw.MetastoreClient.from_hive_conf({"hive.metastore.uris": any_release_metastore.uri}) as c:
        assert c.get_database(db).name == db
