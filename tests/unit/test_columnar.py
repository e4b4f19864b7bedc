"""The columnar decoder gives the table of the per-event path, message for message, malformed ones included.

Today's path is what every reader did before the columnar decoder: ``apiary.decode`` each message (an
``Undecodable`` when it fails, "empty message (no value)" for a tombstone), then ``to_arrow`` of the events
with ``on_error="record"``. The columnar path is ``to_arrow`` of the raw messages.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hivewire.data._arrow import ACCELERATED, SCHEMA, Message, Undecodable, to_arrow
from hivewire.data._columnar import batch, fast_row
from hivewire.data._decoder import decode_messages
from hivewire.data._rows import NO_VALUE, event_row
from hivewire.errors import DecodeError
from hivewire.events import _apiary as apiary
from hivewire.events._model import EventType, ListenerEvent, Origin
from hivewire.events._types import TYPES

sys.path.insert(0, str(Path(__file__).parent))
from apiary_messages import GOLDEN
from test_arrow import T0_MS, mixed_messages

TOPIC = "apiary"
# Values a malformed message puts where another belongs.
_WRONG: list[Any] = [5, -(2**40), 2**70, 1.5, "x", "USER", True, None, [], ["x"], [5], {}, {"a": 5}, {"a": None}]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON value."""
    out = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


