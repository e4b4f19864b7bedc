"""Tables and partitions read from a real Hive Metastore 2.3 survive the Apiary codec unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events._model import AddPartitionEvent, CreateDatabaseEvent, CreateTableEvent, InsertEvent, ListenerEvent
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

PARAMETERS = {"hive.version": "2.3.10"}


@pytest.fixture
def client(metastore: LocalMetastore) -> Iterator[hw.MetastoreClient]:
    with hw.MetastoreClient(metastore.uri, timeout=120) as c:
        yield c


@pytest.fixture
def db(client: hw.MetastoreClient, unique: str, metastore: LocalMetastore) -> Iterator[str]:
    client.create_database(
        make_database(
            unique,
            location=(metastore.warehouse / f"{unique}.db").as_uri(),
            description="apiary <codec> & co",
            parameters={"team": "dätä"},
        )
    )
    yield unique
    client.drop_database(unique, True, True)


def location(metastore: LocalMetastore, db: str, name: str) -> str:
    return f"file:{metastore.warehouse / db / name}"


def round_trips(event: ListenerEvent) -> list[ListenerEvent]:
    """The event decoded from its encoding: untouched (lazy), and with every object converted."""
    data = apiary.encode(event)
    assert json.loads(data)["parameters"] == PARAMETERS
    lazy, full = apiary.decode(data), apiary.decode(data)
    for name in ("environment_context", *full.fields):
        getattr(full, name)
    assert apiary.encode(lazy) == data and apiary.encode(full) == data
    return [lazy, full]


def skewed_table(metastore: LocalMetastore, db: str, name: str, **kw: Any) -> Any:
    base = location(metastore, db, name)
    skewed = hms.SkewedInfo(
        skewedColNames=["country", "city"],
        skewedColValues=[["NL", "AMS"], ["FR", "PAR"]],
        skewedColValueLocationMaps={
            ("NL", "AMS"): f"{base}/country=NL/city=AMS",
            ("FR", "PAR"): f"{base}/country=FR/city=PAR",
        },
    )
    return make_table(
        db,
        name,
        location=base,
        skewed=skewed,
        create_time=1717171717,
        columns={"id": "bigint", "country": "string", "city": "string", "note": "string"},
        parameters={"owner.team": "orders", "comment": "ünïcødé ✓ <b>"},
        **kw,
    )


def test_tables_read_from_the_metastore_survive_encode_and_decode(
    client: hw.MetastoreClient, db: str, metastore: LocalMetastore
) -> None:
    managed = skewed_table(metastore, db, "orders", partition_keys={"dt": "string", "hour": "int"})
    managed.sd.cols[3].comment = "free text"
    external = skewed_table(metastore, db, "orders_ext", table_type="EXTERNAL_TABLE")
    for table in (managed, external):
        client.create_table(table)
    for name in ("orders", "orders_ext"):
        stored = client.get_table(db, name)
        assert stored.sd.skewedInfo.skewedColValueLocationMaps  # the metastore kept the location maps
        context = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
        event = CreateTableEvent(table=stored, parameters=PARAMETERS, environment_context=context)
        for again in round_trips(event):
            assert again == event
            assert again.table == stored
            assert (again.db_name, again.table_name) == (db, name)
    assert client.get_table(db, "orders_ext").tableType == "EXTERNAL_TABLE"
    assert client.get_table(db, "orders_ext").parameters["EXTERNAL"] == "TRUE"


def test_partitions_read_from_the_metastore_survive_encode_and_decode(
    client: hw.MetastoreClient, db: str, metastore: LocalMetastore
) -> None:
    table = skewed_table(metastore, db, "events", partition_keys={"dt": "string", "hour": "int"})
    client.create_table(table)
    stored_table = client.get_table(db, "events")
    client.add_partitions(
        [
            make_partition(
                stored_table,
                [f"2024-05-0{day}", str(hour)],
                create_time=1717171717,
                parameters={"numRows": str(day * 100)},
            )
            for day in (1, 2)
            for hour in (0, 23)
        ]
    )
    stored = client.get_partitions(db, "events")
    assert len(stored) == 4 and all(p.sd.skewedInfo.skewedColValueLocationMaps for p in stored)
    event = AddPartitionEvent(table=stored_table, partitions=stored, parameters=PARAMETERS)
    for again in round_trips(event):
        assert again == event
        assert again.partitions == stored  # type: ignore[attr-defined]
        assert again.table == stored_table  # type: ignore[attr-defined]


def test_database_read_from_the_metastore_survives_encode_and_decode(client: hw.MetastoreClient, db: str) -> None:
    stored = client.get_database(db)
    event = CreateDatabaseEvent(database=stored, parameters=PARAMETERS)
    for again in round_trips(event):
        assert again == event and again.database == stored  # type: ignore[attr-defined]


def test_insert_event_fetches_its_table_through_the_handler(
    client: hw.MetastoreClient, db: str, metastore: LocalMetastore
) -> None:
    client.create_table(make_table(db, "facts", location=location(metastore, db, "facts")))
    insert = InsertEvent(
        db_name=db, table_name="facts", files=[f"{location(metastore, db, 'facts')}/f0"], parameters=PARAMETERS
    )
    decoded = apiary.decode(apiary.encode(insert))
    with pytest.raises(hw.HivewireError, match="needs a metastore connection"):
        decoded.table  # type: ignore[attr-defined]  # noqa: B018
    bound = decoded.copy(handler=client)
    assert bound.table == client.get_table(db, "facts")  # type: ignore[attr-defined]
    assert bound.table is bound.table  # type: ignore[attr-defined]  # fetched once
