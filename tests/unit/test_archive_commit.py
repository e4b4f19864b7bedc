"""One Delta commit of the archive's buffers, on a real Delta table on local disk: rows and offsets land
together, rows the table holds are never written again, and a commit against a snapshot another writer's commit
overtook writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import deltalake

from hivewire.data._archive_commit import Item, commit
from hivewire.data._archive_table import open_archive_table, txn_app_id
from hivewire.data._arrow import Message
from hivewire.events import _apiary as apiary
from hivewire.events._model import Origin
from hivewire.tools import _testing as testing

TOPIC = "apiary"
VALUE = apiary.encode(testing.create_table_event("db", "t"))


def items(partition: int, offsets: range, value: bytes = VALUE) -> list[Item]:
    return [Message(Origin(TOPIC, partition, o, 1_700_000_000_000 + o), value) for o in offsets]


def rows(uri: str) -> list[tuple[int, int]]:
    table = deltalake.DeltaTable(uri).to_pyarrow_table(columns=["kafka_partition", "kafka_offset"])
    return sorted(zip(table["kafka_partition"].to_pylist(), table["kafka_offset"].to_pylist(), strict=True))


def test_rows_and_offsets_land_together_and_nothing_twice(tmp_path: Path) -> None:
    uri = str(tmp_path / "events")
    table = open_archive_table(uri, None, TOPIC)
    first = commit(table, {0: items(0, range(10)), 1: items(1, range(3), b"not apiary")}, app_id=TOPIC, topic=TOPIC)
    assert (first.won, first.rows, first.undecodable, first.skipped) == (True, 13, 3, 0)
    assert first.versions == {0: 9, 1: 2} and first.behind == {}
    assert [table.transaction_version(txn_app_id(TOPIC, p)) for p in (0, 1)] == [9, 2]

    # Buffers that overlap the table: what it holds is skipped; a partition wholly behind it is named.
    table.update_incremental()
    second = commit(table, {0: items(0, range(5, 15)), 1: items(1, range(2))}, app_id=TOPIC, topic=TOPIC)
    assert (second.won, second.rows, second.skipped) == (True, 5, 7)
    assert second.versions == {0: 14} and second.behind == {1: 2}
    assert rows(uri) == [(0, o) for o in range(15)] + [(1, o) for o in range(3)]

    # Nothing new at all: nothing written, no commit made.
    table.update_incremental()
    version = table.version()
    third = commit(table, {0: items(0, range(12, 15))}, app_id=TOPIC, topic=TOPIC)
    assert (third.won, third.rows, third.skipped, third.versions, third.behind) == (True, 0, 3, {}, {0: 14})
    assert deltalake.DeltaTable(uri).version() == version


def test_a_commit_against_an_overtaken_snapshot_writes_nothing(tmp_path: Path) -> None:
    uri = str(tmp_path / "events")
    open_archive_table(uri, None, TOPIC)
    mine, theirs = deltalake.DeltaTable(uri), deltalake.DeltaTable(uri)
    assert commit(theirs, {0: items(0, range(10))}, app_id=TOPIC, topic=TOPIC).won
    # ``mine`` still sees no offset of partition 0 and would write 0..9 again: delta-rs refuses the commit.
    lost = commit(mine, {0: items(0, range(10))}, app_id=TOPIC, topic=TOPIC)
    assert (lost.won, lost.rows, lost.versions) == (False, 0, {})
    assert rows(uri) == [(0, o) for o in range(10)]
    # Another job (another app id) writing the same table does not conflict.
    other = deltalake.DeltaTable(uri)
    assert commit(other, {0: items(0, range(3))}, app_id="job", topic=TOPIC).won
    assert other.transaction_version(txn_app_id("job", 0)) == 2
