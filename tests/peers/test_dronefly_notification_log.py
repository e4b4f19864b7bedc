"""Issue 37, acceptance 2 (c): Drone Fly 1.0.9 and ``hivewire run`` on a topic ``hivewire bridge`` fills from a
genuine Hive 4.0.1 notification log.

The log is ``notifying_hive4_metastore``'s (tests/oracle.py: Hive 4.0.1's MessageBuilder, GzipJSONMessageEncoder
and RawStore write it, in ``gzip(json-2.0)``); the workload is tests/hive_workload.py's, under a database of
the test's own. ``hivewire bridge --until-end`` publishes the log's entries to the peers' Apiary topic
(tests/peers/conftest.py), which Drone Fly 1.0.9 (the tests' Java recorder) and ``hivewire run`` (the Python
recorder) consume in groups of their own, both started from the same properties file. Their records are equal
(:func:`callback_recorder.comparable`), in the same order for each table, and Drone Fly logs no error.

Where Drone Fly deviates (docs/sources.md, "The bridge"): 1.0.9 on Java 25 does not deliver INSERT (building
Hive's InsertEvent fails in Hadoop's UserGroupInformation, "getSubject is not supported"), so INSERT is
compared on hivewire's side only, against the log; and it swaps ALTER_PARTITION's status and isTruncateOp
(``comparable`` reads the status where it put it). Database entries are published by the bridge as hivewire's
own ``ON_*_DATABASE`` messages by default, which Apiary's receiver cannot read (Drone Fly logs an error for
each): for a topic Drone Fly reads, the bridge runs with ``--no-database-events``, as the shim can.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from callback_recorder import CALLBACKS, comparable
from dronefly import DroneFly, HivewireRun, of_database
from hive_workload import workload
from oracle import RecordedMetastore

from hivewire.events._notification import names_of
from hivewire.metastore import MetastoreClient
from hivewire.runtime._notification_log import fetch
from hivewire_thrift.hive_metastore import ttypes as hms

#: Drone Fly 1.0.9 on Java 25 cannot build Hive 4's InsertEvent (peers README): it delivers every other type.
NOT_DELIVERED_BY_DRONEFLY_109 = {"INSERT"}


def _current_id(uri: str) -> int:
    with MetastoreClient(uri) as client:
        current = client.call("get_current_notificationEventId")
        assert isinstance(current, hms.CurrentNotificationEventId)
        return int(current.eventId)


def _bridge(uri: str, kafka: str, topic: str, after: int, checkpoint: Path) -> None:
    checkpoint.write_text(json.dumps({"eventId": after, "offsets": {}}))
    command = [sys.executable, "-m", "hivewire", "bridge", "--to-kafka", "--bootstrap-servers", kafka, "--topic", topic,
               "--metastore-uris", uri, "--checkpoint", str(checkpoint), "--until-end",
               "--no-database-events"]  # fmt: skip
    subprocess.run(command, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=True, timeout=300)


def _wait(peer: DroneFly | HivewireRun, db: str, count: int, timeout: float = 180) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = of_database(peer.records(), db)
        if len(records) >= count:
            time.sleep(2)  # anything beyond the expected count would show now
            return of_database(peer.records(), db)
        time.sleep(0.5)
    raise AssertionError(f"{len(of_database(peer.records(), db))} of {count} records of {db} in {peer.recording}")


def _per_table(records: list[dict[str, object]]) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for record in records:
        out.setdefault(str(record.get("tableName")), []).append(record)
    return out


def test_dronefly_109_and_hivewire_run_read_the_bridged_hive4_log_alike(
    notifying_hive4_metastore: RecordedMetastore,
    dronefly_109: DroneFly,
    hivewire_run: HivewireRun,
    kafka: str,
    peers_topic: str,
    unique: str,
    tmp_path: Path,
) -> None:
    oracle, db = notifying_hive4_metastore, unique
    dronefly_109.caught_up(kafka, peers_topic)
    mark = dronefly_109.mark()
    first = _current_id(oracle.uri) + 1
    workload(oracle, db)
    last = _current_id(oracle.uri)
    with MetastoreClient(oracle.uri) as client:
        entries = fetch(client, first - 1, last - first + 1)
    assert {e.messageFormat for e in entries} == {"gzip(json-2.0)"}
    table_types = [e.eventType for e in entries if e.eventType in CALLBACKS]
    assert set(table_types) == set(CALLBACKS), table_types  # every type Drone Fly has a callback for

    _bridge(oracle.uri, kafka, peers_topic, first - 1, tmp_path / "checkpoint")

    # hivewire: every bridged entry of the database, in each table's log order. Functions have no Apiary
    # message; database events are hivewire's own, which Apiary's receiver refuses ("ON_DROP_DATABASE": not one
    # of its EventType values, in Drone Fly's log): the bridge leaves them out with --no-database-events.
    bridged = [e for e in entries if e.eventType in CALLBACKS]
    ours = _wait(hivewire_run, db, len(bridged))
    assert len(ours) == len(bridged)
    logged = [{"tableName": names_of(e)[1], "callback": CALLBACKS[e.eventType]} for e in bridged]
    assert _per_table([{k: r[k] for k in ("tableName", "callback")} for r in ours]) == _per_table(logged)
    assert all(r["status"] is True for r in ours)

    # Drone Fly 1.0.9: the table and partition callbacks, less INSERT, equal to hivewire's and in each table's order.
    delivered = {CALLBACKS[t] for t in CALLBACKS if t not in NOT_DELIVERED_BY_DRONEFLY_109}
    expected = [comparable(r) for r in ours if r["callback"] in delivered]
    theirs = [comparable(r, dronefly_109.release) for r in _wait(dronefly_109, db, len(expected))]
    assert _per_table(theirs) == _per_table(expected)
    assert len(theirs) == len(expected)
    # Its log: nothing it could not read; the one error is its own failure to build the INSERT's event on Java
    # 25 (Hadoop's UserGroupInformation: "getSubject is not supported"), once per INSERT.
    errors = dronefly_109.errors(mark)
    assert not [line for line in errors if "unmarshal" in line.lower()], errors
    logged_errors = [line for line in errors if " ERROR " in line]
    inserts = sum(e.eventType == "INSERT" for e in bridged)
    assert [line.split(" ERROR ", 1)[1] for line in logged_errors] == [
        "[main] com.expediagroup.dataplatform.dronefly.app.DroneFlyRunner: Problem processing this event."
    ] * inserts, errors
    assert sum("getSubject is not supported" in line for line in errors if "Caused by" in line) == inserts, errors

    # INSERT, which Drone Fly 1.0.9 does not deliver here: hivewire's record holds what the log's entry says.
    (insert,) = [r for r in ours if r["callback"] == "onInsert"]
    assert (insert["tableName"], insert["partitionValues"], insert["files"]) == (
        "orders",
        ["2024-01-01"],
        ["file:/x/part-0"],
    )
