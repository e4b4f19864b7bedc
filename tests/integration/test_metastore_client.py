"""MetastoreClient against a real Hive Metastore 2.3 (and hmsclient as an independent peer)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hmsclient import hmsclient

import hivewire as hw
from hivewire.errors import MetastoreServerError
from hivewire.tools._local import LocalMetastore, free_port
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.fb303.ttypes import fb_status
from hivewire_thrift.hive_metastore import ttypes as hms


@pytest.fixture
def client(metastore: LocalMetastore) -> Iterator[hw.MetastoreClient]:
    with hw.MetastoreClient(metastore.uri, timeout=300) as c:
        yield c


@pytest.fixture
def db(client: hw.MetastoreClient, unique: str, metastore: LocalMetastore) -> Iterator[str]:
    client.create_database(make_database(unique, location=(metastore.warehouse / f"{unique}.db").as_uri()))
    yield unique
    client.drop_database(unique, True, True)


def table_in(metastore: LocalMetastore, db: str, name: str, **kw: Any) -> Any:
    # "file:/path", the form Hadoop's Path normalises file URIs to, so locations compare equal on read-back.
    return make_table(db, name, location=f"file:{metastore.warehouse / db / name}", **kw)


def test_database_create_read_alter_drop(client: hw.MetastoreClient, unique: str) -> None:
    client.create_database(make_database(unique, description="first", parameters={"team": "data"}))
    got = client.get_database(unique)
    assert (got.name, got.description, got.parameters) == (unique, "first", {"team": "data"})

    # Hive 2.3's alter_database stores parameters and owner (not the description).
    got.parameters["tier"] = "gold"
    got.ownerName = "carol"
    client.alter_database(unique, got)
    again = client.get_database(unique)
    assert again.parameters == {"team": "data", "tier": "gold"}
    assert again.ownerName == "carol"
    assert unique in client.get_all_databases()

    with pytest.raises(hw.AlreadyExistsError) as exc:
        client.create_database(make_database(unique))
    assert client.uri in str(exc.value) and unique in str(exc.value)

    client.drop_database(unique, True, False)
    with pytest.raises(hw.NoSuchObjectError) as missing:
        client.get_database(unique)
    assert unique in str(missing.value) and client.uri in str(missing.value)
    assert missing.value.method == "get_database"


def test_unpartitioned_table_create_read_alter_drop(
    client: hw.MetastoreClient, db: str, metastore: LocalMetastore
) -> None:
    table = table_in(
        metastore, db, "plain", columns={"id": "bigint", "name": "string"}, parameters={"owner.team": "orders"}
    )
    client.create_table(table)
    got = client.get_table(db, "plain")
    assert [(c.name, c.type) for c in got.sd.cols] == [("id", "bigint"), ("name", "string")]
    assert got.parameters["owner.team"] == "orders"
    assert got.partitionKeys == []
    assert got.sd.location == table.sd.location

    got.sd.cols.append(hms.FieldSchema(name="amount", type="decimal(10,2)", comment="in EUR"))
    client.alter_table(db, "plain", got)
    altered = client.get_table(db, "plain")
    assert altered.sd.cols[-1] == hms.FieldSchema(name="amount", type="decimal(10,2)", comment="in EUR")
    assert client.get_table_objects(db, ["plain", "nope"])[0].tableName == "plain"
    assert client.get_all_tables(db) == ["plain"]

    client.drop_table(db, "plain", True)
    with pytest.raises(hw.NoSuchObjectError) as exc:
        client.get_table(db, "plain")
    assert f"{db}, plain" in str(exc.value) or f"{db}.plain" in str(exc.value)


def test_partitioned_table_with_1000_partitions(client: hw.MetastoreClient, db: str, metastore: LocalMetastore) -> None:
    table = table_in(metastore, db, "events", columns={"id": "bigint"}, partition_keys={"dt": "string", "hr": "string"})
    client.create_table(table)
    table = client.get_table(db, "events")
    days = [f"2024-01-{d:02d}" for d in range(1, 41)]
    hours = [f"{h:02d}" for h in range(25)]
    parts = [make_partition(table, [d, h]) for d in days for h in hours]
    assert len(parts) == 1000

    result = client.add_partitions_req(
        hms.AddPartitionsRequest(dbName=db, tblName="events", parts=parts, ifNotExists=False, needResult=False)
    )
    assert result is not None

    names = client.get_partition_names(db, "events")
    assert len(names) == 1000
    assert "dt=2024-01-07/hr=13" in names

    by_filter = client.get_partitions_by_filter(db, "events", 'dt = "2024-01-03"')
    assert sorted(p.values[1] for p in by_filter) == hours

    wanted = ["dt=2024-01-05/hr=00", "dt=2024-01-39/hr=24", "dt=2024-01-01/hr=99"]
    by_names = client.get_partitions_by_names(db, "events", wanted)
    assert sorted(p.values for p in by_names) == [["2024-01-05", "00"], ["2024-01-39", "24"]]
    assert "get_partitions_by_names_req" in client.unsupported_methods  # 2.3 has only the legacy call

    everything = client.get_partitions(db, "events")
    assert len(everything) == 1000
    assert {p.sd.location for p in everything} == {p.sd.location for p in parts}

    # Alter one partition, then ten in bulk; read them back by name.
    first, *ten = sorted(everything, key=lambda p: p.values)[:11]
    first.parameters["checked"] = "yes"
    client.alter_partition(db, "events", first)
    for p in ten:
        p.parameters["batch"] = "b1"
    client.alter_partitions(db, "events", ten)
    reread = {
        tuple(p.values): p
        for p in client.get_partitions_by_names(
            db, "events", [f"dt={p.values[0]}/hr={p.values[1]}" for p in [first, *ten]]
        )
    }
    assert reread[tuple(first.values)].parameters["checked"] == "yes"
    assert all(reread[tuple(p.values)].parameters["batch"] == "b1" for p in ten)
    with pytest.raises(hw.ConfigError, match="max_parts"):  # an i16 on the wire: refused before sending
        client.get_partition_names(db, "events", 40_000)
    assert len(client.get_partition_names(db, "events", 5)) == 5  # and the connection is still good

    drop = hms.DropPartitionsRequest(
        dbName=db, tblName="events", parts=hms.RequestPartsSpec(names=names[:600]), deleteData=True, needResult=True
    )
    dropped = client.drop_partitions_req(drop)
    assert len(dropped.partitions) == 600
    assert len(client.get_partition_names(db, "events")) == 400

    table.parameters["retention.days"] = "30"
    client.alter_table(db, "events", table)
    assert client.get_table(db, "events").parameters["retention.days"] == "30"
    assert len(client.get_partition_names(db, "events")) == 400  # altering the table keeps its partitions
    client.drop_table(db, "events", True)
    assert client.get_all_tables(db) == []
    with pytest.raises(hw.NoSuchObjectError):
        client.get_table(db, "events")


def test_skewed_table_keeps_location_maps(client: hw.MetastoreClient, db: str, metastore: LocalMetastore) -> None:
    base = f"file:{metastore.warehouse / db / 'skewed'}"
    skewed = hms.SkewedInfo(
        skewedColNames=["country", "city"],
        skewedColValues=[["NL", "AMS"], ["FR", "PAR"]],
        skewedColValueLocationMaps={
            ("NL", "AMS"): f"{base}/country=NL/city=AMS",
            ("FR", "PAR"): f"{base}/country=FR/city=PAR",
        },
    )
    table = table_in(
        metastore, db, "skewed", columns={"country": "string", "city": "string", "v": "int"}, skewed=skewed
    )
    table.sd.storedAsSubDirectories = True
    client.create_table(table)
    got = client.get_table(db, "skewed").sd.skewedInfo
    assert got.skewedColNames == ["country", "city"]
    assert sorted(got.skewedColValues) == [["FR", "PAR"], ["NL", "AMS"]]
    assert got.skewedColValueLocationMaps == skewed.skewedColValueLocationMaps
    assert all(isinstance(k, tuple) for k in got.skewedColValueLocationMaps)

    stored = client.get_table(db, "skewed")
    stored.sd.skewedInfo.skewedColValues.append(["DE", "BER"])
    stored.sd.skewedInfo.skewedColValueLocationMaps[("DE", "BER")] = f"{base}/country=DE/city=BER"
    client.alter_table(db, "skewed", stored)
    altered = client.get_table(db, "skewed").sd.skewedInfo
    assert sorted(altered.skewedColValues) == [["DE", "BER"], ["FR", "PAR"], ["NL", "AMS"]]
    assert altered.skewedColValueLocationMaps[("DE", "BER")] == f"{base}/country=DE/city=BER"
    client.drop_table(db, "skewed", True)
    with pytest.raises(hw.NoSuchObjectError):
        client.get_table(db, "skewed")


def test_status_notifications_and_config(client: hw.MetastoreClient, metastore: LocalMetastore) -> None:
    assert client.getStatus() == fb_status.ALIVE
    assert client.get_current_notificationEventId().eventId >= 0
    assert client.get_next_notification(hms.NotificationEventRequest(lastEvent=0)).events == []
    assert client.get_config_value("hive.metastore.warehouse.dir", "") == metastore.warehouse.as_uri()
    assert client.getMetaConf("hive.metastore.try.direct.sql") in ("true", "false")


def test_set_ugi_is_sent_on_connect(metastore: LocalMetastore, unique: str) -> None:
    with hw.MetastoreClient(metastore.uri, ugi="alice:staff,data") as c:
        assert c.ugi == ("alice", ["staff", "data"])
        c.get_databases(unique)
    # The metastore's audit log shows the call made as alice.
    audit = [line for line in metastore.log_tail(400).splitlines() if f"get_databases: {unique}" in line]
    assert any("ugi=alice" in line for line in audit), audit


def test_unknown_method_is_a_clear_error_and_keeps_the_connection(client: hw.MetastoreClient) -> None:
    # alter_table_req exists from Hive 3.0; the 2.3 server answers "Invalid method name".
    with pytest.raises(hw.UnsupportedMethodError) as exc:
        client.alter_table_req(hms.AlterTableRequest(dbName="default", tableName="x", table=hms.Table()))
    assert "alter_table_req" in str(exc.value)
    assert "default" in client.get_all_databases()


def test_a_declared_server_error_keeps_the_connection_and_what_it_learnt(
    client: hw.MetastoreClient, db: str, metastore: LocalMetastore
) -> None:
    table = table_in(metastore, db, "learnt", partition_keys={"dt": "string"})
    client.create_table(table)
    client.add_partitions([make_partition(table, ["2024-01-01"])])
    assert client.get_partitions_by_names(db, "learnt", ["dt=2024-01-01"])[0].values == ["2024-01-01"]
    assert "get_partitions_by_names_req" in client.unsupported_methods  # 2.3 has only the legacy call
    learnt, transport = client.unsupported_methods, client._trans

    with pytest.raises(MetastoreServerError) as meta:  # MetaException
        client.getMetaConf("no.such.key")
    assert "MetaException" in str(meta.value) and "no.such.key" in str(meta.value)
    assert client.uri in str(meta.value) and meta.value.method == "getMetaConf"
    with pytest.raises(MetastoreServerError) as security:  # ConfigValSecurityException
        client.get_config_value("fs.s3a.secret.key", "")
    assert "cannot be accessed" in str(security.value)
    with pytest.raises(MetastoreServerError) as bad_filter:  # MetaException from the filter parser
        client.get_partitions_by_filter(db, "learnt", "dt >>> nonsense")
    assert f"{db}, learnt" in str(bad_filter.value)

    # The same connection, still knowing that the request form is missing: nothing was re-learnt.
    assert client.get_partitions_by_names(db, "learnt", ["dt=2024-01-01"])[0].values == ["2024-01-01"]
    assert client._trans is transport
    assert client.unsupported_methods == learnt


def test_a_request_that_cannot_be_encoded_fails_clearly_and_the_next_call_works(
    client: hw.MetastoreClient, db: str
) -> None:
    with pytest.raises(hw.MetastoreError) as exc:
        client.create_table(hms.Table(dbName=db, tableName="bad", partitionKeys=[None]))
    message = str(exc.value)
    assert "could not be encoded" in message and f"create_table({db}.bad)" in message
    assert "tbl.partitionKeys[0] is None where a FieldSchema belongs" in message
    assert not client.is_open  # half a request may sit in the buffer: that connection is gone
    assert client.get_all_tables(db) == []  # the next call reconnects, and nothing was created
    assert client.is_open


def test_get_tables_lists_names_matching_a_pattern_like_hive(
    client: hw.MetastoreClient, db: str, metastore: LocalMetastore
) -> None:
    for name in ("orders_eu", "orders_us", "items"):
        client.create_table(table_in(metastore, db, name))
    assert sorted(client.get_tables(db, "*")) == ["items", "orders_eu", "orders_us"]
    assert sorted(client.get_tables(db, "orders_*")) == ["orders_eu", "orders_us"]
    assert sorted(client.get_tables(db, "items|orders_us")) == ["items", "orders_us"]
    assert client.get_tables(db, "nothing_*") == []
    tables = client.get_table_objects(db, ["items", "orders_eu", "missing"])
    assert sorted(t.tableName for t in tables) == ["items", "orders_eu"]
    with pytest.raises(TypeError, match="list of table names"):
        client.get_table_objects(db, "items")


def test_errors_of_request_calls_name_the_object(client: hw.MetastoreClient, db: str) -> None:
    with pytest.raises(hw.NoSuchObjectError) as table:
        client.get_table_req(hms.GetTableRequest(dbName=db, tblName="absent"))
    assert f"get_table_req({db}.absent)" in str(table.value)
    with pytest.raises(hw.MetastoreError) as parts:
        client.add_partitions_req(
            hms.AddPartitionsRequest(
                dbName=db,
                tblName="absent",
                parts=[hms.Partition(dbName=db, tableName="absent", values=["1"])],
                ifNotExists=False,
            )
        )
    assert f"add_partitions_req({db}.absent partition 1)" in str(parts.value)
    with pytest.raises(hw.NoSuchObjectError) as tables:  # UnknownDBException
        client.get_table_objects_by_name_req(hms.GetTablesRequest(dbName=f"{db}_absent", tblNames=["a", "b"]))
    assert f"get_table_objects_by_name_req({db}_absent: a, b)" in str(tables.value)
    with pytest.raises(hw.UnsupportedMethodError) as req:  # Hive 4's request form; 2.3 does not know it
        client.create_database_req(hms.CreateDatabaseRequest(databaseName=db))
    assert "create_database_req" in str(req.value)


def test_failover_skips_a_dead_uri(metastore: LocalMetastore) -> None:
    dead = f"thrift://127.0.0.1:{free_port()}"
    with hw.MetastoreClient(f"{dead},{metastore.uri}", connect_timeout=2) as c:
        assert c.uri == metastore.uri
        assert "default" in c.get_all_databases()


def test_all_uris_dead_names_every_uri() -> None:
    dead = [f"thrift://127.0.0.1:{free_port()}" for _ in range(3)]
    client = hw.MetastoreClient(dead, connect_timeout=1)
    with pytest.raises(hw.MetastoreConnectionError) as exc:
        client.get_all_databases()
    for uri in dead:
        assert uri in str(exc.value)
    assert [u for u, _ in exc.value.tried] == dead


def test_reads_reconnect_after_the_metastore_restarts(tmp_path: Any) -> None:
    with LocalMetastore(workdir=tmp_path) as hms_, hw.MetastoreClient(hms_.uri, connect_timeout=2) as c:
        c.create_database(make_database("survivor"))
        hms_.restart()
        assert c.get_database("survivor").name == "survivor"  # one reconnect, transparently
        hms_.stop()
        with pytest.raises(hw.MetastoreConnectionError) as exc:
            c.get_database("survivor")
        assert hms_.uri in str(exc.value)


def test_framed_transport_and_compact_protocol(tmp_path: Any) -> None:
    props = {
        "hive.metastore.thrift.framed.transport.enabled": "true",
        "hive.metastore.thrift.compact.protocol.enabled": "true",
    }
    with LocalMetastore(workdir=tmp_path, properties=props) as server:
        with hw.MetastoreClient(server.uri, transport="framed", protocol="compact") as c:
            c.create_database(make_database("framed_db"))
            c.create_table(make_table("framed_db", "t", partition_keys={"dt": "string"}))
            assert c.get_table("framed_db", "t").partitionKeys[0].name == "dt"
        # The default (buffered binary) client cannot talk to it, and says so instead of hanging.
        with pytest.raises(hw.MetastoreError), hw.MetastoreClient(server.uri, timeout=5) as plain:
            plain.get_all_databases()


def test_pool_serves_many_threads(metastore: LocalMetastore, db: str, client: hw.MetastoreClient) -> None:
    client.create_table(table_in(metastore, db, "shared"))
    pool = hw.MetastoreClientPool(lambda: hw.MetastoreClient(metastore.uri), size=3)
    errors: list[BaseException] = []
    seen: list[str] = []

    def work() -> None:
        try:
            for _ in range(20):
                with pool.client() as c:
                    seen.append(c.get_table(db, "shared").tableName)
        except BaseException as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pool.close()
    assert errors == []
    assert seen == ["shared"] * 160


# -- hmsclient as an independent peer -----------------------------------------------------------------


def same_fields(theirs: Any, ours: Any, path: str = "") -> list[str]:
    """Differences between an hmsclient object and ours, over the fields hmsclient's IDL knows."""
    if hasattr(theirs, "thrift_spec") and theirs.thrift_spec is not None:
        diffs = []
        for spec in theirs.thrift_spec:
            if spec is None:
                continue
            name = spec[2]
            diffs += same_fields(getattr(theirs, name), getattr(ours, name, None), f"{path}.{name}")
        return diffs
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(theirs) != len(ours):
            return [f"{path}: {theirs!r} != {ours!r}"]
        pairs = enumerate(zip(theirs, ours, strict=True))
        return [d for i, (a, b) in pairs for d in same_fields(a, b, f"{path}[{i}]")]
    if isinstance(theirs, dict):
        # hmsclient cannot decode list-keyed maps at all; it only sees str-keyed ones here.
        if not isinstance(ours, dict) or set(theirs) != set(ours):
            return [f"{path}: keys {sorted(theirs)} != {sorted(ours or {})}"]
        return [d for k in theirs for d in same_fields(theirs[k], ours[k], f"{path}[{k}]")]
    return [] if theirs == ours else [f"{path}: {theirs!r} != {ours!r}"]


