"""Thrift objects <-> their JSON data (dicts, lists, strings, numbers), driven by each class's ``thrift_spec``.

This is the object form of the Apiary Kafka listener's messages (``hivewire.apiary`` handles the bytes and
the envelope): a struct is an object keyed by Thrift field *name*, unset fields ``null``, enums by name
(numbers are read too), binary as base64, and SkewedInfo's list-keyed location map as
``[{"key": [...], "value": ...}]`` (Jackson's default ``{"[a, b]": loc}`` is read too).

:func:`load_struct` builds an object from its JSON data or raises :class:`~hivewire.errors.DecodeError`
naming the path of the bad value (``Table.sd.cols[2].name: expected a string, got 5``). It runs generated
straight-line converters (one per struct reachable from Table, Partition, Database and EnvironmentContext)
and, only when they refuse a value, the readable reference converter, to say where.
:func:`dump_struct` writes an object with the fields of a Hive version (:data:`FIELDS_SINCE`).
"""

from __future__ import annotations

import base64
import binascii
import keyword
import re
import reprlib
from collections.abc import Callable
from typing import Any

from thrift.Thrift import TType

from hivewire.errors import DecodeError
from hivewire_thrift.hive_metastore import ttypes as hms

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
#: The field set of every field hivewire knows (a version newer than any Hive).
LATEST = (99, 0, 0)
_SKEWED_MAP = ("SkewedInfo", "skewedColValueLocationMaps")
# Materialized views built on views (CreationMetadata.sourceTables -> SourceTable.table -> Table -> ...) nest
# recursively; Hive never goes deep, so deeper payloads are refused rather than risking Python's recursion limit.
_VIEW_SOURCES = ("CreationMetadata", "sourceTables")
MAX_VIEW_NESTING = 16
_INT_RANGES = {TType.BYTE: 8, TType.I16: 16, TType.I32: 32, TType.I64: 64}
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def shown(value: Any) -> str:
    return _repr.repr(value)


def decode_error(where: str, expected: str, value: Any) -> DecodeError:
    return DecodeError(f"{where}: expected {expected}, got {shown(value)}")


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
    raise decode_error(path, f"one of {sorted(names)} or a 32-bit integer", v)


def _skewed_locations(v: Any, path: str) -> dict[tuple[str, ...], str | None]:
    """SkewedInfo.skewedColValueLocationMaps: Apiary's list form, or Jackson's default ``{"[a, b]": loc}``."""
    out: dict[tuple[str, ...], str | None] = {}
    if type(v) is list:  # the production SkewedInfoSerializer form
        for i, item in enumerate(v):
            key = item.get("key") if type(item) is dict else None
            value = item.get("value") if type(item) is dict else None
            if not (type(key) is list and all(type(k) is str for k in key) and (value is None or type(value) is str)):
                raise decode_error(f"{path}[{i}]", '{"key": [strings], "value": string}', item)
            out[tuple(key)] = value
        return out
    if type(v) is dict:  # Jackson's default rendering of a list key, "[a, b]" (lossy, but seen in tests)
        for k, loc in v.items():
            if loc is not None and type(loc) is not str:
                raise decode_error(f"{path}[{k!r}]", "a string location", loc)
            inner = k[1:-1] if k.startswith("[") and k.endswith("]") else k
            out[tuple(inner.split(", ")) if inner else ()] = loc
        return out
    raise decode_error(path, "a list of key/value objects", v)


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
            raise decode_error(path, "base64 text" if spec == "BINARY" else "a string", v)
        if spec != "BINARY":
            return v
        try:
            return base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError):
            raise decode_error(path, "base64 text", v) from None
    if ttype == TType.BOOL:
        if type(v) is not bool:
            raise decode_error(path, "true or false", v)
        return v
    if ttype in _INT_RANGES:
        if not _int_in_range(ttype, v):
            raise decode_error(path, f"a {_INT_RANGES[ttype]}-bit integer", v)
        return v
    if ttype == TType.DOUBLE:
        if type(v) is float:
            return v
        if type(v) is int:
            try:
                return float(v)
            except OverflowError:
                pass
        raise decode_error(path, "a number", v)
    if ttype in (TType.LIST, TType.SET):
        if type(v) is not list:
            raise decode_error(path, "a list", v)
        items = [None if e is None else _ref_value(spec[0], spec[1], e, f"{path}[{i}]") for i, e in enumerate(v)]
        if ttype == TType.LIST:
            return items
        try:
            return set(items)
        except TypeError:
            raise decode_error(path, "a list of hashable values", v) from None
    if ttype == TType.MAP:
        if type(v) is not dict:
            raise decode_error(path, "an object", v)
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
    raise decode_error(f"{path} key", f"a {_INT_RANGES.get(ttype, '?')}-bit integer", k)


