"""Notification-log entries decode into hivewire's events, for every golden message of Hive 2.3, 3.1 and 4.x.

The goldens (tests/unit/notification_golden, see its README.md): 2.3 is the real output of Hive 2.3.10's
JSONMessageFactory; 3.1 and 4.x are rebuilt from Hive's sources, and 4.x comes in both of its encodings
(``json-0.2`` in 4.x/plain, the default ``gzip(json-2.0)`` in 4.x).
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events._logmessage import GZIP, PLAIN, message_text, parse_message
from hivewire.events._notification import from_notification
from hivewire_thrift.hive_metastore.ttypes import NotificationEvent, Partition, Table

GOLDEN = Path(__file__).parent / "notification_golden"
FILES = sorted(p for p in GOLDEN.rglob("*.json"))
MODELED = {
    "CREATE_TABLE": hw.CreateTableEvent,
    "ALTER_TABLE": hw.AlterTableEvent,
    "DROP_TABLE": hw.DropTableEvent,
    "ADD_PARTITION": hw.AddPartitionEvent,
    "ALTER_PARTITION": hw.AlterPartitionEvent,
    "DROP_PARTITION": hw.DropPartitionEvent,
    "INSERT": hw.InsertEvent,
    "CREATE_DATABASE": hw.CreateDatabaseEvent,
    "ALTER_DATABASE": hw.AlterDatabaseEvent,
    "DROP_DATABASE": hw.DropDatabaseEvent,
}


def entry(path: Path) -> NotificationEvent:
    return NotificationEvent(**json.loads(path.read_text(encoding="utf-8")))


def name(path: Path) -> str:
    return str(path.relative_to(GOLDEN))


def test_the_goldens_cover_every_version_and_encoding() -> None:
    versions = {name(p).rsplit("/", 1)[0] for p in FILES}
    assert versions == {"2.3", "3.1", "4.x", "4.x/plain"}
    assert len(FILES) == 14 + 24 + 33 + 33
    assert {entry(p).messageFormat for p in GOLDEN.glob("4.x/*.json")} == {GZIP}
    assert {entry(p).messageFormat for p in GOLDEN.glob("4.x/plain/*.json")} == {PLAIN}


@pytest.mark.parametrize("path", FILES, ids=name)
def test_every_golden_entry_decodes_and_survives_apiary(path: Path) -> None:
    e = entry(path)
    event = from_notification(e)
    kind = path.stem
    expected_cls = MODELED.get(kind, hw.NotificationLogEvent)
    assert type(event) is expected_cls
    assert event.status
    if expected_cls is hw.NotificationLogEvent:
        assert isinstance(event, hw.NotificationLogEvent)
        assert event.notification == e and event.hive_event_type == e.eventType
        assert isinstance(event.message, dict) and "timestamp" in event.message
    else:
        assert event.db_name == "sales"
        assert event.table_name == (None if kind.endswith("_DATABASE") else "orders")
    # Every event travels as an Apiary(-style) message unchanged: what the source and the bridge rely on.
    assert apiary.decode(apiary.encode(event)) == event


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("4.x/*.json")), ids=name)
def test_hive4_gzip_and_plain_encodings_give_the_same_event(path: Path) -> None:
    gz, plain = entry(path), entry(GOLDEN / "4.x" / "plain" / path.name)
    assert gz.message.startswith("H4sI") and plain.message.startswith("{")
    assert json.loads(message_text(gz.message, gz.messageFormat)) == json.loads(plain.message)
    a, b = from_notification(gz), from_notification(plain)
    if isinstance(a, hw.NotificationLogEvent) and isinstance(b, hw.NotificationLogEvent):
        assert a.message == b.message
    else:
        assert a == b


def test_table_events_carry_the_objects_of_the_message() -> None:
    for version in ("2.3", "3.1", "4.x", "4.x/plain"):
        created = from_notification(entry(GOLDEN / version / "CREATE_TABLE.json"))
        assert isinstance(created, hw.CreateTableEvent)
        table = created.table
        assert isinstance(table, Table) and (table.dbName, table.tableName) == ("sales", "orders")
        assert [c.name for c in table.sd.cols] == ["id", "amount"] and table.tableType == "EXTERNAL_TABLE"
        added = from_notification(entry(GOLDEN / version / "ADD_PARTITION.json"))
        assert isinstance(added, hw.AddPartitionEvent)
        assert [p.values for p in added.partitions] == [["2024-01-01"], ["2024-01-02"]]
        dropped = from_notification(entry(GOLDEN / version / "DROP_PARTITION.json"))
        assert isinstance(dropped, hw.DropPartitionEvent)
        assert dropped.partitions == [Partition(values=["2024-01-02"], dbName="sales", tableName="orders")]
        altered = from_notification(entry(GOLDEN / version / "ALTER_PARTITION.json"))
        assert isinstance(altered, hw.AlterPartitionEvent) and altered.new_partition.values == ["2024-01-01"]


def test_inserts_split_files_and_checksums_in_every_version() -> None:
    old = from_notification(entry(GOLDEN / "2.3" / "INSERT.json"))
    assert isinstance(old, hw.InsertEvent)
    assert old.partition_key_values == {"dt": "2024-01-01"}
    assert old.files == ["hdfs://nn:8020/warehouse/sales.db/orders/dt=2024-01-01/000001_0"]
    assert old.file_checksums == ["9F1C2B3A4D"]
    for version in ("3.1", "4.x"):
        new = from_notification(entry(GOLDEN / version / "INSERT.json"))
        assert isinstance(new, hw.InsertEvent) and new.partition_key_values == {"dt": "2024-01-01"}
        assert new.files == old.files and new.file_checksums == [""]  # 3.1+ drops it with CM off


def test_hive23_drops_name_objects_only_by_name() -> None:
    table = from_notification(entry(GOLDEN / "2.3" / "DROP_TABLE.json"))
    assert isinstance(table, hw.DropTableEvent) and table.table == Table(dbName="sales", tableName="orders")
    db = from_notification(entry(GOLDEN / "2.3" / "DROP_DATABASE.json"))
    assert isinstance(db, hw.DropDatabaseEvent) and db.database.name == "sales" and db.db_name == "sales"


def test_hive31_transaction_entries_name_no_table() -> None:
    opened = from_notification(entry(GOLDEN / "3.1" / "OPEN_TXN.json"))
    assert (opened.db_name, opened.table_name) == ("", None)  # stored as "null" and " " by Hive 3.1
    assert isinstance(opened, hw.NotificationLogEvent)
    assert opened.message["fromTxnId"] == 42
    written = from_notification(entry(GOLDEN / "4.x" / "ALLOC_WRITE_ID.json"))
    assert isinstance(written, hw.NotificationLogEvent) and written.hive_event_type == "ALLOC_WRITE_ID_EVENT"


def test_format_is_sniffed_when_missing_and_control_characters_pass() -> None:
    text = '{"db":"sales","comment":"tab\there"}'
    packed = base64.b64encode(gzip.compress(text.encode())).decode()
    assert message_text(packed, None) == text and message_text(text, None) == text
    assert parse_message(text, PLAIN)["comment"] == "tab\there"


@pytest.mark.parametrize(
    ("message", "fmt", "match"),
    [
        ("not base64!", GZIP, "not Base64 of gzipped UTF-8 JSON"),
        (base64.b64encode(b"plain bytes").decode(), GZIP, "not Base64 of gzipped"),
        ("{broken", PLAIN, "not JSON"),
        ("[1, 2]", PLAIN, "not a JSON object"),
    ],
)
def test_bad_messages_raise_decode_errors(message: str, fmt: str, match: str) -> None:
    bad = NotificationEvent(7, 0, "CREATE_TABLE", "sales", "orders", message, fmt)
    with pytest.raises(hw.DecodeError, match=match):
        from_notification(bad)


def test_a_bad_embedded_object_names_its_place() -> None:
    message = json.dumps({"db": "sales", "table": "orders", "tableObjJson": '{"1":{"i32":"x"}}'})
    with pytest.raises(hw.DecodeError, match=r"notification 7 \(CREATE_TABLE\)\.tableObjJson"):
        from_notification(NotificationEvent(7, 0, "CREATE_TABLE", "sales", "orders", message, PLAIN))


def test_the_example_in_docs_sources_md_runs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "sources.md").read_text()
    blocks = [b.split("```")[0] for b in text.split("```python\n")[1:]]
    assert blocks
    for block in blocks:
        namespace: dict[str, object] = {}
        exec(compile(block, "docs/sources.md", "exec"), namespace)
        app = namespace["app"]
        assert isinstance(app, hw.App) and len(app.listeners) == 2
        assert isinstance(namespace["source"], hw.NotificationLogSource)


def test_the_position_file_is_replaced_whole_and_refuses_garbage(tmp_path: Path) -> None:
    from hivewire.runtime import FilePosition

    position = FilePosition(tmp_path / "sub" / "position")
    assert position.load() is None
    position.save(41)
    position.save(42)
    assert position.load() == 42 and (tmp_path / "sub" / "position").read_text() == "42\n"
    assert not (tmp_path / "sub" / "position.tmp").exists()
    (tmp_path / "sub" / "position").write_text("forty-two")
    with pytest.raises(hw.errors.SourceError, match="not an event id: fix or remove it"):
        position.load()


def test_bad_settings_of_the_source_name_their_key() -> None:
    with pytest.raises(hw.ConfigError, match=r"hivewire\.notification\.on\.gap"):
        hw.NotificationLogSource("thrift://metastore:9083", on_gap="ignore")


def test_an_unreachable_metastore_is_waited_for_not_fatal(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from hivewire.runtime import FilePosition
    from hivewire.tools import free_port

    FilePosition(tmp_path / "position").save(7)
    source = hw.NotificationLogSource(
        f"thrift://127.0.0.1:{free_port()}", position=tmp_path / "position", poll_interval=0.01
    )
    assigned: list[object] = []
    source.open(assigned.extend, assigned.extend)
    try:
        assert source.poll(10, 0.01) == [] and assigned == [("notification-log", 0)]
        assert "cannot read the notification log" in caplog.text
        assert source.lag() == {("notification-log", 0): 0} and not source.finished()
    finally:
        source.close()
