"""Messages written by every released Apiary Kafka listener (5.0.x: ``hive.metastore.uris`` in the
parameters, often null; 6.0.0 to 8.2.2: ``hive.version`` only) under Hive 2.3.9 and 2.3.10 decode.

The files in ``apiary_golden/`` are the bytes Apiary's own ``JsonMetaStoreEventSerDe`` wrote for a real
metastore's events (tags 5.0.2 and 8.2.2; the serde is unchanged across 5.0.0 to 8.2.2 and between those
tags only the parameters the factory adds differ).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hivewire.apiary as apiary

pytestmark = pytest.mark.unit

GOLDEN = sorted((Path(__file__).parent / "apiary_golden").glob("*.json"))
_TYPES = {
    "ON_CREATE_TABLE": "CREATE_TABLE",
    "ON_ALTER_TABLE": "ALTER_TABLE",
    "ON_DROP_TABLE": "DROP_TABLE",
    "ON_ADD_PARTITION": "ADD_PARTITION",
    "ON_ALTER_PARTITION": "ALTER_PARTITION",
    "ON_DROP_PARTITION": "DROP_PARTITION",
    "ON_INSERT": "INSERT",
}


def test_every_listener_version_is_represented() -> None:
    versions = {p.name.split("-")[0] for p in GOLDEN}
    assert versions == {"5.0.2", "8.2.2"} and len(GOLDEN) == 29


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_a_golden_message_decodes_with_its_envelope(path: Path) -> None:
    raw = json.loads(path.read_bytes())
    event = apiary.decode(path.read_bytes())
    assert event.event_type.name == _TYPES[raw["eventType"]]
    assert (event.db_name, event.table_name, event.status) == (raw["databaseName"], raw["tableName"], raw["status"])
    # A null parameter (5.0.x's hive.metastore.uris on a metastore without that setting) is an absent one.
    assert event.parameters == {k: v for k, v in raw["parameters"].items() if v is not None}
    materialised = apiary.to_json_dict(event)
    for key in ("table", "partitions", "oldTable", "newTable", "files"):
        if raw.get(key) is not None:
            assert materialised[key] is not None


def test_5_0_messages_carry_the_metastore_uris_when_set() -> None:
    (path,) = [p for p in GOLDEN if p.stem == "5.0.2-ON_CREATE_TABLE-uris-set"]
    assert apiary.decode(path.read_bytes()).parameters["hive.metastore.uris"].startswith("thrift://hms-a")
    (unset,) = [p for p in GOLDEN if p.stem == "5.0.2-ON_CREATE_TABLE"]
    assert "hive.metastore.uris" not in apiary.decode(unset.read_bytes()).parameters
