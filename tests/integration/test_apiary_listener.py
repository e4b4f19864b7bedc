"""Apiary's own KafkaMetaStoreEventListener, loaded into real Hive Metastores 2.3.10, 3.1.3 and 4.0.1,
publishing to a real broker.

The release is what Maven Central serves (tools/jvm/pom.xml, profile ``apiary-listener``: 6.0.2; the 8.x and
other 5.x/6.x releases are refused there, see the pom). The same metastore loads the oracle
(tests/java RecordingListener, compiled against that release's jars), so each message Apiary wrote is
compared field by field with what the metastore fired. The workload is direct client calls on every release
and, on 2.3, PySpark 4's DDL and DML (spark_statements.py, 25 statements; Spark's built-in Hive client is
2.3's); a hivewire app consumes the topic with the real runtime.

Apiary 6.0.2 publishes table, partition and insert events (its onCreateDatabase and onDropDatabase are
empty), keyed by its message's timestamp as a big-endian long, on partition ``abs(hash("db.table") % n)``,
with the record's timestamp left to the producer (CreateTime at send). On 3.1 and 4.x it needs Hive's
hive-common beside the standalone metastore (HiveVersionInfo), and its INSERT handling calls
``InsertEvent.getDb()``, which Hive 3.0 removed: the client's fire_listener_event fails there.

The tests take the listener's release from the fixture (:class:`ApiaryRelease`): tests/peers/test_apiary8_listener.py
runs the same tests on 8.2.2 (the ``all`` jar, from the peers' repository), which differs in one way: a
rename's ALTER_TABLE goes to the old name's partition.
"""

from __future__ import annotations

import copy
import json
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from fidelity import differences
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes as peer_types
from oracle import Recorded, RecordedMetastore
from runtime_harness import KafkaHarness, read_to_end
from thrift.Thrift import TType

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.tools import _jvm
from hivewire.tools._hive_metastore import HiveMetastore, compile_java_for, hive_common_jars
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

PREFIX = "com.expediagroup.apiary.extensions.events.metastore.kafka.messaging."
LISTENER = "com.expediagroup.apiary.extensions.events.metastore.kafka.listener.KafkaMetaStoreEventListener"
PARTITIONS = 4
#: What Apiary 6.0.2 publishes (javap: every other on* method of its listener is empty or absent).
PUBLISHED = {
    "CREATE_TABLE",
    "ALTER_TABLE",
    "DROP_TABLE",
    "ADD_PARTITION",
    "ALTER_PARTITION",
    "DROP_PARTITION",
    "INSERT",
}
GOLDEN = Path(__file__).resolve().parents[1] / "unit" / "apiary_golden"
JAVA = Path(__file__).resolve().parents[1] / "java" / "hivewire" / "test"


@dataclass
class Message:
    key: bytes
    partition: int
    timestamp: tuple[int, int]
    value: bytes


@dataclass
class ApiaryMetastore:
    release: str
    oracle: RecordedMetastore
    topic: str
    bootstrap: str
    apiary: ApiaryRelease


@dataclass(frozen=True)
class ApiaryRelease:
    """A release of Apiary's Kafka listener and what the tests expect of it.

    ``component`` is its pom profile; ``renames_on_old_name``: an ALTER_TABLE goes to the partition of the *old*
    table's name (8.1.15 on: "to keep ordering"), so a rename stays behind the table's earlier events, while
    its message's ``qualifiedTableName`` is the new name; ``golden`` the golden files checked against what it
    wrote, and whether their nested objects' fields are too (files recorded from the same listener and Hive).
    """

    version: str
    component: str
    renames_on_old_name: bool
    golden: str
    nested_golden: bool = False


APIARY_6 = ApiaryRelease("6.0.2", "apiary-listener", renames_on_old_name=False, golden="5.0.2-ON_*.json")

#: The releases Apiary is loaded into, and what else each needs: Apiary reads HiveVersionInfo from Hive's
#: hive-common, which a standalone metastore (3.1, 4.x) does not carry.
RELEASES = ["2.3", "3.1", "4"]


