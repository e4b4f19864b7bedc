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
from hivewire.events._model import EVENT_CLASSES, EventType
from hivewire.events._notification import from_notification
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore.ttypes import NotificationEvent, Partition, Table

GOLDEN = Path(__file__).parent / "notification_golden"
FILES = sorted(p for p in GOLDEN.rglob("*.json"))
# The golden files are named after Hive's EventMessage.EventType; every one hivewire has a class for decodes to
# it, the rest (Hive 2.3's index events) to NotificationLogEvent.
NAMED_BY_THE_MESSAGE = {"ALLOC_WRITE_ID"}  # Hive 3.1 stores its table as " ": the message names it


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
    expected_cls = EVENT_CLASSES[EventType(kind)] if kind in EventType.__members__ else hw.NotificationLogEvent
    assert type(event) is expected_cls
    assert event.status
    if expected_cls is hw.NotificationLogEvent:
        assert isinstance(event, hw.NotificationLogEvent)
        assert event.notification == e and event.hive_event_type == e.eventType
        assert isinstance(event.message, dict) and "timestamp" in event.message
    else:  # the names the entry stores (Hive 3.1's "null" and " ": none), else those of the message
        db, table = (None if e.dbName == "null" else e.dbName), (e.tableName or "").strip() or None
        if kind in NAMED_BY_THE_MESSAGE:
            message = parse_message(e.message, e.messageFormat)
            db, table = message["dbName"], message["tableName"]
        assert (event.db_name, event.table_name) == (db or "", table)
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


# -- the typed fields of the notification log's own types, against the golden message's JSON -------------------


def tjson(text: str) -> dict[int, object]:
    """A TJSONProtocol struct as {field id: value}, read here independently of thrift's own protocol."""

    def value(tag: str, v: object) -> object:
        if tag == "rec":
            assert isinstance(v, dict)
            return {int(k): value(*next(iter(f.items()))) for k, f in v.items()}
        if tag in ("lst", "set"):
            assert isinstance(v, list)
            elem, _count, *items = v
            return [value(elem, i) for i in items]
        if tag == "map":
            assert isinstance(v, list)
            _k, vtag, _count, items = v
            return {k: value(vtag, i) for k, i in items.items()}
        if tag == "tf":
            return v == 1
        return v

    struct = value("rec", json.loads(text))
    assert isinstance(struct, dict)
    return struct


def by_id(obj: object) -> object:
    """A Thrift object in the shape :func:`tjson` gives: {field id: value}, unset fields left out."""
    spec = getattr(obj, "thrift_spec", None)
    if spec is not None:
        fields = [f for f in spec if f is not None]
        return {f[0]: by_id(getattr(obj, f[2])) for f in fields if getattr(obj, f[2]) is not None}
    if isinstance(obj, list):
        return [by_id(v) for v in obj]
    if isinstance(obj, dict):
        return {k: by_id(v) for k, v in obj.items()}
    return obj


