"""Property tests of hivewire.apiary: random events survive encode/decode; random input only raises DecodeError.

Settings are fixed (derandomized, a set number of examples) so the file runs the same way everywhere, in
well under a minute.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from thrift.Thrift import TType

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events import _thriftjson as thriftjson
from hivewire.events._model import (
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropDatabaseEvent,
    DropPartitionEvent,
    DropTableEvent,
    EventType,
    InsertEvent,
    ListenerEvent,
)
from hivewire_thrift.hive_metastore import ttypes as hms

sys.path.insert(0, str(Path(__file__).parent))
from apiary_messages import GOLDEN

FAST = settings(
    derandomize=True,
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
VERSIONS = {"2.3": "2.3.9", "2.3.10": "2.3.10", "3.1": "3.1.3", "4.0": "4.0.1", None: None}

# -- values ---------------------------------------------------------------------------------------------------

text = st.text(max_size=12)  # any Unicode except surrogates, which a UTF-8 message cannot carry
i8 = st.integers(-(1 << 7), (1 << 7) - 1)
i16 = st.integers(-(1 << 15), (1 << 15) - 1)
i32 = st.integers(-(1 << 31), (1 << 31) - 1)
i64 = st.integers(-(1 << 63), (1 << 63) - 1)
doubles = st.floats(allow_nan=False, allow_infinity=False)
booleans = st.booleans()
blobs = st.binary(max_size=12)
strings_map = st.dictionaries(text, text, max_size=4)
parameters_map = st.dictionaries(text, st.none() | text, max_size=4)
principal = st.sampled_from([1, 2, 3]) | i32


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


def small_list(strategy: st.SearchStrategy[Any], max_size: int = 3) -> st.SearchStrategy[list[Any]]:
    return st.lists(strategy, max_size=max_size)


def newer(version: str | None, since: str) -> bool:
    """Whether the field set of ``version`` (None: every field) has the fields added in ``since``.

    "2.3.10" has the 3.0 catalog names (HIVE-27868) and nothing else of 3.0.
    """
    return version is None or version >= since or (version == "2.3.10" and since == "catalog")


# -- Thrift objects, per Hive field set ------------------------------------------------------------------------

field_schemas = st.builds(hms.FieldSchema, name=opt(text), type=opt(text), comment=opt(text))
orders = st.builds(hms.Order, col=opt(text), order=opt(i32))
skewed_infos = st.builds(
    hms.SkewedInfo,
    skewedColNames=opt(small_list(text)),
    skewedColValues=opt(small_list(small_list(text))),
    skewedColValueLocationMaps=opt(st.dictionaries(st.lists(text, max_size=3).map(tuple), opt(text), max_size=3)),
)
grants = st.builds(
    hms.PrivilegeGrantInfo,
    privilege=opt(text),
    createTime=opt(i32),
    grantor=opt(text),
    grantorType=opt(principal),
    grantOption=opt(booleans),
)
privilege_sets = st.builds(
    hms.PrincipalPrivilegeSet,
    **{
        k: opt(st.dictionaries(text, opt(small_list(grants, 2)), max_size=2))
        for k in ("userPrivileges", "groupPrivileges", "rolePrivileges")
    },
)
environment_contexts = st.builds(hms.EnvironmentContext, properties=opt(parameters_map))


def serde_infos(version: str | None) -> st.SearchStrategy[Any]:
    fields: dict[str, Any] = {"name": opt(text), "serializationLib": opt(text), "parameters": opt(parameters_map)}
    if newer(version, "3.0"):
        fields.update(
            description=opt(text),
            serializerClass=opt(text),
            deserializerClass=opt(text),
            serdeType=opt(st.sampled_from([1, 2]) | i32),
        )
    return st.builds(hms.SerDeInfo, **fields)


def storage_descriptors(version: str | None) -> st.SearchStrategy[Any]:
    return st.builds(
        hms.StorageDescriptor,
        cols=opt(small_list(field_schemas, 4)),
        location=opt(text),
        inputFormat=opt(text),
        outputFormat=opt(text),
        compressed=opt(booleans),
        numBuckets=opt(i32),
        serdeInfo=opt(serde_infos(version)),
        bucketCols=opt(small_list(text)),
        sortCols=opt(small_list(orders)),
        parameters=opt(parameters_map),
        skewedInfo=opt(skewed_infos),
        storedAsSubDirectories=opt(booleans),
    )


def stats(cls: Any, **fields: Any) -> st.SearchStrategy[Any]:
    return st.builds(cls, **fields)


column_stats_data = st.one_of(
    st.builds(
        hms.ColumnStatisticsData,
        booleanStats=stats(
            hms.BooleanColumnStatsData, numTrues=i64, numFalses=i64, numNulls=i64, bitVectors=opt(blobs)
        ),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        longStats=stats(
            hms.LongColumnStatsData,
            lowValue=opt(i64),
            highValue=opt(i64),
            numNulls=i64,
            numDVs=i64,
            bitVectors=opt(blobs),
            histogram=opt(blobs),
        ),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        doubleStats=stats(
            hms.DoubleColumnStatsData, lowValue=opt(doubles), highValue=opt(doubles), numNulls=i64, numDVs=i64
        ),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        stringStats=stats(hms.StringColumnStatsData, maxColLen=i64, avgColLen=doubles, numNulls=i64, numDVs=i64),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        binaryStats=stats(hms.BinaryColumnStatsData, maxColLen=i64, avgColLen=doubles, numNulls=i64),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        decimalStats=stats(
            hms.DecimalColumnStatsData,
            lowValue=opt(st.builds(hms.Decimal, scale=i16, unscaled=blobs)),
            highValue=st.none(),
            numNulls=i64,
            numDVs=i64,
        ),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        dateStats=stats(
            hms.DateColumnStatsData, lowValue=opt(st.builds(hms.Date, daysSinceEpoch=i64)), numNulls=i64, numDVs=i64
        ),
    ),
    st.builds(
        hms.ColumnStatisticsData,
        timestampStats=stats(
            hms.TimestampColumnStatsData,
            highValue=opt(st.builds(hms.Timestamp, secondsSinceEpoch=i64)),
            numNulls=i64,
            numDVs=i64,
        ),
    ),
)
column_statistics = st.builds(
    hms.ColumnStatistics,
    statsDesc=st.builds(
        hms.ColumnStatisticsDesc,
        isTblLevel=booleans,
        dbName=text,
        tableName=text,
        partName=opt(text),
        lastAnalyzed=opt(i64),
        catName=opt(text),
    ),
    statsObj=small_list(st.builds(hms.ColumnStatisticsObj, colName=text, colType=text, statsData=column_stats_data), 2),
    isStatsCompliant=opt(booleans),
    engine=opt(text),
)


def tables(version: str | None, *, views: bool = True) -> st.SearchStrategy[Any]:
    fields: dict[str, Any] = {
        "tableName": text,
        "dbName": text,
        "owner": opt(text),
        "createTime": opt(i32),
        "lastAccessTime": opt(i32),
        "retention": opt(i32),
        "sd": opt(storage_descriptors(version)),
        "partitionKeys": opt(small_list(field_schemas)),
        "parameters": opt(parameters_map),
        "viewOriginalText": opt(text),
        "viewExpandedText": opt(text),
        "tableType": opt(st.sampled_from(["MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW"]) | text),
        "privileges": opt(privilege_sets),
        "temporary": opt(booleans),
        "rewriteEnabled": opt(booleans),
    }
    if newer(version, "3.0"):
        metadata: dict[str, Any] = {
            "catName": text,
            "dbName": text,
            "tblName": text,
            "tablesUsed": st.sets(text, max_size=3),
            "validTxnList": opt(text),
        }
        if newer(version, "4.0") and views:
            metadata.update(
                materializationTime=opt(i64),
                sourceTables=opt(
                    small_list(
                        st.builds(
                            hms.SourceTable,
                            table=tables(version, views=False),
                            insertedCount=i64,
                            updatedCount=i64,
                            deletedCount=i64,
                        ),
                        1,
                    )
                ),
            )
        fields.update(creationMetadata=opt(st.builds(hms.CreationMetadata, **metadata)), ownerType=opt(principal))
    if newer(version, "3.0") or newer(version, "catalog"):
        fields["catName"] = opt(text)
    if newer(version, "4.0"):
        fields.update(
            writeId=opt(i64),
            isStatsCompliant=opt(booleans),
            colStats=opt(column_statistics),
            accessType=opt(i8),
            requiredReadCapabilities=opt(small_list(text)),
            requiredWriteCapabilities=opt(small_list(text)),
            id=opt(i64),
            fileMetadata=opt(st.builds(hms.FileMetadata, type=opt(i8), version=opt(i8), data=opt(small_list(blobs)))),
            dictionary=opt(
                st.builds(hms.ObjectDictionary, values=st.dictionaries(text, small_list(blobs), max_size=2))
            ),
            txnId=opt(i64),
        )
    return st.builds(hms.Table, **fields)


def partitions(version: str | None) -> st.SearchStrategy[Any]:
    fields: dict[str, Any] = {
        "values": opt(small_list(text)),
        "dbName": opt(text),
        "tableName": opt(text),
        "createTime": opt(i32),
        "lastAccessTime": opt(i32),
        "sd": opt(storage_descriptors(version)),
        "parameters": opt(parameters_map),
        "privileges": opt(privilege_sets),
    }
    if newer(version, "3.0") or newer(version, "catalog"):
        fields["catName"] = opt(text)
    if newer(version, "4.0"):
        fields.update(
            writeId=opt(i64), isStatsCompliant=opt(booleans), colStats=opt(column_statistics), fileMetadata=st.none()
        )
    return st.builds(hms.Partition, **fields)


def databases(version: str | None) -> st.SearchStrategy[Any]:
    fields: dict[str, Any] = {
        "name": text,
        "description": opt(text),
        "locationUri": opt(text),
        "parameters": opt(parameters_map),
        "privileges": opt(privilege_sets),
        "ownerName": opt(text),
        "ownerType": opt(principal),
    }
    if newer(version, "3.0") or newer(version, "catalog"):
        fields["catalogName"] = opt(text)
    if newer(version, "4.0"):
        fields.update(
            createTime=opt(i32),
            managedLocationUri=opt(text),
            type=opt(st.sampled_from([1, 2])),
            connector_name=opt(text),
            remote_dbname=opt(text),
        )
    return st.builds(hms.Database, **fields)


# -- events ---------------------------------------------------------------------------------------------------


@st.composite
def events(draw: st.DrawFn, version: str | None = None) -> ListenerEvent:
    """A random event of a random type, its objects in the field set of ``version``."""
    if version is None:
        version = draw(st.sampled_from(list(VERSIONS)))
    parameters = draw(strings_map)
    parameters.pop("hive.version", None)
    if VERSIONS[version]:
        parameters["hive.version"] = VERSIONS[version]
    common = {
        "status": draw(booleans),
        "parameters": parameters,
        "environment_context": draw(opt(environment_contexts)),
    }
    table, partition, database = tables(version), partitions(version), databases(version)
    kind = draw(
        st.sampled_from(
            [
                "create_table",
                "alter_table",
                "drop_table",
                "add_partition",
                "alter_partition",
                "drop_partition",
                "insert",
                "create_database",
                "alter_database",
                "drop_database",
            ]
        )
    )
    if kind == "create_table":
        return CreateTableEvent(table=draw(table), **common)
    if kind == "alter_table":
        return AlterTableEvent(old_table=draw(table), new_table=draw(table), **common)
    if kind == "drop_table":
        return DropTableEvent(table=draw(table), delete_data=draw(booleans), **common)
    if kind == "add_partition":
        return AddPartitionEvent(table=draw(table), partitions=draw(small_list(partition)), **common)
    if kind == "alter_partition":
        return AlterPartitionEvent(
            table=draw(table), old_partition=draw(partition), new_partition=draw(partition), **common
        )
    if kind == "drop_partition":
        return DropPartitionEvent(
            table=draw(table), partitions=draw(small_list(partition)), delete_data=draw(booleans), **common
        )
    if kind == "insert":
        return InsertEvent(
            db_name=draw(text),
            table_name=draw(text),
            partition_key_values=draw(strings_map),
            files=draw(small_list(text)),
            file_checksums=draw(small_list(text)),
            **common,
        )
    if kind == "create_database":
        return CreateDatabaseEvent(database=draw(database), **common)
    if kind == "alter_database":
        return AlterDatabaseEvent(old_database=draw(database), new_database=draw(database), **common)
    return DropDatabaseEvent(database=draw(database), **common)


def materialise(event: ListenerEvent) -> None:
    for name in ("environment_context", *event.fields):
        getattr(event, name)


@FAST
@given(events())
def test_decode_of_encode_is_the_event(event: ListenerEvent) -> None:
    data = apiary.encode(event)
    again = apiary.decode(data)
    assert again == event
    assert apiary.encode(again) == data  # the lazy path writes the payload back as it came
    materialise(again)
    assert apiary.encode(again) == data  # and the objects dump to the same JSON
    assert again.to_dict() == json.loads(data)
    assert apiary.decode(apiary.encode(event.copy())) == event


@settings(FAST, max_examples=40)
@given(st.sampled_from(["2.3", "2.3.10", "3.1", "4.0"]).flatmap(lambda v: st.tuples(st.just(v), tables(v))))
def test_tables_keep_their_version_defaults_through_an_older_encode(case: tuple[str, Any]) -> None:
    version, table = case
    event = CreateTableEvent(table=table, parameters={"hive.version": VERSIONS[version]})
    assert apiary.decode(apiary.encode(event, hive_version=VERSIONS[version])).table == table


# -- anything at all only ever raises DecodeError ------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
WIRE_TYPES = [f"ON_{t.value}" for t in EventType]
ENVELOPE_KEYS = [
    "databaseName",
    "tableName",
    "qualifiedTableName",
    "status",
    "parameters",
    "environmentContext",
    "table",
    "oldTable",
    "newTable",
    "partitions",
    "oldPartition",
    "newPartition",
    "deleteData",
    "partitionKeyValues",
    "files",
    "fileChecksums",
    "database",
    "oldDatabase",
    "newDatabase",
]


def thrift_shaped(cls: Any, depth: int = 3) -> st.SearchStrategy[Any]:
    """JSON objects with the field names of ``cls`` holding random values, or objects of the right shape."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for spec in cls.thrift_spec or ():
        if spec is None:
            continue
        candidates = [json_values]
        if depth > 0 and spec[1] == TType.STRUCT:
            candidates.append(thrift_shaped(spec[3][0], depth - 1))
        elif depth > 0 and spec[1] == TType.LIST and spec[3][0] == TType.STRUCT:
            candidates.append(small_list(thrift_shaped(spec[3][1][0], depth - 1), 2))
        fields[spec[2]] = st.one_of(*candidates)
    return st.fixed_dictionaries({}, optional=fields)