def start_apiary_metastore(
    apiary_release: ApiaryRelease,
    release: str,
    workdir: Path,
    java_classes: Path,
    kafka: str,
    topic: str | None = None,
) -> Iterator[ApiaryMetastore]:
    """A metastore of Hive ``release`` with the oracle and ``apiary_release``'s listener publishing to ``topic``
    (``PARTITIONS`` partitions) or a topic of its own on ``kafka`` (the fixture of this module and of
    tests/peers' Apiary 8.2.2 tests)."""
    if topic is None:
        topic = f"apiary-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": kafka})
        for future in admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)]).values():
            future.result(30)
    recording = workdir / "events.jsonl"
    recording.touch()
    options = {
        "workdir": workdir,
        "listeners": ["hivewire.test.RecordingListener", LISTENER],
        "properties": {
            "hivewire.test.recording.file": str(recording),
            f"{PREFIX}topic.name": topic,
            f"{PREFIX}bootstrap.servers": kafka,
            f"{PREFIX}client.id": "hivewire-test-apiary",
        },
    }
    apiary_jars = _jvm.resolve(apiary_release.component)
    server: LocalMetastore
    if release == "2.3":
        server = LocalMetastore(classpath=[java_classes, *apiary_jars], **options)  # type: ignore[arg-type]
    else:
        oracle = compile_java_for(release[0], [JAVA / "RecordingListener.java"], workdir / "oracle")
        classpath = [oracle, *apiary_jars, *hive_common_jars(release[0])]
        server = HiveMetastore(release[0], classpath=classpath, **options)  # type: ignore[arg-type]
    server.start()
    yield ApiaryMetastore(release, RecordedMetastore(server, recording), topic, kafka, apiary_release)
    server.close()


@pytest.fixture(scope="module", params=RELEASES)
def apiary_metastore(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, java_classes: Path, kafka: str
) -> Iterator[ApiaryMetastore]:
    workdir = tmp_path_factory.mktemp(f"apiary-metastore-{request.param}")
    yield from start_apiary_metastore(APIARY_6, request.param, workdir, java_classes, kafka)


