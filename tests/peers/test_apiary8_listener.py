"""Apiary's KafkaMetaStoreEventListener 8.2.2, the newest release (its shaded ``all`` jar, as deployments put it
on the metastore's classpath; from the peers' Maven repository), inside real Hive Metastores 2.3.10, 3.1.3 and
4.0.1, publishing to the real broker.

The tests are tests/integration/test_apiary_listener.py's, run here with 8.2.2 (this module's
``apiary_metastore`` fixture): on 2.3 a workload of direct client calls and PySpark's 25 statements, every
message equal field for field to the oracle's record (RecordingListener inside the same metastore), its key the
message's timestamp as a big-endian long, its partition ``abs(hash("db.table") % n)`` (a rename's on the *old*
name), its record timestamp the producer's send time, and every message received by a hivewire app as its typed
event; the 8.2.2 golden files against what it wrote, nested fields included. On 3.1 and 4.0.1 it loads and
publishes table and partition events, and an INSERT fails the client's call (it calls ``InsertEvent.getDb()``,
which Hive 3.0 removed): docs/compatibility.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_apiary_listener import (
    RELEASES,
    ApiaryMetastore,
    ApiaryRelease,
    start_apiary_metastore,
    test_apiary_listener_events_reach_hivewire_as_the_metastore_fired_them,
    test_golden_files_have_the_shape_the_real_listener_writes,
)

APIARY_8 = ApiaryRelease(
    "8.2.2", "apiary8-listener", renames_on_old_name=True, golden="8.2.2-*ON_*.json", nested_golden=True
)

__all__ = [
    "test_apiary_listener_events_reach_hivewire_as_the_metastore_fired_them",
    "test_golden_files_have_the_shape_the_real_listener_writes",
]


@pytest.fixture(scope="module", params=RELEASES)
def apiary_metastore(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, java_classes: Path, kafka: str
) -> Iterator[ApiaryMetastore]:
    workdir = tmp_path_factory.mktemp(f"apiary8-metastore-{request.param}")
    yield from start_apiary_metastore(APIARY_8, request.param, workdir, java_classes, kafka)
