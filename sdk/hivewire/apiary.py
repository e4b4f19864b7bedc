"""The Apiary Kafka metastore listener's JSON message format: :func:`decode`, :func:`encode`, :func:`partition_for`.

The format is what ExpediaGroup's ``KafkaMetaStoreEventListener`` writes with ``JsonMetaStoreEventSerDe``
(Jackson): an envelope (``eventType`` such as ``"ON_CREATE_TABLE"``, ``databaseName``, ``tableName``,
``qualifiedTableName``, ``status``, ``parameters``, ``environmentContext``) plus per-type keys holding
Thrift objects serialised by field *name*: unset fields as ``null`` (Java writes an unset primitive as its
default; hivewire writes ``null``, which Jackson reads back as that default), enums by name, binary as
base64, and SkewedInfo's list-keyed location map as ``[{"key": [...], "value": ...}]``.

Decoding validates the envelope eagerly and converts the Thrift objects lazily, on first access, so a
listener that reads only names pays for ``json.loads`` and little else. Unknown keys (newer Hive fields)
are ignored; known keys may be missing or ``null``; enums may be names or numbers.

Encoding writes the field set of the Hive version in the event's ``hive.version`` parameter (2.3, 3.x or
4.x, as the Java listener built against that version would), or of ``hive_version`` when given.
Database events are not part of Apiary's format; hivewire writes them as ``ON_CREATE_DATABASE``,
``ON_ALTER_DATABASE`` and ``ON_DROP_DATABASE`` with ``database`` / ``oldDatabase`` / ``newDatabase``.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

from thrift.Thrift import TType

from hivewire.errors import DecodeError
from hivewire.events import EVENT_CLASSES, EventType, ListenerEvent, Loader, Origin
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["MAX_MESSAGE_BYTES", "decode", "encode", "java_string_hash", "partition_for", "to_json_dict"]

#: Messages larger than this are refused with DecodeError instead of being parsed.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

# -- Thrift <-> JSON, driven by the generated thrift_spec ------------------------------------------------

# Enum-typed fields (thrift_spec records them as plain I32, so the enum class is named here).
# tests/unit/test_apiary_codec.py checks this against the IDL.
ENUM_FIELDS: dict[tuple[str, str], Any] = {
    ("Table", "ownerType"): hms.PrincipalType,
    ("Database", "ownerType"): hms.PrincipalType,
    ("Database", "type"): hms.DatabaseType,
    ("PrivilegeGrantInfo", "grantorType"): hms.PrincipalType,
    ("SerDeInfo", "serdeType"): hms.SerdeType,
}

# Fields are added to these structs in later Hive versions with higher ids; the first id of each version.
# (Apiary's Java serializer writes every field its Thrift classes know, so the version decides the keys.)
FIELDS_SINCE: dict[str, list[tuple[tuple[int, int], int]]] = {
    "Table": [((3, 0), 16), ((4, 0), 19)],
    "Partition": [((3, 0), 9), ((4, 0), 10)],
    "SerDeInfo": [((3, 0), 4)],
    "Database": [((3, 0), 8), ((4, 0), 9)],
}
_LATEST = (99, 0)
_SKEWED_MAP = ("SkewedInfo", "skewedColValueLocationMaps")


def _parse_version(text: str | None) -> tuple[int, int]:
    match = re.match(r"\s*(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else _LATEST


def _max_field_id(struct: str, version: tuple[int, int]) -> int:
    limit = 1 << 15
    for since, first_id in FIELDS_SINCE.get(struct, ()):
        if version < since:
            return first_id - 1
    return limit


def _decode_error(where: str, expected: str, value: Any) -> DecodeError:
    shown = repr(value)
    return DecodeError(f"{where}: expected {expected}, got {shown if len(shown) <= 60 else shown[:57] + '...'}")


def _loader_for(ttype: int, spec: Any, where: str) -> Callable[[Any], Any]:
    """A function converting a JSON value of this Thrift type to its Python value."""
    if ttype == TType.STRUCT:
        # Resolved at call time: struct types can nest recursively (CreationMetadata -> SourceTable -> Table).
        cls = spec[0]

        def load_struct(v: Any) -> Any:
            loader = _STRUCT_LOADERS.get(cls) or _struct_loader(cls)
            return loader(v)
        return load_struct
    if ttype == TType.BOOL:
        def load_bool(v: Any) -> bool:
            if isinstance(v, bool):
                return v
            raise _decode_error(where, "true or false", v)
        return load_bool
    if ttype in (TType.BYTE, TType.I16, TType.I32, TType.I64):
        def load_int(v: Any) -> int:
            if isinstance(v, int) and not isinstance(v, bool):
                return v
            raise _decode_error(where, "an integer", v)
        return load_int
    if ttype == TType.DOUBLE:
        def load_double(v: Any) -> float:
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
            raise _decode_error(where, "a number", v)
        return load_double
    if ttype == TType.STRING:
        if spec == "BINARY":
            def load_binary(v: Any) -> bytes:
                if isinstance(v, str):
                    try:
                        return base64.b64decode(v, validate=True)
                    except ValueError:
                        pass
                raise _decode_error(where, "base64 text", v)
            return load_binary

        def load_str(v: Any) -> str:
            if isinstance(v, str):
                return v
            raise _decode_error(where, "a string", v)
        return load_str
    if ttype in (TType.LIST, TType.SET):
        elem = _loader_for(spec[0], spec[1], where + "[]")
        as_set = ttype == TType.SET

        def load_list(v: Any) -> Any:
            if not isinstance(v, list):
                raise _decode_error(where, "a list", v)
            items = [None if e is None else elem(e) for e in v]
            if as_set:
                try:
                    return set(items)
                except TypeError as e:
                    raise DecodeError(f"{where}: set elements must be hashable") from e
            return items
        return load_list
    if ttype == TType.MAP:
        key_type = spec[0]
        value = _loader_for(spec[2], spec[3], where + "{}")
        if key_type == TType.STRING:
            def load_map(v: Any) -> dict[Any, Any]:
                if not isinstance(v, dict):
                    raise _decode_error(where, "an object", v)
                return {k: None if x is None else value(x) for k, x in v.items()}
            return load_map
        key = _loader_for(key_type, spec[1], where + "<key>")

        def load_int_keyed_map(v: Any) -> dict[Any, Any]:
            if not isinstance(v, dict):
                raise _decode_error(where, "an object", v)
            try:
                return {key(int(k)): None if x is None else value(x) for k, x in v.items()}
            except ValueError as e:
                raise DecodeError(f"{where}: map keys must be numbers") from e
        return load_int_keyed_map
    raise DecodeError(f"{where}: unsupported Thrift type {ttype}")


def _enum_loader(enum_cls: Any, where: str) -> Callable[[Any], int]:
    names: dict[str, int] = enum_cls._NAMES_TO_VALUES

    def load_enum(v: Any) -> int:
        if isinstance(v, str) and v in names:
            return names[v]
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        raise _decode_error(where, f"one of {sorted(names)}", v)
    return load_enum


def _load_skewed_locations(where: str) -> Callable[[Any], dict[tuple[str, ...], str]]:
    def load(v: Any) -> dict[tuple[str, ...], str]:
        out: dict[tuple[str, ...], str] = {}
        if isinstance(v, list):  # the production SkewedInfoSerializer form
            for item in v:
                if not (isinstance(item, dict) and isinstance(item.get("key"), list)
                        and all(isinstance(k, str) for k in item["key"])
                        and isinstance(item.get("value"), str)):
                    raise _decode_error(where, '{"key": [strings], "value": string}', item)
                out[tuple(item["key"])] = item["value"]
            return out
        if isinstance(v, dict):  # Jackson's default rendering of a list key, "[a, b]" (lossy but seen)
            for k, loc in v.items():
                if not isinstance(loc, str):
                    raise _decode_error(where, "a string location", loc)
                inner = k[1:-1] if k.startswith("[") and k.endswith("]") else k
                out[tuple(inner.split(", ")) if inner else ()] = loc
            return out
        raise _decode_error(where, "a list of key/value objects", v)
    return load


_STRUCT_LOADERS: dict[Any, Callable[[Any], Any]] = {}


def _struct_loader(cls: Any) -> Callable[[Any], Any]:
    """A function building ``cls`` from its JSON object (field names as keys); built once per class."""
    cached = _STRUCT_LOADERS.get(cls)
    if cached is not None:
        return cached
    name = cls.__name__
    fields: dict[str, Callable[[Any], Any]] = {}
    for spec in cls.thrift_spec or ():
        if spec is None:
            continue
        _id, ttype, fname, args, _default = spec
        where = f"{name}.{fname}"
        if (name, fname) == _SKEWED_MAP:
            fields[fname] = _load_skewed_locations(where)
        elif (name, fname) in ENUM_FIELDS:
            fields[fname] = _enum_loader(ENUM_FIELDS[(name, fname)], where)
        else:
            fields[fname] = _loader_for(ttype, args, where)

    def load(v: Any) -> Any:
        if not isinstance(v, dict):
            raise _decode_error(name, "an object", v)
        kwargs = {}
        for key, raw in v.items():
            conv = fields.get(key)
            if conv is not None:  # unknown keys are newer Hive fields: ignored, as Jackson does
                kwargs[key] = None if raw is None else conv(raw)
        return cls(**kwargs)
    _STRUCT_LOADERS[cls] = load
    return load


def load_struct(cls: Any, value: Any) -> Any:
    """Build a Thrift object of type ``cls`` from its Apiary JSON form. Raises :class:`DecodeError`."""
    return _struct_loader(cls)(value)


def _dump_value(ttype: int, spec: Any, value: Any, version: tuple[int, int]) -> Any:
    if value is None:
        # Also for primitives: Java would write its default (0/false), but null keeps "unset" distinct for
        # Python readers, and Jackson reads null into a primitive as that same default.
        return None
    if ttype == TType.STRUCT:
        return dump_struct(value, version)
    if ttype == TType.STRING and spec == "BINARY":
        return base64.b64encode(value).decode("ascii")
    if ttype in (TType.LIST, TType.SET):
        items = sorted(value, key=repr) if ttype == TType.SET else value
        return [_dump_value(spec[0], spec[1], e, version) for e in items]
    if ttype == TType.MAP:
        return {str(k): _dump_value(spec[2], spec[3], x, version) for k, x in value.items()}
    return value


def dump_struct(obj: Any, version: tuple[int, int] = _LATEST) -> dict[str, Any]:
    """The Apiary JSON form of a Thrift object, with the fields of Hive ``version`` (every field by default)."""
    cls = type(obj)
    name = cls.__name__
    limit = _max_field_id(name, version)
    out: dict[str, Any] = {}
    for spec in cls.thrift_spec or ():
        if spec is None or spec[0] > limit:
            continue
        _id, ttype, fname, args, _default = spec
        value = getattr(obj, fname, None)
        if (name, fname) == _SKEWED_MAP:
            out[fname] = None if value is None else [{"key": list(k), "value": v} for k, v in value.items()]
        elif (name, fname) in ENUM_FIELDS:
            # An unset enum is an object (null) in Java, not a primitive.
            out[fname] = None if value is None else ENUM_FIELDS[(name, fname)]._VALUES_TO_NAMES.get(value, value)
        else:
            out[fname] = _dump_value(ttype, args, value, version)
    return out


# -- The envelope ---------------------------------------------------------------------------------------

# eventType -> (event type, [(JSON key, event field, loader factory)])
_TABLE = ("table", "table", hms.Table)
_FIELDS: dict[EventType, list[tuple[str, str, Any]]] = {
    EventType.CREATE_TABLE: [_TABLE],
    EventType.ALTER_TABLE: [("oldTable", "old_table", hms.Table), ("newTable", "new_table", hms.Table)],
    EventType.DROP_TABLE: [_TABLE, ("deleteData", "delete_data", bool)],
    EventType.ADD_PARTITION: [_TABLE, ("partitions", "partitions", [hms.Partition])],
    EventType.ALTER_PARTITION: [_TABLE, ("oldPartition", "old_partition", hms.Partition),
                                ("newPartition", "new_partition", hms.Partition)],
    EventType.DROP_PARTITION: [_TABLE, ("partitions", "partitions", [hms.Partition]),
                               ("deleteData", "delete_data", bool)],
    EventType.INSERT: [("partitionKeyValues", "partition_key_values", dict), ("files", "files", [str]),
                       ("fileChecksums", "file_checksums", [str])],
    EventType.CREATE_DATABASE: [("database", "database", hms.Database)],
    EventType.ALTER_DATABASE: [("oldDatabase", "old_database", hms.Database),
                               ("newDatabase", "new_database", hms.Database)],
    EventType.DROP_DATABASE: [("database", "database", hms.Database)],
}
# The objects an event of each type cannot do without (checked when decoding).
_REQUIRED = {"table", "oldTable", "newTable", "oldPartition", "newPartition", "database", "oldDatabase",
             "newDatabase"}
_BY_WIRE_NAME = {f"ON_{t.value}": t for t in EventType}


def _list_of_structs(cls: Any, key: str) -> Loader:
    load = _struct_loader(cls)

    def load_all(v: Any) -> list[Any]:
        return [load(item) for item in v]
    return load_all


def _check_envelope_value(key: str, kind: Any, value: Any) -> Loader | None:
    """Check the shape of a per-type value now; return the loader that converts it later (None: use as is)."""
    if isinstance(kind, list):  # a list of structs or strings
        if not isinstance(value, list):
            raise _decode_error(key, "a list", value)
        elem = kind[0]
        if elem is str:
            if not all(isinstance(x, str) for x in value):
                raise _decode_error(key, "a list of strings", value)
            return None
        if not all(isinstance(x, dict) for x in value):
            raise _decode_error(key, "a list of objects", value)
        return _list_of_structs(elem, key)
    if kind is bool:
        if not isinstance(value, bool):
            raise _decode_error(key, "true or false", value)
        return None
    if kind is dict:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _decode_error(key, "an object of strings", value)
        return None
    if not isinstance(value, dict):
        raise _decode_error(key, "an object", value)
    return _struct_loader(kind)


def _str_map(key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _decode_error(key, "an object of strings", value)
    return value


def decode(data: bytes | bytearray | memoryview | str, *, origin: Origin | None = None) -> ListenerEvent:
    """Decode one Apiary Kafka message value into an event.

    Raises :class:`~hivewire.errors.DecodeError` (and nothing else) when the message is not JSON, not an
    object, too large, has an unknown ``eventType``, misses a required field or has a field of the wrong
    type. The event's Thrift objects are converted on first access; a malformed one raises DecodeError then.
    """
    raw = bytes(data) if not isinstance(data, (bytes, str)) else data
    if len(raw) > MAX_MESSAGE_BYTES:
        raise DecodeError(f"message is {len(raw)} bytes, above the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        msg = json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise DecodeError(f"not JSON: {str(e)[:120]}") from e
    if not isinstance(msg, dict):
        raise _decode_error("message", "a JSON object", msg)
    wire_type = msg.get("eventType")
    event_type = _BY_WIRE_NAME.get(wire_type) if isinstance(wire_type, str) else None
    if event_type is None:
        if wire_type is None:
            raise DecodeError("missing eventType")
        raise DecodeError(f"unknown eventType {str(wire_type)[:60]!r}")

    values: dict[str, Any] = {}
    loaders: dict[str, tuple[Loader, Any]] = {}
    for key, field, kind in _FIELDS[event_type]:
        value = msg.get(key)
        if value is None:
            if key in _REQUIRED:
                raise DecodeError(f"{wire_type} message has no {key}")
            continue
        loader = _check_envelope_value(key, kind, value)
        if loader is None:
            values[field] = value
        else:
            loaders[field] = (loader, value)
    env = msg.get("environmentContext")
    if env is not None:
        if not isinstance(env, dict):
            raise _decode_error("environmentContext", "an object", env)
        loaders["environment_context"] = (_struct_loader(hms.EnvironmentContext), env)

    is_database_event = event_type in (EventType.CREATE_DATABASE, EventType.ALTER_DATABASE,
                                       EventType.DROP_DATABASE)
    db_name = msg.get("databaseName")
    table_name = None if is_database_event else msg.get("tableName")
    if db_name is None or (table_name is None and not is_database_event):
        # Older producers may omit the names; they are in the main object.
        main = msg.get("table") or msg.get("newTable") or msg.get("newDatabase") or msg.get("database") or {}
        if isinstance(main, dict):
            db_name = db_name if db_name is not None else main.get("dbName", main.get("name"))
            table_name = table_name if table_name is not None or is_database_event else main.get("tableName")
    if not isinstance(db_name, str):
        raise _decode_error("databaseName", "a string", db_name) if db_name is not None else DecodeError(
            f"{wire_type} message has no databaseName")
    if not is_database_event and not isinstance(table_name, str):
        raise _decode_error("tableName", "a string", table_name) if table_name is not None else DecodeError(
            f"{wire_type} message has no tableName")
    status = msg.get("status", True)
    if status is None:
        status = True
    elif not isinstance(status, bool):
        raise _decode_error("status", "true or false", status)
    parameters = _str_map("parameters", msg.get("parameters"))
    if isinstance(raw, str):
        raw = raw.encode()
    return EVENT_CLASSES[event_type]._lazy(
        db_name=db_name, table_name=table_name, status=status, parameters=parameters, loaders=loaders,
        values=values, raw=raw, origin=origin)


def to_json_dict(event: ListenerEvent, hive_version: str | None = None) -> dict[str, Any]:
    """The Apiary message of ``event`` as JSON-ready data (what :func:`encode` serialises).

    Objects that were never converted are written back from the payload they came in unchanged, so
    fields this hivewire does not know survive a decode/encode round trip.
    """
    version = _parse_version(hive_version or event.hive_version)
    is_database_event = event.event_type in (EventType.CREATE_DATABASE, EventType.ALTER_DATABASE,
                                             EventType.DROP_DATABASE)
    out: dict[str, Any] = {
        "eventType": f"ON_{event.event_type.value}",
        "databaseName": event.db_name,
        "tableName": event.table_name,
        "qualifiedTableName": event.qualified_name if not is_database_event else event.db_name,
        "status": event.status,
        "parameters": dict(event.parameters),
    }
    values, loaders = event._values, event._loaders
    for key, field, kind in [("environmentContext", "environment_context", hms.EnvironmentContext),
                             *_FIELDS[event.event_type]]:
        if field in values:
            out[key] = _dump_field(kind, values[field], version)
        elif field in loaders:
            out[key] = loaders[field][1]
        else:
            out[key] = False if kind is bool else None
    return out


def _dump_field(kind: Any, value: Any, version: tuple[int, int]) -> Any:
    """One per-type envelope value: a Thrift object, a list of them or of strings, a flag, a string map."""
    if value is None:
        return False if kind is bool else None
    if kind is bool:
        return bool(value)
    if kind is dict:
        return dict(value)
    if isinstance(kind, list):
        return list(value) if kind[0] is str else [dump_struct(v, version) for v in value]
    return dump_struct(value, version)


def encode(event: ListenerEvent, *, hive_version: str | None = None) -> bytes:
    """Serialise ``event`` as the Apiary Kafka listener's JSON (UTF-8 bytes).

    ``hive_version`` (``"2.3.9"``, ``"3.1.3"``, ``"4.0.1"``) selects the Thrift fields written, as the
    Java listener of that version writes them; by default the event's ``hive.version`` parameter decides,
    and without one every field hivewire knows is written.
    """
    return json.dumps(to_json_dict(event, hive_version), separators=(",", ":"), ensure_ascii=False).encode()


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` (over UTF-16 code units, 32-bit signed overflow)."""
    h = 0
    if text.isascii():
        for ch in text.encode("ascii"):
            h = (31 * h + ch) & 0xFFFFFFFF
    else:
        data = text.encode("utf-16-be")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(qualified_table_name: str, partitions: int) -> int:
    """The Kafka partition the Apiary producer picks for ``db.table``: ``abs(hashCode % partitions)``."""
    if partitions < 1:
        raise ValueError("partitions must be at least 1")
    h = java_string_hash(qualified_table_name)
    # Java's % truncates toward zero, so |h % n| == |h| % n.
    return abs(h) % partitions
