"""Issue 29, acceptance 2: clients we did not write get the same results through the shim as directly, on Hive
3.1 and 4.x (the test id names the release; test_shim_hmsclient.py and test_iceberg_commits.py run on 2.3).

hmsclient speaks Hive 2.x's IDL: on 4.0.1 its ``get_table`` is refused (Hive 4.0.1 removed the method), and
the shim must relay that refusal as the metastore gave it. pyiceberg's HiveCatalog makes a namespace and a
table, lists and loads them, and drops them (on 4.0.1 its table calls are refused alike: it reads tables with
``get_table`` and ``get_table_objects_by_name``); its commits lock the table, and these metastores have no
transaction tables (tools/_hive_metastore.py), so no commit is made here. The metastores are the plain
``hive3_metastore`` and ``hive4_metastore``: these tests compare results, not events. pymetastore (read-only)
runs on 2.3 as well.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hmsclient import hmsclient
from hmsclient.genthrift.fb303.ttypes import fb_status
from hmsclient.genthrift.hive_metastore import ttypes as peer_types
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from thrift.Thrift import TApplicationException
from thrift.TSerialization import deserialize, serialize

import hivewire as hw
from hivewire.tools._hive_metastore import HiveMetastore
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import Shim

pytestmark = pytest.mark.integration

RELEASES = {"3.1": "hive3_metastore", "4": "hive4_metastore"}


@pytest.fixture(scope="module", params=list(RELEASES))
def server(request: pytest.FixtureRequest) -> HiveMetastore:
    metastore: HiveMetastore = request.getfixturevalue(RELEASES[request.param])
    return metastore


@pytest.fixture(scope="module")
def shim(server: HiveMetastore) -> Iterator[Shim]:
    with Shim(server.uri) as running:
        yield running


@pytest.fixture(scope="module")
def db(server: HiveMetastore) -> Iterator[str]:
    name = f"peer_{uuid.uuid4().hex[:8]}"
    external = server.external_warehouse
    with hw.MetastoreClient(server.uri, timeout=120) as client:
        client.create_database(make_database(name, location=(external / f"{name}.db").as_uri()))
        table = make_table(
            name, "base", columns={"id": "bigint", "city": "string"}, partition_keys={"dt": "string"},
            location=(external / name / "base").as_uri(), table_type="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"},
        )  # fmt: skip
        client.create_table(table)
        client.add_partitions([make_partition(table, [f"2024-01-0{d}"]) for d in range(1, 4)])
    yield name
    with hw.MetastoreClient(server.uri, timeout=120) as client:
        client.drop_database(name, True, True)


def peer(uri: str) -> Any:
    host, port = uri.removeprefix("thrift://").rsplit(":", 1)
    return hmsclient.HMSClient(host=host, port=int(port))


def both(server: HiveMetastore, shim: Shim, fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``fn(client)`` with hmsclient against the metastore and through the shim: each result or exception."""
    out = []
    for uri in (server.uri, shim.uri):
        with peer(uri) as client:
            try:
                out.append(fn(client))
            except Exception as e:
                out.append(e)
    return out[0], out[1]


def same(direct: Any, through: Any) -> None:
    if isinstance(direct, Exception):
        assert type(through) is type(direct), (direct, through)
        assert str(through) == str(direct)
    else:
        assert through == direct


def test_hmsclient_gets_the_same_results(server: HiveMetastore, shim: Shim, db: str) -> None:
    """Each call gives through the shim what it gives directly, and that is the answer expected of it (so a call
    that failed the same way on both would not pass)."""
    hive4 = server.release == "4"
    dates = ["2024-01-01", "2024-01-02", "2024-01-03"]

    def refused(method: str) -> Callable[[Any], bool]:
        # Hive 4.0.1 removed get_table (and with it hmsclient's reads of one table); 3.1 answers every call.
        return lambda r: isinstance(r, TApplicationException) and str(r) == f"Invalid method name: '{method}'"

    def raised(kind: type[Exception]) -> Callable[[Any], bool]:
        return lambda r: isinstance(r, kind)

    def values(partitions: Any) -> list[list[str]]:
        return sorted(p.values for p in partitions)

    calls: list[tuple[Callable[[Any], Any], Callable[[Any], bool]]] = [
        (lambda c: c.get_all_databases(), lambda r: db in r and "default" in r),
        (lambda c: c.get_database(db), lambda r: r.name == db),
        (lambda c: c.get_all_tables(db), lambda r: r == ["base"]),
        (lambda c: c.get_table(db, "base"),
         refused("get_table") if hive4 else lambda r: (r.dbName, r.tableName) == (db, "base")),
        (lambda c: c.get_table(db, "no_such_table"),
         refused("get_table") if hive4 else raised(peer_types.NoSuchObjectException)),
        (lambda c: c.get_partition_names(db, "base", -1), lambda r: r == [f"dt={d}" for d in dates]),
        (lambda c: c.get_partitions(db, "base", -1), lambda r: values(r) == [[d] for d in dates]),
        (lambda c: c.get_partitions_by_filter(db, "base", 'dt > "2024-01-01"', -1),
         lambda r: values(r) == [[d] for d in dates[1:]]),
        (lambda c: c.get_partition(db, "base", ["1999-01-01"]), raised(peer_types.NoSuchObjectException)),
        (lambda c: c.get_database("no_such_db_peer"), raised(peer_types.NoSuchObjectException)),
        (lambda c: c.create_database(deserialize(peer_types.Database(), serialize(make_database(db)))),
         raised(peer_types.AlreadyExistsException)),
        (lambda c: c.get_fields(db, "base"), lambda r: [(f.name, f.type) for f in r] == [("id", "bigint"),
                                                                                         ("city", "string")]),
        (lambda c: c.get_config_value("metastore.warehouse.dir", "none"), lambda r: isinstance(r, str) and r != ""),
        (lambda c: c.getStatus(), lambda r: r == fb_status.ALIVE),
    ]  # fmt: skip
    for fn, expected in calls:
        direct, through = both(server, shim, fn)
        same(direct, through)
        assert expected(through), f"unexpected answer through the shim (and directly): {through!r}"


