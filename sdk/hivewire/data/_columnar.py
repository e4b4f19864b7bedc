"""The columnar decoder: raw Apiary messages straight to rows, and rows to Arrow columns without pyarrow's
per-value conversion of nested Python data.

**Messages to rows** (:func:`message_row`). Each message is parsed by one ``msgspec`` call into an envelope
of its type (tagged by ``eventType``, as :mod:`hivewire.events._envelope`'s) whose Table, Partition and Database
objects are typed too, by models generated here from the Thrift classes (:func:`_model`): gc-free structs of
exactly the fields the Thrift loaders check, never a Thrift object or an event. Only the columns' values are
read from them (:func:`hivewire.data._rows.object_columns`, the same code the per-event path runs).

Invariant: **the fast path yields a row only when the per-event path would yield the same row**, i.e. when
:func:`hivewire.apiary.decode` accepts the message and the loaders convert every object the row reads. The
models accept a subset of what the loaders accept (each field typed as the loader checks it; element nulls,
binary and floating-point fields and materialized views' metadata are refused outright), and every check of
:func:`hivewire.apiary.read` the envelope cannot express is made here or refused. Whatever the fast path
refuses (malformed or merely unusual messages) goes through the per-event path
(:func:`~hivewire.data._rows.slow_message_row`), which decides the row and the error as it always did.
``tests/unit/test_columnar.py`` checks the invariant with Table.equals on 200,000 messages, malformed included.

**Rows to columns** (:func:`batch`). Row tuples are transposed in C (``zip(*rows)``); scalar columns are one
``pyarrow.array`` call each, and nested ones (lists, structs) are flattened first, so pyarrow only ever
converts flat lists of strings, which it does far faster than lists of tuples. The binary ``raw`` column is
one ``bytes.join`` plus offsets.
"""

from __future__ import annotations

import functools
import operator
from array import array
from collections.abc import Sequence
from itertools import accumulate, chain
from typing import Annotated, Any, Literal, cast

import msgspec
from msgspec import Meta, Struct
from thrift.Thrift import TType

from hivewire.data._rows import KEY_ROLES, Message, Roles, envelope_row, object_columns, slow_message_row
from hivewire.data._schema import SCHEMA
from hivewire.errors import PrerequisiteError
from hivewire.events._apiary import MAX_MESSAGE_BYTES
from hivewire.events._description import EventSpec, Kind
from hivewire.events._event_type import EventType
from hivewire.events._thriftjson import ENUM_FIELDS
from hivewire.events._types import TYPES
from hivewire_thrift.hive_metastore.ttypes import CreationMetadata, Database, Partition, Table

try:
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - depends on the environment
    raise PrerequisiteError(
        "hivewire.arrow needs pyarrow, which is not installed: pip install 'hivewire[arrow]'"
    ) from e

# -- Models of the Thrift objects the columns read ---------------------------------------------------------

_BITS = {TType.BYTE: 8, TType.I16: 16, TType.I32: 32, TType.I64: 64}
# Structs whose presence sends a message to the per-event path: materialized views' metadata nests
# recursively, and the loaders cap its depth.
_REFUSED_STRUCTS = (CreationMetadata,)
_MODELS: dict[type, Any] = {}


class _SkewedLocation(Struct, gc=False):
    """One entry of SkewedInfo.skewedColValueLocationMaps in Apiary's list form."""

    key: list[str]
    value: str | None = None


def _whole(bits: int) -> Any:
    return Annotated[int, Meta(ge=-(1 << (bits - 1)), le=(1 << (bits - 1)) - 1)]


def _value_type(ttype: int, args: Any, owner: str, name: str | None) -> Any:
    """The msgspec type accepting a subset of what the loader of a Thrift value accepts; None: refuse any
    value but null (the per-event path decides)."""
    if ttype == TType.BOOL:
        return bool
    if ttype in _BITS:
        whole = _whole(_BITS[ttype])
        enum = ENUM_FIELDS.get((owner, name)) if name is not None else None
        if enum is not None:  # by name or by number, as the loaders take enums
            return Literal[tuple(enum._NAMES_TO_VALUES)] | whole
        return whole
    if ttype == TType.STRING:
        return None if args == "BINARY" else str
    if ttype == TType.STRUCT:
        return _model(args[0])
    if ttype in (TType.LIST, TType.SET):
        item = _value_type(args[0], args[1], owner, None)
        return None if item is None else list[item]  # type: ignore[valid-type]
    if ttype == TType.MAP:
        if (owner, name) == ("SkewedInfo", "skewedColValueLocationMaps"):
            return dict[str, str] | list[_SkewedLocation]
        value = _value_type(args[2], args[3], owner, None)
        return None if args[0] != TType.STRING or value is None else dict[str, value]  # type: ignore[valid-type]
    return None  # double: never in the objects the columns read