def carries(obj: object, expected: object) -> bool:
    """Whether ``obj`` (as :func:`by_id` shows it) holds every value of ``expected`` (Hive's Java writer leaves
    out unset fields, which Python's reader fills with the IDL's defaults)."""
    if isinstance(expected, dict) and isinstance(obj, dict):
        return all(k in obj and carries(obj[k], v) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(obj, list):
        return len(obj) == len(expected) and all(carries(o, e) for o, e in zip(obj, expected, strict=True))
    return obj == expected


def objects(message: dict[str, object], key: str) -> list[dict[int, object]]:
    texts = message.get(key) or []
    assert isinstance(texts, list)
    return [tjson(t) for t in texts]


def one(message: dict[str, object], key: str) -> dict[int, object] | None:
    text = message.get(key)
    return None if text is None else tjson(str(text))


# Per type: each typed field and the golden message's value it must hold (objects as {field id: value}).
FIELDS_FROM_MESSAGE = {
    "CREATE_FUNCTION": lambda m: {"function": one(m, "functionObjJson")},
    "DROP_FUNCTION": lambda m: {"function_name": m["functionName"]},
    "RELOAD": lambda m: {
        "table": one(m, "tableObjJson"),
        "partition": one(m, "ptnObjJson"),
        "refresh_event": m["refreshEvent"] == "true",
    },
    "ADD_PRIMARYKEY": lambda m: {"primary_keys": objects(m, "primaryKeyListJson")},
    "ADD_FOREIGNKEY": lambda m: {"foreign_keys": objects(m, "foreignKeyListJson")},
    "ADD_UNIQUECONSTRAINT": lambda m: {"unique_constraints": objects(m, "uniqueConstraintListJson")},
    "ADD_NOTNULLCONSTRAINT": lambda m: {"not_null_constraints": objects(m, "notNullConstraintListJson")},
    "ADD_DEFAULTCONSTRAINT": lambda m: {"default_constraints": objects(m, "defaultConstraintListJson")},
    "ADD_CHECKCONSTRAINT": lambda m: {"check_constraints": objects(m, "checkConstraintListJson")},
    "DROP_CONSTRAINT": lambda m: {"constraint_name": m["constraintName"]},
    "CREATE_CATALOG": lambda m: {"catalog": m["catalog"]},
    "ALTER_CATALOG": lambda m: {"old_catalog": one(m, "catObjBeforeJson"), "new_catalog": one(m, "catObjAfterJson")},
    "DROP_CATALOG": lambda m: {"catalog": m["catalog"]},
    # Hive writes the range (txnIds stays null), which its getTxnIds() reads as every id from..to.
    "OPEN_TXN": lambda m: {"txn_ids": m["txnIds"] or list(range(m["fromTxnId"], m["toTxnId"] + 1))},
    "COMMIT_TXN": lambda m: {
        "txn_id": m["txnid"],
        **{k: m.get(k) or [] for k in ("databases", "tables", "partitions", "files")},
        "write_ids": m.get("writeIds") or [],
        "table_objs": objects(m, "tableObjs"),
        "partition_objs": objects(m, "partitionObjs"),
    },
    "ABORT_TXN": lambda m: {"txn_id": m["txnid"], "dbs_updated": m.get("dbsUpdated") or []},
    "ALLOC_WRITE_ID": lambda m: {
        "txn_to_write_ids": [{1: t, 2: w} for t, w in zip(m["txnIdList"], m["writeIdList"], strict=True)]
    },
    "ACID_WRITE": lambda m: {
        "txn_id": m["txnid"],
        "write_id": m["writeId"],
        "partition": m["partition"],
        "files": m["files"],
        "table": one(m, "tableObjJson"),
        "partition_obj": one(m, "partitionObjJson"),
    },
    "UPDATE_TABLE_COLUMN_STAT": lambda m: {
        "col_stats": one(m, "colStatsJson"),
        "write_id": m["writeId"],
        "table_parameters": m["parameters"],
        "table": one(m, "tableObjJson"),
    },
    "DELETE_TABLE_COLUMN_STAT": lambda m: {"col_name": m["colName"]},
    "UPDATE_PARTITION_COLUMN_STAT": lambda m: {
        "col_stats": one(m, "colStatsJson"),
        "write_id": m["writeId"],
        "partition_parameters": m["parameters"],
        "part_vals": m["partVals"],
        "table": one(m, "tableObjJson"),
    },
    "DELETE_PARTITION_COLUMN_STAT": lambda m: {
        "col_name": m["colName"],
        "part_name": m["partName"],
        "part_values": m["partValues"],
    },
    "COMMIT_COMPACTION": lambda m: {
        "txn_id": m["txnid"],
        "compaction_id": m["compactionId"],
        "type": m["type"],
        "part_name": m["partName"],
    },
}
TYPED = [p for p in FILES if p.stem in FIELDS_FROM_MESSAGE]


def test_every_type_of_the_log_has_its_fields_checked() -> None:
    own = {t.value for t, spec in TYPES.items() if spec.log_only and t is not EventType.NOTIFICATION_LOG}
    assert set(FIELDS_FROM_MESSAGE) == own
    assert {p.stem for p in TYPED} == own  # a golden message for each, Hive 3.1's and 4.x's
    assert len(TYPED) == 2 * 23 + 14 + 2  # 4.x in both encodings, the 3.1 types, 2.3's functions


@pytest.mark.parametrize("path", TYPED, ids=name)
def test_typed_fields_hold_the_values_of_the_golden_message(path: Path) -> None:
    e = entry(path)
    event = from_notification(e)
    expected = FIELDS_FROM_MESSAGE[path.stem](parse_message(e.message, e.messageFormat))
    assert set(expected) == set(type(event).fields)
    for field, value in expected.items():
        got = by_id(getattr(event, field))
        assert got == value if value is None else carries(got, value), (field, got, value)


def test_the_typed_fields_read_as_hive_names_them() -> None:
    created = from_notification(entry(GOLDEN / "4.x" / "CREATE_FUNCTION.json"))
    assert isinstance(created, hw.CreateFunctionEvent) and created.function.className == "com.example.udf.ToCents"
    keys = from_notification(entry(GOLDEN / "3.1" / "ADD_PRIMARYKEY.json"))
    assert isinstance(keys, hw.AddPrimaryKeyEvent) and [k.column_name for k in keys.primary_keys] == ["id"]
    opened = from_notification(entry(GOLDEN / "4.x" / "OPEN_TXN.json"))
    assert isinstance(opened, hw.OpenTxnEvent) and opened.txn_ids == [42]
    committed = from_notification(entry(GOLDEN / "4.x" / "COMMIT_TXN.json"))
    assert isinstance(committed, hw.CommitTxnEvent) and (committed.txn_id, committed.write_ids) == (42, [])
    allocated = from_notification(entry(GOLDEN / "3.1" / "ALLOC_WRITE_ID.json"))
    assert isinstance(allocated, hw.AllocWriteIdEvent)
    assert [(p.txnId, p.writeId) for p in allocated.txn_to_write_ids] == [(42, 7)]
    stats = from_notification(entry(GOLDEN / "4.x" / "UPDATE_TABLE_COLUMN_STAT.json"))
    assert isinstance(stats, hw.UpdateTableColumnStatEvent)
    assert [o.colName for o in stats.col_stats.statsObj] == ["id"] and stats.col_stats.statsDesc.isTblLevel
    assert stats.table.sd.location == "hdfs://nn:8020/warehouse/sales.db/orders"
    compacted = from_notification(entry(GOLDEN / "4.x" / "COMMIT_COMPACTION.json"))
    assert isinstance(compacted, hw.CommitCompactionEvent) and (compacted.type, compacted.compaction_id) == ("MAJOR", 5)


def test_new_types_reach_their_decorators_and_listener_methods() -> None:
    app = hw.App("typed")
    seen: list[object] = []

    @app.on_create_function
    def created(event: hw.CreateFunctionEvent) -> None:
        seen.append(event.function.functionName)

    class Transactions(hw.MetaStoreEventListener):
        def on_open_txn(self, event: hw.OpenTxnEvent) -> None:
            seen.append(event.txn_ids)

    app.add_listener(Transactions)
    for kind in ("CREATE_FUNCTION", "OPEN_TXN", "ABORT_TXN"):
        app.dispatch(from_notification(entry(GOLDEN / "4.x" / f"{kind}.json")))
    assert seen == ["to_cents", [42]]


def test_unknown_and_bad_entries_of_the_new_types() -> None:
    unknown = NotificationEvent(9, 0, "CREATE_DATACONNECTOR", None, None, '{"timestamp": 0}', PLAIN)
    fallback = from_notification(unknown)
    assert isinstance(fallback, hw.NotificationLogEvent) and fallback.hive_event_type == "CREATE_DATACONNECTOR"
    bad = NotificationEvent(9, 0, "OPEN_TXN", None, None, '{"txnIds": ["seven"]}', PLAIN)
    with pytest.raises(hw.DecodeError, match=r"notification 9 \(OPEN_TXN\)\.txnIds\[0\]: expected a whole number"):
        from_notification(bad)
    uneven = NotificationEvent(
        9, 0, "ALLOC_WRITE_ID_EVENT", "s", "t", '{"txnIdList": [1, 2], "writeIdList": [1]}', PLAIN
    )
    with pytest.raises(hw.DecodeError, match="2 transaction ids but 1 write ids"):
        from_notification(uneven)


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
    assert isinstance(opened, hw.OpenTxnEvent) and opened.txn_ids == [42]
    written = from_notification(entry(GOLDEN / "3.1" / "ALLOC_WRITE_ID.json"))  # stored with table " "
    assert isinstance(written, hw.AllocWriteIdEvent) and written.qualified_name == "sales.orders"


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
        assert isinstance(app, hw.App) and len(app.listeners) == 3
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
