"""The checks and conversions that the generated JSON loaders (:mod:`hivewire.events._loaders`) share.

A loader that meets a bad value raises :class:`Invalid` with the last step of its path (``.name``); each
enclosing loader adds its own step (``[2]``, ``.cols``, ``.sd``) as the exception passes through, so the path
is assembled only when there is an error. :func:`hivewire.events._thriftjson.struct_loader` turns it into a
:class:`~hivewire.errors.DecodeError` such as ``table.sd.cols[2].name: expected a string, got 5``.
"""

from __future__ import annotations

import base64
import binascii
import reprlib
from typing import Any

from hivewire.errors import DecodeError

# Materialized views built on views (CreationMetadata.sourceTables -> SourceTable.table -> Table -> ...) nest
# recursively; Hive never goes deep, so deeper payloads are refused rather than risking Python's recursion limit.
MAX_VIEW_NESTING = 16

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def shown(value: object) -> str:
    """A short repr of a bad value for an error message."""
    return _repr.repr(value)


def decode_error(where: str, expected: str, value: object) -> DecodeError:
    return DecodeError(f"{where}: expected {expected}, got {shown(value)}")


class Invalid(DecodeError):
    """A bad value inside a Thrift object's JSON data. ``steps`` is its path, innermost step first."""

    def __init__(self, step: str, detail: str) -> None:
        super().__init__(detail)
        self.steps = [step]
        self.detail = detail

    def message(self, where: str) -> str:
        """The error message, the path starting at ``where`` (``table``)."""
        return f"{where}{''.join(reversed(self.steps))}: {self.detail}"


def bad(step: str, expected: str, value: object) -> Invalid:
    return Invalid(step, f"expected {expected}, got {shown(value)}")


def bad_item(step: str, items: list[Any], item: object, expected: str) -> Invalid:
    """``item``, the first element of ``items`` to fail a check, is not ``expected``; the step names its index.

    The check depends only on the element, so an earlier element that is the same object would have failed
    first: the first element that ``is item`` is the one.
    """
    index = next(i for i, e in enumerate(items) if e is item)
    return bad(f"{step}[{index}]", expected, item)


def bad_value(step: str, values: dict[str, Any], value: object, expected: str) -> Invalid:
    """As :func:`bad_item`, for the first value of an object to fail a check; the step names its key."""
    key = next(k for k, v in values.items() if v is value)
    return bad(f"{step}[{key!r}]", expected, value)


def binary(v: object) -> bytes:
    """A Thrift ``binary`` from its base64 text."""
    if type(v) is str:
        try:
            return base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError):
            pass
    raise bad("", "base64 text", v)


def double(v: object) -> float:
    """A Thrift ``double`` from a JSON number."""
    if type(v) is float:
        return v
    if type(v) is int:
        try:
            return float(v)
        except OverflowError:
            pass
    raise bad("", "a number", v)


def skewed_locations(v: object) -> dict[tuple[str, ...], str | None]:
    """SkewedInfo.skewedColValueLocationMaps: Apiary's list form, or Jackson's default ``{"[a, b]": loc}``."""
    out: dict[tuple[str, ...], str | None] = {}
    if type(v) is list:  # the production SkewedInfoSerializer form
        for i, item in enumerate(v):
            key = item.get("key") if type(item) is dict else None
            value = item.get("value") if type(item) is dict else None
            if not (type(key) is list and all(type(k) is str for k in key) and (value is None or type(value) is str)):
                raise bad(f"[{i}]", '{"key": [strings], "value": string}', item)
            out[tuple(key)] = value
        return out
    if type(v) is dict:  # Jackson's default rendering of a list key, "[a, b]" (lossy, but seen in tests)
        for k, loc in v.items():
            if loc is not None and type(loc) is not str:
                raise bad(f"[{k!r}]", "a string location", loc)
            inner = k[1:-1] if k.startswith("[") and k.endswith("]") else k
            out[tuple(inner.split(", ")) if inner else ()] = loc
        return out
    raise bad("", "a list of key/value objects", v)


def view_depth(sources: object) -> int:
    """How deep views nest from a CreationMetadata.sourceTables list (1: it names only plain tables).

    Counts at most MAX_VIEW_NESTING + 1 levels, without recursion; ignores malformed parts (the loaders
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


def too_deep(step: str) -> Invalid:
    return Invalid(step, f"materialized views nest more than {MAX_VIEW_NESTING} levels deep")