def catalog(uri: str, warehouse: Path) -> HiveCatalog:
    return HiveCatalog("hivewire-peer", uri=uri, warehouse=warehouse.as_uri())


def iceberg_steps(uri: str, warehouse: Path, namespace: str) -> list[Any]:
    """pyiceberg's namespace and table calls, each one's result (or its exception) in a comparable form."""
    cat = catalog(uri, warehouse)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "city", StringType(), required=False)
    )
    steps: list[Callable[[], Any]] = [
        lambda: cat.create_namespace(namespace, {"owner.team": "data"}),
        lambda: sorted(cat.list_namespaces()).count((namespace,)),
        lambda: cat.load_namespace_properties(namespace).get("owner.team"),
        lambda: cat.create_table((namespace, "events"), schema).schema() == schema,
        lambda: cat.list_tables(namespace),
        lambda: cat.load_table((namespace, "events")).schema() == schema,
        lambda: cat.table_exists((namespace, "missing")),
        lambda: cat.drop_table((namespace, "events")),
        lambda: cat.list_tables(namespace),
        lambda: cat.drop_namespace(namespace),
    ]
    out: list[Any] = []
    for step in steps:
        try:
            out.append(step())
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}".replace(uri, "URI"))
    return out


def test_pyiceberg_gets_the_same_results(server: HiveMetastore, shim: Shim, tmp_path: Path) -> None:
    name = f"ice_{uuid.uuid4().hex[:8]}"  # the same namespace both times: the steps end by dropping it
    direct = iceberg_steps(server.uri, server.external_warehouse / "iceberg", name)
    through = iceberg_steps(shim.uri, server.external_warehouse / "iceberg", name)
    assert through == direct
    if server.release == "4":
        # pyiceberg 0.12 reads tables with get_table and get_table_objects_by_name, both removed in Hive 4.0.1:
        # its table calls fail there, directly as through the shim (the namespace calls work).
        refused = "TApplicationException: Invalid method name: '{}'"
        assert direct[:3] == [None, 1, "data"], direct
        assert direct[3] == refused.format("get_table") and direct[4] == refused.format("get_table_objects_by_name")
    else:
        assert direct == [None, 1, "data", True, [(name, "events")], True, False, None, [], None]


def test_pymetastore_gets_the_same_results(any_release_metastore: LocalMetastore) -> None:
    """pymetastore (Recap's read-only HMS client, its own generated Thrift code) on 2.3, 3.1 and 4.x: every
    call it offers gives the same result, or the same error, directly and through the shim."""
    from pymetastore.metastore import HMS

    server = any_release_metastore
    name = f"pm_{uuid.uuid4().hex[:8]}"
    root = server.external_warehouse if isinstance(server, HiveMetastore) else server.warehouse
    with hw.MetastoreClient(server.uri, timeout=120) as client:
        client.create_database(make_database(name, location=(root / f"{name}.db").as_uri()))
        table = make_table(
            name, "base", columns={"id": "bigint", "city": "string"}, partition_keys={"dt": "string"},
            location=(root / name / "base").as_uri(), table_type="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"},
        )  # fmt: skip
        client.create_table(table)
        client.add_partitions([make_partition(table, [f"2024-01-0{d}"]) for d in range(1, 4)])
    calls: list[Callable[[Any], Any]] = [
        lambda c: name in c.list_databases(),
        lambda c: c.get_database(name),
        lambda c: c.get_database("no_such_db_pm"),
        lambda c: c.list_tables(name),
        lambda c: c.list_columns(name, "base"),
        lambda c: c.list_partitions(name, "base"),
        lambda c: c.get_partitions(name, "base"),
        lambda c: c.get_partition(name, "base", "dt=2024-01-02"),
        lambda c: c.get_table(name, "base"),
        lambda c: c.get_table(name, "no_such_table"),
    ]
    try:
        with Shim(server.uri) as shim:
            results = []
            for uri in (server.uri, shim.uri):
                host, port = uri.removeprefix("thrift://").rsplit(":", 1)
                out: list[Any] = []
                with HMS.create(host, int(port)) as client:
                    for fn in calls:
                        try:
                            out.append(fn(client))
                        except Exception as e:
                            out.append(f"{type(e).__name__}: {e}")
                results.append(out)
    finally:
        with hw.MetastoreClient(server.uri, timeout=120) as client:
            client.drop_database(name, True, True)
    direct, through = results
    assert through == direct
    assert direct[0] is True and direct[3] == ["base"] and len(direct[5]) == 3, direct
    assert str(direct[2]).startswith("NoSuchObjectException"), direct[2]
