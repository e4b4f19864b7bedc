"""hivewire.apiary: golden messages, tolerance, errors, partitioning, and ENUM_FIELDS against the IDL."""

from __future__ import annotations

import copy
import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events import _thriftjson as thriftjson
from hivewire.events._model import AddPartitionEvent, CreateTableEvent, EventType, InsertEvent, ListenerEvent, Origin
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore import ttypes as hms

sys.path.insert(0, str(Path(__file__).parent))
from apiary_messages import (
    GOLDEN,
    VERSIONS,
    expected_partition,
    expected_table,
    messages,
    partition_json,
    table_json,
)

ROOT = Path(__file__).resolve().parents[2]
IDS = [name for name, _, _ in GOLDEN]


def raw(message: Any) -> bytes:
    return json.dumps(message).encode()


def materialise(event: ListenerEvent) -> None:
    for name in ("environment_context", *event.fields):
        getattr(event, name)


# -- golden messages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "message", "expected"), GOLDEN, ids=IDS)
def test_golden_message_decodes_to_the_expected_event(
    name: str, message: dict[str, Any], expected: ListenerEvent
) -> None:
    data = raw(message)
    event = apiary.decode(data)
    assert type(event) is type(expected)
    assert event == expected
    assert (event.db_name, event.table_name) == (expected.db_name, expected.table_name)
    assert event.hive_version == message["parameters"]["hive.version"]
    assert event.raw == data and event.origin is None
    for field in ("environment_context", *event.fields):
        assert getattr(event, field) == getattr(expected, field), field


@pytest.mark.parametrize(("name", "message", "expected"), GOLDEN, ids=IDS)
def test_golden_lazy_round_trip_writes_the_message_back(
    name: str, message: dict[str, Any], expected: ListenerEvent
) -> None:
    event = apiary.decode(raw(message))
    assert json.loads(apiary.encode(event)) == message
    assert event.to_dict() == message


@pytest.mark.parametrize(("name", "message", "expected"), GOLDEN, ids=IDS)
def test_golden_materialised_round_trip_dumps_the_objects(
    name: str, message: dict[str, Any], expected: ListenerEvent
) -> None:
    event = apiary.decode(raw(message))
    materialise(event)
    assert all(f in event._values for f in event.fields if f in event._loaders)  # really converted
    assert json.loads(apiary.encode(event)) == message
    assert event.to_dict() == message


@pytest.mark.parametrize(("name", "message", "expected"), GOLDEN, ids=IDS)
def test_event_built_in_python_encodes_as_the_java_listener_does(
    name: str, message: dict[str, Any], expected: ListenerEvent
) -> None:
    assert json.loads(apiary.encode(expected)) == message


# Key orders of the Java writer (JacksonThriftSerializerTest in apiary-extensions, and the Hive 4 IDL).
TABLE_23 = [
    "tableName",
    "dbName",
    "owner",
    "createTime",
    "lastAccessTime",
    "retention",
    "sd",
    "partitionKeys",
    "parameters",
    "viewOriginalText",
    "viewExpandedText",
    "tableType",
    "privileges",
    "temporary",
    "rewriteEnabled",
]
TABLE_31 = [*TABLE_23, "creationMetadata", "catName", "ownerType"]
TABLE_40 = [
    *TABLE_31,
    "writeId",
    "isStatsCompliant",
    "colStats",
    "accessType",
    "requiredReadCapabilities",
    "requiredWriteCapabilities",
    "id",
    "fileMetadata",
    "dictionary",
    "txnId",
]
SD = [
    "cols",
    "location",
    "inputFormat",
    "outputFormat",
    "compressed",
    "numBuckets",
    "serdeInfo",
    "bucketCols",
    "sortCols",
    "parameters",
    "skewedInfo",
    "storedAsSubDirectories",
]
SERDE_23 = ["name", "serializationLib", "parameters"]
SERDE_31 = [*SERDE_23, "description", "serializerClass", "deserializerClass", "serdeType"]
PARTITION_23 = ["values", "dbName", "tableName", "createTime", "lastAccessTime", "sd", "parameters", "privileges"]
PARTITION_31 = [*PARTITION_23, "catName"]
PARTITION_40 = [*PARTITION_31, "writeId", "isStatsCompliant", "colStats", "fileMetadata"]
DATABASE_23 = ["name", "description", "locationUri", "parameters", "privileges", "ownerName", "ownerType"]
DATABASE_31 = [*DATABASE_23, "catalogName"]
DATABASE_40 = [*DATABASE_31, "createTime", "managedLocationUri", "type", "connector_name", "remote_dbname"]
KEYS = {
    "2.3": (TABLE_23, SERDE_23, PARTITION_23, DATABASE_23),
    "3.1": (TABLE_31, SERDE_31, PARTITION_31, DATABASE_31),
    "4.0": (TABLE_40, SERDE_31, PARTITION_40, DATABASE_40),
}


KEYS["2.3.10"] = ([*TABLE_23, "catName"], SERDE_23, PARTITION_31, DATABASE_31)  # HIVE-27868's backport


@pytest.mark.parametrize(
    ("hive_version", "field_set"),
    [
        ("2.3.9", "2.3"),
        ("2.3.10", "2.3.10"),
        ("2.3.10-amzn-1", "2.3.10"),
        ("1.2.1", "2.3"),
        ("3.0.0", "3.1"),
        ("3.1.3", "3.1"),
        ("4.0.1", "4.0"),
        ("4.1.0-SNAPSHOT", "4.0"),
        ("unknown", "4.0"),
    ],
)
def test_encode_writes_the_field_set_and_key_order_of_the_hive_version(hive_version: str, field_set: str) -> None:
    table_keys, serde_keys, partition_keys, database_keys = KEYS[field_set]
    newest = messages("4.0")
    add = apiary.decode(raw(newest["ON_ADD_PARTITION"]))
    materialise(add)
    for chosen in (apiary.encode(add, hive_version=hive_version), apiary.encode(_with_version(add, hive_version))):
        out = json.loads(chosen)
        assert list(out["table"]) == table_keys
        assert list(out["table"]["sd"]) == SD
        assert list(out["table"]["sd"]["serdeInfo"]) == serde_keys
        assert list(out["partitions"][0]) == partition_keys
    database = apiary.decode(raw(newest["ON_CREATE_DATABASE"]))
    materialise(database)
    assert list(json.loads(apiary.encode(database, hive_version=hive_version))["database"]) == database_keys
    assert list(json.loads(apiary.encode(database, hive_version=hive_version))) == [
        "eventType",
        "databaseName",
        "tableName",
        "qualifiedTableName",
        "status",
        "parameters",
        "environmentContext",
        "database",
    ]


