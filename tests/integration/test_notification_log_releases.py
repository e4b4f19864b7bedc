"""Issues 29 (acceptance 3) and 37 (acceptance 4): a genuine notification log of Hive 3.1 and of Hive 4.0.1.

Each metastore (``notifying_hive3_metastore``, ``notifying_hive4_metastore``, tests/oracle.py; the test id
names the release) names its log writer in ``metastore.transactional.event.listeners``, as Hive's docs
configure it. On 3.1 that is Hive's own ``org.apache.hive.hcatalog.listener.DbNotificationListener``
(hcatalog's server extensions 3.1.3, profile ``hive3-notification-listener`` of tools/jvm/pom.xml), writing
3.1's default ``json-0.2``. For 4.0.1 no DbNotificationListener jar that the metastore here can load is served
(the pom says why), so the tests' glue stands in its slot (tests/java_hive4/.../Hive4NotificationLog.java):
Hive 4.0.1's ``MessageBuilder`` builds every message, its ``GzipJSONMessageEncoder`` serializes it
(``gzip(json-2.0)``) and its ``RawStore.addNotificationEvent`` stores it inside the event's transaction, as
DbNotificationListener does. The RecordingListener oracle beside either records what the metastore fired.

hivewire reads the log with :class:`NotificationLogSource` (every type of the workload arrives as its typed
class), asks the server to filter (``NotificationEventRequest`` fields 3-6: 4.0.1 applies them and sends fewer
entries; 3.1 ignores them and sends every entry, and the source filters), and ``hivewire bridge`` publishes the
log to an Apiary topic on the real broker.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from hive_workload import TYPED, workload
from oracle import RecordedMetastore
from test_notification_log import current_id, read_all, topic_records

import hivewire as hw
from hivewire.events._notification import from_notification
from hivewire.metastore import MetastoreClient
from hivewire.runtime._notification_log import FilePosition, Filter, fetch

#: The fixture of each release's metastore, and the message format its listener writes by default.
RELEASES = {"3.1": ("notifying_hive3_metastore", "json-0.2"), "4": ("notifying_hive4_metastore", "gzip(json-2.0)")}


@pytest.fixture(params=list(RELEASES))
def notifying(request: pytest.FixtureRequest) -> tuple[str, RecordedMetastore]:
    """The release and its metastore with Hive's DbNotificationListener, in turn (the test id names it)."""
    server: RecordedMetastore = request.getfixturevalue(RELEASES[request.param][0])
    return request.param, server


def test_db_notification_listener_events_reach_a_listener_typed(
    notifying: tuple[str, RecordedMetastore], unique: str, tmp_path: Path
) -> None:
    release, oracle = notifying
    position = tmp_path / "position"
    first = current_id(oracle.uri) + 1
    FilePosition(position).save(first - 1)
    mark = oracle.mark()
    workload(oracle, unique)
    last = current_id(oracle.uri)
    with MetastoreClient(oracle.uri) as client:
        entries = fetch(client, first - 1, last - first + 1)
    assert {e.messageFormat for e in entries} == {RELEASES[release][1]}  # the release's default
    written = [e.eventType for e in entries]
    assert set(written) == set(TYPED), written  # every type of the workload, written by Hive's listener

    events = read_all(oracle.uri, position)
    assert [e.origin.offset for e in events if e.origin] == [e.eventId for e in entries]
    assert [e.event_type.value for e in events] == written
    for event in events:
        assert type(event) is TYPED[event.event_type.value], event  # typed, never the untyped fallback
        assert event.db_name == unique and event.status

    # The changes the oracle saw are the log's, in order, with the objects 3.1's messages carry whole.
    fired = [r for r in oracle.events(mark) if r.status]
    modeled = [e for e in events if e.event_type.value in {r.event_type for r in fired}]
    assert [e.event_type.value for e in modeled] == [r.event_type for r in fired]
    for recorded, event in zip(fired, modeled, strict=True):
        if isinstance(event, hw.CreateTableEvent):
            assert event.table == recorded["table"]
        elif isinstance(event, hw.AlterTableEvent):
            assert (event.old_table, event.new_table) == (recorded["oldTable"], recorded["newTable"])
        elif isinstance(event, hw.AddPartitionEvent):
            assert event.partitions == recorded["partitions"]
        elif isinstance(event, hw.AlterPartitionEvent):
            assert (event.old_partition, event.new_partition) == (recorded["oldPartition"], recorded["newPartition"])
        elif isinstance(event, hw.InsertEvent):
            assert (event.table_name, event.partition_key_values) == ("orders", recorded["partitionKeyValues"])
            # ReplChangeManager.encodeFileUri writes "path###" without the checksum while the change manager is
            # off (metastore.repl.cm.enabled, false by default): the message has none to give.
            assert recorded["fileChecksums"] == ["ab12"]
            assert (event.files, event.file_checksums) == (recorded["files"], [""])
        elif isinstance(event, hw.CreateDatabaseEvent):
            assert event.database.name == unique
        if release == "4":  # 4.x's messages carry the dropped objects and the altered database whole
            if isinstance(event, hw.DropTableEvent):
                assert event.table == recorded["table"]
            elif isinstance(event, hw.DropPartitionEvent):
                assert [p.values for p in event.partitions] == [p.values for p in recorded["partitions"]]
                assert event.table == recorded["table"]
            elif isinstance(event, hw.DropDatabaseEvent | hw.CreateDatabaseEvent):
                assert event.database == recorded["database"]
    assert FilePosition(position).load() == last


