"""Iceberg commits as events, through every source, against tables pyiceberg's HiveCatalog makes on a real
metastore.

The recorded metastore (Hive 2.3, with Hive's lock tables, which Iceberg's HiveCatalog locks around each
commit, and the notification log) takes the workload of ``iceberg_workload.py``: creates, appends, an
overwrite, a delete, a schema evolution, a partition-spec change, a branch, a snapshot expiry and a drop.
Each commit must reach an ``on_iceberg_commit`` listener as an IcebergCommitEvent whose details are what
pyiceberg itself reads back after the commit (``table.snapshots()``, the refs), in commit order per table:
through the shim straight into an App, through the shim's Kafka sink and the Apiary topic (a real Kafka
broker), and from the notification log. A commit made while the app is down arrives after its restart.
The same commits made by Iceberg's own Java library (``java_iceberg/IcebergJavaCommits.java``, its HiveCatalog
from the Iceberg Spark runtime jar that tools/jvm/pom.xml pins) arrive through the shim and the log, and so do
those of Spark SQL with that runtime (``java_iceberg/IcebergSparkCommits.java``: CREATE TABLE ... USING iceberg,
INSERT, INSERT OVERWRITE, DELETE FROM, ALTER TABLE, CALL system.expire_snapshots, DROP TABLE). pyspark 4.3
cannot load any released Iceberg Spark runtime (its ``connector.catalog.View`` became a class), so that Spark
is Spark 4.0 run in a JVM of its own (the ``spark-iceberg`` profile of tools/jvm/pom.xml), not pyspark. The
``iceberg_*`` Arrow columns of the commits those Java writers make are the snapshot pyiceberg reads back.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from iceberg_workload import Expected, Recorder, catalog, rows, run_workload
from oracle import RecordedMetastore

import hivewire as hw
from hivewire.data._arrow import to_arrow
from hivewire.data._notebook import EventList
from hivewire.events import _apiary as apiary
from hivewire.metastore import MetastoreClient
from hivewire.runtime._notification_log import FilePosition, NotificationLogSource
from hivewire.tools._jvm import resolve
from hivewire.tools._local import find_java, spark_jars_dir
from hivewire_shim import AppSink, KafkaSink, Shim
from hivewire_thrift.hive_metastore import ttypes as hms

ROOT = Path(__file__).resolve().parents[2]
FAST = {"hivewire.commit.interval.ms": "50", "hivewire.shutdown.timeout.ms": "10000", "endpoint.port": "0"}
KINDS = ["create", "append", "append", "overwrite", "append", "delete", "schema evolution", "partition spec"]


class Commits:
    """What an app's ``on_iceberg_commit`` listener received (the details read in the listener), and the
    ALTER_TABLE events a plain listener of the same app received."""

    def __init__(self, app: hw.App, **options: object) -> None:
        self.events: list[hw.IcebergCommitEvent] = []
        self.alters: list[hw.AlterTableEvent] = []
        self.lock = threading.Lock()

        @app.on_iceberg_commit(**options)  # type: ignore[call-overload]
        def commit(event: hw.IcebergCommitEvent) -> None:
            event.details  # noqa: B018 - read in the listener, as a user's listener would
            with self.lock:
                self.events.append(event)

        @app.on_alter_table
        def altered(event: hw.AlterTableEvent) -> None:
            with self.lock:
                self.alters.append(event)

    def wait(self, count: int, timeout: float = 120) -> list[hw.IcebergCommitEvent]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.events) >= count:
                    return list(self.events)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} Iceberg commits, got {len(self.events)}: {self.events}")


def per_table(items: list[Expected]) -> dict[str, list[Expected]]:
    out: dict[str, list[Expected]] = {}
    for item in items:
        out.setdefault(item.table, []).append(item)
    return out


def same_commit(event: hw.IcebergCommitEvent, expected: Expected) -> None:
    """The event says what pyiceberg said the commit did."""
    where = f"{expected.table} {expected.what}"
    assert event.qualified_name == expected.table, where
    assert (event.kind, event.previous_metadata_location, event.metadata_location) == (
        expected.kind,
        expected.previous,
        expected.current,
    ), where
    assert event.error is None, where
    assert event.snapshots_added == expected.added, where
    assert [s.snapshot_id for s in event.snapshots_expired] == expected.expired, where
    assert (event.schema_change is not None, event.spec_change is not None) == (
        expected.schema_changed,
        expected.spec_changed,
    ), where
    if expected.kind != "drop":
        refs = {r.name: r.new_snapshot_id for r in event.refs_moved}
        assert all(expected.refs[name] == snapshot for name, snapshot in refs.items() if snapshot is not None), where
    assert event.operation == (expected.added[-1].operation if expected.added else None), where


def check_all(events: list[hw.IcebergCommitEvent], expected: list[Expected], *, drops: bool = True) -> None:
    """Every expected commit arrived once, in commit order per table, with pyiceberg's details."""
    wanted = per_table([e for e in expected if drops or e.kind != "drop"])
    got: dict[str, list[hw.IcebergCommitEvent]] = {}
    for event in events:
        got.setdefault(event.qualified_name, []).append(event)
    assert sorted(got) == sorted(wanted)
    for table, commits in wanted.items():
        assert len(got[table]) == len(commits), [(e.kind, e.operation) for e in got[table]]
        for event, commit in zip(got[table], commits, strict=True):
            same_commit(event, commit)