def _with_version(event: AddPartitionEvent, hive_version: str) -> AddPartitionEvent:
    return AddPartitionEvent(
        table=event.table, partitions=event.partitions, parameters={**event.parameters, "hive.version": hive_version}
    )


def test_a_newer_message_encoded_for_hive_2_3_equals_the_2_3_message() -> None:
    for event_type, message in messages("4.0").items():
        event = apiary.decode(raw(message))
        materialise(event)
        older = json.loads(apiary.encode(event, hive_version="2.3.9"))
        expected = messages("2.3")[event_type]
        older["parameters"] = expected["parameters"]
        assert older == expected, event_type


def test_an_untouched_newer_message_encoded_for_hive_2_3_equals_the_2_3_message() -> None:
    # Same as above without reading any object first: the lazy pass-through must not keep 4.x fields.
    for event_type, message in messages("4.0").items():
        older = json.loads(apiary.encode(apiary.decode(raw(message)), hive_version="2.3.9"))
        expected = messages("2.3")[event_type]
        older["parameters"] = expected["parameters"]
        assert older == expected, event_type
        # ... while the event's own version still writes the message back as it came.
        assert json.loads(apiary.encode(apiary.decode(raw(message)), hive_version="4.0.1")) == message, event_type


def test_without_hive_version_every_known_field_is_written() -> None:
    event = CreateTableEvent(table=expected_table("2.3"))
    out = json.loads(apiary.encode(event))
    assert list(out["table"]) == TABLE_40
    assert out["table"]["ownerType"] == "USER" and out["table"]["writeId"] == -1
    assert out["parameters"] == {}


def test_values_json_cannot_hold_are_refused_when_encoding() -> None:
    stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="d", tableName="t"),
        statsObj=[hms.ColumnStatisticsObj(colName="x", colType="double", statsData=None)],
    )
    for bad in (float("nan"), float("inf"), -float("inf")):  # msgspec alone would write them as null
        stats.statsObj[0].statsData = hms.ColumnStatisticsData(
            doubleStats=hms.DoubleColumnStatsData(lowValue=bad, numNulls=0, numDVs=1)
        )
        with pytest.raises(ValueError, match="cannot be written as JSON"):
            apiary.encode(CreateTableEvent(table=hms.Table(tableName="t", dbName="d", colStats=stats)))
    with pytest.raises(ValueError):  # a lone surrogate is not Unicode text
        apiary.encode(CreateTableEvent(table=hms.Table(tableName="\ud800", dbName="d")))


def test_unset_fields_are_written_as_null_primitives_included() -> None:
    table = hms.Table(tableName="t", dbName="d")
    out = json.loads(apiary.encode(CreateTableEvent(table=table, parameters={"hive.version": "2.3.9"})))["table"]
    assert out == dict.fromkeys(TABLE_23) | {"tableName": "t", "dbName": "d", "temporary": False}


# -- tolerance ------------------------------------------------------------------------------------------------


def shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = [(k, shuffled(v, rng)) for k, v in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


@pytest.mark.parametrize(("name", "message", "expected"), GOLDEN, ids=IDS)
def test_key_order_does_not_matter(name: str, message: dict[str, Any], expected: ListenerEvent) -> None:
    mixed = shuffled(message, random.Random(name))
    assert list(mixed) != list(message) or len(message) < 3
    event = apiary.decode(raw(mixed))
    assert event == expected
    assert json.loads(apiary.encode(event)) == message


def with_unknown_fields(value: Any) -> Any:
    """Add a made-up key to every object (not to maps, whose keys are data)."""
    if isinstance(value, dict):
        return {
            **{k: with_unknown_fields(v) for k, v in value.items()},
            "madeUpField": {"nested": [1, 2.5, None, "x"], "deeper": {"a": [{}]}},
        }
    if isinstance(value, list):
        return [with_unknown_fields(v) for v in value]
    return value


def test_unknown_fields_at_every_level_are_ignored_and_survive_a_lazy_round_trip() -> None:
    message = messages("2.3")["ON_ADD_PARTITION"]
    table = with_unknown_fields(message["table"])
    # maps keep their keys: parameters and privileges' principal maps are data, not objects.
    for obj in (table, table["sd"], table["sd"]["serdeInfo"]):
        obj["parameters"] = copy.deepcopy(message["table"]["parameters"] if obj is table else {})
    table["sd"]["serdeInfo"]["parameters"] = {"serialization.format": "1"}
    table["privileges"] = {**message["table"]["privileges"], "madeUpField": 1}
    partitions = [with_unknown_fields(p) for p in message["partitions"]]
    for got, original in zip(partitions, message["partitions"], strict=True):
        got["parameters"] = original["parameters"]
        got["sd"]["parameters"] = {}
        got["sd"]["serdeInfo"]["parameters"] = {"serialization.format": "1"}
    future = {
        **message,
        "table": table,
        "partitions": partitions,
        "madeUpEnvelopeKey": [1, {"x": None}],
        "environmentContext": {"properties": {}, "madeUp": True},
    }
    event = apiary.decode(raw(future))
    assert event.table == expected_table("2.3")
    assert event.partitions == [expected_partition("2.3", "2024-05-01"), expected_partition("2.3", "2024-05-02")]
    assert event.environment_context == hms.EnvironmentContext(properties={})
    # Never-converted objects go back as they came, unknown keys included; the envelope is hivewire's own.
    lazy = apiary.decode(raw(future))
    out = json.loads(apiary.encode(lazy))
    assert out["table"] == table and out["partitions"] == partitions
    assert "madeUpEnvelopeKey" not in out


def test_hive_4_fields_in_an_older_message_are_read_and_dropped_by_a_2_3_encode() -> None:
    message = messages("2.3")["ON_ADD_PARTITION"]
    table = {
        **message["table"],
        "writeId": 5,
        "catName": "spark",
        "ownerType": "GROUP",
        "colStats": {
            "statsDesc": {"isTblLevel": True, "dbName": "sales", "tableName": "orders"},
            "statsObj": [],
            "futureField": 1,
        },
    }
    partition = {**message["partitions"][0], "catName": "spark", "writeId": 6, "isStatsCompliant": False}
    event = apiary.decode(raw({**message, "table": table, "partitions": [partition]}))
    assert (event.table.writeId, event.table.catName, event.table.ownerType) == (5, "spark", hms.PrincipalType.GROUP)
    assert event.table.colStats == hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="sales", tableName="orders"), statsObj=[]
    )
    assert (event.partitions[0].catName, event.partitions[0].writeId) == ("spark", 6)
    out = json.loads(apiary.encode(event))
    assert out["table"] == message["table"] and out["partitions"] == [message["partitions"][0]]
    assert json.loads(apiary.encode(event, hive_version="4.0.0"))["table"]["writeId"] == 5