def hms_peer(metastore: LocalMetastore) -> hmsclient.HMSClient:
    host, port = metastore.uri.removeprefix("thrift://").split(":")
    return hmsclient.HMSClient(host=host, port=int(port))


def test_hmsclient_reads_what_hivewire_wrote(client: hw.MetastoreClient, db: str, metastore: LocalMetastore) -> None:
    table = table_in(
        metastore,
        db,
        "written_by_us",
        columns={"id": "int", "tags": "array<string>"},
        partition_keys={"dt": "string"},
        parameters={"a": "1"},
        table_type="EXTERNAL_TABLE",
    )
    client.create_table(table)
    client.add_partitions([make_partition(table, ["2024-05-01"], parameters={"numRows": "3"})])
    ours_t = client.get_table(db, "written_by_us")
    ours_p = client.get_partitions(db, "written_by_us")
    with hms_peer(metastore) as peer:
        theirs_t = peer.get_table(db, "written_by_us")
        theirs_p = peer.get_partitions(db, "written_by_us", -1)
    assert same_fields(theirs_t, ours_t) == []
    assert same_fields(theirs_p, ours_p) == []
    assert theirs_t.tableType == "EXTERNAL_TABLE" and theirs_p[0].values == ["2024-05-01"]


def test_hivewire_reads_what_hmsclient_wrote(client: hw.MetastoreClient, db: str, metastore: LocalMetastore) -> None:
    from hmsclient.genthrift.hive_metastore import ttypes as peer_types

    sd = peer_types.StorageDescriptor(
        cols=[peer_types.FieldSchema("k", "string", "key"), peer_types.FieldSchema("v", "double", None)],
        location=f"file:{metastore.warehouse / db / 'written_by_peer'}",
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=4,
        serdeInfo=peer_types.SerDeInfo(
            None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {"field.delim": ","}
        ),
        bucketCols=["k"],
        sortCols=[peer_types.Order("k", 1)],
        parameters={"x": "y"},
    )
    peer_table = peer_types.Table(
        tableName="written_by_peer",
        dbName=db,
        owner="bob",
        createTime=1700000000,
        lastAccessTime=0,
        retention=0,
        sd=sd,
        partitionKeys=[peer_types.FieldSchema("region", "string", None)],
        parameters={"comment": "from hmsclient"},
        tableType="MANAGED_TABLE",
    )
    with hms_peer(metastore) as peer:
        peer.create_table(peer_table)
        # (hmsclient overrides add_partition with a broken helper; add_partitions is the Thrift call.)
        peer.add_partitions(
            [
                peer_types.Partition(
                    values=["eu"],
                    dbName=db,
                    tableName="written_by_peer",
                    createTime=1700000000,
                    lastAccessTime=0,
                    sd=sd,
                    parameters={"p": "q"},
                )
            ]
        )
        theirs_t = peer.get_table(db, "written_by_peer")
        theirs_p = peer.get_partitions(db, "written_by_peer", -1)
    ours_t = client.get_table(db, "written_by_peer")
    ours_p = client.get_partitions(db, "written_by_peer")
    assert same_fields(theirs_t, ours_t) == []
    assert same_fields(theirs_p, ours_p) == []
    assert ours_t.sd.sortCols == [hms.Order(col="k", order=1)] and ours_t.owner == "bob"
