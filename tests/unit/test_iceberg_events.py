"""IcebergCommitEvent without a metastore: which table events are Iceberg commits, the details read from
metadata files (written here as Iceberg's table-metadata JSON, read back by pyiceberg), unreadable files,
and how listeners of ``ICEBERG_COMMIT`` are registered and called."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import hivewire as hw
from hivewire.errors import ConfigError, ListenerError
from hivewire.events._iceberg import IcebergCommit
from hivewire.testing import make_table

pytestmark = pytest.mark.unit

SCHEMA_0 = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
SCHEMA_1 = {
    "type": "struct",
    "schema-id": 1,
    "fields": [
        {"id": 1, "name": "key", "required": False, "type": "long"},
        {"id": 2, "name": "page", "required": False, "type": "string"},
    ],
}


def snapshot(snapshot_id: int, parent: int | None, seq: int, operation: str, **summary: str) -> dict[str, Any]:
    return {
        "snapshot-id": snapshot_id,
        **({"parent-snapshot-id": parent} if parent is not None else {}),
        "sequence-number": seq,
        "timestamp-ms": 1_700_000_000_000 + seq,
        "manifest-list": f"file:/lake/t/metadata/snap-{snapshot_id}.avro",
        "summary": {"operation": operation, **summary},
        "schema-id": 0,
    }


def metadata(
    path: Path,
    snapshots: list[dict[str, Any]],
    *,
    schema: dict[str, Any] = SCHEMA_0,
    spec: list[dict[str, Any]] | None = None,
    refs: dict[str, dict[str, Any]] | None = None,
) -> str:
    """Write Iceberg v2 table metadata to ``path``; return its location."""
    specs = [{"spec-id": 0, "fields": []}]
    if spec is not None:
        specs.append({"spec-id": 1, "fields": spec})
    current = snapshots[-1]["snapshot-id"] if snapshots else None
    if refs is None:
        refs = {"main": {"snapshot-id": current, "type": "branch"}} if current is not None else {}
    body = {
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "file:/lake/t",
        "last-sequence-number": max((s["sequence-number"] for s in snapshots), default=0),
        "last-updated-ms": 1_700_000_000_000,
        "last-column-id": 2,
        "schemas": [SCHEMA_0, SCHEMA_1] if schema is SCHEMA_1 else [SCHEMA_0],
        "current-schema-id": schema["schema-id"],
        "partition-specs": specs,
        "default-spec-id": specs[-1]["spec-id"],
        "last-partition-id": 1000 + len(spec or []),
        "properties": {},
        "current-snapshot-id": current if current is not None else -1,
        "snapshots": snapshots,
        "refs": refs,
        "snapshot-log": [],
        "metadata-log": [],
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
    }
    path.write_text(json.dumps(body))
    return path.as_uri()


def iceberg_table(location: str | None, name: str = "clicks") -> Any:
    params = {"table_type": "ICEBERG", "EXTERNAL": "TRUE"}
    if location is not None:
        params["metadata_location"] = location
    return make_table("web", name, parameters=params, table_type="EXTERNAL_TABLE")


def alter(old: str | None, new: str | None) -> hw.AlterTableEvent:
    return hw.AlterTableEvent(old_table=iceberg_table(old), new_table=iceberg_table(new))


def test_which_table_events_are_iceberg_commits(tmp_path: Path) -> None:
    plain = make_table("web", "clicks")
    assert IcebergCommit.of(hw.AlterTableEvent(old_table=plain, new_table=plain)) is None
    assert IcebergCommit.of(alter("file:/m/1.json", "file:/m/1.json")) is None  # a property change, no commit
    assert IcebergCommit.of(hw.AddPartitionEvent(table=iceberg_table("file:/m/1.json"))) is None
    lower = make_table("web", "c", parameters={"table_type": "iceberg", "metadata_location": "file:/m/1.json"})
    created = hw.IcebergCommitEvent.of(hw.CreateTableEvent(table=lower))
    assert created is not None and (created.kind, created.metadata_location) == ("create", "file:/m/1.json")
    dropped = hw.IcebergCommitEvent.of(hw.DropTableEvent(table=iceberg_table("file:/m/9.json")))
    assert dropped is not None and dropped.kind == "drop" and dropped.previous_metadata_location == "file:/m/9.json"
    assert dropped.metadata_location is None and dropped.details.snapshots_added == [] and dropped.error is None
    origin = hw.Origin("apiary", 2, 17)
    source = alter("file:/m/1.json", "file:/m/2.json").copy(origin=origin)
    commit = hw.IcebergCommitEvent.of(source)
    assert commit is not None and type(commit) is hw.IcebergCommitEvent and commit.origin == origin
    assert (commit.db_name, commit.table_name, commit.kind) == ("web", "clicks", "commit")
    assert hw.apiary.decode(hw.apiary.encode(commit)) == commit  # hivewire's own message, like the log's types


def test_the_details_are_what_the_metadata_files_say(tmp_path: Path) -> None:
    s1 = snapshot(11, None, 1, "append", **{"added-data-files": "2", "added-records": "30", "added-files-size": "900"})
    s2 = snapshot(12, 11, 2, "overwrite", **{"deleted-records": "30", "added-records": "5", "deleted-data-files": "2"})
    s3 = snapshot(13, 12, 3, "delete", **{"deleted-records": "5"})
    before = metadata(tmp_path / "v1.json", [s1, s2])
    after = metadata(
        tmp_path / "v2.json",
        [s2, s3],
        schema=SCHEMA_1,
        spec=[{"source-id": 2, "field-id": 1000, "name": "page", "transform": "identity"}],
        refs={"main": {"snapshot-id": 13, "type": "branch"}, "v1": {"snapshot-id": 12, "type": "tag"}},
    )
    commit = hw.IcebergCommitEvent.of(alter(before, after))
    assert commit is not None and commit.error is None
    [added] = commit.snapshots_added
    assert (added.snapshot_id, added.parent_id, added.sequence_number, added.operation) == (13, 12, 3, "delete")
    assert added.deleted_records == 5 and added.added_records is None and added.summary == {"deleted-records": "5"}
    assert [s.snapshot_id for s in commit.snapshots_expired] == [11]
    assert commit.snapshots_expired[0].added_files == 2 and commit.snapshots_expired[0].added_bytes == 900
    assert commit.operation == "delete" and commit.operations == {"delete"}
    schema = commit.schema_change
    assert schema is not None and (schema.old_schema_id, schema.new_schema_id) == (0, 1)
    assert [c.name for c in schema.added] == ["page"] and schema.renamed == [("id", "key")] and schema.dropped == []
    assert commit.spec_change is not None and commit.spec_change.new_fields == ["identity(page)"]
    assert [(r.name, r.kind, r.old_snapshot_id, r.new_snapshot_id) for r in commit.refs_moved] == [
        ("main", "branch", 12, 13),
        ("v1", "tag", None, 12),
    ]
    facts = commit._summary()
    assert facts["iceberg"] == "commit" and "13 delete" in str(facts["snapshots added"]) and facts["refs"]
    assert "snapshots added" in commit._repr_html_()


def test_a_created_table_adds_every_snapshot_it_holds(tmp_path: Path) -> None:
    first = metadata(tmp_path / "v0.json", [snapshot(7, None, 1, "append", **{"added-records": "3"})])
    created = hw.IcebergCommitEvent.of(hw.CreateTableEvent(table=iceberg_table(first)))
    assert created is not None and [s.snapshot_id for s in created.snapshots_added] == [7]
    assert created.schema_change is None and created.refs_moved[0].new_snapshot_id == 7


def test_an_unreadable_file_gives_the_reason_and_no_details(tmp_path: Path) -> None:
    after = metadata(tmp_path / "v2.json", [snapshot(1, None, 1, "append")])
    gone = (tmp_path / "expired.json").as_uri()
    commit = hw.IcebergCommitEvent.of(alter(gone, after))
    assert commit is not None
    assert commit.error is not None and "expired.json" in commit.error
    assert commit.snapshots_added == [] and commit.operation is None and commit.schema_change is None
    (tmp_path / "garbage.json").write_text("{not json")
    broken = hw.IcebergCommitEvent.of(alter(after, (tmp_path / "garbage.json").as_uri()))
    assert broken is not None and broken.error is not None and "garbage.json" in broken.error
    assert "unreadable" in broken._repr_html_()


def test_details_are_read_once_and_copies_read_again(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    location = metadata(path, [snapshot(1, None, 1, "append")])
    commit = hw.IcebergCommitEvent.of(hw.CreateTableEvent(table=iceberg_table(location)))
    assert commit is not None and [s.snapshot_id for s in commit.snapshots_added] == [1]
    metadata(path, [snapshot(1, None, 1, "append"), snapshot(2, 1, 2, "append")])
    assert [s.snapshot_id for s in commit.snapshots_added] == [1]  # read on first use, kept
    assert [s.snapshot_id for s in commit.with_io({}).snapshots_added] == [1, 2]


def apps(tmp_path: Path) -> tuple[str, str]:
    before = metadata(tmp_path / "v1.json", [snapshot(1, None, 1, "append")])
    after = metadata(tmp_path / "v2.json", [snapshot(1, None, 1, "append"), snapshot(2, 1, 2, "overwrite")])
    return before, after


def test_function_listeners_filters_and_the_plain_alter(tmp_path: Path) -> None:
    before, after = apps(tmp_path)
    app = hw.App("t")
    calls: list[tuple[str, Any]] = []

    @app.on_iceberg_commit
    def every(event: hw.IcebergCommitEvent) -> None:
        calls.append(("every", event.operation))

    @app.on_iceberg_commit(operation="append")
    def appends(event: hw.IcebergCommitEvent) -> None:
        calls.append(("appends", event.operation))

    @app.on_iceberg_commit(operation=["overwrite", "delete"], table="click*")
    def rewrites(event: hw.IcebergCommitEvent) -> None:
        calls.append(("rewrites", event.operation))

    @app.on_alter_table
    def plain(event: hw.AlterTableEvent) -> None:
        calls.append(("plain", type(event).__name__))

    @app.on()
    def everything(event: hw.ListenerEvent) -> None:
        calls.append(("everything", event.event_type.value))

    called = [name.rsplit(".", 1)[-1] for name in app.dispatch(alter(before, after))]
    assert called == ["every", "appends", "rewrites", "plain", "everything"]  # routed: appends found no append
    assert calls == [
        ("every", "overwrite"),
        ("rewrites", "overwrite"),
        ("plain", "AlterTableEvent"),
        ("everything", "ALTER_TABLE"),  # a listener of every type gets no derived event
    ]
    calls.clear()
    app.dispatch(alter("file:/m/same.json", "file:/m/same.json"))  # not a commit: the plain listeners only
    assert [c[0] for c in calls] == ["plain", "everything"]
    calls.clear()
    other = hw.AlterTableEvent(old_table=make_table("web", "x"), new_table=make_table("web", "x"))
    app.dispatch(other)
    assert [c[0] for c in calls] == ["plain", "everything"]


def test_class_listeners_and_async_ones(tmp_path: Path) -> None:
    before, after = apps(tmp_path)
    calls: list[str] = []

    class Both(hw.MetaStoreEventListener):
        def on_alter_table(self, event: hw.AlterTableEvent) -> None:
            calls.append("alter")

        def on_iceberg_commit(self, event: hw.IcebergCommitEvent) -> None:
            calls.append(f"commit {[s.snapshot_id for s in event.snapshots_added]}")

    class Waiting(hw.MetaStoreEventListener):
        async def on_iceberg_commit(self, event: hw.IcebergCommitEvent) -> None:
            await asyncio.sleep(0)
            calls.append(f"async {event.operation}")

    app = hw.App("t")
    app.add_listener(Both)
    app.add_listener(Waiting)
    assert [n.rsplit(".", 1)[-1] for n in app.dispatch(alter(before, after))] == ["Both", "Waiting"]
    assert calls == ["alter", "commit [2]", "async overwrite"]


def test_a_failing_iceberg_listener_does_not_stop_the_others(tmp_path: Path) -> None:
    before, after = apps(tmp_path)
    app = hw.App("t")
    seen: list[str] = []

    @app.on_iceberg_commit
    def broken(event: hw.IcebergCommitEvent) -> None:
        raise RuntimeError("boom")

    @app.on_iceberg_commit
    def fine(event: hw.IcebergCommitEvent) -> None:
        seen.append(event.qualified_name)

    with pytest.raises(ListenerError, match="boom"):
        app.dispatch(alter(before, after))
    assert seen == ["web.clicks"]


def test_bad_registrations_say_what_to_do() -> None:
    app = hw.App("t")
    with pytest.raises(ConfigError, match="on_iceberg_commit"):
        app.on_alter_table(operation="append")(lambda e: None)
    with pytest.raises(ConfigError, match=r"'merge'.*append"):
        app.on_iceberg_commit(operation="merge")(lambda e: None)

    class Mixed(hw.MetaStoreEventListener):
        def on_alter_table(self, event: hw.AlterTableEvent) -> None: ...

        async def on_iceberg_commit(self, event: hw.IcebergCommitEvent) -> None: ...

    app.add_listener(Mixed)
    with pytest.raises(ConfigError, match="both be async"):
        app.dispatch(alter("file:/a.json", "file:/b.json"))


def test_commits_as_rows_and_a_picture(tmp_path: Path) -> None:
    from hivewire.data._notebook import EventList

    s1 = snapshot(1, None, 1, "append", **{"added-records": "30", "added-data-files": "2"})
    s2 = snapshot(2, 1, 2, "append", **{"added-records": "5"})
    v1 = metadata(tmp_path / "v1.json", [s1])
    v2 = metadata(tmp_path / "v2.json", [s1, s2])
    events = EventList(
        [
            hw.CreateTableEvent(table=iceberg_table(v1)).copy(origin=hw.Origin("apiary", 0, 4)),
            hw.AddPartitionEvent(table=iceberg_table(v1)),  # not a commit
            alter(v1, v2),
            alter(v2, (tmp_path / "gone.json").as_uri()),
        ]
    )
    found = events.iceberg_commits()
    rows = found.table.to_pylist()
    assert [(r["kind"], r["snapshot_id"], r["operation"], r["added_records"]) for r in rows] == [
        ("create", 1, "append", 30),
        ("commit", 2, "append", 5),
        ("commit", None, None, None),
    ]
    assert rows[0]["kafka_offset"] == 4 and rows[0]["added_files"] == 2 and rows[1]["parent_id"] == 1
    assert rows[2]["error"] is not None and "gone.json" in rows[2]["error"]
    assert rows[1]["committed_at"].timestamp() * 1000 == s2["timestamp-ms"]
    picture = found._repr_html_()
    assert (
        "<svg" in picture and "web.clicks: 30 records added" in picture and "3 Iceberg commits, 2 snapshots" in picture
    )
    assert found.to_pandas()["added_records"].tolist()[:2] == [30, 5]


def test_the_runtime_delivers_commits_through_its_lanes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The real runtime (MemorySource, lanes, commits): sync and async Iceberg listeners, an operation filter,
    the plain ALTER_TABLE, a failing Iceberg listener dead-lettering its record, and every offset committed."""
    before, after = apps(tmp_path)
    v3 = metadata(
        tmp_path / "v3.json",
        [snapshot(1, None, 1, "append"), snapshot(2, 1, 2, "overwrite"), snapshot(3, 2, 3, "append")],
    )
    app = hw.App("lanes")
    got: dict[str, list[Any]] = {"sync": [], "async": [], "appends": [], "plain": []}

    @app.on_iceberg_commit
    def sync(event: hw.IcebergCommitEvent) -> None:
        got["sync"].append((event.kind, [s.snapshot_id for s in event.snapshots_added], event.origin is not None))

    @app.on_iceberg_commit
    async def waiting(event: hw.IcebergCommitEvent) -> None:
        await asyncio.sleep(0)
        got["async"].append(event.operation)

    @app.on_iceberg_commit(operation="append", concurrency=2)
    def appends(event: hw.IcebergCommitEvent) -> None:
        got["appends"].append(event.operation)

    @app.on_alter_table
    def plain(event: hw.AlterTableEvent) -> None:
        got["plain"].append(event.new_table.parameters["metadata_location"])

    @app.on_iceberg_commit(name="broken")
    def broken(event: hw.IcebergCommitEvent) -> None:
        raise RuntimeError("cannot start the job")

    events = [hw.CreateTableEvent(table=iceberg_table(before)), alter(before, after), alter(after, v3)]
    source = hw.testing.run_app(app, events, raise_errors=False)
    assert got["sync"] == [("create", [1], True), ("commit", [2], True), ("commit", [3], True)]
    assert got["async"] == ["append", "overwrite", "append"]
    assert got["appends"] == ["append", "append"]  # the create added an append; the overwrite is filtered out
    assert got["plain"] == [after, v3]
    assert len(source.dead_letters) == 3  # broken's three records, each after its retries; the others unharmed
    assert {letter.headers["hivewire.listener"] for letter in source.dead_letters} == {"broken"}
    assert {letter.headers["hivewire.error"] for letter in source.dead_letters} == {
        "RuntimeError: cannot start the job"
    }
    gave_up = [r.getMessage() for r in caplog.records if "gave up" in r.getMessage()]
    assert len(gave_up) == 3 and all(f"{Path(__file__).name}:" in m for m in gave_up)  # the listener's own line