def test_null_for_every_unset_field() -> None:
    table = dict.fromkeys(TABLE_40) | {"tableName": "t", "dbName": "d"}
    message = {
        "eventType": "ON_CREATE_TABLE",
        "databaseName": "d",
        "tableName": "t",
        "qualifiedTableName": None,
        "status": None,
        "parameters": None,
        "environmentContext": None,
        "table": table,
    }
    event = apiary.decode(raw(message))
    assert event.status is True and event.parameters == {} and event.environment_context is None
    expected = hms.Table(tableName="t", dbName="d", temporary=None, ownerType=None, writeId=None)
    assert event.table == expected
    assert json.loads(apiary.encode(event))["table"] == table
    nested = {
        **table,
        "sd": dict.fromkeys(SD),
        "partitionKeys": [None],
        "privileges": {"userPrivileges": {"bob": None}, "groupPrivileges": {"g": [None]}, "rolePrivileges": None},
    }
    got = apiary.decode(raw({**message, "table": nested})).table
    assert got.sd == hms.StorageDescriptor() and got.partitionKeys == [None]
    assert got.privileges == hms.PrincipalPrivilegeSet(userPrivileges={"bob": None}, groupPrivileges={"g": [None]})


def test_enums_by_number_and_unknown_numbers() -> None:
    message = messages("4.0")["ON_CREATE_TABLE"]
    table = copy.deepcopy(message["table"])
    table["ownerType"] = 3
    table["sd"]["serdeInfo"]["serdeType"] = 2
    table["privileges"]["userPrivileges"]["alice"][0]["grantorType"] = 99
    event = apiary.decode(raw({**message, "table": table}))
    assert event.table.ownerType == hms.PrincipalType.GROUP
    assert event.table.sd.serdeInfo.serdeType == hms.SerdeType.SCHEMA_REGISTRY
    assert event.table.privileges.userPrivileges["alice"][0].grantorType == 99
    out = json.loads(apiary.encode(event))["table"]
    assert out["ownerType"] == "GROUP" and out["sd"]["serdeInfo"]["serdeType"] == "SCHEMA_REGISTRY"
    assert out["privileges"]["userPrivileges"]["alice"][0]["grantorType"] == 99
    database = {**messages("4.0")["ON_CREATE_DATABASE"]["database"], "type": 2, "ownerType": "USER"}
    got = apiary.decode(raw({**messages("4.0")["ON_CREATE_DATABASE"], "database": database})).database
    assert (got.type, got.ownerType) == (hms.DatabaseType.REMOTE, hms.PrincipalType.USER)


def test_missing_optional_keys() -> None:
    table = {"tableName": "t", "dbName": "d", "sd": {"cols": [{"name": "a"}], "skewedInfo": {}}}
    event = apiary.decode(raw({"eventType": "ON_CREATE_TABLE", "table": table}))
    assert (event.db_name, event.table_name, event.status, event.parameters) == ("d", "t", True, {})
    assert event.environment_context is None and event.hive_version is None
    assert event.table == hms.Table(
        tableName="t",
        dbName="d",
        sd=hms.StorageDescriptor(cols=[hms.FieldSchema(name="a")], skewedInfo=hms.SkewedInfo()),
    )
    insert = apiary.decode(raw({"eventType": "ON_INSERT", "databaseName": "d", "tableName": "t"}))
    assert isinstance(insert, InsertEvent)
    assert (insert.files, insert.file_checksums, insert.partition_key_values) == ([], [], {})
    drop = apiary.decode(raw({"eventType": "ON_DROP_PARTITION", "table": table}))
    assert drop.partitions == [] and drop.delete_data is False  # type: ignore[attr-defined]
    database = apiary.decode(raw({"eventType": "ON_DROP_DATABASE", "database": {"name": "d"}}))
    assert (database.db_name, database.table_name, database.qualified_name) == ("d", None, "d")
    renamed = apiary.decode(
        raw(
            {
                "eventType": "ON_ALTER_TABLE",
                "oldTable": {"tableName": "a", "dbName": "d"},
                "newTable": {"tableName": "b", "dbName": "d"},
            }
        )
    )
    assert renamed.qualified_name == "d.b" and renamed.is_rename  # type: ignore[attr-defined]


def test_skewed_location_maps_in_jackson_default_object_form() -> None:
    message = messages("2.3")["ON_CREATE_TABLE"]
    table = copy.deepcopy(message["table"])
    table["sd"]["skewedInfo"] = {
        "skewedColNames": ["country", "city"],
        "skewedColValues": [["NL", "AMS"]],
        "skewedColValueLocationMaps": {"[NL, AMS]": "s3://x/NL/AMS", "[]": "s3://x/none"},
    }
    skewed = apiary.decode(raw({**message, "table": table})).table.sd.skewedInfo
    assert skewed.skewedColValueLocationMaps == {("NL", "AMS"): "s3://x/NL/AMS", (): "s3://x/none"}