def check_workload_details(expected: list[Expected]) -> None:
    """The workload did what it says: the test would prove nothing if pyiceberg had committed something else."""
    orders = [e for e in expected if e.table.endswith(".orders")]
    assert [e.what for e in orders][: len(KINDS)] == KINDS
    assert [[s.operation for s in e.added] for e in orders[:6]] == [
        [],
        ["append"],
        ["append"],
        ["delete", "append"],
        ["append"],
        ["delete"],
    ]
    assert orders[6].schema_changed and orders[7].spec_changed and "audit" in orders[8].refs
    assert len(orders[9].expired) == 1 and orders[-1].kind == "drop"


def check_rows(events: EventList, expected: list[Expected]) -> None:
    """``iceberg_commits()`` of the topic: one row per snapshot pyiceberg says each commit added (one for a
    commit that added none), in commit order per table; the picture names every table that got records."""
    found = events.iceberg_commits()
    got = [
        (
            r["db_name"] + "." + r["table_name"],
            r["metadata_location"],
            r["snapshot_id"],
            r["operation"],
            r["added_records"],
        )
        for r in found.table.to_pylist()
    ]
    wanted: list[tuple[object, ...]] = []
    for e in expected:
        wanted += [(e.table, e.current, s.snapshot_id, s.operation, s.added_records) for s in e.added]
        if not e.added:
            wanted.append((e.table, e.current, None, None, None))
    assert len(found) == len(wanted) and len(found.commits) == len(expected)
    for table in {w[0] for w in wanted}:
        assert [g for g in got if g[0] == table] == [w for w in wanted if w[0] == table]
    picture = found._repr_html_()
    assert "<svg" in picture and all(t in picture for t in {e.table for e in expected if e.added})


@pytest.fixture
def db() -> str:
    return f"ice_{uuid.uuid4().hex[:8]}"


