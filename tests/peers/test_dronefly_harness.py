"""The Drone Fly harness itself (tests/peers/dronefly.py): both releases and ``hivewire run`` start from one
properties file, each in its own consumer group, and record the same callbacks for hivewire-made Apiary
messages; a message Drone Fly cannot read shows in :meth:`DroneFly.errors`.

What Apiary 8.2.2 and the shim publish is compared in test_dronefly_side_by_side.py; this one holds the
harness's own promises, on events built in Python (``hivewire.testing.produce`` writes them as the Apiary
listener does).
"""

from __future__ import annotations

from callback_recorder import comparable
from dronefly import DroneFly, HivewireRun, of_database
from waiting import wait_for

import hivewire as hw
from hivewire.tools._testing import make_partition, make_table, produce


def wait_for_records(
    peer: DroneFly | HivewireRun, db: str, count: int, timeout: float = 120
) -> list[dict[str, object]]:

    def enough() -> list[dict[str, object]] | None:
        records = of_database(peer.records(), db)
        return records if len(records) >= count else None

    found: list[dict[str, object]] = wait_for(enough, f"{count} records of {db} in {peer.recording}", timeout, 0.5)
    return found


def test_both_releases_and_hivewire_record_the_same_callbacks(
    dronefly_109: DroneFly, dronefly_108: DroneFly, hivewire_run: HivewireRun, kafka: str, peers_topic: str, unique: str
) -> None:
    for peer in (dronefly_109, dronefly_108):
        peer.caught_up(kafka, peers_topic)
    marks = {peer: peer.mark() for peer in (dronefly_109, dronefly_108)}
    db = unique
    table = make_table(db, "orders", partition_keys={"dt": "string"}, parameters={"team": "core"})
    part = make_partition(table, ["2024-06-01"])
    altered = make_partition(table, ["2024-06-01"])
    altered.parameters = {**(altered.parameters or {}), "checked": "yes"}
    events = [
        hw.CreateTableEvent(table=table),
        hw.AddPartitionEvent(table=table, partitions=[part]),
        hw.AlterPartitionEvent(table=table, old_partition=part, new_partition=altered),
        hw.DropTableEvent(table=table, delete_data=True),
    ]
    produce(kafka, peers_topic, events)

    ours = [comparable(r) for r in wait_for_records(hivewire_run, db, len(events))]
    assert [r["callback"] for r in ours] == ["onCreateTable", "onAddPartition", "onAlterPartition", "onDropTable"]
    for peer in (dronefly_109, dronefly_108):
        theirs = wait_for_records(peer, db, len(events))
        assert [comparable(r, peer.release) for r in theirs] == ours, peer.name
        assert peer.errors(marks[peer]) == [], peer.name
    # Drone Fly 1.0.9 hands AlterPartitionEvent (status, isTruncateOp) swapped (peers README): the status it
    # shows is false and isTruncateOp carries the real one. 1.0.8's Hive 2.3 event has no isTruncateOp.
    alter_109 = next(r for r in of_database(dronefly_109.records(), db) if r["callback"] == "onAlterPartition")
    alter_108 = next(r for r in of_database(dronefly_108.records(), db) if r["callback"] == "onAlterPartition")
    assert (alter_109["status"], alter_109["isTruncateOp"]) == (False, True)
    assert (alter_108["status"], alter_108["isTruncateOp"]) == (True, None)


def test_a_message_drone_fly_cannot_read_shows_in_its_errors(
    dronefly_108: DroneFly, kafka: str, peers_topic: str
) -> None:
    dronefly_108.caught_up(kafka, peers_topic)
    mark = dronefly_108.mark()
    produce(kafka, peers_topic, [b'{"eventType": "ON_NOTHING_KNOWN"}'])
    wait_for(lambda: dronefly_108.errors(mark), "an error in Drone Fly 1.0.8's log", 60, 0.5)
    assert any("Cannot unmarshal" in line for line in dronefly_108.errors(mark)), dronefly_108.log_tail(30)