def test_pretty_printed_java_output_and_every_input_type() -> None:
    message = messages("3.1")["ON_ALTER_PARTITION"]
    pretty = json.dumps(message, indent=2, ensure_ascii=False).encode()
    expected = apiary.decode(raw(message))
    for data in (pretty, bytearray(pretty), memoryview(pretty), pretty.decode()):
        event = apiary.decode(data)
        unread = apiary.encode(apiary.decode(data))  # unread objects go back as they came, spaces and all
        assert json.loads(unread) == message and b'\n    "values": [\n      "2024-05-01"\n    ],' in unread
        assert event == expected and event.raw == pretty
    origin = Origin("apiary", 3, 1234, 1717171717000)
    assert apiary.decode(pretty, origin=origin).origin == origin


def test_unicode_escapes_and_surrogate_pairs() -> None:
    message = messages("2.3")["ON_INSERT"]
    data = raw({**message, "files": ["s3://x/\u00e9\U0001f600"]})  # json.dumps writes \u00e9 and a surrogate pair
    assert b"\\ud83d\\ude00" in data
    assert apiary.decode(data).files == ["s3://x/é😀"]  # type: ignore[attr-defined]


# -- errors ---------------------------------------------------------------------------------------------------


def refused(data: bytes, *match: str) -> hw.DecodeError:
    """decode() refuses ``data`` with a DecodeError (whose message contains each of ``match``)."""
    with pytest.raises(hw.DecodeError) as caught:
        apiary.decode(data)
    for text in match:
        assert text in str(caught.value), str(caught.value)
    return caught.value


NOT_JSON = [
    b"",
    b" ",
    b"{",
    b"nope",
    b"{'a': 1}",
    b'{"eventType": "ON_INSERT"} x',
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": -Infinity}',
    b'{"a": 01}',
    b'{"a": "\x01"}',
    b'{"a": "\\x"}',
    b"\x00",
    b'{"a":1}\x00',
    b'{"a": tru}',
    b'{"a": [1,]}',
    b'{"a": 1,}',
    b"{,}",
    b'{"a" 1}',
    b"1 2",
    b"-",
    b"1.",
    b".5",
    b"\x0c{}",
]


@pytest.mark.parametrize("data", NOT_JSON, ids=repr)
def test_not_json(data: bytes) -> None:
    refused(data, "not JSON")
    # anywhere in the message, even in a key decode skips or an object it leaves for later
    insert = raw(messages("2.3")["ON_INSERT"])
    refused(insert[:-1] + b', "future": ' + data + b"}", "not JSON")
    table = raw(messages("2.3")["ON_CREATE_TABLE"]).replace(b'"owner": "etl"', b'"owner": ' + data)
    assert table != raw(messages("2.3")["ON_CREATE_TABLE"])
    refused(table, "not JSON")


HUGE = [b"1" + b"0" * 400, b"-1" + b"0" * 5000, b"1e400", b"-1e400"]


@pytest.mark.parametrize("number", HUGE, ids=lambda n: n[:8].decode())
def test_huge_numbers_are_refused_where_they_are_read(number: bytes) -> None:
    # Integers of any length and numbers beyond a double's range are JSON syntax. msgspec refuses them where
    # it builds a value (beyond 4300 digits, or a double's range) and keeps other integers exact: so a key
    # decode skips may hold one, and an object holding one raises DecodeError when it is read.
    insert = messages("2.3")["ON_INSERT"]
    assert apiary.decode(raw(insert)[:-1] + b', "future": ' + number + b"}") == apiary.decode(raw(insert))
    message = messages("4.0")["ON_CREATE_TABLE"]
    data = raw({**message, "table": {**message["table"], "writeId": 987654321}}).replace(b"987654321", number)
    event = apiary.decode(data)
    reason = r"^table\.writeId: expected a 64-bit integer, got 1000" if number == HUGE[0] else r"^table: .*out of range"
    with pytest.raises(hw.DecodeError, match=reason):
        event.table  # type: ignore[attr-defined]  # noqa: B018
    assert b'"writeId": ' + number + b"," in apiary.encode(event)  # the table is written back as it came
    refused(raw(message).replace(b'"status": true', b'"status": ' + number), "status" if number == HUGE[0] else "")


@pytest.mark.parametrize(
    "data",
    [
        '{"eventType": "ON_INSERT", "databaseName": "caf\u00e9"}'.encode("latin-1"),
        '{"eventType": "ON_INSERT"}'.encode("utf-16"),
        '{"eventType": "ON_INSERT"}'.encode("utf-32"),
        b'{"a": "\xed\xa0\x80"}',  # an encoded surrogate
        b'{"a": "\xc0\xaf"}',  # an overlong encoding
    ],
    ids=["latin-1", "utf-16", "utf-32", "encoded-surrogate", "overlong"],
)
def test_not_utf8(data: bytes) -> None:
    refused(data, "not UTF-8")
    bad = data[data.index(b'"a": ') + 5 : -1] if data.startswith(b'{"a"') else b'"caf\xe9"'
    # anywhere in the message, even in a key decode skips or an object it leaves for later
    refused(raw(messages("2.3")["ON_INSERT"])[:-1] + b', "future": ' + bad + b"}", "not UTF-8")
    refused(raw(messages("2.3")["ON_CREATE_TABLE"]).replace(b'"owner": "etl"', b'"owner": ' + bad), "not UTF-8")


def test_byte_order_mark_and_lone_surrogates_are_refused() -> None:
    refused(b'\xef\xbb\xbf{"eventType": "ON_INSERT"}')
    refused(b'{"eventType": "ON_INSERT", "databaseName": "\\ud800", "tableName": "t"}', "surrogate")
    refused(b'{"eventType": "ON_INSERT", "databaseName": "d", "tableName": "t", "x": {"\\udc00": 1}}', "surrogate")
    with pytest.raises(hw.DecodeError, match="not UTF-8"):
        apiary.decode('{"eventType": "ON_INSERT", "databaseName": "\ud800"}')
    # A literal backslash before "ud800" is not an escape.
    event = apiary.decode(b'{"eventType": "ON_INSERT", "databaseName": "\\\\ud800", "tableName": "t"}')
    assert event.db_name == "\\ud800"


