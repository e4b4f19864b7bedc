"""Drone Fly 1.0.9 and 1.0.8 beside ``hivewire run``: the same topic, the same properties file (different consumer
groups), fed (a) by Apiary 8.2.2 inside a real Hive 2.3 metastore and (b) by the hivewire shim in front of one,
each with the workload of test_apiary_listener.py (direct client calls, INSERT included, and PySpark's 25
statements).

For every callback Drone Fly delivers, its Java recorder's line equals the Python recorder's
(callback_recorder.comparable), table by table in the same order, and Drone Fly logs no error for any of it. What
Drone Fly does differently is stated here and in docs/compatibility.md:

* 1.0.9 swaps ALTER_PARTITION's status and isTruncateOp (undone by ``comparable``, asserted below);
* neither release delivers INSERT here (:data:`NO_INSERT` says why for each): their INSERTs are compared as
  missing, and only that failure may be in their logs;
* Drone Fly drops the message's ``parameters`` (``hive.version``) and environment context.

The shim runs with ``--no-database-events``: Drone Fly's reader knows only Apiary's seven event types.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from callback_recorder import comparable
from dronefly import DroneFly, HivewireRun
from runtime_harness import read_to_end
from test_apiary8_listener import APIARY_8
from test_apiary_listener import fire_insert, run_workload, start_apiary_metastore
from test_shim_kafka import ShimProcess
from waiting import wait_for

import hivewire as hw
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_table

#: Why each Drone Fly release cannot deliver INSERT here, as its log says it (docs/compatibility.md): both build
#: Hive's InsertEvent, whose constructor looks the table up through an in-process HMSHandler of their own.
NO_INSERT = {
    # Hadoop's UserGroupInformation calls Subject.getSubject, which Java 24 removed (1.0.9 needs Java 21+).
    "1.0.9": re.compile(r"getSubject is not supported"),
    # Its HMSHandler is built with init=false (no end-function listeners), and Hive's shims do not load on the
    # Hadoop 2.5.1 its release resolves (no org.apache.hadoop.crypto.key.KeyProvider).
    "1.0.8": re.compile(r"endFunctionListeners\" is null|org/apache/hadoop/crypto/key/KeyProvider"),
}


@dataclass
class Feed:
    """Where the workload's calls go (``uri``; ``workdir`` for its external tables) and how its publisher places
    a rename (``renames_on_old_name``: Apiary 8.x sends it to the old name's partition)."""

    uri: str
    workdir: Path
    renames_on_old_name: bool


@pytest.fixture(scope="module")
def apiary_feed(
    tmp_path_factory: pytest.TempPathFactory, java_classes: Path, kafka: str, peers_topic: str
) -> Iterator[Feed]:
    workdir = tmp_path_factory.mktemp("apiary8-peers")
    started = start_apiary_metastore(APIARY_8, "2.3", workdir, java_classes, kafka, topic=peers_topic)
    apiary_metastore = next(started)
    server = apiary_metastore.oracle.server
    yield Feed(server.uri, server.workdir, renames_on_old_name=True)
    next(started, None)


@pytest.fixture(scope="module")
def shim_feed(
    tmp_path_factory: pytest.TempPathFactory, metastore: LocalMetastore, kafka: str, peers_topic: str
) -> Iterator[Feed]:
    workdir = tmp_path_factory.mktemp("shim-peers")
    args = ["--upstream", metastore.uri, "--kafka-bootstrap-servers", kafka, "--topic", peers_topic]
    shim = ShimProcess(workdir, [*args, "--spool-dir", str(workdir / "spool"), "--no-database-events"])
    yield Feed(shim.uri, metastore.workdir, renames_on_old_name=False)
    shim.terminate()


class Calls(LocalMetastore):
    """A stand-in for the workload's server (never started): its calls go to ``uri``, its tables under
    ``workdir``."""

    def __init__(self, uri: str, workdir: Path) -> None:
        super().__init__(workdir=workdir)
        self._uri = uri

    @property
    def uri(self) -> str:
        return self._uri


def published(kafka: str, topic: str, dbs: set[str]) -> int:
    """How many messages of ``topic`` are about the databases ``dbs``."""
    return sum(json.loads(value).get("databaseName", "").lower() in dbs for value, _ in read_to_end(kafka, topic))


def of(records: list[dict[str, object]], dbs: set[str]) -> list[dict[str, object]]:
    return [r for r in records if str(r.get("db") or "").lower() in dbs]


def records_of(
    peer: DroneFly | HivewireRun, dbs: set[str], count: int, timeout: float = 120
) -> list[dict[str, object]]:
    """The peer's records of ``dbs`` once it has ``count`` of them, or after ``timeout`` (the caller compares)."""
    with contextlib.suppress(AssertionError):
        wait_for(lambda: len(of(peer.records(), dbs)) >= count, f"{count} records", timeout, interval=1)
    return of(peer.records(), dbs)


def per_table(records: list[dict[str, object]], renames_on_old_name: bool) -> dict[str, list[dict[str, object]]]:
    """Records by the table whose partition their message is in (the old name of a rename, for Apiary 8.x)."""
    out: dict[str, list[dict[str, object]]] = {}
    for record in records:
        old = record.get("oldTable")
        if renames_on_old_name and isinstance(old, dict):
            name = f"{old['db']}.{old['name']}"
        else:
            name = f"{record['db']}.{record['tableName']}"
        out.setdefault(name.lower(), []).append(record)
    return out


def compare(
    peer: DroneFly, ours: list[dict[str, object]], dbs: set[str], feed: Feed, mark: int
) -> tuple[list[str], list[dict[str, object]]]:
    """The differences between what ``peer`` recorded for ``dbs`` and ``ours`` (hivewire's), table by table."""
    expected = [r for r in ours if not (peer.release in NO_INSERT and r["callback"] == "onInsert")]
    theirs = records_of(peer, dbs, len(expected))
    known = NO_INSERT.get(peer.release)
    report = [
        f"Drone Fly {peer.release}: {block}"
        for block in peer.error_blocks(mark)
        if not (known and "InsertEvent.<init>" in block and known.search(block))
    ]
    mine = per_table([comparable(r) for r in expected], feed.renames_on_old_name)
    got = per_table([comparable(r, peer.release) for r in theirs], feed.renames_on_old_name)
    for table in sorted(set(mine) | set(got)):
        a, b = mine.get(table, []), got.get(table, [])
        if a != b:
            report.append(f"Drone Fly {peer.release}, {table}: {len(b)} callbacks, hivewire {len(a)}")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                if x != y:
                    keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
                    report.append(f"  #{i} {x['callback']}: {[(k, x.get(k), y.get(k)) for k in keys]}")
                    break
    return report, theirs


def side_by_side(
    feed: Feed, peers: tuple[DroneFly, DroneFly], run: HivewireRun, kafka: str, topic: str, db: str, tmp_path: Path
) -> None:
    for peer in peers:
        peer.caught_up(kafka, topic)
    marks = [peer.mark() for peer in peers]
    run_workload(Calls(feed.uri, feed.workdir), "2.3", db, tmp_path)
    dbs = {db, f"{db}_spark"}
    count = published(kafka, topic, dbs)
    ours = records_of(run, dbs, count)
    assert len(ours) == count, f"hivewire run recorded {len(ours)} of {count} messages\n{run.log_tail()}"
    kinds = {r["callback"] for r in ours}
    assert kinds >= {"onCreateTable", "onAlterTable", "onDropTable", "onAddPartition", "onAlterPartition"}, kinds
    assert {"onDropPartition", "onInsert"} <= kinds, kinds
    report: list[str] = []
    for peer, mark in zip(peers, marks, strict=True):
        differences, theirs = compare(peer, ours, dbs, feed, mark)
        report += differences
        alters = [r for r in theirs if r["callback"] == "onAlterPartition"]
        if peer.release == "1.0.9":  # the swap, as the peers README found it
            assert alters and all(r["isTruncateOp"] is not None for r in alters)
    assert not report, "\n".join(report)


@pytest.mark.timeout(1800)  # the peers' start, PySpark's statements on a loaded machine
@pytest.mark.parametrize("feed_name", ["apiary_feed", "shim_feed"])
def test_drone_fly_and_hivewire_receive_alike(
    request: pytest.FixtureRequest,
    feed_name: str,
    dronefly_109: DroneFly,
    dronefly_108: DroneFly,
    hivewire_run: HivewireRun,
    kafka: str,
    peers_topic: str,
    unique: str,
    tmp_path: Path,
) -> None:
    """(a) Apiary 8.2.2 inside the metastore, (b) the shim in front of one, feeding both Drone Flys and hivewire."""
    feed: Feed = request.getfixturevalue(feed_name)
    side_by_side(feed, (dronefly_109, dronefly_108), hivewire_run, kafka, peers_topic, unique.lower(), tmp_path)


@pytest.mark.parametrize("feed_name", ["apiary_feed", "shim_feed"])
def test_a_failed_insert_is_published_with_status_false(
    request: pytest.FixtureRequest,
    feed_name: str,
    hivewire_run: HivewireRun,
    kafka: str,
    peers_topic: str,
    unique: str,
) -> None:
    """fire_listener_event(successful=false) succeeds at the metastore, which fires INSERT with status false:
    Apiary 8.2.2 publishes it, and so does the shim by default (no --publish-failures); hivewire delivers it
    with status false (Drone Fly delivers no INSERT: :data:`NO_INSERT`)."""
    feed: Feed = request.getfixturevalue(feed_name)
    db = unique.lower()
    server = Calls(feed.uri, feed.workdir)
    external = feed.workdir / "external"
    with hw.MetastoreClient(feed.uri, timeout=120) as client:
        client.create_database(make_database(db, location=(external / f"{db}.db").as_uri()))
        table = make_table(db, "orders", location=f"file:{external / db / 'orders'}", table_type="EXTERNAL_TABLE")
        client.create_table(table)
        fire_insert(server, client, db, [], [], "2.3", successful=False)
        client.drop_database(db, True, True)
    inserts = [
        json.loads(value)
        for value, _ in read_to_end(kafka, peers_topic)
        if json.loads(value).get("databaseName", "").lower() == db and b"ON_INSERT" in value
    ]
    assert [(m["eventType"], m["status"]) for m in inserts] == [("ON_INSERT", False)]
    records = [r for r in records_of(hivewire_run, {db}, 3) if r["callback"] == "onInsert"]
    assert [(r["tableName"], r["status"]) for r in records] == [("orders", False)], hivewire_run.records()[-5:]