shaped_values = {
    "table": thrift_shaped(hms.Table),
    "oldTable": thrift_shaped(hms.Table),
    "newTable": thrift_shaped(hms.Table),
    "partitions": small_list(thrift_shaped(hms.Partition), 2),
    "oldPartition": thrift_shaped(hms.Partition),
    "newPartition": thrift_shaped(hms.Partition),
    "database": thrift_shaped(hms.Database),
    "oldDatabase": thrift_shaped(hms.Database),
    "newDatabase": thrift_shaped(hms.Database),
    "environmentContext": thrift_shaped(hms.EnvironmentContext),
}


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    """Objects with a valid eventType and random (often nearly right) other keys."""
    message: dict[str, Any] = {"eventType": draw(st.sampled_from(WIRE_TYPES))}
    for key in draw(st.lists(st.sampled_from(ENVELOPE_KEYS), unique=True, max_size=8)):
        shaped = shaped_values.get(key)
        message[key] = draw(json_values if shaped is None else st.one_of(shaped, json_values))
    message.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2)))
    return message


def path_to_any_node(value: Any) -> st.SearchStrategy[list[Any]]:
    """Paths (lists of keys and indexes) to every node of a JSON value."""
    paths: list[list[Any]] = [[]]
    stack: list[tuple[list[Any], Any]] = [([], value)]
    while stack:
        path, node = stack.pop()
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            paths.append([*path, key])
            stack.append(([*path, key], child))
    return st.sampled_from(paths)


