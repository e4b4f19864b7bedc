"""Issue 29, acceptance 2 on Hive 4.x: what the shim publishes in front of a 4.0.1 metastore equals, field by
field and in order, what the metastore fires (the oracle), with nothing pinned.

test_shim_fidelity.py runs the fidelity workload on 2.3, 3.1 and 4.0.1 (PySpark's statements on 4.0.1 with
Spark's own Hive 4.0 client: its built-in 2.3 client reads tables with ``get_table``, which 4.0.1 removed).
This test adds
the parts where Hive 4 changes what it stores and fires: a database's ``createTime``, ``ownerName`` and
``catalogName``; a table's ``id`` and ``catName``; Hive 4's MetastoreDefaultTransformer making a managed
table an ``EXTERNAL_TABLE`` with ``EXTERNAL`` and ``external.table.purge`` parameters; the empty
environment context of an alter sent without one. The shim learns the upstream is Hive 4
(``hivewire_shim/release.py``) and builds its events as the metastore does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fidelity import Captured, compare
from oracle import RecordedMetastore

import hivewire as hw
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import Shim
from hivewire_thrift.hive_metastore import ttypes as hms

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def captured() -> Captured:
    return Captured()


@pytest.fixture(scope="module")
def shim(recorded_hive4_metastore: RecordedMetastore, captured: Captured) -> Iterator[Shim]:
    with Shim(recorded_hive4_metastore.uri, sinks=[captured], publish_failures=True) as server:
        yield server


def test_the_shims_events_on_hive4_equal_the_metastores(
    shim: Shim, captured: Captured, recorded_hive4_metastore: RecordedMetastore, unique: str
) -> None:
    oracle = recorded_hive4_metastore
    external = oracle.server.workdir / "external"
    mark = oracle.mark()
    with hw.MetastoreClient(shim.uri, timeout=120) as client:
        client.create_database(make_database(unique, location=(external / f"{unique}.db").as_uri()))
        table = make_table(
            unique, "sales", partition_keys={"dt": "string"}, location=(external / unique / "sales").as_uri(),
            table_type="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"},
        )  # fmt: skip
        client.create_table(table)
        client.add_partitions([make_partition(table, ["2024-01-01"]), make_partition(table, ["2024-01-02"])])
        stored = client.get_partitions_by_names(unique, "sales", ["dt=2024-01-01"])[0]
        stored.parameters = {**(stored.parameters or {}), "note": "x"}
        client.alter_partition(unique, "sales", stored)
        changed = client.get_table(unique, "sales")
        changed.parameters = {**(changed.parameters or {}), "owner_team": "core"}
        client.alter_table(unique, "sales", changed)
        client.fire_listener_event(
            hms.FireEventRequest(
                successful=True,
                data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(filesAdded=["file:/x/1"])),
                dbName=unique,
                tableName="sales",
                partitionVals=["2024-01-01"],
            )
        )
        client.drop_partition(unique, "sales", ["2024-01-02"], True)
        client.drop_table(unique, "sales", True)
        client.drop_database(unique, True, True)
    assert compare(captured, 0, oracle, mark) == 9
    create_database, create_table = captured.events[0], captured.events[1]
    assert isinstance(create_database, hw.CreateDatabaseEvent) and isinstance(create_table, hw.CreateTableEvent)
    assert create_database.database.createTime and create_database.database.catalogName == "hive"
    assert create_table.table.id and create_table.table.catName == "hive"


def test_a_managed_table_is_fired_as_hive_4_translated_it(
    shim: Shim, captured: Captured, recorded_hive4_metastore: RecordedMetastore, unique: str
) -> None:
    oracle = recorded_hive4_metastore
    external = oracle.server.workdir / "external"
    since, mark = len(captured.events), oracle.mark()
    with hw.MetastoreClient(shim.uri, timeout=120) as client:
        client.create_database(hms.Database(name=unique, locationUri=(external / f"{unique}.db").as_uri()))
        client.create_table(make_table(unique, "managed", table_type="MANAGED_TABLE"))
        changed = client.get_table(unique, "managed")
        changed.parameters = {**(changed.parameters or {}), "owner_team": "core"}
        client.alter_table(unique, "managed", changed)
        client.drop_database(unique, True, True)
    assert compare(captured, since, oracle, mark) == 5
    database, table = captured.events[since], captured.events[since + 1]
    assert isinstance(database, hw.CreateDatabaseEvent) and database.database.ownerName  # the metastore's user
    assert isinstance(table, hw.CreateTableEvent) and table.table.tableType == "EXTERNAL_TABLE"