@pytest.mark.parametrize("value", ["[]", '"ON_CREATE_TABLE"', "1", "null", "true", "[{}]"])
def test_not_an_object(value: str) -> None:
    refused(value.encode(), "message: expected a JSON object")


@pytest.mark.parametrize(
    ("event_type", "reason"),
    [
        (None, "missing eventType"),
        ('"ON_CREATE_INDEX"', "unknown eventType 'ON_CREATE_INDEX'"),
        ('"CREATE_TABLE"', "unknown eventType"),
        ('"on_create_table"', "unknown eventType"),
        ("5", "unknown eventType 5"),
        ('["ON_CREATE_TABLE"]', "unknown eventType"),
        ('{"name": "ON_CREATE_TABLE"}', "unknown eventType"),
        ("null", "missing eventType"),
    ],
)
def test_unknown_or_missing_event_type(event_type: str | None, reason: str) -> None:
    body = '"databaseName": "d", "tableName": "t", "table": {}'
    data = "{" + (f'"eventType": {event_type}, ' if event_type else "") + body + "}"
    refused(data.encode(), reason)
    if reason.startswith("unknown"):  # and says what would have been accepted
        refused(data.encode(), "Apiary's are ON_ADD_PARTITION, ON_ALTER_DATABASE")


@pytest.mark.parametrize("value", [None, 5, 1.5, ["ON_CREATE_TABLE"], {"eventType": "ON_CREATE_TABLE"}])
def test_values_that_are_not_messages_raise_decode_error(value: Any) -> None:
    with pytest.raises(hw.DecodeError, match="null value" if value is None else "not a message"):
        apiary.decode(value)


REQUIRED = {
    "ON_CREATE_TABLE": ["table"],
    "ON_ALTER_TABLE": ["oldTable", "newTable"],
    "ON_DROP_TABLE": ["table"],
    "ON_ADD_PARTITION": ["table"],
    "ON_ALTER_PARTITION": ["table", "oldPartition", "newPartition"],
    "ON_DROP_PARTITION": ["table"],
    "ON_INSERT": [],
    "ON_CREATE_DATABASE": ["database"],
    "ON_ALTER_DATABASE": ["oldDatabase", "newDatabase"],
    "ON_DROP_DATABASE": ["database"],
}


@pytest.mark.parametrize(("event_type", "key"), [(t, k) for t, keys in REQUIRED.items() for k in keys])
def test_missing_required_object(event_type: str, key: str) -> None:
    message = messages("3.1")[event_type]
    refused(raw({k: v for k, v in message.items() if k != key}), f"{event_type} message has no {key}")
    refused(raw({**message, key: None}), f"{event_type} message has no {key}")


def test_missing_names_without_an_object_to_take_them_from() -> None:
    refused(raw({"eventType": "ON_INSERT", "tableName": "t"}), "ON_INSERT message has no databaseName")
    refused(raw({"eventType": "ON_INSERT", "databaseName": "d"}), "ON_INSERT message has no tableName")
    refused(raw({"eventType": "ON_CREATE_TABLE", "table": {"tableName": "t"}}), "has no databaseName")
    refused(
        raw({"eventType": "ON_CREATE_TABLE", "table": {"dbName": "d", "tableName": 5}}),
        "tableName: expected a string, got 5",
    )
    refused(raw({"eventType": "ON_CREATE_DATABASE", "database": {"description": "x"}}), "has no databaseName")


ENVELOPE_ERRORS = [
    ("ON_CREATE_TABLE", "table", [], "table: expected an object, got []"),
    ("ON_CREATE_TABLE", "table", "sales.orders", "table: expected an object"),
    ("ON_ALTER_TABLE", "newTable", 5, "newTable: expected an object, got 5"),
    ("ON_ADD_PARTITION", "partitions", {}, "partitions: expected a list, got {}"),
    ("ON_ADD_PARTITION", "partitions", [{}, 1], "partitions[1]: expected an object, got 1"),
    ("ON_DROP_PARTITION", "partitions", [None], "partitions[0]: expected an object, got None"),
    ("ON_ALTER_PARTITION", "oldPartition", ["x"], "oldPartition: expected an object"),
    ("ON_DROP_TABLE", "deleteData", "true", "deleteData: expected true or false, got 'true'"),
    ("ON_DROP_PARTITION", "deleteData", 1, "deleteData: expected true or false, got 1"),
    ("ON_INSERT", "files", "s3://x", "files: expected a list of strings"),
    ("ON_INSERT", "files", ["a", 1], "files[1]: expected a string, got 1"),
    ("ON_INSERT", "fileChecksums", [None], "fileChecksums[0]: expected a string, got None"),
    ("ON_INSERT", "partitionKeyValues", {"dt": 1}, "partitionKeyValues['dt']: expected a string, got 1"),
    ("ON_INSERT", "partitionKeyValues", ["dt"], "partitionKeyValues: expected an object of strings"),
    ("ON_CREATE_DATABASE", "database", True, "database: expected an object, got True"),
    ("ON_CREATE_TABLE", "environmentContext", [], "environmentContext: expected an object, got []"),
    ("ON_CREATE_TABLE", "databaseName", 5, "databaseName: expected a string, got 5"),
    ("ON_CREATE_TABLE", "tableName", ["t"], "tableName: expected a string, got ['t']"),
    ("ON_INSERT", "tableName", {}, "tableName: expected a string, got {}"),
    ("ON_CREATE_DATABASE", "databaseName", 1.5, "databaseName: expected a string, got 1.5"),
    ("ON_CREATE_TABLE", "status", "true", "status: expected true or false, got 'true'"),
    ("ON_CREATE_TABLE", "status", 1, "status: expected true or false, got 1"),
    ("ON_CREATE_TABLE", "parameters", [], "parameters: expected an object of strings, got []"),
    ("ON_CREATE_TABLE", "parameters", {"hive.version": 2.3}, "parameters['hive.version']: expected a string, got 2.3"),
    ("ON_CREATE_TABLE", "parameters", {"a": {"b": "c"}}, "parameters['a']: expected a string"),
]