def _ref_struct(cls: Any, v: Any, path: str) -> Any:
    """Build ``cls`` from its JSON object, or raise DecodeError naming ``path`` and the field."""
    if type(v) is not dict:
        raise decode_error(path, "an object", v)
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
    if (
        ttype in (TType.LIST, TType.SET, TType.MAP)
        or (ttype == TType.STRING and spec == "BINARY")
        or ttype == TType.DOUBLE
    ):
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
    lines = [
        f"def load_{name}(v):",
        "    if type(v) is not dict:",
        "        if v is None:",
        "            return None",
        "        raise _Invalid",
        f"    o = _new(C_{name})",
        "    g = v.get",
    ]
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
            lines.append(
                f"    if x is not None and (type(x) is not int or not {-(1 << bits)} <= x < {1 << bits}):"
                " raise _Invalid"
            )
        elif ttype == TType.STRUCT:
            lines.append(f"    if x is not None: x = load_{args[0].__name__}(x)")
        elif ttype == TType.LIST and args[0] == TType.STRUCT:
            lines += ["    if x is not None:", "        if type(x) is not list: raise _Invalid"]
            if (name, fname) == _VIEW_SOURCES:
                lines.append(f"        if _view_depth(x) > {MAX_VIEW_NESTING}: raise _Invalid")
            lines.append(f"        x = [load_{args[1][0].__name__}(e) for e in x]")
        elif ttype == TType.LIST and args[0] == TType.STRING and args[1] != "BINARY":
            lines += [
                "    if x is not None:",
                "        if type(x) is not list: raise _Invalid",
                "        for e in x:",
                "            if type(e) is not str and e is not None: raise _Invalid",
                "        x = x[:]",
            ]
        elif ttype == TType.MAP and args[0] == TType.STRING and args[2] == TType.STRING and args[3] != "BINARY":
            lines += [
                "    if x is not None:",
                "        if type(x) is not dict: raise _Invalid",
                "        for e in x.values():",
                "            if type(e) is not str and e is not None: raise _Invalid",
                "        x = x.copy()",
            ]
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
    exec(compile("\n".join(source), "<hivewire.thriftjson struct loaders>", "exec"), ns)
    return {cls: ns[f"load_{cls.__name__}"] for cls in classes}


_FAST: dict[Any, Callable[[Any], Any]] = _compile_loaders(
    (hms.Table, hms.Partition, hms.Database, hms.EnvironmentContext)
)


def struct_loader(cls: Any) -> Callable[[Any, str], Any]:
    """``load(value, where)``: the Thrift object of ``cls`` built from its JSON data ``value``.

    On a bad value it raises :class:`DecodeError` naming the path from ``where``: the fast converter refuses,
    then the reference converter runs to say where.
    """
    fast = _FAST.get(cls)

    def reference(value: Any, where: str) -> Any:
        try:
            return _ref_struct(cls, value, where)
        except RecursionError:
            raise DecodeError(f"{where}: nested too deeply") from None

    if fast is None:
        return reference

    def load(value: Any, where: str) -> Any:
        try:
            return fast(value)
        except DecodeError:
            pass
        except RecursionError:
            raise DecodeError(f"{where}: nested too deeply") from None
        reference(value, where)  # raises, naming the path
        raise DecodeError(f"{where}: malformed")  # the reference accepted it: a bug, reported as bad input

    return load


def load_struct(cls: Any, value: Any) -> Any:
    """Build a Thrift object of type ``cls`` from its JSON data. Raises :class:`DecodeError` naming the path."""
    return struct_loader(cls)(value, cls.__name__)


# -- Thrift -> JSON ------------------------------------------------------------------------------------------


def parse_version(text: str | None) -> tuple[int, ...]:
    """``"2.3.10"`` -> (2, 3, 10), ``"4.0.1-SNAPSHOT"`` -> (4, 0, 1); anything else -> the latest version."""
    match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        return LATEST
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _has_field(struct: str, field_id: int, name: str, version: tuple[int, ...]) -> bool:
    """Whether the Thrift class ``struct`` of Hive ``version`` has the field."""
    for since, first_id in FIELDS_SINCE.get(struct, ()):
        if version < since:
            if field_id < first_id:
                return True
            return any(
                field == name and since_patch <= version < since for since_patch, field in BACKPORTED.get(struct, ())
            )
    return True


# Per (struct, version): [(field name, dumper or None when the value is written as is)]
_DUMP_PLANS: dict[tuple[Any, tuple[int, ...]], list[tuple[str, Callable[[Any], Any] | None]]] = {}


def _dumper(ttype: int, spec: Any, version: tuple[int, ...]) -> Callable[[Any], Any] | None:
    """A function writing a (non-None) value of a Thrift type as JSON data; None: the value is JSON as is."""
    if ttype == TType.STRUCT:
        return lambda v: dump_struct(v, version)
    if ttype == TType.STRING and spec == "BINARY":
        return lambda v: base64.b64encode(v).decode("ascii")
    if ttype == TType.DOUBLE:
        return _finite
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


def _finite(value: Any) -> Any:
    """A double as JSON data: NaN and the infinities have no JSON form (msgspec would write them as null)."""
    if type(value) is float and value - value != 0:
        raise ValueError(f"{value!r} cannot be written as JSON (NaN and infinite doubles have no JSON form)")
    return value


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


def dump_struct(obj: Any, version: tuple[int, ...] = LATEST) -> dict[str, Any]:
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