def _model(cls: type) -> Any:
    """The msgspec struct checking a Thrift class's JSON as its loader does (or more strictly); None: refused."""
    if cls in _REFUSED_STRUCTS:
        return None
    if cls not in _MODELS:
        _MODELS[cls] = None  # a struct nested in itself is refused
        fields = []
        for spec in cls.thrift_spec:  # type: ignore[attr-defined]
            if spec is None:
                continue
            _, ttype, name, args, _ = spec
            kind = _value_type(ttype, args, cls.__name__, name)
            fields.append((name, None if kind is None else kind | None, None))
        _MODELS[cls] = msgspec.defstruct(f"_{cls.__name__}", fields, gc=False, module=__name__)
    return _MODELS[cls]


class _Object(Struct, gc=False):
    """Any JSON object, not looked into (the objects no column reads, as :func:`hivewire.apiary.read` checks
    them)."""


# -- Envelopes ----------------------------------------------------------------------------------------------

_SCALARS: dict[Kind, Any] = {
    Kind.FLAG: bool,
    Kind.STRING: str,
    Kind.INT: int,
    Kind.INT_LIST: list[int],
    Kind.STRING_LIST: list[str],
    Kind.STRING_MAP: dict[str, str],
}


class _Envelope(Struct, tag_field="eventType", gc=False):
    databaseName: str | None = None
    status: bool | None = None
    parameters: dict[str, str] | None = None
    environmentContext: _Object | None = None


class _TableEnvelope(_Envelope):
    tableName: str | None = None


class _Plan:
    """What making a row from one event type's envelope needs."""

    __slots__ = ("database_event", "event_type", "log_only", "required", "roles")

    def __init__(self, spec: EventSpec) -> None:
        self.event_type: EventType = spec.event_type
        self.roles: Roles = KEY_ROLES[spec.event_type]
        self.database_event = spec.database_event
        self.log_only = spec.log_only
        # apiary.read refuses a message without these objects
        self.required = tuple(f.key for f in spec.fields if f.kind is Kind.STRUCT and f.required)


def _envelope(spec: EventSpec, wire: str) -> type[_Envelope]:
    fields = []
    for f in spec.fields:
        if f.kind is Kind.STRUCT or f.kind is Kind.STRUCT_LIST:
            model = _model(f.thrift) if f.thrift in (Table, Partition, Database) else _Object
            if model is None:
                raise TypeError(f"{f.thrift}: the columns read it, so it needs a model")
            kind = model if f.kind is Kind.STRUCT else list[model]  # type: ignore[valid-type]
        else:
            kind = _SCALARS[f.kind]
        fields.append((f.key, kind | None, None))
    base = _Envelope if spec.database_event else _TableEnvelope
    made = msgspec.defstruct(f"_{spec.class_name}Row", fields, bases=(base,), tag=wire, module=__name__)
    return cast("type[_Envelope]", made)


_PLANS: dict[type, _Plan] = {
    _envelope(spec, spec.wire): _Plan(spec) for spec in TYPES.values() if spec.wire is not None
}
_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder(functools.reduce(operator.or_, _PLANS))
_DECODE = _DECODER.decode