def read_topic(bootstrap: str, topic: str, expected: int, timeout: float = 120) -> list[Message]:
    """At least ``expected`` messages of ``topic``, in partition order, with key, partition and timestamp."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}"})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    out: list[Message] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < expected and time.monotonic() < deadline:
            for m in consumer.consume(500, 0.5):
                if m.error() is None:
                    out.append(Message(m.key() or b"", m.partition(), m.timestamp(), m.value() or b""))
    finally:
        consumer.close()
    return out


def run_workload(server: LocalMetastore, release: str, db: str, tmp_path: Path) -> None:
    """Direct client calls on one database; on 2.3, then PySpark's 25 statements on another (Apiary 6.0.2 fails
    Hive 3.0+'s inserts, so only 2.3 runs Spark here; test_shim_fidelity.py runs it on 3.1 and 4.0.1)."""
    external = server.workdir / "external"  # outside the managed warehouse, which Hive 4 requires
    with hw.MetastoreClient(server.uri, timeout=300) as client:
        client.create_database(make_database(db, location=(external / f"{db}.db").as_uri()))
        table = make_table(
            db, "orders", columns={"id": "bigint"}, partition_keys={"dt": "string"},
            location=f"file:{external / db / 'orders'}", parameters={"team": "core"}, table_type="EXTERNAL_TABLE",
        )  # fmt: skip
        client.create_table(table)
        table = client.get_table(db, "orders")
        client.add_partitions([make_partition(table, [f"2024-06-0{d}"]) for d in range(1, 4)])
        partition = client.get_partitions_by_names(db, "orders", ["dt=2024-06-02"])[0]
        partition.parameters["checked"] = "yes"
        client.alter_partition(db, "orders", partition)
        table.parameters["team"] = "data"
        client.alter_table_with_environment_context(
            db, "orders", table, hms.EnvironmentContext(properties={"why": "test"})
        )
        if release == "2.3":  # Apiary 6.0.2 cannot handle 3.x's InsertEvent: see the end of the test below
            for values, checksums in ((["2024-06-01"], ["ab12"]), (["2024-06-02"], [])):
                fire_insert(server, client, db, values, checksums, release)
        items = make_table(
            db, "items", partition_keys={"region": "string"}, location=f"file:{external / db / 'items'}",
            table_type="EXTERNAL_TABLE",
        )  # fmt: skip
        client.create_table(items)
        items = client.get_table(db, "items")
        client.add_partitions([make_partition(items, ["eu"]), make_partition(items, ["us"])])
        client.drop_table(db, "items", True)
        client.drop_partition(db, "orders", ["2024-06-03"], True)
        client.drop_table(db, "orders", True)
        client.drop_database(db, True, True)
    if release != "2.3":
        return
    script = Path(__file__).with_name("spark_statements.py")
    run = subprocess.run(
        [sys.executable, str(script), server.uri, str(tmp_path / "warehouse"), f"{db}_spark"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]


def fire_insert(
    server: LocalMetastore,
    client: hw.MetastoreClient,
    db: str,
    values: list[str],
    checksums: list[str],
    release: str,
    successful: bool = True,
) -> None:
    """An INSERT event (``successful``: the request's, the event's status): on 2.3 through hmsclient, which
    speaks 2.3's InsertEventRequestData field ids."""
    if release != "2.3":
        data = hms.InsertEventRequestData(filesAdded=["file:/x/part-0"], filesAddedChecksum=checksums)
        client.fire_listener_event(
            hms.FireEventRequest(
                successful=successful,
                data=hms.FireEventRequestData(insertData=data),
                dbName=db,
                tableName="orders",
                partitionVals=values or None,  # an unpartitioned table: no values at all (3.x refuses [])
            )
        )
        return
    host, port = server.uri.removeprefix("thrift://").split(":")
    with hmsclient.HMSClient(host=host, port=int(port)) as peer:
        insert = peer_types.InsertEventRequestData(filesAdded=["file:/x/part-0"], filesAddedChecksum=checksums)
        peer.fire_listener_event(
            peer_types.FireEventRequest(
                successful=successful,
                data=peer_types.FireEventRequestData(insertData=insert),
                dbName=db,
                tableName="orders",
                partitionVals=values,
            )
        )


#: Thrift's primitive types, which Jackson reads through primitive getters.
PRIMITIVES = {TType.BOOL: False, TType.BYTE: 0, TType.I16: 0, TType.I32: 0, TType.I64: 0, TType.DOUBLE: 0.0}


def as_apiary_writes(event: Recorded, message: dict[str, Any]) -> Recorded:
    """The metastore's event as Apiary's JSON carries it: Jackson writes a Thrift field of a primitive type
    through its primitive getter, so an unset one arrives as false or 0 where the metastore's release has
    that field (PySpark's client leaves ``Table.rewriteEnabled`` and ``sd.storedAsSubDirectories`` unset;
    Hive 4 adds ``isStatsCompliant``, ``accessType``, ``id`` and ``txnId``). Only where the message holds that
    default, on tables, partitions and their storage descriptors."""
    values = copy.deepcopy(event.values)
    for key in ("table", "oldTable", "newTable", "partitions", "oldPartition", "newPartition"):
        objects, written = values.get(key), message.get(key)
        pairs = zip(objects, written or [], strict=False) if isinstance(objects, list) else [(objects, written)]
        for obj, data in pairs:
            for target, fields in ((obj, data), (getattr(obj, "sd", None), (data or {}).get("sd"))):
                for spec in getattr(target, "thrift_spec", None) or ():
                    if spec is None or spec[1] not in PRIMITIVES or getattr(target, spec[2]) is not None:
                        continue
                    if isinstance(fields, dict) and fields.get(spec[2]) == PRIMITIVES[spec[1]]:
                        setattr(target, spec[2], PRIMITIVES[spec[1]])
    return Recorded(event.event_type, event.status, event.parameters, values)


def qualified(event: Recorded, renames_on_old_name: bool = False) -> str:
    """The table whose partition the event's message goes to: the new name of a renamed table, or with
    ``renames_on_old_name`` (Apiary 8.1.15 on) the old one."""
    table = event.values.get("table") or event.values.get("oldTable" if renames_on_old_name else "newTable")
    if table is not None:
        return f"{table.dbName}.{table.tableName}"
    return f"{event.values['databaseName']}.{event.values['tableName']}"


def test_apiary_listener_events_reach_hivewire_as_the_metastore_fired_them(
    apiary_metastore: ApiaryMetastore, unique: str, tmp_path: Path
) -> None:
    oracle = apiary_metastore.oracle
    mark = oracle.mark()
    started_ms = int(time.time() * 1000)
    run_workload(oracle.server, apiary_metastore.release, unique.lower(), tmp_path)
    fired = [e for e in oracle.events(mark) if e.event_type in PUBLISHED]
    assert len(fired) >= (25 if apiary_metastore.release == "2.3" else 9), [e.event_type for e in fired]
    messages = read_topic(apiary_metastore.bootstrap, apiary_metastore.topic, len(fired))
    assert len(messages) == len(fired), f"{len(messages)} messages for {len(fired)} events"

    # Per table, the messages are in the order the metastore fired the events (one partition per table).
    report: list[str] = []
    old_name = apiary_metastore.apiary.renames_on_old_name
    for name in dict.fromkeys(qualified(e, old_name) for e in fired):
        theirs = [e for e in fired if qualified(e, old_name) == name]
        partition = apiary.partition_for(name, PARTITIONS)
        ours = [m for m in messages if m.partition == partition and _names(m, old_name) & {name}]
        if len(ours) != len(theirs):
            report.append(f"{name}: {len(ours)} messages on partition {partition}, {len(theirs)} events fired")
        for i, (message, event) in enumerate(zip(ours, theirs, strict=False)):
            decoded = hw.apiary.decode(message.value)
            expected = as_apiary_writes(event, json.loads(message.value))
            report += [f"{name} #{i} {event.event_type}: {line}" for line in differences(decoded, expected)]
    assert not report, "\n".join(report)

    # Key: the message's timestamp as a big-endian long; the record's own timestamp is the producer's send time.
    for m in messages:
        (key_ms,) = struct.unpack(">q", m.key)
        kind, record_ms = m.timestamp
        assert kind == TIMESTAMP_CREATE_TIME
        assert started_ms <= key_ms <= record_ms, (key_ms, record_ms)

    # The same messages through the real runtime: a hivewire app receives every one, decoded.
    harness = KafkaHarness(apiary_metastore.bootstrap)
    harness.topic = apiary_metastore.topic
    app = hw.App(f"apiary-{unique}")
    received: list[hw.ListenerEvent] = []

    @app.on(status=None)  # failed changes too: Apiary publishes them (ADD PARTITION IF NOT EXISTS, status false)
    def record(event: hw.ListenerEvent) -> None:
        received.append(event)

    try:
        harness.run(app, until=lambda: len(received) >= len(messages), timeout=180)
    except AssertionError as e:
        raise AssertionError(f"{e}: the app received {len(received)} of {len(messages)} messages") from e
    assert sorted(e.raw or b"" for e in received) == sorted(m.value for m in messages)  # each one, once
    if apiary_metastore.release != "2.3":
        # Apiary 6.0.2 and 8.2.2 were built against Hive 2.3 and call InsertEvent.getDb(), which 3.0 removed: the
        # metastore's handler thread dies and the client's connection with it.
        server = oracle.server
        with hw.MetastoreClient(server.uri, timeout=120) as client:
            db = f"{unique.lower()}_insert"
            client.create_database(make_database(db, location=(server.workdir / "external" / f"{db}.db").as_uri()))
            client.create_table(
                make_table(db, "orders", location=f"file:{server.workdir / 'external' / db / 'orders'}",
                           table_type="EXTERNAL_TABLE")
            )  # fmt: skip
            with pytest.raises(hw.MetastoreError):  # 3.1: "Internal error"; 4.x: the connection drops
                fire_insert(server, client, db, [], [], apiary_metastore.release)
            client.drop_database(db, True, True)
        log = server.log_path.read_text(errors="replace")
        assert "NoSuchMethodError" in log and "InsertEvent.getDb()" in log, server.log_tail(40)
    by_raw = {m.value: m for m in messages}
    for event in received:  # decoded by the runtime as by hw.apiary.decode
        assert event.table_name == hw.apiary.decode(by_raw[event.raw or b""].value).table_name


def _names(message: Message, renames_on_old_name: bool = False) -> set[str]:
    """The table a message is about: Apiary's ``qualifiedTableName`` (the new name, for a rename), or with
    ``renames_on_old_name`` the old table's name of an ALTER_TABLE."""
    data = json.loads(message.value)
    if renames_on_old_name and data.get("eventType") == "ON_ALTER_TABLE":
        return {f"{data['oldTable']['dbName']}.{data['oldTable']['tableName']}"}
    return {data.get("qualifiedTableName", "")}


def test_golden_files_have_the_shape_the_real_listener_writes(
    apiary_metastore: ApiaryMetastore, unique: str, tmp_path: Path
) -> None:
    """The fields of each event type in the golden files of the release (6.0.2: the nearest, 5.0.2's, top-level
    only; 8.2.2: its own, nested fields too on Hive 2.3, where they were recorded) against what the real listener
    wrote for the same type; every golden file also decodes."""
    bootstrap, topic, release = apiary_metastore.bootstrap, apiary_metastore.topic, apiary_metastore.apiary
    # The golden files were recorded in Hive 2.3 metastores: only there do the nested objects have their fields.
    nested = release.nested_golden and apiary_metastore.release == "2.3"
    # the whole topic to its end: a first batch may hold only some partitions, so only some event types
    values = [value for value, _ in read_to_end(bootstrap, topic)]
    if not values:  # this test alone: make the workload's messages first
        run_workload(apiary_metastore.oracle.server, apiary_metastore.release, unique.lower(), tmp_path)
        read_topic(bootstrap, topic, 10)  # the listener's messages are there
        values = [value for value, _ in read_to_end(bootstrap, topic)]
    written: dict[str, set[str]] = {}
    for value in values:
        data = json.loads(value)
        written.setdefault(data["eventType"], set()).update(shape(data, nested))
    types = PUBLISHED if apiary_metastore.release == "2.3" else PUBLISHED - {"INSERT"}
    assert set(written) == {f"ON_{t}" for t in types}
    golden: dict[str, set[str]] = {}
    paths = sorted(GOLDEN.glob(release.golden))
    assert paths, f"no golden files {release.golden} in {GOLDEN}"
    for path in paths:
        hw.apiary.decode(path.read_bytes())
        data = json.loads(path.read_text())
        golden.setdefault(data["eventType"], set()).update(shape(data, nested))
    report = [
        f"{event_type}: golden only {sorted(golden[event_type] - fields)}, "
        f"{release.version} only {sorted(fields - golden[event_type])}"
        for event_type, fields in written.items()
        if event_type in golden and golden[event_type] != fields
    ]
    assert not report, "\n".join(report)


#: Keys whose values are maps of the user's keys (not fields): a shape stops there.
MAPS = {"parameters", "properties", "partitionKeyValues", "userPrivileges", "groupPrivileges", "rolePrivileges"}


def shape(data: dict[str, Any], nested: bool, prefix: str = "") -> set[str]:
    """The field paths of a message (``table.sd.location``; a list's items under ``[]``), or its top-level keys."""
    out: set[str] = set()
    for key, value in data.items():
        path = f"{prefix}{key}"
        out.add(path)
        if not nested or key in MAPS:
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict):
                out |= shape(item, nested, f"{path}{'[]' if isinstance(value, list) else ''}.")
    return out
