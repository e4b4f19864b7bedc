"""Issue 29, acceptance 2 on Hive 4.x: what the shim publishes in front of a 4.0.1 metastore, against the oracle.

test_shim_fidelity.py runs the fidelity workload on 2.3 and 3.1, where the shim's events equal the
metastore's (3.1 with the known unset-catalog gap, fidelity.CATALOG_GAP). On 4.0.1 they do not: the metastore
fills in fields of the objects it stores and fires (a database's ``createTime``, ``ownerName`` and
``catalogName``; a table's ``id`` and ``catName``; Hive 4's MetastoreDefaultTransformer makes a managed table
without transactional properties an ``EXTERNAL_TABLE`` with ``EXTERNAL`` and ``external.table.purge``
parameters), while the shim publishes the request's objects. This test runs the workload through the shim on
4.x and pins, per event, the event types and order (equal) and the exact set of fields that differ, so a shim
that closes the gap (or widens it) fails here and the set is updated with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fidelity import Captured, differences, published
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


def fields(line: str) -> set[str]:
    """The field paths a line of fidelity.differences names (``table.id``, ``partitions[0].catName``, ...)."""
    key, _, rest = line.partition(": ")
    if key in ("status", "parameters", "environmentContext") or " " in key:
        return {key.split(" ")[0]}
    return {f"{key}{m}" for m in re.findall(r"(?:^|; )((?:\[\d+\])?\.[A-Za-z]+|value)(?=:)", rest)}


def test_the_shims_events_on_hive4_differ_only_by_what_the_metastore_fills_in(
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
    theirs = [e for e in oracle.events(mark) if published(e)]
    ours = captured.events
    assert [(e.event_type.name, e.status) for e in ours] == [(e.event_type, e.status) for e in theirs]
    differing = {
        (b.event_type, field) for a, b in zip(ours, theirs, strict=True) for line in differences(a, b)
        for field in fields(line)
    }  # fmt: skip
    assert differing == KNOWN_HIVE4_GAPS, "\n".join(
        f"{b.event_type}: {line}" for a, b in zip(ours, theirs, strict=True) for line in differences(a, b)
    )


#: (event type, field) pairs where the shim's event differs from Hive 4.0.1's own, for the workload above.
KNOWN_HIVE4_GAPS = {
    ("CREATE_DATABASE", "database.catalogName"),
    ("CREATE_DATABASE", "database.createTime"),
    ("CREATE_TABLE", "table.catName"),
    ("CREATE_TABLE", "table.id"),
    ("ADD_PARTITION", "partitions[0].catName"),
    ("ADD_PARTITION", "partitions[1].catName"),
    ("ALTER_TABLE", "environmentContext"),
}