def fast_row(value: bytes, origin: Any) -> tuple[object, ...] | None:
    """The row of a message without making an event, or None when the per-event path must decide."""
    if type(value) is not bytes or len(value) > MAX_MESSAGE_BYTES:
        return None
    if not value.isascii():  # msgspec checks the UTF-8 of the strings it keeps only
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        env: Any = _DECODE(value)
    except (msgspec.DecodeError, RecursionError):
        return None
    plan = _PLANS[type(env)]
    for key in plan.required:
        if getattr(env, key) is None:
            return None
    db_name = env.databaseName
    table_name = None if plan.database_event else env.tableName
    if plan.log_only:
        db_name = db_name or ""
    elif db_name is None or (table_name is None and not plan.database_event):
        return None  # names from the objects, as older producers need: the per-event path knows how
    try:
        objects = object_columns(plan.roles, env)
    except Exception:  # whatever the event path does with this (it raises too), it does it itself
        return None
    parameters = env.parameters
    status = env.status
    return envelope_row(
        plan.event_type,
        db_name,
        table_name,
        db_name if table_name is None else f"{db_name}.{table_name}",
        True if status is None else status,
        origin,
        objects,
        {} if parameters is None else parameters,
        None,
        value,
    )


def message_row(message: Message, on_error: str) -> tuple[object, ...]:
    """The row of a raw message: the fast path's, else the per-event path's (see the module's invariant)."""
    origin, value = message
    if value is not None:
        row = fast_row(value, origin)
        if row is not None:
            return row
    return slow_message_row(message, on_error)


# -- Rows to columns ----------------------------------------------------------------------------------------

#: Rows per record batch by default. Small enough that a batch's Python rows stay in the CPU's caches: with
#: 65,536 rows to_arrow of raw messages took three times as long as with 4,096 (bench_arrow.py, 2026-11-28).
BATCH_ROWS = 4_096
_TYPES = tuple(field.type for field in SCHEMA)
_BINARY = pa.binary()
_MAX_OFFSET = (1 << 31) - 1


def batch(rows: list[tuple[object, ...]]) -> pa.RecordBatch:
    """One RecordBatch of :data:`SCHEMA` from row tuples."""
    columns = zip(*rows, strict=True) if rows else ((),) * len(_TYPES)
    arrays = [_array(values, type_) for values, type_ in zip(columns, _TYPES, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


def _array(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    n = len(values)
    nulls = values.count(None)
    if nulls == n:
        # Most of the ALTER-only columns: pyarrow's conversion of n Nones into a nested type costs as much as
        # real values.
        return pa.nulls(n, type_)
    if pa.types.is_list(type_):
        return _list_array(values, type_, nulls)
    if pa.types.is_struct(type_):
        return _struct_array(values, type_, nulls)
    if type_ == _BINARY:
        return _binary_array(values, nulls)
    return pa.array(values, type=type_)


def _mask(values: Sequence[Any], nulls: int) -> pa.Array | None:
    return pa.array([v is None for v in values], type=pa.bool_()) if nulls else None


def _list_array(values: Sequence[Any], type_: pa.ListType, nulls: int) -> pa.Array:
    if nulls:
        lengths: Any = (0 if v is None else len(v) for v in values)
        items = list(chain.from_iterable(v for v in values if v))
    else:  # all in C
        lengths = map(len, values)
        items = list(chain.from_iterable(values))
    offsets = array("i", accumulate(lengths, initial=0))
    return pa.ListArray.from_arrays(
        pa.Array.from_buffers(pa.int32(), len(offsets), [None, pa.py_buffer(offsets)]),
        _array(items, type_.value_type),
        type=type_,
        mask=_mask(values, nulls),
    )


def _struct_array(values: Sequence[Any], type_: pa.StructType, nulls: int) -> pa.Array:
    fields = list(type_)
    mask = _mask(values, nulls)
    if nulls:
        blank = (None,) * len(fields)
        values = [blank if v is None else v for v in values]
    children = [_array(column, f.type) for column, f in zip(zip(*values, strict=True), fields, strict=True)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


def _binary_array(values: Sequence[Any], nulls: int) -> pa.Array:
    offsets = array("i")
    try:
        offsets.extend(accumulate((0 if v is None else len(v) for v in values), initial=0))
    except OverflowError:  # more than 2 GiB in one batch: pyarrow splits it
        return pa.array(values, type=_BINARY)
    data = b"".join(v for v in values if v is not None)
    validity = pa.array([v is not None for v in values], type=pa.bool_()).buffers()[1] if nulls else None
    return pa.Array.from_buffers(
        _BINARY, len(values), [validity, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=nulls
    )