@st.composite
def mutated_golden_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A golden message with one node, anywhere, replaced by a random JSON value."""
    message = json.loads(json.dumps(draw(st.sampled_from(GOLDEN))[1]))
    path = draw(path_to_any_node(message))
    replacement = draw(json_values)
    if not path:
        return replacement  # type: ignore[no-any-return]
    target = message
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = replacement
    return message  # type: ignore[no-any-return]


def use_fully(event: ListenerEvent) -> None:
    """Everything a listener or the runtime may do with a decoded event: only DecodeError may come out."""
    for action in (
        lambda: materialise(event),
        lambda: apiary.encode(event),
        event.to_dict,
        lambda: equal(event, event, "an event equals itself"),
        lambda: equal(event.copy(), event, "a copy equals its event"),
        lambda: hash(event),
        lambda: repr(event),
        event._repr_html_,
        lambda: apiary.encode(event, hive_version="2.3.9"),
    ):
        try:
            action()
        except hw.DecodeError:
            pass
    assert isinstance(event.db_name, str) and (event.table_name is None or isinstance(event.table_name, str))
    assert isinstance(event.status, bool) and all(isinstance(v, str) for v in event.parameters.values())


def equal(one: ListenerEvent, other: ListenerEvent, what: str) -> None:
    """Assert ``one == other`` (and the same hash): ``what`` says why it must hold."""
    assert one == other, f"{what}: {one!r}"
    assert hash(one) == hash(other), f"{what}, with the same hash: {one!r}"


def decode_every_way(data: bytes) -> None:
    for message in (data, memoryview(data)):
        try:
            decoded = apiary.decode(message)
        except hw.DecodeError:
            event("refused")
            continue
        event("decoded")
        use_fully(decoded)


@FAST
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_decode_error(data: bytes) -> None:
    decode_every_way(data)


@FAST
@given(json_values)
def test_random_json_values_only_raise_decode_error(value: Any) -> None:
    decode_every_way(json.dumps(value).encode())


@settings(FAST, max_examples=200)
@given(envelopes())
def test_random_envelopes_only_raise_decode_error(message: dict[str, Any]) -> None:
    decode_every_way(json.dumps(message).encode())


@settings(FAST, max_examples=300)
@given(mutated_golden_messages())
def test_mutated_golden_messages_only_raise_decode_error(message: Any) -> None:
    decode_every_way(json.dumps(message).encode())


# -- the generated loaders agree with a small independent oracle ---------------------------------------------
# The oracle interprets each class's thrift_spec (the code generated by the Thrift compiler) value by value,
# the way hivewire's loaders worked before idl/generate.py wrote them; the loaders are generated from the IDL's
# XML description instead. Both must accept and refuse the same values, build equal objects, and name the same
# path in the same message.

_INT_BITS = {TType.BYTE: 8, TType.I16: 16, TType.I32: 32, TType.I64: 64}


def _oracle_error(path: str, expected: str, value: Any) -> hw.DecodeError:
    return hw.DecodeError(f"{path}: expected {expected}, got {thriftjson.shown(value)}")


def _oracle_int(ttype: int, v: Any) -> bool:
    bits = _INT_BITS[ttype]
    return type(v) is int and -(1 << (bits - 1)) <= v < (1 << (bits - 1))


def _oracle_enum(enum_cls: Any, v: Any, path: str) -> int:
    names: dict[str, int] = enum_cls._NAMES_TO_VALUES
    if type(v) is str and v in names:
        return names[v]
    if type(v) is int and -(1 << 31) <= v < (1 << 31):
        return v
    raise _oracle_error(path, f"one of {sorted(names)} or a 32-bit integer", v)


def _oracle_skewed(v: Any, path: str) -> dict[tuple[str, ...], str | None]:
    out: dict[tuple[str, ...], str | None] = {}
    if type(v) is list:
        for i, item in enumerate(v):
            key = item.get("key") if type(item) is dict else None
            value = item.get("value") if type(item) is dict else None
            if not (type(key) is list and all(type(k) is str for k in key) and (value is None or type(value) is str)):
                raise _oracle_error(f"{path}[{i}]", '{"key": [strings], "value": string}', item)
            out[tuple(key)] = value
        return out
    if type(v) is dict:
        for k, loc in v.items():
            if loc is not None and type(loc) is not str:
                raise _oracle_error(f"{path}[{k!r}]", "a string location", loc)
            inner = k[1:-1] if k.startswith("[") and k.endswith("]") else k
            out[tuple(inner.split(", ")) if inner else ()] = loc
        return out
    raise _oracle_error(path, "a list of key/value objects", v)


def _oracle_view_depth(sources: Any) -> int:
    depth, level = 0, [sources]
    while level and depth <= thriftjson.MAX_VIEW_NESTING:
        depth += 1
        deeper = []
        for items in level:
            for source in items if type(items) is list else ():
                table = source.get("table") if type(source) is dict else None
                meta = table.get("creationMetadata") if type(table) is dict else None
                inner = meta.get("sourceTables") if type(meta) is dict else None
                if inner is not None:
                    deeper.append(inner)
        level = deeper
    return depth


def _oracle_value(ttype: int, spec: Any, v: Any, path: str) -> Any:
    if ttype == TType.STRUCT:
        return oracle(spec[0], v, path)
    if ttype == TType.STRING:
        if type(v) is not str:
            raise _oracle_error(path, "base64 text" if spec == "BINARY" else "a string", v)
        if spec != "BINARY":
            return v
        try:
            return base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError):
            raise _oracle_error(path, "base64 text", v) from None
    if ttype == TType.BOOL:
        if type(v) is not bool:
            raise _oracle_error(path, "true or false", v)
        return v
    if ttype in _INT_BITS:
        if not _oracle_int(ttype, v):
            raise _oracle_error(path, f"a {_INT_BITS[ttype]}-bit integer", v)
        return v
    if ttype == TType.DOUBLE:
        if type(v) is float:
            return v
        if type(v) is int:
            try:
                return float(v)
            except OverflowError:
                pass
        raise _oracle_error(path, "a number", v)
    if ttype in (TType.LIST, TType.SET):
        if type(v) is not list:
            raise _oracle_error(path, "a list", v)
        items = [None if e is None else _oracle_value(spec[0], spec[1], e, f"{path}[{i}]") for i, e in enumerate(v)]
        if ttype == TType.LIST:
            return items
        try:
            return set(items)
        except TypeError:
            raise _oracle_error(path, "a list of hashable values", v) from None
    if ttype == TType.MAP:
        assert spec[0] == TType.STRING, "no map with other keys is reachable"
        if type(v) is not dict:
            raise _oracle_error(path, "an object", v)
        return {k: None if x is None else _oracle_value(spec[2], spec[3], x, f"{path}[{k!r}]") for k, x in v.items()}
    raise AssertionError(f"{path}: unsupported Thrift type {ttype}")


def oracle(cls: Any, v: Any, path: str) -> Any:
    """``cls`` from its JSON object, or DecodeError naming ``path`` and the field."""
    if type(v) is not dict:
        raise _oracle_error(path, "an object", v)
    obj = cls()
    name = cls.__name__
    for spec in cls.thrift_spec or ():
        if spec is None or spec[2] not in v:
            continue
        _id, ttype, fname, args, _default = spec
        raw = v[fname]
        where = f"{path}.{fname}"
        value: Any
        if raw is None:
            value = None
        elif (name, fname) == ("SkewedInfo", "skewedColValueLocationMaps"):
            value = _oracle_skewed(raw, where)
        elif (name, fname) in thriftjson.ENUM_FIELDS:
            value = _oracle_enum(thriftjson.ENUM_FIELDS[(name, fname)], raw, where)
        else:
            if (name, fname) == ("CreationMetadata", "sourceTables") and _oracle_view_depth(raw) > 16:
                raise hw.DecodeError(f"{where}: materialized views nest more than 16 levels deep")
            value = _oracle_value(ttype, args, raw, where)
        setattr(obj, fname, value)
    return obj


def outcome(load: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", load()
    except hw.DecodeError as e:
        return "error", str(e)


LOADED_CLASSES = [
    hms.Table,
    hms.Partition,
    hms.Database,
    hms.StorageDescriptor,
    hms.SkewedInfo,
    hms.PrincipalPrivilegeSet,
    hms.ColumnStatistics,
    hms.CreationMetadata,
    hms.ObjectDictionary,
    hms.FileMetadata,
    hms.EnvironmentContext,
]


@settings(FAST, max_examples=150)
@given(
    st.sampled_from(LOADED_CLASSES).flatmap(
        lambda cls: st.tuples(st.just(cls), thrift_shaped(cls) | mutated_objects(cls))
    )
)
def test_generated_loaders_agree_with_the_oracle(case: tuple[Any, Any]) -> None:
    cls, value = case
    loaded = outcome(lambda: thriftjson.struct_loader(cls)(value, "x"))
    expected = outcome(lambda: oracle(cls, value, "x"))
    event(f"{cls.__name__}: {loaded[0]}")
    assert loaded == expected  # the same object, or the same message naming the same path


# Golden cases: one per shape of value (nested structs, list and map items, enums, skewed maps, binary,
# doubles, sets), each with what the loaders make of it or the exact error.
_SKEWED = {"skewedColNames": ["a"], "skewedColValues": [["1"]]}
GOLDEN_LOADS: list[tuple[Any, dict[str, Any], Any]] = [
    (hms.Table, {"sd": {"cols": [{}, {}, {"name": 5}]}}, "table.sd.cols[2].name: expected a string, got 5"),
    (hms.Table, {"sd": {"cols": [{}, 7]}}, "table.sd.cols[1]: expected an object, got 7"),
    (hms.Table, {"partitionKeys": {}}, "table.partitionKeys: expected a list, got {}"),
    (hms.Table, {"parameters": {"a": "1", "b": 2}}, "table.parameters['b']: expected a string, got 2"),
    (hms.Table, {"sd": {"bucketCols": ["a", None, 3]}}, "table.sd.bucketCols[2]: expected a string, got 3"),
    (hms.Table, {"createTime": 1 << 31}, "table.createTime: expected a 32-bit integer, got 2147483648"),
    (hms.Table, {"createTime": True}, "table.createTime: expected a 32-bit integer, got True"),
    (hms.Table, {"accessType": 128}, "table.accessType: expected a 8-bit integer, got 128"),
    (hms.Table, {"writeId": -(1 << 63)}, hms.Table(writeId=-(1 << 63))),
    (hms.Table, {"temporary": "yes"}, "table.temporary: expected true or false, got 'yes'"),
    (hms.Table, {"ownerType": "ROLE"}, hms.Table(ownerType=hms.PrincipalType.ROLE)),
    (hms.Table, {"ownerType": 7}, hms.Table(ownerType=7)),
    (
        hms.Table,
        {"ownerType": "NOBODY"},
        "table.ownerType: expected one of ['GROUP', 'ROLE', 'USER'] or a 32-bit integer, got 'NOBODY'",
    ),
    (hms.Database, {"type": "REMOTE", "ownerType": None}, hms.Database(type=2, ownerType=None)),
    (
        hms.Table,
        {"sd": {"skewedInfo": {**_SKEWED, "skewedColValueLocationMaps": [{"key": ["1"], "value": "l"}, {"key": "1"}]}}},
        "table.sd.skewedInfo.skewedColValueLocationMaps[1]: "
        "expected {\"key\": [strings], \"value\": string}, got {'key': '1'}",
    ),
    (
        hms.SkewedInfo,
        {**_SKEWED, "skewedColValueLocationMaps": {"[1]": "l", "[2, 3]": 5}},
        "table.skewedColValueLocationMaps['[2, 3]']: expected a string location, got 5",
    ),
    (
        hms.SkewedInfo,
        {**_SKEWED, "skewedColValueLocationMaps": {"[1, 2]": "l", "[]": None}},
        hms.SkewedInfo(["a"], [["1"]], {("1", "2"): "l", (): None}),
    ),
    (hms.SkewedInfo, {"skewedColValues": [["a"], ["b", 1]]}, "table.skewedColValues[1][1]: expected a string, got 1"),
    (
        hms.Table,
        {"privileges": {"userPrivileges": {"u": [{"privilege": "ALL"}, {"grantorType": "X"}]}}},
        "table.privileges.userPrivileges['u'][1].grantorType: expected one of ['GROUP', 'ROLE', 'USER'] or a "
        "32-bit integer, got 'X'",
    ),
    (
        hms.Table,
        {"privileges": {"rolePrivileges": {"r": None, "s": 3}}},
        "table.privileges.rolePrivileges['s']: expected a list, got 3",
    ),
    (
        hms.Table,
        {"colStats": {"statsObj": [{"statsData": {"longStats": {"bitVectors": "!!"}}}]}},
        "table.colStats.statsObj[0].statsData.longStats.bitVectors: expected base64 text, got '!!'",
    ),
    (hms.DoubleColumnStatsData, {"lowValue": 3, "highValue": 2.5}, hms.DoubleColumnStatsData(3.0, 2.5)),
    (hms.DoubleColumnStatsData, {"lowValue": "1"}, "table.lowValue: expected a number, got '1'"),
    (
        hms.DoubleColumnStatsData,
        {"lowValue": 10**400},
        f"table.lowValue: expected a number, got {thriftjson.shown(10**400)}",
    ),
    (hms.FileMetadata, {"data": ["AAE=", None]}, hms.FileMetadata(data=[b"\x00\x01", None])),
    (hms.FileMetadata, {"data": ["AAE=", 5]}, "table.data[1]: expected base64 text, got 5"),
    (hms.ObjectDictionary, {"values": {"h": ["aGk=", "!"]}}, "table.values['h'][1]: expected base64 text, got '!'"),
    (hms.CreationMetadata, {"tablesUsed": ["a", 1]}, "table.tablesUsed[1]: expected a string, got 1"),
    (hms.CreationMetadata, {"tablesUsed": "a"}, "table.tablesUsed: expected a list, got 'a'"),
    (hms.CreationMetadata, {"catName": None, "tablesUsed": ["a", "a"]}, hms.CreationMetadata(tablesUsed={"a"})),
    (hms.Partition, {"values": ["2024", None], "future": [[[]]]}, hms.Partition(values=["2024", None])),
    (hms.Table, [], "table: expected an object, got []"),
]


@pytest.mark.parametrize(("cls", "value", "expected"), GOLDEN_LOADS, ids=lambda v: getattr(v, "__name__", None))
def test_loaders_golden(cls: Any, value: Any, expected: Any) -> None:
    loaded = outcome(lambda: thriftjson.struct_loader(cls)(value, "table"))
    assert loaded == (("error", expected) if isinstance(expected, str) else ("ok", expected))
    assert outcome(lambda: oracle(cls, value, "table")) == loaded


def test_loaders_keep_the_constructors_defaults_and_copy_their_input() -> None:
    for cls, load in thriftjson.LOADERS.items():
        assert load({}) == cls(), cls.__name__  # missing keys: the defaults (Table.temporary=False, ...)
        assert load(None) is None
    params = {"a": "1"}
    table = thriftjson.load_struct(hms.Table, {"parameters": params, "partitionKeys": [], "sd": {"bucketCols": []}})
    assert table.parameters == params and table.parameters is not params


def test_struct_loader_names_the_structs_it_has_no_loader_for() -> None:
    with pytest.raises(ValueError, match=r"no JSON loader for GetTableRequest: idl/generate.py generates"):
        thriftjson.struct_loader(hms.GetTableRequest)


def mutated_objects(cls: Any) -> st.SearchStrategy[Any]:
    """The JSON of a valid random object of ``cls`` with one node replaced."""
    strategies: dict[Any, st.SearchStrategy[Any]] = {
        hms.Table: tables(None),
        hms.Partition: partitions(None),
        hms.Database: databases(None),
        hms.StorageDescriptor: storage_descriptors(None),
        hms.SkewedInfo: skewed_infos,
        hms.PrincipalPrivilegeSet: privilege_sets,
        hms.ColumnStatistics: column_statistics,
        hms.CreationMetadata: tables("4.0").map(lambda t: t.creationMetadata).filter(bool),
        hms.ObjectDictionary: st.builds(
            hms.ObjectDictionary, values=st.dictionaries(text, small_list(blobs), max_size=2)
        ),
        hms.FileMetadata: st.builds(hms.FileMetadata, type=opt(i8), version=opt(i8), data=opt(small_list(blobs))),
        hms.EnvironmentContext: environment_contexts,
    }

    @st.composite
    def mutated(draw: st.DrawFn) -> Any:
        value = thriftjson.dump_struct(draw(strategies[cls]))
        path = draw(path_to_any_node(value))
        if not path:
            return value
        target = value
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = draw(json_values | st.sampled_from([None, 1 << 40, "USER", [], {}, 1.5, True]))
        return value

    return mutated()


def test_a_null_inside_a_list_of_objects_is_kept_and_harms_no_reader() -> None:
    # Found by test_mutated_golden_messages_only_raise_decode_error: a null item in a list of Thrift structs
    # (which Java's lists may hold and Apiary's JSON keeps: test_apiary_codec's null-for-every-unset-field) made
    # the notebook's summary and the Arrow rows fail with AttributeError.
    from hivewire.arrow import to_arrow

    message = json.loads(apiary.encode(hw.testing.create_table_event("sales", "orders")))
    message["table"]["sd"]["cols"] = [None]
    message["table"]["partitionKeys"] = [None, {"name": "dt", "type": "string", "comment": None}]
    raw = json.dumps(message).encode()
    event = apiary.decode(raw)
    use_fully(event)
    for table in (to_arrow([event]), to_arrow([raw])):
        assert table.num_rows == 1 and table.column("decode_error").to_pylist() == [None]
        assert table.column("partition_keys").to_pylist()[0] == [{"name": "dt", "type": "string", "comment": None}]