def run_in_thread(app: hw.App, source: object) -> Callable[[], None]:
    """Start ``app`` on ``source``; return what stops it and waits for it."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            app.run(source, handle_signals=False)  # type: ignore[arg-type]
        except BaseException as e:
            failure.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def stop() -> None:
        app.stop()
        thread.join(60)
        assert not thread.is_alive(), "the app did not stop"
        assert not failure, failure

    return stop


def test_the_shim_delivers_every_commit_to_an_app(
    recorded_metastore: RecordedMetastore, tmp_path: Path, db: str
) -> None:
    app = hw.App("iceberg-shim", config=FAST)
    commits = Commits(app)
    with Shim(recorded_metastore.uri, sinks=[AppSink(app)]) as shim:
        expected = run_workload(shim.uri, tmp_path / "warehouse", db)
        check_workload_details(expected)
        got = commits.wait(len(expected))
        time.sleep(0.5)  # a commit delivered twice would have arrived by now
    check_all(commits.events, expected)
    check_columns(commits.events, expected, recorded=False)  # pyiceberg 0.12 records no snapshot in the table
    assert len(got) == len(expected)
    # The plain ALTER_TABLE still reaches the listener that asked for it: one per commit to an existing table.
    assert len(commits.alters) == sum(1 for e in expected if e.kind == "commit")
    assert all(a.new_table.parameters["metadata_location"] for a in commits.alters)


def test_the_apiary_topic_delivers_every_commit_and_one_made_while_down(
    recorded_metastore: RecordedMetastore, kafka: str, tmp_path: Path, db: str
) -> None:
    topic, group = f"iceberg-{db}", f"group-{db}"

    def source() -> hw.KafkaSource:
        return hw.KafkaSource(
            kafka,
            topic,
            group_id=group,
            consumer_config={"auto.offset.reset": "earliest", "session.timeout.ms": 6000, "heartbeat.interval.ms": 500},
        )

    sink = KafkaSink(kafka, topic, tmp_path / "spool")
    with Shim(recorded_metastore.uri, sinks=[sink]) as shim:
        expected = run_workload(shim.uri, tmp_path / "warehouse", db)
        assert sink.wait_delivered(60), f"{sink.pending} events still spooled"
        first = hw.App("iceberg-kafka", config=FAST)
        commits = Commits(first)
        stop = run_in_thread(first, source())
        commits.wait(len(expected))
        stop()
        check_all(commits.events, expected)
        check_rows(hw.read_events(bootstrap_servers=kafka, topic=topic, progress=False), expected)

        # While no app runs: one more append to the surviving table.
        cat = catalog(shim.uri, tmp_path / "warehouse")
        table = cat.load_table(f"{db}.events")
        before = table.metadata_location
        table.append(rows(range(50, 60), "us"))
        after = cat.load_table(f"{db}.events")
        assert sink.wait_delivered(60), f"{sink.pending} events still spooled"

    again = hw.App("iceberg-kafka", config=FAST)
    later = Commits(again)
    stop = run_in_thread(again, source())
    got = later.wait(1)
    stop()
    # At least once: what the first run committed is not delivered again; the new commit is, with its details.
    last = got[-1]
    assert (last.previous_metadata_location, last.metadata_location) == (before, after.metadata_location)
    assert [s.snapshot_id for s in last.snapshots_added] == [after.metadata.current_snapshot_id]
    assert last.operation == "append" and last.snapshots_added[0].added_records == 10
    assert all(e.metadata_location != expected[0].current for e in got)

    # docs/iceberg.md's example reads this topic's commits, as written but for its placeholders.
    code = _docs_example("iceberg-commits").replace('"kafka:9092"', repr(kafka)).replace('"apiary"', repr(topic))
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / d) for d in ("sdk", "shim", "thrift"))}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(rf"^{db}\s+events\s+[1-9]\d*(?:\.0)?$", done.stdout, re.M), done.stdout  # records appended


def test_the_notification_log_delivers_every_commit(
    recorded_metastore: RecordedMetastore, tmp_path: Path, db: str
) -> None:
    position = tmp_path / "position"
    save_log_position(recorded_metastore.uri, position)
    expected = run_workload(recorded_metastore.uri, tmp_path / "warehouse", db)
    app = hw.App("iceberg-log", config=FAST)
    commits = Commits(app, db=db)
    app.run(NotificationLogSource(recorded_metastore.uri, position=position, stop_at_end=True), handle_signals=False)
    # Hive 2.3's DROP_TABLE message names the table only (no parameters): the log cannot tell an Iceberg drop.
    check_all(commits.events, expected, drops=False)


def test_an_operation_filter_and_an_unreadable_metadata_file(
    recorded_metastore: RecordedMetastore, tmp_path: Path, db: str
) -> None:
    app = hw.App("iceberg-appends", config=FAST)
    gate = threading.Event()
    gate.set()

    @app.on_alter_table
    def hold(event: hw.AlterTableEvent) -> None:  # runs first: holds the app until the test lets it go on
        assert gate.wait(60)

    appends = Commits(app, operation="append", name="appends")
    seen: list[hw.IcebergCommitEvent] = []

    @app.on_iceberg_commit
    def every(event: hw.IcebergCommitEvent) -> None:
        event.details  # noqa: B018 - read now: the files are read on first use, and one is deleted below
        seen.append(event)

    with Shim(recorded_metastore.uri, sinks=[AppSink(app)]) as shim:
        cat = catalog(shim.uri, tmp_path / "warehouse")
        cat.create_namespace(db)
        table = cat.create_table(f"{db}.t", schema=rows(range(1), "eu").schema)
        table.append(rows(range(4), "eu"))
        table = cat.load_table(f"{db}.t")
        table.delete("region == 'eu'")
        appends.wait(1)
        table = cat.load_table(f"{db}.t")
        gone = table.metadata_location
        gate.clear()
        table.append(rows(range(10, 12), "us"))
        # The previous metadata file disappears before the listeners read it (as the metadata cleanup of
        # write.metadata.delete-after-commit does): the event still comes, with the reason and no details.
        Path(gone.removeprefix("file:")).unlink()
        gate.set()
        appends.wait(2)
        deadline = time.monotonic() + 60
        while len(seen) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert [e.kind for e in seen] == ["create", "commit", "commit", "commit"]
    assert seen[2].operation == "delete" and seen[3].error is not None and gone in seen[3].error
    assert seen[3].snapshots_added == [] and seen[3].operation is None
    # operation="append": the append, not the create or the delete; the unreadable commit passes (unknown).
    assert [e.operation for e in appends.events] == ["append", None]
    assert appends.events[1].error == seen[3].error


JAVA_COMMANDS = [
    ("create", "create"),
    ("append 5", "append"),
    ("append 3", "append"),
    ("overwrite", "overwrite"),
    ("delete", "delete"),
    ("schema", "schema evolution"),
    ("spec", "partition spec"),
    ("branch", "branch"),
    ("expire", "expire"),
    ("drop", "drop"),
]


def drive(
    java: subprocess.Popen[str],
    commands: list[tuple[str, str]],
    recorder: Recorder,
    table: str,
    detail: Callable[[], str],
    *,
    stop_within: float,
) -> None:
    """Send a Java commit program (java_iceberg/) its commands one by one, each answered "ok" after its
    commit, and record what pyiceberg reads back after each; ``detail()`` says more when one fails."""
    assert java.stdin is not None and java.stdout is not None
    try:
        ready = java.stdout.readline().strip()
        assert ready == "ready", f"the Java program did not start: {detail()}"
        for command, what in commands:
            java.stdin.write(command + "\n")
            java.stdin.flush()
            answer = java.stdout.readline().strip()
            assert answer == "ok", f"{command}: {answer} {detail()}"
            recorder.after(table, what)
    finally:
        java.stdin.close()
        java.wait(stop_within)


def save_log_position(uri: str, position: Path) -> None:
    with MetastoreClient(uri) as client:
        current = client.call("get_current_notificationEventId")
        assert isinstance(current, hms.CurrentNotificationEventId)
    FilePosition(position).save(current.eventId)


def test_commits_made_by_icebergs_java_library(recorded_metastore: RecordedMetastore, tmp_path: Path, db: str) -> None:
    """Iceberg's own Java HiveCatalog (from the Iceberg Spark runtime jar of tools/jvm/pom.xml, on pyspark's Hive
    2.3 and Hadoop jars) makes the commits; through the shim into an App and from the notification log, each
    is what pyiceberg reads back."""
    position = tmp_path / "position"
    save_log_position(recorded_metastore.uri, position)
    warehouse = (tmp_path / "warehouse").as_uri()
    classpath = os.pathsep.join([*(str(p) for p in resolve("iceberg-spark")), str(spark_jars_dir() / "*")])
    source = Path(__file__).with_name("java_iceberg") / "IcebergJavaCommits.java"
    app = hw.App("iceberg-java", config=FAST)
    commits = Commits(app)
    recorder = Recorder(catalog(recorded_metastore.uri, tmp_path / "warehouse"))  # pyiceberg reads straight
    with Shim(recorded_metastore.uri, sinks=[AppSink(app)]) as shim:
        java = subprocess.Popen(
            [find_java(), "-cp", classpath, str(source), shim.uri, warehouse, db],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        drive(java, JAVA_COMMANDS, recorder, f"{db}.orders", lambda: "", stop_within=60)
        commits.wait(len(recorder.commits))
    expected = recorder.commits
    assert [[s.operation for s in e.added] for e in expected[:5]] == [
        [],
        ["append"],
        ["append"],
        ["overwrite"],
        ["delete"],
    ]
    assert expected[5].schema_changed and expected[6].spec_changed and "audit" in expected[7].refs
    assert len(expected[8].expired) == 1 and expected[9].kind == "drop"
    check_all(commits.events, expected)
    check_columns(commits.events, expected)
    assert commits.events[3].snapshots_added[0].added_records == 7
    assert commits.events[3].snapshots_added[0].deleted_records == 5

    from_log = hw.App("iceberg-java-log", config=FAST)
    logged = Commits(from_log, db=db)
    from_log.run(
        NotificationLogSource(recorded_metastore.uri, position=position, stop_at_end=True), handle_signals=False
    )
    check_all(logged.events, expected, drops=False)


def _docs_example(name: str) -> str:
    """The Python block of docs/iceberg.md marked ``<!-- example: NAME ... -->``."""
    text = (ROOT / "docs" / "iceberg.md").read_text()
    after = text.split(f"<!-- example: {name} ", 1)[1]
    return after.split("```python\n", 1)[1].split("\n```", 1)[0]


def test_the_docs_example_refreshes_on_appends_only(recorded_metastore: RecordedMetastore, tmp_path: Path) -> None:
    code = _docs_example("iceberg-appends")
    code = code.replace("thrift://hms:9083", recorded_metastore.uri).replace(
        "file:///tmp/warehouse", (tmp_path / "warehouse").as_uri()
    )
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / d) for d in ("sdk", "shim", "thrift"))}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()[-1]
    assert "web.clicks: 3 new records" in lines and "web.clicks: 2 new records" in lines, lines


#: The JVM options Spark 4.0 needs on Java 17 (its launcher's JavaModuleOptions), and a small heap.
SPARK_JVM_OPTIONS = [
    "-Xmx1g",
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(
        f"--add-opens=java.base/{package}=ALL-UNNAMED"
        for package in (
            "java.lang",
            "java.lang.invoke",
            "java.lang.reflect",
            "java.io",
            "java.net",
            "java.nio",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "jdk.internal.ref",
            "sun.nio.ch",
            "sun.nio.cs",
            "sun.security.action",
            "sun.util.calendar",
        )
    ),
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Dio.netty.tryReflectionSetAccessible=true",
]

SPARK_COMMANDS = [
    ("create", "create"),
    ("append 0 6", "append"),
    ("append 6 9", "append"),
    ("overwrite", "overwrite"),
    ("delete", "delete"),
    ("schema", "schema evolution"),
    ("spec", "partition spec"),
    ("branch", "branch"),
    ("expire", "expire"),
    ("drop", "drop"),
]


def check_columns(events: list[hw.IcebergCommitEvent], expected: list[Expected], *, recorded: bool = True) -> None:
    """The iceberg_* Arrow columns of each commit's event (per event, and from its Apiary message through the
    columnar decoder) are the commit's locations and the current snapshot pyiceberg reads back; null when the
    writer does not record its snapshot in the table parameters (``recorded=False``: pyiceberg)."""
    table = to_arrow(events)
    assert (
        to_arrow([apiary.encode(e) for e in events])
        .select(table.column_names[-9:])
        .equals(table.select(table.column_names[-9:]))
    )
    for row, commit in zip(table.to_pylist(), expected, strict=True):
        where = f"{commit.table} {commit.what}"
        assert (row["iceberg_previous_metadata_location"], row["iceberg_metadata_location"]) == (
            commit.previous,
            commit.current,
        ), where
        current = commit.current_snapshot
        if current is None or not recorded:  # no snapshot, or a writer that does not say
            assert {row[c] for c in table.column_names[-7:]} == {None}, where
            continue
        assert row["iceberg_snapshot_id"] == current.snapshot_id, where
        assert row["iceberg_committed_at"] is not None, where
        assert int(row["iceberg_committed_at"].timestamp() * 1000) == current.timestamp_ms, where
        # Iceberg's Java HiveCatalog writes the summary without its operation (the metadata file has it).
        assert row["iceberg_operation"] is None, where
        assert (
            row["iceberg_added_records"],
            row["iceberg_deleted_records"],
            row["iceberg_added_files"],
            row["iceberg_deleted_files"],
        ) == (current.added_records, current.deleted_records, current.added_files, current.deleted_files), where


def test_commits_made_by_spark_sql_with_the_iceberg_runtime(
    recorded_metastore: RecordedMetastore, kafka: str, tmp_path: Path, db: str
) -> None:
    """Spark SQL (Spark 4.0 in its own JVM, Iceberg's Spark runtime, a catalog of type hive) makes the commits;
    through the shim into an App, through the shim's Kafka sink and the Apiary topic, and from the notification
    log, each is what pyiceberg reads back."""
    position = tmp_path / "position"
    save_log_position(recorded_metastore.uri, position)
    warehouse = (tmp_path / "warehouse").as_uri()
    classpath = os.pathsep.join(str(p) for p in resolve("spark-iceberg"))
    source = Path(__file__).with_name("java_iceberg") / "IcebergSparkCommits.java"
    app = hw.App("iceberg-spark", config=FAST)
    commits = Commits(app)
    recorder = Recorder(catalog(recorded_metastore.uri, tmp_path / "warehouse"))
    log = tmp_path / "spark.log"
    topic = f"iceberg-spark-{db}"
    sink = KafkaSink(kafka, topic, tmp_path / "spool")
    with Shim(recorded_metastore.uri, sinks=[AppSink(app), sink]) as shim, log.open("w") as stderr:
        java = subprocess.Popen(
            [find_java(), *SPARK_JVM_OPTIONS, "-cp", classpath, str(source), shim.uri, warehouse, db],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=tmp_path,
        )
        drive(java, SPARK_COMMANDS, recorder, f"{db}.orders", lambda: log.read_text()[-3000:], stop_within=120)
        commits.wait(len(recorder.commits))
        time.sleep(0.5)  # a commit delivered twice would have arrived by now
        assert sink.wait_delivered(60), f"{sink.pending} events still spooled"
    expected = recorder.commits
    assert [[s.operation for s in e.added] for e in expected[:5]] == [
        [],
        ["append"],
        ["append"],
        ["overwrite"],
        ["delete"],
    ]
    assert expected[5].schema_changed and expected[6].spec_changed and "audit" in expected[7].refs
    assert len(expected[8].expired) == 1 and expected[9].kind == "drop"
    # INSERT OVERWRITE replaced the eu partition (ids 0, 2, 4, 6, 8) with ids 100-102
    assert (expected[3].added[0].deleted_records, expected[3].added[0].added_records) == (5, 3)
    check_all(commits.events, expected)
    check_columns(commits.events, expected)
    # Spark's own summary entries (its app id) came through: the writer is Spark indeed.
    assert "spark.app.id" in expected[1].added[0].summary

    from_topic = hw.App("iceberg-spark-kafka", config=FAST)
    consumed = Commits(from_topic)
    stop = run_in_thread(
        from_topic,
        hw.KafkaSource(kafka, topic, group_id=f"group-{db}", consumer_config={"auto.offset.reset": "earliest"}),
    )
    consumed.wait(len(expected))
    stop()
    check_all(consumed.events, expected)
    check_columns(consumed.events, expected)

    from_log = hw.App("iceberg-spark-log", config=FAST)
    logged = Commits(from_log, db=db)
    from_log.run(
        NotificationLogSource(recorded_metastore.uri, position=position, stop_at_end=True), handle_signals=False
    )
    check_all(logged.events, expected, drops=False)