def test_hivewire_bridge_to_an_apiary_topic(
    notifying: tuple[str, RecordedMetastore], kafka: str, unique: str, tmp_path: Path
) -> None:
    _, oracle = notifying
    uri, topic = oracle.uri, f"bridge-{unique}"
    first = current_id(uri) + 1
    workload(oracle, unique)
    last = current_id(uri)
    checkpoint = tmp_path / "checkpoint"
    checkpoint.write_text(json.dumps({"eventId": first - 1, "offsets": {}}))
    command = [sys.executable, "-m", "hivewire", "bridge", "--to-kafka", "--bootstrap-servers", kafka, "--topic", topic,
               "--metastore-uris", uri, "--checkpoint", str(checkpoint), "--until-end"]  # fmt: skip
    admin = AdminClient({"bootstrap.servers": kafka})
    for future in admin.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)]).values():
        future.result(30)  # Apiary's topics have partitions of their own: the bridge places records as Apiary does
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(command, env=env, check=True, timeout=300)
    with MetastoreClient(uri) as client:
        entries = {e.eventId: e for e in fetch(client, first - 1, last - first + 1)}
    records = topic_records(kafka, topic)
    ids = [int(dict(r.headers())["hivewire.notification.event.id"]) for r in records]
    # Every entry with an Apiary message (all but the functions, which only the log carries), once each.
    carried = [i for i, e in entries.items() if e.eventType not in ("CREATE_FUNCTION", "DROP_FUNCTION")]
    assert sorted(ids) == carried
    for record in records:
        event = hw.apiary.decode(record.value())
        event_id = int(dict(record.headers())["hivewire.notification.event.id"])
        assert event == from_notification(entries[event_id], {"DB_NOTIFICATION_EVENT_ID_KEY_NAME": str(event_id)})
        assert record.partition() == hw.apiary.partition_for(event.qualified_name, 4)
        assert struct.unpack(">q", record.key()) == (entries[event_id].eventTime * 1000,)


def test_server_side_filters(notifying: tuple[str, RecordedMetastore], unique: str, tmp_path: Path) -> None:
    """3.1 ignores the request's filter fields and sends every entry (Hive 4 would filter them itself: fewer on
    the wire); either way the source delivers the same selection."""
    release, oracle = notifying
    uri = oracle.uri
    first = current_id(uri) + 1
    position = tmp_path / "position"
    FilePosition(position).save(first - 1)
    for db in (f"{unique}_a", f"{unique}_b"):
        workload(oracle, db)
    last = current_id(uri)
    wanted = Filter(db=f"{unique}_a", tables=frozenset({"orders"}), skip_types=frozenset({"ADD_PARTITION"}))
    with MetastoreClient(uri) as client:
        everything = fetch(client, first - 1, last - first + 1)
        on_the_wire = fetch(client, first - 1, last - first + 1, wanted)
    selected = [e for e in everything if wanted.wants(e)]
    assert len(everything) == 2 * len(TYPED) and selected
    if release == "4":
        # The server applied the skip list, the database and the tables: exactly the selection, nothing more.
        assert [e.eventId for e in on_the_wire] == [e.eventId for e in selected]
        assert len(on_the_wire) < len(everything)
    else:
        assert [e.eventId for e in on_the_wire] == [e.eventId for e in everything]
    events = read_all(uri, position, db=f"{unique}_A", tables=["ORDERS"], skip_types=["ADD_PARTITION"])
    assert [e.origin.offset for e in events if e.origin] == [e.eventId for e in selected]
    assert FilePosition(position).load() == last  # the filtered tail counts as read
