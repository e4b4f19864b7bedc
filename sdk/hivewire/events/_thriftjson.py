"""Thrift objects <-> their JSON data (dicts, lists, strings, numbers).

This is the object form of the Apiary Kafka listener's messages (``hivewire.apiary`` handles the bytes and
the envelope): a struct is an object keyed by Thrift field *name*, unset fields ``null``, enums by name
(numbers are read too), binary as base64, and SkewedInfo's list-keyed location map as
``[{"key": [...], "value": ...}]`` (Jackson's default ``{"[a, b]": loc}`` is read too).

:func:`load_struct` builds an object from its JSON data or raises :class:`~hivewire.errors.DecodeError`
naming the path of the bad value (``Table.sd.cols[2].name: expected a string, got 5``). It runs the
straight-line loaders that idl/generate.py writes into :mod:`hivewire.events._loaders` (one per struct
reachable from Table, Partition, Database and EnvironmentContext).
:func:`dump_struct` writes an object with the fields of a Hive version (:data:`FIELDS_SINCE`), driven by each
class's ``thrift_spec``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

from thrift.Thrift import TType

from hivewire.errors import DecodeError
from hivewire.events._jsonvalues import MAX_VIEW_NESTING, Invalid, decode_error, shown
from hivewire.events._loaders import ENUM_FIELDS, LOADERS

__all__ = [
    "BACKPORTED",
    "ENUM_FIELDS",
    "FIELDS_SINCE",
    "LATEST",
    "LOADERS",
    "MAX_VIEW_NESTING",
    "decode_error",
    "dump_struct",
    "load_struct",
    "parse_version",
    "shown",
    "struct_loader",
]

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


# -- JSON -> Thrift --------------------------------------------------------------------------------------------


def struct_loader(cls: type) -> Callable[[Any, str], Any]:
    """``load(value, where)``: the Thrift object of ``cls`` built from its JSON data ``value`` (None for null).

    On a bad value it raises :class:`DecodeError` naming the path from ``where``
    (``where.sd.cols[2].name: expected a string, got 5``).
    """
    loader = LOADERS.get(cls)
    if loader is None:
        raise ValueError(
            f"no JSON loader for {cls.__name__}: idl/generate.py generates them for the structs reachable from "
            "Table, Partition, Database and EnvironmentContext (ROOTS in idl/gen_loaders.py)"
        )

    def load(value: Any, where: str) -> Any:
        try:
            return loader(value)
        except Invalid as e:
            raise DecodeError(e.message(where)) from None
        except RecursionError:
            raise DecodeError(f"{where}: nested too deeply") from None

    return load


def load_struct(cls: type, value: Any) -> Any:
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