@pytest.mark.parametrize(
    ("event_type", "key", "value", "reason"), ENVELOPE_ERRORS, ids=[f"{t}-{k}-{v!r}" for t, k, v, _ in ENVELOPE_ERRORS]
)
def test_wrong_type_in_the_envelope(event_type: str, key: str, value: Any, reason: str) -> None:
    refused(raw({**messages("2.3")[event_type], key: value}), reason)


def set_path(message: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(message)
    target: Any = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


NESTED_ERRORS = [
    (
        "ON_CREATE_TABLE",
        ["table", "sd", "cols", 1, "name"],
        5,
        "table",
        "table.sd.cols[1].name: expected a string, got 5",
    ),
    ("ON_CREATE_TABLE", ["table", "createTime"], 1 << 40, "table", "table.createTime: expected a 32-bit integer"),
    ("ON_CREATE_TABLE", ["table", "createTime"], 1.5, "table", "table.createTime: expected a 32-bit integer, got 1.5"),
    ("ON_CREATE_TABLE", ["table", "retention"], True, "table", "table.retention: expected a 32-bit integer, got True"),
    ("ON_CREATE_TABLE", ["table", "temporary"], "no", "table", "table.temporary: expected true or false, got 'no'"),
    ("ON_CREATE_TABLE", ["table", "sd"], [], "table", "table.sd: expected an object, got []"),
    ("ON_CREATE_TABLE", ["table", "sd", "cols"], {}, "table", "table.sd.cols: expected a list, got {}"),
    ("ON_CREATE_TABLE", ["table", "sd", "cols", 0], "id", "table", "table.sd.cols[0]: expected an object"),
    ("ON_CREATE_TABLE", ["table", "sd", "bucketCols", 0], 1, "table", "table.sd.bucketCols[0]: expected a string"),
    (
        "ON_CREATE_TABLE",
        ["table", "sd", "sortCols", 0, "order"],
        "asc",
        "table",
        "table.sd.sortCols[0].order: expected a 32-bit integer, got 'asc'",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "parameters", "EXTERNAL"],
        True,
        "table",
        "table.parameters['EXTERNAL']: expected a string, got True",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "sd", "serdeInfo", "parameters"],
        [],
        "table",
        "table.sd.serdeInfo.parameters: expected an object, got []",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "sd", "skewedInfo", "skewedColValues", 1],
        "FR",
        "table",
        "table.sd.skewedInfo.skewedColValues[1]: expected a list, got 'FR'",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "sd", "skewedInfo", "skewedColValueLocationMaps", 1],
        {"key": "FR"},
        "table",
        "table.sd.skewedInfo.skewedColValueLocationMaps[1]: expected",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "sd", "skewedInfo", "skewedColValueLocationMaps"],
        "x",
        "table",
        "table.sd.skewedInfo.skewedColValueLocationMaps: expected a list of key/value objects",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "privileges", "rolePrivileges", "analysts", 1, "grantorType"],
        "KING",
        "table",
        "table.privileges.rolePrivileges['analysts'][1].grantorType: expected one of ['GROUP', 'ROLE', 'USER']",
    ),
    ("ON_CREATE_TABLE", ["table", "ownerType"], True, "table", "table.ownerType: expected one of"),
    (
        "ON_CREATE_TABLE",
        ["table", "colStats", "statsObj", 0, "statsData", "longStats", "bitVectors"],
        "not base64!",
        "table",
        "table.colStats.statsObj[0].statsData.longStats.bitVectors: expected base64 text",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "colStats", "statsObj", 1, "statsData", "doubleStats", "lowValue"],
        "0.5",
        "table",
        "table.colStats.statsObj[1].statsData.doubleStats.lowValue: expected a number, got '0.5'",
    ),
    (
        "ON_CREATE_TABLE",
        ["table", "colStats", "statsObj", 1, "statsData", "doubleStats", "numDVs"],
        1 << 64,
        "table",
        "table.colStats.statsObj[1].statsData.doubleStats.numDVs: expected a 64-bit integer, got 18446744",
    ),
    ("ON_CREATE_TABLE", ["table", "writeId"], 1 << 63, "table", "table.writeId: expected a 64-bit integer"),
    ("ON_CREATE_TABLE", ["table", "accessType"], 128, "table", "table.accessType: expected a 8-bit integer, got 128"),
    ("ON_CREATE_TABLE", ["table", "fileMetadata", "data"], [1], "table", "table.fileMetadata.data[0]: expected base64"),
    (
        "ON_CREATE_TABLE",
        ["environmentContext", "properties", "k"],
        1,
        "environment_context",
        "environmentContext.properties['k']: expected a string, got 1",
    ),
    ("ON_ADD_PARTITION", ["partitions", 1, "values", 0], 3, "partitions", "partitions[1].values[0]: expected a string"),
    (
        "ON_ADD_PARTITION",
        ["partitions", 0, "sd", "location"],
        ["x"],
        "partitions",
        "partitions[0].sd.location: expected a string, got ['x']",
    ),
    (
        "ON_ALTER_PARTITION",
        ["newPartition", "lastAccessTime"],
        "0",
        "new_partition",
        "newPartition.lastAccessTime: expected a 32-bit integer, got '0'",
    ),
    (
        "ON_ALTER_TABLE",
        ["oldTable", "partitionKeys", 0, "comment"],
        1,
        "old_table",
        "oldTable.partitionKeys[0].comment: expected a string",
    ),
    (
        "ON_CREATE_DATABASE",
        ["database", "type"],
        "CLOUD",
        "database",
        "database.type: expected one of ['NATIVE', 'REMOTE']",
    ),
    (
        "ON_ALTER_DATABASE",
        ["newDatabase", "parameters"],
        "x",
        "new_database",
        "newDatabase.parameters: expected an object",
    ),
]