def _set(message: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        message = message[step]
    message[path[-1]] = value


def _delete(message: Any, path: tuple[Any, ...]) -> None:
    for step in path[:-1]:
        message = message[step]
    del message[path[-1]]


def malformed(data: bytes, rng: random.Random) -> bytes | None:
    """One way to break (or merely bend) an Apiary message."""
    choice = rng.randrange(12)
    if choice == 0:
        return data[: rng.randrange(len(data))]  # truncated: not JSON
    if choice == 1:
        at = data.index(b'"databaseName"') + 17
        return data[:at] + b"\xff\xfe" + data[at:]  # not UTF-8
    if choice == 2:
        return None  # a tombstone
    if choice == 3:
        return data.replace(b'"ON_', b'"ON_UNKNOWN_', 1)
    message = json.loads(data)
    if choice == 4:
        message["parameters"] = {**(message.get("parameters") or {}), "hive.metastore.uris": None}
    elif choice == 5:
        for key in rng.sample(["databaseName", "tableName", "status", "parameters"], 2):
            message.pop(key, None)
    elif choice == 6:
        _delete(message, rng.choice([p for p in _paths(message) if isinstance(p[-1], str)]))
    elif choice == 7:
        table = message.get("table") or message.get("newTable")
        if not isinstance(table, dict):
            return json.dumps(message).encode()
        table["ownerType"] = rng.choice(["USER", "ROLE", "BOGUS", 1, 2**40])
        sd = table.get("sd") or {}
        sd["skewedInfo"] = rng.choice(
            [
                {"skewedColNames": ["a"], "skewedColValues": [["1"]], "skewedColValueLocationMaps": []},
                {"skewedColValueLocationMaps": [{"key": ["1"], "value": "s3://x"}]},
                {"skewedColValueLocationMaps": {"[1]": "s3://x"}},
                {"skewedColValueLocationMaps": [{"key": [1]}]},
                {"skewedColValueLocationMaps": 5},
            ]
        )
        table["creationMetadata"] = rng.choice([None, {"catName": "hive", "dbName": "d", "tblName": "t"}])
    else:  # a wrong value anywhere
        paths = _paths(message)
        for path in rng.sample(paths, min(len(paths), 1 + choice - 8)):
            try:
                _set(message, path, copy.deepcopy(rng.choice(_WRONG)))
            except (TypeError, KeyError, IndexError):
                pass  # an earlier change replaced a container on the way
    return json.dumps(message, ensure_ascii=rng.random() < 0.5).encode()


def todays_item(value: bytes | None, origin: Origin) -> ListenerEvent | Undecodable:
    """What read_events, the archive and the Spark source made of a message before the columnar decoder."""
    if value is None:
        return Undecodable(origin, None, NO_VALUE)
    try:
        return apiary.decode(value, origin=origin)
    except DecodeError as e:
        return Undecodable(origin, value, e.reason)


def messages_with_origins(n: int, *, bad_share: float, seed: int) -> list[Message]:
    """``n`` mixed messages, ``bad_share`` of them malformed, with Kafka origins. None is left out: a message
    today's path cannot convert must fail the tests that use these."""
    rng = random.Random(seed)
    out = []
    for i, data in enumerate(mixed_messages(n, seed=seed)):
        value = malformed(data, rng) if rng.random() < bad_share else data
        out.append(Message(Origin(TOPIC, i % 4, i // 4, None if i % 97 == 0 else T0_MS + i * 10), value))
    return out


def test_the_native_decoder_is_built() -> None:
    """``make install`` builds it (pip runs cargo); without it the tests below would only test the fallback."""
    assert ACCELERATED, (
        "hivewire.arrow.ACCELERATED is False: the native decoder (native/, Rust) was not built. Install cargo "
        "(https://rustup.rs) and rerun `make install`; pip's output says why the build failed"
    )


def test_the_same_table_as_todays_path_on_200000_messages() -> None:
    messages = messages_with_origins(200_000, bad_share=0.05, seed=30)
    assert len(messages) == 200_000
    today = to_arrow([todays_item(v, o) for o, v in messages], on_error="record")
    columnar = to_arrow(messages, on_error="record")
    assert today.num_rows == columnar.num_rows == 200_000
    assert columnar.schema == today.schema == SCHEMA
    for name in SCHEMA.names:
        assert columnar.column(name).equals(today.column(name)), name
    assert columnar.equals(today)
    errors = today.column("decode_error").drop_null()
    assert len(errors) > 5_000  # the malformed messages did reach the errors
    # every type that travels on the wire (derived ones, Iceberg commits, are made by the runtime, never sent)
    assert set(today.column("event_type").drop_null().to_pylist()) == {
        t.value for t in EventType if not TYPES[t].derived
    }


@pytest.mark.parametrize(
    "columns",
    [
        ["event_type", "db_name", "table_name"],  # the Spark source's pruned read: no object is converted
        ["kafka_offset", "parameters", "hive_version", "raw"],
        ["table_name", "columns_added", "iceberg_snapshot_id"],
        ["decode_error"],
    ],
)
def test_pruned_columns_are_those_of_the_whole_row(columns: list[str]) -> None:
    """A batch of some columns (the native decoder then skips the cells no column reads) is the whole
    table's selection of them, malformed messages included."""
    messages = messages_with_origins(20_000, bad_share=0.05, seed=32)
    whole = to_arrow([todays_item(v, o) for o, v in messages], on_error="record")
    pruned = pa.Table.from_batches(
        [decode_messages(messages[i : i + 4096], "record", columns) for i in range(0, len(messages), 4096)]
    )
    assert pruned.num_rows == 20_000
    assert pruned.column_names == columns
    assert pruned.equals(whole.select(columns))


# JSON escapes as raw message text (json.dumps never writes most of them), put in strings the columns read and
# in map keys: the native decoder keeps the unescaped text of each, or refuses where Python reads it differently.
_ESCAPES = [
    r"\/",
    r"\u0041",
    r"\u00E9\u00e9",
    r"\ud83d\ude00",  # a surrogate pair
    r"\ud83d",  # a lone high surrogate
    r"\ude00x",  # a lone low surrogate
    r"\ud83d\u0041",  # a high surrogate and no low one
    r"\b\f\n\r\t",
    r"\"\\",
    r"\u0000",
    "\u00e9",  # not escaped: UTF-8 in the message
]


def escaped(data: bytes, rng: random.Random) -> bytes:
    """A message with raw JSON escapes in some of its strings and in a key of its parameters."""
    message = json.loads(data)
    strings = _paths(message)
    picked = {}
    for i, path in enumerate(rng.sample(strings, min(len(strings), 6))):
        value = message
        for step in path:
            value = value[step]
        if isinstance(value, str):
            _set(message, path, f"{value}ESC{i}ESC")
            picked[i] = rng.choice(_ESCAPES)
    params = message.get("parameters")
    if isinstance(params, dict):
        params["kESC9ESC"] = "v"
        params["k" + json.loads('"' + rng.choice(["A", r"\u0041", "B"]) + '"')] = "w"  # maybe a duplicate key
        picked[9] = rng.choice([r"\u0041", r"\/", r"\ud83d\ude00", "A"])
    text = json.dumps(message, ensure_ascii=rng.random() < 0.5)
    for i, escape in picked.items():
        text = text.replace(f"ESC{i}ESC", escape)
    return text.encode()


def test_strings_with_every_json_escape() -> None:
    """Escapes of every kind (surrogate pairs, lone surrogates, escaped ASCII, NUL) in the strings the columns
    read and in map keys give the per-event path's table."""
    rng = random.Random(33)
    messages = [
        Message(Origin(TOPIC, 0, i, T0_MS + i), escaped(data, rng))
        for i, data in enumerate(mixed_messages(3_000, seed=33))
    ]
    today = to_arrow([todays_item(m.value, m.origin) for m in messages], on_error="record")
    columnar = to_arrow(messages, on_error="record")
    assert columnar.num_rows == today.num_rows == 3_000
    assert columnar.equals(today)
    # the escapes did reach decoded rows (930 of them), not only error rows
    assert today.column("decode_error").null_count > 500


def _grammar_variants(data: bytes) -> list[bytes]:
    """Raw-text variants of one message at the edges of JSON's grammar and of what the models take, written
    by hand (json.dumps never writes them): each is accepted alike or refused alike by both paths."""
    text = data.decode()
    body = text[1:-1]
    out = [
        # whitespace of every kind everywhere
        " \t\r\n" + json.dumps(json.loads(text), indent="\t", separators=(" ,\r", " : ")) + " \n",
        text.replace('"status":true', '"status" :true', 1),
        text[:-1] + ",}",  # a trailing comma
        text.replace("[]", "[,]", 1),
        text.replace("[", "[1,", 1),
        text + "x",  # text after the object
        text + "{}",
        "\ufeff" + text,  # a byte order mark
        text.replace('"status":true', '"status":tru', 1),
        text.replace('"status":true', '"status":True', 1),
        text.replace('"status":true', '"status":null', 1),
        text.replace('"status":true', '"status":1', 1),
        text.replace('"status":true', '"status":"true"', 1),
        text.replace(":0,", ":-0,", 1),
        text.replace(":0,", ":00,", 1),
        text.replace(":0,", ":0.0,", 1),
        text.replace(":0,", ":0e0,", 1),
        text.replace(":0,", ":1E+2,", 1),
        text.replace(":0,", ":-,", 1),
        text.replace(":0,", ":9223372036854775807,", 1),
        text.replace(":0,", ":9223372036854775808,", 1),
        text.replace(":0,", ":-9223372036854775808,", 1),
        text.replace(":0,", ":-9223372036854775809,", 1),
        text.replace(":0,", ":18446744073709551616,", 1),
        text.replace('"db', '"d\tb', 1),  # a raw control character in a string
        text.replace('"db', '"d\x7fb', 1),
        text.replace('"db', '"d\\\\ud800b', 1),  # an escaped backslash, then "ud800" as text
        text.replace('"db', '"d\\\\\\ud800b', 1),  # an escaped backslash, then a lone surrogate
        text.replace('"db', '"d\\u00e9b', 1),
        text.replace('"db', '"d\\u00G9b', 1),  # a bad escape
        text.replace('"db', '"d\\xb', 1),
        text.replace('"db', '"d\\u00', 1),  # an escape cut short
        text.replace('"db', '"d\u00e9b', 1),  # UTF-8 in a name
        text.replace('"hive.version"', '"hive.version","x":{"a":[[[[[[[[[[1]]]]]]]]]]},"y"', 1),
        text.replace('"hive.version"', '"hive\\u002eversion"', 1),  # an escaped key
        text.replace('"databaseName"', '"databaseNam\\u0065"', 1),
        text.replace('"databaseName"', '"x":' + "[" * 200 + "]" * 200 + ',"databaseName"', 1),  # deep nesting
        text.replace('"databaseName"', '"eventType":"ON_DROP_TABLE","databaseName"', 1),  # a second tag
        "{" + body.split(",", 1)[1] + "," + body.split(",", 1)[0] + "}",  # the tag last
        "{" + body.split(",", 1)[1] + "," + body.split(",", 1)[0] + "," + body.split(",", 1)[0] + "}",
        '{"eventType":' + body.split(",", 1)[0].split(":", 1)[1] + "}",  # the tag alone
        '{"eventType":5,' + body.split(",", 1)[1] + "}",
        "{}",
        "[]",
        "",
        text.replace('"parameters":{', '"parameters":{"seq":"0",', 1),  # a duplicate map key
        text.replace('"parameters":{', '"parameters":{"":"",', 1),
        text.replace('"databaseName"', '"databaseName":"a","databaseName"', 1),  # a duplicate field
    ]
    raw = [v.encode() for v in out]
    raw.append(data.replace(b'"db', b'"d\xc3b', 1))  # UTF-8 cut short inside a string
    raw.append(data.replace(b'"db', b'"d\xed\xa0\x80b', 1))  # an encoded surrogate
    raw.append(data.replace(b',"databaseName"', b',\xc3\xa9"databaseName"', 1))  # UTF-8 outside strings
    return raw


def test_grammar_edges_one_at_a_time() -> None:
    """The hand-written parse of the native decoder at JSON's edges: whitespace, trailing commas, literals,
    numbers at 64 bits, control characters, escapes (and text that reads as one once a summary is read
    again), UTF-8 in and out of strings, nesting, the tag's place and duplicates: each message alone gives
    the per-event path's row."""
    bases = [m for m in mixed_messages(300, seed=34) if b":0," in m and b'"db' in m]
    bases = [bases[0], *[m for m in bases if b"ALTER_TABLE" in m][:1], *[m for m in bases if b"ICEBERG" in m][:1]]
    count = 0
    for base in bases:
        for i, value in enumerate(_grammar_variants(base)):
            message = Message(Origin(TOPIC, 0, i, T0_MS + i), value)
            columnar = to_arrow([message], on_error="record")
            assert columnar.num_rows == 1
            assert columnar.equals(to_arrow([todays_item(message.value, message.origin)], on_error="record")), value
            count += 1
    assert count >= 3 * 50


def test_malformed_messages_one_at_a_time() -> None:
    """Each malformed message alone (no neighbour to hide a difference), every kind of break."""
    for message in messages_with_origins(3_000, bad_share=1.0, seed=31):
        columnar = to_arrow([message], on_error="record")
        assert columnar.equals(to_arrow([todays_item(message.value, message.origin)], on_error="record")), message


def test_the_golden_messages_of_every_hive_version() -> None:
    """Each gives the per-event path's row; all but those with binary values (Hive 4's file metadata, which
    the fast path refuses) take the fast path."""
    for name, message, _ in GOLDEN:
        data = json.dumps(message).encode()
        origin = Origin(TOPIC, 0, 1, T0_MS)
        assert (fast_row(data, origin) is not None) is ('"fileMetadata": {' not in data.decode()), name
        assert to_arrow([Message(origin, data)]).equals(to_arrow([apiary.decode(data, origin=origin)])), name


def test_plain_bytes_and_mixed_items() -> None:
    data = mixed_messages(30, seed=5)
    events = [apiary.decode(d) for d in data]
    mixed: list[Any] = [d if i % 3 else events[i] for i, d in enumerate(data)]
    mixed.insert(7, Undecodable(None, b"{", "not JSON: truncated"))
    expected = to_arrow([*events[:7], Undecodable(None, b"{", "not JSON: truncated"), *events[7:]])
    assert to_arrow(mixed, batch_size=4).equals(expected)


def test_raise_names_the_message() -> None:
    origin = Origin(TOPIC, 3, 12, T0_MS)
    with pytest.raises(DecodeError, match=r"at apiary/3@12 did not decode: not JSON"):
        to_arrow([Message(origin, b"{")])
    with pytest.raises(DecodeError, match="empty message"):
        to_arrow([Message(origin, None)])
    bad = json.loads(mixed_messages(1)[0])
    (bad.get("table") or bad.get("newTable") or bad)["tableType"] = 5
    assert to_arrow([json.dumps(bad).encode()], on_error="record").column("event_type")[0].is_valid


def test_batches_of_rows_build_every_column_type() -> None:
    messages = messages_with_origins(500, bad_share=0.3, seed=32)
    rows = [event_row(e, "record") for e in (todays_item(v, o) for o, v in messages) if isinstance(e, ListenerEvent)]
    built = pa.Table.from_batches([batch(rows)])
    # pyarrow's own conversion of the same row tuples is the reference
    reference = pa.Table.from_arrays(
        [pa.array(list(column), type=t) for column, t in zip(zip(*rows, strict=True), SCHEMA.types, strict=True)],
        schema=SCHEMA,
    )
    assert built.equals(reference)
    assert pa.Table.from_batches([batch([])]).num_rows == 0
