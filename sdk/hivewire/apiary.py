"""The Apiary Kafka metastore listener's JSON message format: :func:`decode`, :func:`encode`, :func:`partition_for`.

The format is what ExpediaGroup's ``KafkaMetaStoreEventListener`` writes with ``JsonMetaStoreEventSerDe``
(Jackson): an envelope (``eventType`` such as ``"ON_CREATE_TABLE"``, ``databaseName``, ``tableName``,
``qualifiedTableName``, ``status``, ``parameters``, ``environmentContext``) plus per-type keys holding
Thrift objects serialised by field *name*: unset fields as ``null`` (Java writes an unset primitive as its
default; hivewire writes ``null``, which Jackson reads back as that default), enums by name, binary as
base64, and SkewedInfo's list-keyed location map as ``[{"key": [...], "value": ...}]``.

Decoding validates the envelope eagerly and converts the Thrift objects lazily, on first access, so a
listener that reads only names pays for parsing the JSON and little else. Unknown keys (newer Hive fields)
are ignored; known keys may be missing or ``null``; enums may be names or numbers. A malformed object
raises :class:`~hivewire.errors.DecodeError` on access, naming the path of the bad value
(``table.sd.cols[2].name: expected a string, got 5``).

Encoding writes the field set of the Hive version in the event's ``hive.version`` parameter (2.3, 3.x or
4.x, as the Java listener built against that version would), or of ``hive_version`` when given, or every
field hivewire knows without either. Objects that were never converted are written back from the payload
unchanged. Database events are not part of Apiary's format; hivewire writes them as ``ON_CREATE_DATABASE``,
``ON_ALTER_DATABASE`` and ``ON_DROP_DATABASE`` with ``database`` / ``oldDatabase`` / ``newDatabase``.

JSON is parsed with ``orjson`` when it is installed (about twice as fast) and with the standard library
otherwise; both accept and refuse the same messages (strict UTF-8, no byte-order mark, no ``NaN`` or
``Infinity``, no number that overflows a double, no ``\\u`` escape of a lone UTF-16 surrogate; integers
beyond the 64-bit range become doubles) and build equal values. The one difference: orjson refuses nesting
deeper than 1024 levels, the standard library at Python's recursion limit (about 1000 levels, less when
called deep in a stack); Apiary messages nest about 10 levels.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import keyword
import re
import reprlib
from collections.abc import Callable
from typing import Any

from thrift.Thrift import TType

from hivewire.errors import DecodeError
from hivewire.events import EVENT_CLASSES, EventType, ListenerEvent, Loader, Origin
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["JSON_PARSER", "MAX_MESSAGE_BYTES", "MAX_VIEW_NESTING", "decode", "encode", "java_string_hash",
           "partition_for", "to_json_dict"]

#: Messages larger than this are refused with DecodeError instead of being parsed.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

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
# (Apiary's Java serializer writes every field of the Thrift classes the metastore runs with, so the
# metastore's version decides the keys.)
FIELDS_SINCE: dict[str, list[tuple[tuple[int, ...], int]]] = {
    "Table": [((3, 0), 16), ((4, 0), 19)],
    "Partition": [((3, 0), 9), ((4, 0), 10)],
    "SerDeInfo": [((3, 0), 4)],
    "Database": [((3, 0), 8), ((4, 0), 9)],
    "CreationMetadata": [((4, 0), 6)],
}
# Fields a release line gained ahead of FIELDS_SINCE: Hive 2.3.10's Thrift classes carry the catalog name
# (HIVE-27868, backported for Spark), so a 2.3.10 metastore's listener writes these keys too.
BACKPORTED: dict[str, list[tuple[tuple[int, ...], str]]] = {
    "Table": [((2, 3, 10), "catName")],
    "Partition": [((2, 3, 10), "catName")],
    "Database": [((2, 3, 10), "catalogName")],
}
_LATEST = (99, 0, 0)
_SKEWED_MAP = ("SkewedInfo", "skewedColValueLocationMaps")
# Materialized views built on views (CreationMetadata.sourceTables -> SourceTable.table -> Table -> ...) nest
# recursively; Hive never goes deep, so deeper payloads are refused rather than risking Python's recursion limit.
_VIEW_SOURCES = ("CreationMetadata", "sourceTables")
MAX_VIEW_NESTING = 16
_INT_RANGES = {TType.BYTE: 8, TType.I16: 16, TType.I32: 32, TType.I64: 64}
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_INF = float("inf")

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def _shown(value: Any) -> str:
    return _repr.repr(value)


def _decode_error(where: str, expected: str, value: Any) -> DecodeError:
    return DecodeError(f"{where}: expected {expected}, got {_shown(value)}")


# -- JSON parsing ------------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _parse_float(text: str) -> float:
    value = float(text)
    if value == _INF or value == -_INF:
        raise ValueError(f"number {text[:40]} is out of range for a double")
    return value


def _parse_int(text: str) -> int | float:
    """As orjson reads integers: beyond the 64-bit range (signed or unsigned) they become doubles."""
    value = int(text)
    if -(1 << 63) <= value < (1 << 64):
        return value
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"number {text[:40]}... is out of range for a double") from None


_STDLIB_DECODE = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float,
                                  parse_int=_parse_int).decode
# A \u escape of a UTF-16 surrogate (valid pairs too; they are rare enough to check when seen).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]").search
_SURROGATE = re.compile("[\ud800-\udfff]").search


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string in a parsed JSON value holds a lone surrogate (valid pairs were combined)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is str:
            if _SURROGATE(v):
                return True
        elif type(v) is dict:
            stack.extend(v)
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
    return False


def _not_utf8(data: bytes) -> DecodeError | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return DecodeError(f"not UTF-8: {e.reason} at byte {e.start}")
    return None


def _loads_stdlib(data: bytes) -> Any:
    try:
        value = _STDLIB_DECODE(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise DecodeError(f"not UTF-8: {e.reason} at byte {e.start}") from None
    except ValueError as e:  # JSONDecodeError, NaN/Infinity, an overflowing number, a too-long integer
        raise DecodeError(f"not JSON: {str(e)[:200]}") from None
    except RecursionError:
        raise DecodeError("not JSON: nested too deeply") from None
    if _SURROGATE_ESCAPE(data) is not None and _has_lone_surrogate(value):
        raise DecodeError("not JSON: a \\u escape encodes a lone UTF-16 surrogate")
    return value


def _orjson_parser() -> Callable[[bytes], Any] | None:
    try:
        orjson_loads: Callable[[bytes], Any] = importlib.import_module("orjson").loads
    except ImportError:
        return None

    def _loads_orjson(data: bytes) -> Any:
        try:
            return orjson_loads(data)
        except ValueError as e:  # orjson.JSONDecodeError
            raise _not_utf8(data) or DecodeError(f"not JSON: {str(e)[:200]}") from None
        except RecursionError:
            raise DecodeError("not JSON: nested too deeply") from None
    return _loads_orjson


# The JSON parsers available here, the fastest first; both raise only DecodeError.
_PARSERS: dict[str, Callable[[bytes], Any]] = {}
if (_orjson := _orjson_parser()) is not None:
    _PARSERS["orjson"] = _orjson
_PARSERS["json"] = _loads_stdlib
#: The JSON parser :func:`decode` uses: ``"orjson"`` when installed, else ``"json"`` (the standard library).
JSON_PARSER = next(iter(_PARSERS))
_loads = _PARSERS[JSON_PARSER]


# -- JSON -> Thrift: the reference converter (readable, names the path of a bad value) ---------------------

def _int_in_range(ttype: int, v: Any) -> bool:
    bits = _INT_RANGES[ttype]
    return type(v) is int and -(1 << (bits - 1)) <= v < (1 << (bits - 1))


def _ref_enum(enum_cls: Any, v: Any, path: str) -> int:
    names: dict[str, int] = enum_cls._NAMES_TO_VALUES
    if type(v) is str and v in names:
        return names[v]
    if type(v) is int and _I32_MIN <= v <= _I32_MAX:
        return v
    raise _decode_error(path, f"one of {sorted(names)} or a 32-bit integer", v)


def _skewed_locations(v: Any, path: str) -> dict[tuple[str, ...], str | None]:
    """SkewedInfo.skewedColValueLocationMaps: Apiary's list form, or Jackson's default ``{"[a, b]": loc}``."""
    out: dict[tuple[str, ...], str | None] = {}
    if type(v) is list:  # the production SkewedInfoSerializer form
        for i, item in enumerate(v):
            key = item.get("key") if type(item) is dict else None
            value = item.get("value") if type(item) is dict else None
            if not (type(key) is list and all(type(k) is str for k in key)
                    and (value is None or type(value) is str)):
                raise _decode_error(f"{path}[{i}]", '{"key": [strings], "value": string}', item)
            out[tuple(key)] = value
        return out
    if type(v) is dict:  # Jackson's default rendering of a list key, "[a, b]" (lossy, but seen in tests)
        for k, loc in v.items():
            if loc is not None and type(loc) is not str:
                raise _decode_error(f"{path}[{k!r}]", "a string location", loc)
            inner = k[1:-1] if k.startswith("[") and k.endswith("]") else k
            out[tuple(inner.split(", ")) if inner else ()] = loc
        return out
    raise _decode_error(path, "a list of key/value objects", v)


def _view_depth(sources: Any) -> int:
    """How deep views nest from a CreationMetadata.sourceTables list (1: it names only plain tables).

    Counts at most MAX_VIEW_NESTING + 1 levels, without recursion; ignores malformed parts (the converters
    refuse those).
    """
    depth, level = 0, [sources]
    while level and depth <= MAX_VIEW_NESTING:
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


def _ref_value(ttype: int, spec: Any, v: Any, path: str) -> Any:
    """Convert a JSON value (not None) of Thrift type ``ttype`` (``spec`` from thrift_spec)."""
    if ttype == TType.STRUCT:
        return _ref_struct(spec[0], v, path)
    if ttype == TType.STRING:
        if type(v) is not str:
            raise _decode_error(path, "base64 text" if spec == "BINARY" else "a string", v)
        if spec != "BINARY":
            return v
        try:
            return base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError):
            raise _decode_error(path, "base64 text", v) from None
    if ttype == TType.BOOL:
        if type(v) is not bool:
            raise _decode_error(path, "true or false", v)
        return v
    if ttype in _INT_RANGES:
        if not _int_in_range(ttype, v):
            raise _decode_error(path, f"a {_INT_RANGES[ttype]}-bit integer", v)
        return v
    if ttype == TType.DOUBLE:
        if type(v) is float:
            return v
        if type(v) is int:
            try:
                return float(v)
            except OverflowError:
                pass
        raise _decode_error(path, "a number", v)
    if ttype in (TType.LIST, TType.SET):
        if type(v) is not list:
            raise _decode_error(path, "a list", v)
        items = [None if e is None else _ref_value(spec[0], spec[1], e, f"{path}[{i}]") for i, e in enumerate(v)]
        if ttype == TType.LIST:
            return items
        try:
            return set(items)
        except TypeError:
            raise _decode_error(path, "a list of hashable values", v) from None
    if ttype == TType.MAP:
        if type(v) is not dict:
            raise _decode_error(path, "an object", v)
        out = {}
        for k, x in v.items():
            key = k if spec[0] == TType.STRING else _ref_map_key(spec[0], k, path)
            out[key] = None if x is None else _ref_value(spec[2], spec[3], x, f"{path}[{k!r}]")
        return out
    raise DecodeError(f"{path}: unsupported Thrift type {ttype}")


def _ref_map_key(ttype: int, k: str, path: str) -> Any:
    if ttype in _INT_RANGES:
        try:
            key = int(k)
        except ValueError:
            key = None
        if key is not None and _int_in_range(ttype, key):
            return key
    raise _decode_error(f"{path} key", f"a {_INT_RANGES.get(ttype, '?')}-bit integer", k)


def _ref_struct(cls: Any, v: Any, path: str) -> Any:
    """Build ``cls`` from its JSON object, or raise DecodeError naming ``path`` and the field."""
    if type(v) is not dict:
        raise _decode_error(path, "an object", v)
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
        elif (name, fname) == _SKEWED_MAP:
            value = _skewed_locations(raw, where)
        elif (name, fname) in ENUM_FIELDS:
            value = _ref_enum(ENUM_FIELDS[(name, fname)], raw, where)
        else:
            if (name, fname) == _VIEW_SOURCES and _view_depth(raw) > MAX_VIEW_NESTING:
                raise DecodeError(f"{where}: materialized views nest more than {MAX_VIEW_NESTING} levels deep")
            value = _ref_value(ttype, args, raw, where)
        setattr(obj, fname, value)
    return obj


# -- JSON -> Thrift: the fast converters (generated straight-line code, no path bookkeeping) ---------------
# They accept exactly what the reference accepts and build equal objects (tests/unit/test_apiary_properties.py
# checks this); on a bad value they raise a bare _Invalid, and the caller re-runs the reference to say where.

class _Invalid(DecodeError):
    def __init__(self) -> None:
        super().__init__("invalid value")


def _fast_value(ttype: int, spec: Any, where: str) -> Callable[[Any], Any]:
    """A converter for one JSON value (not None) of a Thrift type, for the cases the generated code leaves out."""
    if ttype == TType.STRUCT:
        cls = spec[0]

        def struct(v: Any) -> Any:
            return _FAST[cls](v)
        return struct
    if ttype in (TType.LIST, TType.SET, TType.MAP) or (ttype == TType.STRING and spec == "BINARY") \
            or ttype == TType.DOUBLE:
        # Rare shapes (nested containers, binary, doubles): the reference is fast enough, minus the paths.
        def generic(v: Any) -> Any:
            return _ref_value(ttype, spec, v, where)
        return generic
    raise AssertionError(f"{where}: no fast converter for Thrift type {ttype}")  # pragma: no cover


def _enum_converter(enum_cls: Any) -> Callable[[Any], int]:
    names: dict[str, int] = enum_cls._NAMES_TO_VALUES

    def enum(v: Any) -> int:
        if type(v) is str:
            value = names.get(v)
            if value is not None:
                return value
        elif type(v) is int and _I32_MIN <= v <= _I32_MAX:
            return v
        raise _Invalid
    return enum


def _reachable(roots: tuple[Any, ...]) -> list[Any]:
    """Every struct class reachable from ``roots`` through their fields."""
    seen: dict[Any, None] = {}

    def visit_type(ttype: int, spec: Any) -> None:
        if ttype == TType.STRUCT:
            visit(spec[0])
        elif ttype in (TType.LIST, TType.SET):
            visit_type(spec[0], spec[1])
        elif ttype == TType.MAP:
            visit_type(spec[0], spec[1])
            visit_type(spec[2], spec[3])

    def visit(cls: Any) -> None:
        if cls in seen:
            return
        seen[cls] = None
        for spec in cls.thrift_spec or ():
            if spec is not None:
                visit_type(spec[1], spec[3])
    for root in roots:
        visit(root)
    return list(seen)


def _loader_source(cls: Any, ns: dict[str, Any]) -> list[str]:
    """Python source of ``load_<Struct>(v)``: one straight-line block per field."""
    name = cls.__name__
    ns[f"C_{name}"] = cls
    lines = [f"def load_{name}(v):",
             "    if type(v) is not dict:",
             "        if v is None:",
             "            return None",
             "        raise _Invalid",
             f"    o = _new(C_{name})",
             "    g = v.get"]
    defaults = cls().__dict__
    for spec in cls.thrift_spec or ():
        if spec is None:
            continue
        _id, ttype, fname, args, _default = spec
        assert fname.isidentifier() and not keyword.iskeyword(fname), fname
        default = defaults[fname]
        assert default is None or type(default) in (int, bool, str, float), (name, fname, default)
        lines.append(f"    x = g({fname!r})" if default is None else f"    x = g({fname!r}, {default!r})")
        if (name, fname) == _SKEWED_MAP or (name, fname) in ENUM_FIELDS:
            conv = f"F_{name}_{fname}"
            if (name, fname) in ENUM_FIELDS:
                ns[conv] = _enum_converter(ENUM_FIELDS[(name, fname)])
            else:
                ns[conv] = lambda v, where=f"{name}.{fname}": _skewed_locations(v, where)
            lines.append(f"    if x is not None: x = {conv}(x)")
        elif ttype == TType.STRING and args != "BINARY":
            lines.append("    if x is not None and type(x) is not str: raise _Invalid")
        elif ttype == TType.BOOL:
            lines.append("    if x is not None and type(x) is not bool: raise _Invalid")
        elif ttype in _INT_RANGES:
            bits = _INT_RANGES[ttype] - 1
            lines.append(f"    if x is not None and (type(x) is not int or not {-(1 << bits)} <= x < {1 << bits}):"
                         " raise _Invalid")
        elif ttype == TType.STRUCT:
            lines.append(f"    if x is not None: x = load_{args[0].__name__}(x)")
        elif ttype == TType.LIST and args[0] == TType.STRUCT:
            lines += ["    if x is not None:",
                      "        if type(x) is not list: raise _Invalid"]
            if (name, fname) == _VIEW_SOURCES:
                lines.append(f"        if _view_depth(x) > {MAX_VIEW_NESTING}: raise _Invalid")
            lines.append(f"        x = [load_{args[1][0].__name__}(e) for e in x]")
        elif ttype == TType.LIST and args[0] == TType.STRING and args[1] != "BINARY":
            lines += ["    if x is not None:",
                      "        if type(x) is not list: raise _Invalid",
                      "        for e in x:",
                      "            if type(e) is not str and e is not None: raise _Invalid",
                      "        x = x[:]"]
        elif ttype == TType.MAP and args[0] == TType.STRING and args[2] == TType.STRING and args[3] != "BINARY":
            lines += ["    if x is not None:",
                      "        if type(x) is not dict: raise _Invalid",
                      "        for e in x.values():",
                      "            if type(e) is not str and e is not None: raise _Invalid",
                      "        x = x.copy()"]
        else:
            conv = f"F_{name}_{fname}"
            ns[conv] = _fast_value(ttype, args, f"{name}.{fname}")
            lines.append(f"    if x is not None: x = {conv}(x)")
        lines.append(f"    o.{fname} = x")
    lines.append("    return o")
    return lines


def _compile_loaders(roots: tuple[Any, ...]) -> dict[Any, Callable[[Any], Any]]:
    classes = _reachable(roots)
    ns: dict[str, Any] = {"_new": object.__new__, "_Invalid": _Invalid, "_view_depth": _view_depth}
    source = []
    for cls in classes:
        source += _loader_source(cls, ns)
        source.append("")
    exec(compile("\n".join(source), "<hivewire.apiary struct loaders>", "exec"), ns)
    return {cls: ns[f"load_{cls.__name__}"] for cls in classes}


_FAST: dict[Any, Callable[[Any], Any]] = _compile_loaders(
    (hms.Table, hms.Partition, hms.Database, hms.EnvironmentContext))


def _finish(fast: Callable[[Any], Any], reference: Callable[[], Any], where: str, value: Any) -> Any:
    """Run ``fast(value)``; when it refuses, run the reference to raise a DecodeError that names the path."""
    try:
        return fast(value)
    except DecodeError:
        pass
    except RecursionError:
        raise DecodeError(f"{where}: nested too deeply") from None
    try:
        reference()
    except RecursionError:
        raise DecodeError(f"{where}: nested too deeply") from None
    raise DecodeError(f"{where}: malformed")  # the reference accepted it: a bug, reported as bad input


def _top_struct(cls: Any, where: str) -> Loader:
    fast = _FAST[cls]

    def load(value: Any) -> Any:
        return _finish(fast, lambda: _ref_struct(cls, value, where), where, value)
    return load


def _top_struct_list(cls: Any, where: str) -> Loader:
    fast = _FAST[cls]

    def load_all(values: list[Any]) -> Any:
        return _finish(lambda v: [fast(x) for x in v],
                       lambda: [_ref_struct(cls, x, f"{where}[{i}]") for i, x in enumerate(values)],
                       where, values)
    return load_all


def load_struct(cls: Any, value: Any) -> Any:
    """Build a Thrift object of type ``cls`` from its Apiary JSON form. Raises :class:`DecodeError`."""
    fast = _FAST.get(cls)
    if fast is None:
        return _ref_struct(cls, value, cls.__name__)
    return _finish(fast, lambda: _ref_struct(cls, value, cls.__name__), cls.__name__, value)


# -- Thrift -> JSON ------------------------------------------------------------------------------------------

def _parse_version(text: str | None) -> tuple[int, ...]:
    """``"2.3.10"`` -> (2, 3, 10), ``"4.0.1-SNAPSHOT"`` -> (4, 0, 1); anything else -> the latest version."""
    match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        return _LATEST
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _has_field(struct: str, field_id: int, name: str, version: tuple[int, ...]) -> bool:
    """Whether the Thrift class ``struct`` of Hive ``version`` has the field."""
    for since, first_id in FIELDS_SINCE.get(struct, ()):
        if version < since:
            if field_id < first_id:
                return True
            return any(field == name and since_patch <= version < since
                       for since_patch, field in BACKPORTED.get(struct, ()))
    return True


# Per (struct, version): [(field name, dumper or None when the value is written as is)]
_DUMP_PLANS: dict[tuple[Any, tuple[int, ...]], list[tuple[str, Callable[[Any], Any] | None]]] = {}


def _dumper(ttype: int, spec: Any, version: tuple[int, ...]) -> Callable[[Any], Any] | None:
    """A function writing a (non-None) value of a Thrift type as JSON data; None: the value is JSON as is."""
    if ttype == TType.STRUCT:
        return lambda v: dump_struct(v, version)
    if ttype == TType.STRING and spec == "BINARY":
        return lambda v: base64.b64encode(v).decode("ascii")
    if ttype in (TType.LIST, TType.SET):
        elem = _dumper(spec[0], spec[1], version)
        if ttype == TType.SET:
            def dump_set(v: Any) -> list[Any]:
                try:
                    items = sorted(v)
                except TypeError:
                    items = sorted(v, key=repr)
                return [None if e is None else elem(e) for e in items] if elem else items
            return dump_set
        if elem is None:
            return list
        return lambda v: [None if e is None else elem(e) for e in v]
    if ttype == TType.MAP:
        value = _dumper(spec[2], spec[3], version)
        if spec[0] == TType.STRING:
            if value is None:
                return dict
            return lambda v: {k: None if x is None else value(x) for k, x in v.items()}
        return lambda v: {str(k): x if x is None or value is None else value(x) for k, x in v.items()}
    return None


def _skewed_dump(value: dict[tuple[str, ...], str | None]) -> list[dict[str, Any]]:
    return [{"key": list(k), "value": x} for k, x in value.items()]


def _enum_dump(names: dict[int, str]) -> Callable[[Any], Any]:
    return lambda v: names.get(v, v)


def _dump_plan(cls: Any, version: tuple[int, ...]) -> list[tuple[str, Callable[[Any], Any] | None]]:
    name = cls.__name__
    plan: list[tuple[str, Callable[[Any], Any] | None]] = []
    for spec in cls.thrift_spec or ():
        if spec is None or not _has_field(name, spec[0], spec[2], version):
            continue
        _id, ttype, fname, args, _default = spec
        if (name, fname) == _SKEWED_MAP:
            plan.append((fname, _skewed_dump))
        elif (name, fname) in ENUM_FIELDS:
            plan.append((fname, _enum_dump(ENUM_FIELDS[(name, fname)]._VALUES_TO_NAMES)))
        else:
            plan.append((fname, _dumper(ttype, args, version)))
    _DUMP_PLANS[(cls, version)] = plan
    return plan


def dump_struct(obj: Any, version: tuple[int, ...] = _LATEST) -> dict[str, Any]:
    """The Apiary JSON form of a Thrift object, with the fields of Hive ``version`` (every field by default).

    ``version`` is a tuple such as ``(2, 3, 10)``.

    Unset (None) fields are written as null, primitives included (Java writes 0/false for those).
    """
    cls = type(obj)
    plan = _DUMP_PLANS.get((cls, version)) or _dump_plan(cls, version)
    values = obj.__dict__
    out: dict[str, Any] = {}
    for fname, dump in plan:
        value = values.get(fname)
        out[fname] = value if value is None or dump is None else dump(value)
    return out


# -- The envelope ---------------------------------------------------------------------------------------------

_STRUCT, _STRUCT_LIST, _FLAG, _STR_MAP, _STR_LIST = range(5)
# (JSON key, event field, kind, loader, required)
_EnvField = tuple[str, str, int, Any, bool]


def _obj(key: str, field: str, cls: Any, required: bool = True) -> _EnvField:
    return (key, field, _STRUCT, _top_struct(cls, key), required)


_TABLE = _obj("table", "table", hms.Table)
_PARTITIONS = ("partitions", "partitions", _STRUCT_LIST, _top_struct_list(hms.Partition, "partitions"), False)
_DELETE_DATA = ("deleteData", "delete_data", _FLAG, None, False)
_FIELDS: dict[EventType, tuple[_EnvField, ...]] = {
    EventType.CREATE_TABLE: (_TABLE,),
    EventType.ALTER_TABLE: (_obj("oldTable", "old_table", hms.Table), _obj("newTable", "new_table", hms.Table)),
    EventType.DROP_TABLE: (_TABLE, _DELETE_DATA),
    EventType.ADD_PARTITION: (_TABLE, _PARTITIONS),
    EventType.ALTER_PARTITION: (_TABLE, _obj("oldPartition", "old_partition", hms.Partition),
                                _obj("newPartition", "new_partition", hms.Partition)),
    EventType.DROP_PARTITION: (_TABLE, _PARTITIONS, _DELETE_DATA),
    EventType.INSERT: (("partitionKeyValues", "partition_key_values", _STR_MAP, None, False),
                       ("files", "files", _STR_LIST, None, False),
                       ("fileChecksums", "file_checksums", _STR_LIST, None, False)),
    EventType.CREATE_DATABASE: (_obj("database", "database", hms.Database),),
    EventType.ALTER_DATABASE: (_obj("oldDatabase", "old_database", hms.Database),
                               _obj("newDatabase", "new_database", hms.Database)),
    EventType.DROP_DATABASE: (_obj("database", "database", hms.Database),),
}
_DATABASE_EVENTS = frozenset({EventType.CREATE_DATABASE, EventType.ALTER_DATABASE, EventType.DROP_DATABASE})
# The object the names come from when the envelope lacks them (older producers).
_NAMES_FROM = {EventType.ALTER_TABLE: "newTable", EventType.INSERT: None, EventType.CREATE_DATABASE: "database",
               EventType.ALTER_DATABASE: "newDatabase", EventType.DROP_DATABASE: "database"}
_ENVIRONMENT = _top_struct(hms.EnvironmentContext, "environmentContext")
# "ON_CREATE_TABLE" -> (event class, per-type fields, key holding the names, database event?)
_SPECS: dict[str, tuple[type[ListenerEvent], tuple[_EnvField, ...], str | None, bool]] = {
    f"ON_{t.value}": (EVENT_CLASSES[t], _FIELDS[t], _NAMES_FROM.get(t, "table"), t in _DATABASE_EVENTS)
    for t in EventType
}


def _as_bytes(data: Any) -> bytes:
    if isinstance(data, str):
        try:
            return data.encode("utf-8")
        except UnicodeEncodeError as e:
            raise DecodeError(f"not UTF-8: {e.reason} at character {e.start}") from None
    if isinstance(data, (bytearray, memoryview)):
        if memoryview(data).nbytes > MAX_MESSAGE_BYTES:
            raise DecodeError(f"message is {memoryview(data).nbytes} bytes, above the "
                              f"{MAX_MESSAGE_BYTES}-byte limit")
        return bytes(data)
    if isinstance(data, bytes):
        return bytes(data)
    raise TypeError(f"decode() takes bytes or str, not {type(data).__name__}")


def _names_from(main: Any, is_database_event: bool) -> tuple[Any, Any]:
    if type(main) is not dict:
        return None, None
    if is_database_event:
        return main.get("name"), None
    return main.get("dbName"), main.get("tableName")


def decode(data: bytes | bytearray | memoryview | str, *, origin: Origin | None = None) -> ListenerEvent:
    """Decode one Apiary Kafka message value into an event.

    Raises :class:`~hivewire.errors.DecodeError` (and nothing else) when the message is not UTF-8 JSON, not
    an object, too large, has an unknown ``eventType``, misses a required field or has a field of the wrong
    type. The event's Thrift objects are converted on first access; a malformed one raises DecodeError then.
    """
    if type(data) is not bytes:
        data = _as_bytes(data)
    if len(data) > MAX_MESSAGE_BYTES:
        raise DecodeError(f"message is {len(data)} bytes, above the {MAX_MESSAGE_BYTES}-byte limit")
    return _event(_loads(data), data, origin)


def _event(msg: Any, data: bytes, origin: Origin | None) -> ListenerEvent:
    """The event of a parsed message (``data`` is its raw form)."""
    if type(msg) is not dict:
        raise _decode_error("message", "a JSON object", msg)
    wire_type = msg.get("eventType")
    spec = _SPECS.get(wire_type) if type(wire_type) is str else None
    if spec is None:
        if wire_type is None:
            raise DecodeError("missing eventType")
        raise DecodeError(f"unknown eventType {_shown(wire_type)}")
    cls, fields, names_key, is_database_event = spec

    values: dict[str, Any] = {}
    loaders: dict[str, tuple[Loader, Any]] = {}
    for key, field, kind, loader, required in fields:
        value = msg.get(key)
        if value is None:
            if required:
                raise DecodeError(f"{wire_type} message has no {key}")
            continue
        if kind == _STRUCT:
            if type(value) is not dict:
                raise _decode_error(key, "an object", value)
            loaders[field] = (loader, value)
        elif kind == _STRUCT_LIST:
            if type(value) is not list:
                raise _decode_error(key, "a list", value)
            for i, item in enumerate(value):
                if type(item) is not dict:
                    raise _decode_error(f"{key}[{i}]", "an object", item)
            loaders[field] = (loader, value)
        elif kind == _FLAG:
            if type(value) is not bool:
                raise _decode_error(key, "true or false", value)
            values[field] = value
        elif kind == _STR_LIST:
            if type(value) is not list:
                raise _decode_error(key, "a list of strings", value)
            for i, item in enumerate(value):
                if type(item) is not str:
                    raise _decode_error(f"{key}[{i}]", "a string", item)
            values[field] = value
        else:  # _STR_MAP
            _check_str_map(key, value)
            values[field] = value
    env = msg.get("environmentContext")
    if env is not None:
        if type(env) is not dict:
            raise _decode_error("environmentContext", "an object", env)
        loaders["environment_context"] = (_ENVIRONMENT, env)

    db_name = msg.get("databaseName")
    table_name = None if is_database_event else msg.get("tableName")
    if type(db_name) is not str or (type(table_name) is not str and not is_database_event):
        if db_name is None or (table_name is None and not is_database_event):
            # Older producers may omit the names; they are in the main object.
            main_db, main_table = _names_from(msg.get(names_key) if names_key else None, is_database_event)
            db_name = main_db if db_name is None else db_name
            table_name = main_table if table_name is None else table_name
        if type(db_name) is not str:
            raise _decode_error("databaseName", "a string", db_name) if db_name is not None else DecodeError(
                f"{wire_type} message has no databaseName")
        if not is_database_event and type(table_name) is not str:
            raise _decode_error("tableName", "a string", table_name) if table_name is not None else DecodeError(
                f"{wire_type} message has no tableName")
    status = msg.get("status", True)
    if type(status) is not bool:
        if status is not None:
            raise _decode_error("status", "true or false", status)
        status = True
    parameters = msg.get("parameters")
    if parameters is None:
        parameters = {}
    else:
        _check_str_map("parameters", parameters)
    return cls._lazy(db_name=db_name, table_name=table_name, status=status, parameters=parameters,
                     loaders=loaders, values=values, raw=data, origin=origin)


def _check_str_map(key: str, value: Any) -> None:
    if type(value) is not dict:
        raise _decode_error(key, "an object of strings", value)
    for k, v in value.items():
        if type(v) is not str:
            raise _decode_error(f"{key}[{k!r}]", "a string", v)


# -- Encoding ---------------------------------------------------------------------------------------------

def _message(event: ListenerEvent, hive_version: str | None) -> dict[str, Any]:
    """The Apiary message of ``event``; never-converted objects are the payload's own values (shared)."""
    version = _parse_version(hive_version or event.hive_version)
    is_database_event = event.event_type in _DATABASE_EVENTS
    out: dict[str, Any] = {
        "eventType": f"ON_{event.event_type.value}",
        "databaseName": event.db_name,
        "tableName": event.table_name,
        "qualifiedTableName": event.db_name if is_database_event else event.qualified_name,
        "status": event.status,
        "parameters": dict(event.parameters),
    }
    values, loaders = event._values, event._loaders
    for key, field, kind, _loader, _required in (("environmentContext", "environment_context", _STRUCT, None,
                                                  False), *_FIELDS[event.event_type]):
        if field in values:
            value = values[field]
            if value is None:
                out[key] = False if kind == _FLAG else None
            elif kind == _STRUCT:
                out[key] = dump_struct(value, version)
            elif kind == _STRUCT_LIST:
                out[key] = [None if v is None else dump_struct(v, version) for v in value]
            elif kind == _FLAG:
                out[key] = bool(value)
            elif kind == _STR_LIST:
                out[key] = list(value)
            else:
                out[key] = dict(value)
        elif field in loaders:
            out[key] = loaders[field][1]
        else:
            out[key] = False if kind == _FLAG else None
    return out