@pytest.mark.parametrize(
    ("event_type", "path", "value", "field", "reason"),
    NESTED_ERRORS,
    ids=[".".join(map(str, p)) for _, p, _, _, _ in NESTED_ERRORS],
)
def test_wrong_type_nested_raises_on_access_naming_the_path(
    event_type: str, path: list[Any], value: Any, field: str, reason: str
) -> None:
    message = set_path(messages("4.0")[event_type], path, value)
    data = raw(message)
    event = apiary.decode(data)
    for _ in range(2):  # still an error the second time
        with pytest.raises(hw.DecodeError) as caught:
            getattr(event, field)
        assert reason in str(caught.value)
    for other in ("environment_context", *event.fields):  # the rest of the event is still readable
        if other != field:
            getattr(event, other)
    assert json.loads(apiary.encode(event)) == message  # and it encodes back from the payload
    with pytest.raises(hw.DecodeError):
        materialise(event)


def test_a_10_mb_message_decodes_and_its_partitions_load() -> None:
    message = messages("2.3")["ON_ADD_PARTITION"]
    partition = message["partitions"][0]
    count = 10 * 1024 * 1024 // len(raw(partition)) + 1
    data = raw({**message, "partitions": [partition] * count})
    assert len(data) > 10 * 1024 * 1024
    event = apiary.decode(data)
    partitions = event.partitions  # type: ignore[attr-defined]
    assert len(partitions) == count and partitions[-1] == expected_partition("2.3", "2024-05-01")
    assert partitions[0] is not partitions[1]


def test_a_message_over_the_limit_is_refused_before_parsing() -> None:
    data = b"[" * (apiary.MAX_MESSAGE_BYTES + 1)
    for given in (data, bytearray(data), memoryview(data)):
        with pytest.raises(hw.DecodeError, match=r"above the \d+-byte limit"):
            apiary.decode(given)


@pytest.mark.parametrize("depth", [2000, 100_000])
def test_deeply_nested_json_is_refused(depth: int) -> None:
    refused(b"[" * depth + b"]" * depth, "not JSON")
    refused(b'{"eventType": "ON_INSERT", "x": ' + b'{"a":' * depth + b"1" + b"}" * depth + b"}", "not JSON")
    refused(b"[" * depth, "not JSON")


def only_decode_errors(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except hw.DecodeError:
        pass


def nested_tables(depth: int) -> bytes:
    """An ON_CREATE_TABLE message whose materialized view reads a view that reads a view ... ``depth`` times."""
    level = (
        '{"tableName": "t", "dbName": "d", "creationMetadata": {"catName": "hive", "dbName": "d", '
        '"tblName": "t", "tablesUsed": ["d.s"], "sourceTables": [{"insertedCount": 0, "updatedCount": 0, '
        '"deletedCount": 0, "table": '
    )
    table = level * depth + '{"tableName": "t", "dbName": "d"}' + "}]}}" * depth
    return ('{"eventType": "ON_CREATE_TABLE", "table": ' + table + "}").encode()


@pytest.mark.parametrize("depth", [1, thriftjson.MAX_VIEW_NESTING, thriftjson.MAX_VIEW_NESTING + 1, 60, 200, 400])
def test_views_on_views_load_up_to_a_limit(depth: int) -> None:
    data = nested_tables(depth)
    if depth == 400:  # 1600 levels of JSON
        refused(data, "not JSON: nested too deeply")
        return
    event = apiary.decode(data)
    if depth <= 60:  # the payload goes back unchanged
        assert json.loads(apiary.encode(event))["table"] == json.loads(data)["table"]
    only_decode_errors(lambda: apiary.encode(event))
    if depth > thriftjson.MAX_VIEW_NESTING:
        with pytest.raises(
            hw.DecodeError,
            match=r"^table\.creationMetadata\.sourceTables: materialized views "
            r"nest more than 16 levels deep$",
        ):
            event.table  # type: ignore[attr-defined]  # noqa: B018
        only_decode_errors(event.to_dict)
        return
    table, levels = event.table, 0  # type: ignore[attr-defined]
    while table.creationMetadata is not None:
        assert table.creationMetadata.tablesUsed == {"d.s"}
        table, levels = table.creationMetadata.sourceTables[0].table, levels + 1
    assert levels == depth
    assert repr(event.table) and event.copy() == event  # type: ignore[attr-defined]
    assert apiary.decode(apiary.encode(event)) == event


def test_deep_unknown_value_inside_an_object_is_ignored() -> None:
    deep = json.loads("[" * 300 + "]" * 300)
    message = {"eventType": "ON_CREATE_TABLE", "table": {"tableName": "t", "dbName": "d", "future": deep}}
    event = apiary.decode(raw(message))
    assert event.table == hms.Table(tableName="t", dbName="d")
    assert json.loads(apiary.encode(apiary.decode(raw(message))))["table"]["future"] == deep


def test_tricky_json_values() -> None:
    """What the JSON values of edge cases become (in an object read lazily: the environment context)."""
    cases = {
        b"1.0": 1.0,
        b"-0.0": -0.0,
        b"1e-400": 0.0,
        b"1E2": 100.0,
        b"18446744073709551615": 18446744073709551615,
        b"18446744073709551616": 1 << 64,
        b"-9223372036854775809": -(1 << 63) - 1,
        b'"\\u0000"': "\x00",
        b'"\\/"': "/",
        b'"\\ud83d\\ude00"': "\U0001f600",
        b"\t[]\r\n": [],
    }
    insert = raw({**messages("2.3")["ON_INSERT"], "environmentContext": {"properties": {}, "x": 0}})
    for text, value in cases.items():
        event = apiary.decode(insert.replace(b'"x": 0', b'"x": ' + text))
        got = event.to_dict()["environmentContext"]["x"]
        assert got == value and type(got) is type(value), text
    duplicate = apiary.decode(insert.replace(b'"x": 0', b'"properties": {"a": "1"}'))
    assert duplicate.environment_context.properties == {"a": "1"}  # the last of duplicate keys wins


# -- partitioning ---------------------------------------------------------------------------------------------

JAVA_HASHES = {  # String.hashCode() as Java computes it
    "": 0,
    "a": 97,
    "Aa": 2112,
    "BB": 2112,
    "hello": 99162322,
    "polygenelubricants": -(1 << 31),
    "\u00e9": 233,
    "\U0001f600": 31 * 0xD83D + 0xDE00,
    "a\U0001f600": (97 * 31 + 0xD83D) * 31 + 0xDE00,
    "\ud800": 0xD800,
}


@pytest.mark.parametrize(("text", "expected"), JAVA_HASHES.items(), ids=repr)
def test_java_string_hash(text: str, expected: int) -> None:
    assert apiary.java_string_hash(text) == expected


def test_partition_for_follows_math_abs_of_java_remainder() -> None:
    # Math.abs(Integer.MIN_VALUE % n): Java's remainder truncates toward zero.
    assert [apiary.partition_for("polygenelubricants", n) for n in (1, 2, 3, 4, 5, 7)] == [0, 0, 2, 0, 3, 2]
    assert apiary.partition_for("Aa", 10) == apiary.partition_for("BB", 10) == 2
    assert apiary.partition_for("", 6) == 0
    with pytest.raises(ValueError, match="at least 1"):
        apiary.partition_for("db.t", 0)


# -- ENUM_FIELDS against the IDL ------------------------------------------------------------------------------

FIELD = re.compile(r"^\s*(\d+)\s*:\s*(?:required\s+|optional\s+)?(.+?)\s+(\w+)\s*(?:=\s*[^,;]+?)?\s*[,;]?\s*(?://.*)?$")


def idl() -> tuple[dict[str, list[tuple[str, str]]], set[str]]:
    """Structs (and unions) of idl/hive_metastore.thrift as {name: [(type, field)]}, and the enum names."""
    text = re.sub(r"/\*.*?\*/", "", (ROOT / "idl" / "hive_metastore.thrift").read_text(), flags=re.S)
    structs: dict[str, list[tuple[str, str]]] = {}
    enums = set(re.findall(r"^enum\s+(\w+)", text, flags=re.M))
    for name, body in re.findall(r"^(?:struct|union)\s+(\w+)\s*\{(.*?)^\}", text, flags=re.M | re.S):
        fields = []
        for line in body.splitlines():
            match = FIELD.match(line)
            if match:
                fields.append((match.group(2), match.group(3)))
        structs[name] = fields
    return structs, enums


def test_idl_parser_reads_the_structs() -> None:
    structs, enums = idl()
    assert len(structs["Table"]) == len([s for s in hms.Table.thrift_spec if s]) == 28
    assert ("map<list<string>, string>", "skewedColValueLocationMaps") in structs["SkewedInfo"]
    assert {"PrincipalType", "SerdeType", "DatabaseType"} <= enums
    for name, fields in structs.items():
        cls = getattr(hms, name, None)
        if cls is not None and hasattr(cls, "thrift_spec"):
            assert sorted(f for _, f in fields) == sorted(s[2] for s in cls.thrift_spec or () if s), name


def test_enum_fields_are_complete() -> None:
    structs, enums = idl()
    reachable = _reachable_names(structs)
    assert {
        "Table",
        "StorageDescriptor",
        "SkewedInfo",
        "PrivilegeGrantInfo",
        "ColumnStatisticsData",
        "SourceTable",
    } <= reachable
    found = {
        (struct, fname): word
        for struct in reachable
        for ftype, fname in structs[struct]
        for word in re.findall(r"\w+", ftype)
        if word in enums
    }
    assert {key: cls.__name__ for key, cls in thriftjson.ENUM_FIELDS.items()} == found


def test_fast_loaders_cover_every_reachable_struct() -> None:
    structs, _ = idl()
    assert {cls.__name__ for cls in thriftjson.LOADERS} == _reachable_names(structs)


def _reachable_names(structs: dict[str, list[tuple[str, str]]]) -> set[str]:
    seen: set[str] = set()
    # The structs the event types carry (idl/events.toml), and every event's EnvironmentContext.
    todo = ["EnvironmentContext", *{f.thrift.__name__ for spec in TYPES.values() for f in spec.fields if f.thrift}]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += [w for ftype, _ in structs[name] for w in re.findall(r"\w+", ftype) if w in structs]
    return seen


def test_event_types_and_wire_names() -> None:
    assert {f"ON_{t.value}" for t in EventType} == {m["eventType"] for _, m, _ in GOLDEN}
    assert set(VERSIONS) == {"2.3", "3.1", "4.0"}
    assert thriftjson.load_struct(hms.FieldSchema, {"name": "a"}) == hms.FieldSchema(name="a")
    with pytest.raises(hw.DecodeError, match=r"FieldSchema.name: expected a string"):
        thriftjson.load_struct(hms.FieldSchema, {"name": 1})
    assert table_json("2.3")["tableName"] == "orders" and partition_json("2.3", "x")["values"] == ["x"]


# -- read(): what the runtime routes on ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "message", "expected"), GOLDEN, ids=IDS)
def test_read_gives_the_names_decode_does_and_makes_equal_independent_events(
    name: str, message: dict[str, Any], expected: ListenerEvent
) -> None:
    import gc

    data = raw(message)
    decoded = apiary.read(data)
    origin = Origin("apiary", 2, 7, 1700000000000)
    first, second = decoded.event(origin), decoded.event(origin)
    assert first == apiary.decode(data, origin=origin) == expected
    assert (decoded.event_type, decoded.db_name, decoded.table_name, decoded.status, decoded.qualified_name) == (
        expected.event_type,
        expected.db_name,
        expected.table_name,
        expected.status,
        expected.qualified_name,
    )
    assert first.origin == origin and first.raw == data
    # Each event converts its own objects: what one listener changes, another does not see.
    for field in first.fields:
        value = getattr(first, field)
        if isinstance(value, hms.Table):
            value.owner = "changed by one listener"
            assert getattr(second, field).owner != "changed by one listener"
    # A backlog of these costs the cyclic garbage collector nothing: it never scans them.
    assert not gc.is_tracked(decoded)


def test_read_refuses_what_decode_refuses_with_the_same_reason() -> None:
    for bad in (b"", b"{", b"[]", b'{"eventType": "ON_NOTHING"}', b'{"eventType": "ON_CREATE_TABLE"}', b"\xff"):
        with pytest.raises(hw.DecodeError) as by_read:
            apiary.read(bad)
        with pytest.raises(hw.DecodeError) as by_decode:
            apiary.decode(bad)
        assert by_read.value.reason == by_decode.value.reason