def to_json_dict(event: ListenerEvent, hive_version: str | None = None) -> dict[str, Any]:
    """The Apiary message of ``event`` as JSON-ready data (what :func:`encode` serialises), yours to change.

    Objects that were never converted are written back from the payload they came in unchanged, so
    fields this hivewire does not know survive a decode/encode round trip.
    """
    try:
        copied: dict[str, Any] = json.loads(json.dumps(_message(event, hive_version)))
    except RecursionError:
        raise DecodeError(f"{event.qualified_name}: the message nests too deeply to copy") from None
    return copied


def encode(event: ListenerEvent, *, hive_version: str | None = None) -> bytes:
    """Serialise ``event`` as the Apiary Kafka listener's JSON (UTF-8 bytes).

    ``hive_version`` (``"2.3.9"``, ``"3.1.3"``, ``"4.0.1"``) selects the Thrift fields written, as the
    Java listener of that version writes them; by default the event's ``hive.version`` parameter decides,
    and without one every field hivewire knows is written. An event that was decoded encodes or raises
    :class:`~hivewire.errors.DecodeError` (an object that does not convert); one built in Python raises
    ``ValueError`` for a NaN or infinite double or a string that is not valid Unicode.
    """
    try:
        text = json.dumps(_message(event, hive_version), separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    except RecursionError:
        raise DecodeError(f"{event.qualified_name}: the message nests too deeply to encode") from None
    return text.encode("utf-8")


# -- Partitioning -----------------------------------------------------------------------------------------

def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` (over UTF-16 code units, 32-bit signed overflow)."""
    h = 0
    if text.isascii():
        for ch in text.encode("ascii"):
            h = (31 * h + ch) & 0xFFFFFFFF
    else:
        data = text.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(qualified_table_name: str, partitions: int) -> int:
    """The Kafka partition the Apiary producer picks for ``db.table``: ``Math.abs(hashCode % partitions)``."""
    if partitions < 1:
        raise ValueError("partitions must be at least 1")
    h = java_string_hash(qualified_table_name)
    # Java's % truncates toward zero, so |h % n| == |h| % n.
    return abs(h) % partitions
