"""The Apiary Kafka metastore listener's JSON message format: :func:`decode`, :func:`encode`, :func:`partition_for`.

The format is what ExpediaGroup's ``KafkaMetaStoreEventListener`` writes with ``JsonMetaStoreEventSerDe``
(Jackson): an envelope (``eventType`` such as ``"ON_CREATE_TABLE"``, ``databaseName``, ``tableName``,
``qualifiedTableName``, ``status``, ``parameters``, ``environmentContext``) plus per-type keys holding
Thrift objects serialised by field *name* (:mod:`hivewire.events._thriftjson` converts those).

:func:`decode` parses the message with msgspec into a typed envelope, one ``msgspec.Struct`` per event type
(tagged by ``eventType``): that checks the JSON syntax of the whole message and the envelope's types in one
pass, and leaves each Thrift object as a raw slice of the message, parsed and converted when a listener
first reads it. A listener that reads only names pays for little more than the syntax check. :func:`read`
does the same checks and stops before the event: the runtime routes on its :class:`Decoded` and makes each
listener its own event from it. Unknown keys (newer Hive fields) are ignored; known keys may be missing or
``null``. A malformed object raises :class:`~hivewire.errors.DecodeError` on access, naming the path of the
bad value (``table.sd.cols[2].name: expected a string, got 5``).

Encoding writes the field set of the Hive version in the event's ``hive.version`` parameter (2.3, 3.x or
4.x, as the Java listener built against that version would), or of ``hive_version`` when given, or every
field hivewire knows without either. Objects that were never converted are written back from the payload
byte for byte. Database events are not part of Apiary's format; hivewire writes them as
``ON_CREATE_DATABASE``, ``ON_ALTER_DATABASE`` and ``ON_DROP_DATABASE`` with ``database`` / ``oldDatabase`` /
``newDatabase``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import Raw

from hivewire.errors import DecodeError
from hivewire.events._description import ENVIRONMENT, EventSpec, FieldSpec, Kind
from hivewire.events._envelope import (
    ANY_ENVELOPE,
    ANY_TOLERANT_ENVELOPE,
    ENVELOPES,
    TOLERANT_ENVELOPES,
    Envelope,
    encode,
    to_json_dict,
)
from hivewire.events._event import ListenerEvent, Loader, Origin
from hivewire.events._event_type import EventType
from hivewire.events._model import EVENT_CLASSES
from hivewire.events._thriftjson import decode_error, shown, struct_loader
from hivewire.events._types import TYPES

if TYPE_CHECKING:
    from hivewire.metastore import MetastoreClient

__all__ = [
    "MAX_MESSAGE_BYTES",
    "Decoded",
    "decode",
    "encode",
    "java_string_hash",
    "partition_for",
    "read",
    "to_json_dict",
]

#: Messages larger than this are refused with DecodeError instead of being parsed.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

_DECODER = msgspec.json.Decoder(ANY_ENVELOPE)
_TOLERANT_DECODER = msgspec.json.Decoder(ANY_TOLERANT_ENVELOPE)
_parse_any = msgspec.json.Decoder().decode
_first_byte = struct.Struct("c").unpack_from
_NO_PARAMETERS: dict[str, str] = {}  # shared by events without parameters; events never change theirs


def _parse(raw: Raw, where: str) -> Any:
    """The JSON value of a raw slice of a decoded message (its syntax is already known to be valid)."""
    try:
        return _parse_any(raw)
    except RecursionError:
        raise DecodeError(f"{where}: nested too deeply") from None
    except msgspec.DecodeError as e:  # a number out of range
        reason = str(e)
        raise DecodeError(f"{where}: {reason[:1].lower()}{reason[1:]}") from None


def _loader(k: FieldSpec) -> Loader:
    """How the event field of ``k`` is made from the envelope, on first access."""
    key = k.key
    if k.kind is Kind.STRUCT or k.kind is Kind.STRUCT_LIST:
        if k.thrift is None:
            raise TypeError(f"{k.name}: a field of Thrift objects needs its Thrift class (idl/events.toml)")
        load = struct_loader(k.thrift)
    if k.kind is Kind.STRUCT:

        def struct_value(env: Any) -> Any:
            raw = getattr(env, key)
            if not raw:
                return None
            value = _parse(raw, key)
            return None if value is None else load(value, key)

        return struct_value
    if k.kind is Kind.STRUCT_LIST:

        def struct_list(env: Any) -> Any:
            raws = getattr(env, key)
            if raws is None:
                return None
            return [load(_parse(raw, f"{key}[{i}]"), f"{key}[{i}]") for i, raw in enumerate(raws)]

        return struct_list
    if k.kind is Kind.FLAG or k.kind is Kind.STRING or k.kind is Kind.INT:
        return lambda env: getattr(env, key)

    def copied(env: Any) -> Any:  # a list or map of strings: each reader gets its own
        value = getattr(env, key)
        return None if value is None else value.copy()

    return copied


class _Spec:
    """What decoding needs to know about one event type (from its description)."""

    __slots__ = (
        "checked",
        "cls",
        "event_type",
        "is_database_event",
        "keys",
        "loaders",
        "log_only",
        "names_key",
        "wire_type",
    )

    def __init__(self, spec: EventSpec, wire_type: str) -> None:
        self.event_type = spec.event_type
        self.cls = EVENT_CLASSES[spec.event_type]
        self.wire_type = wire_type
        self.keys = (ENVIRONMENT, *spec.fields)
        self.loaders: Mapping[str, Loader] = {k.name: _loader(k) for k in self.keys}
        # The Raw keys, checked at decode: (key, required, is a list)
        self.checked = tuple(
            (k.key, k.required, k.kind is Kind.STRUCT_LIST)
            for k in spec.fields
            if k.kind is Kind.STRUCT or k.kind is Kind.STRUCT_LIST
        )
        # The key of the object the names come from when the envelope lacks them (older producers).
        self.names_key = spec.field(spec.names_from).key if spec.names_from else None
        self.is_database_event = spec.database_event
        self.log_only = spec.log_only


_SPECS: dict[type[Envelope], _Spec] = {
    envelope: _Spec(TYPES[t], wire)
    for envelopes in (ENVELOPES, TOLERANT_ENVELOPES)
    for t, envelope in envelopes.items()
    if (wire := TYPES[t].wire) is not None
}
_BY_WIRE_TYPE: dict[str, _Spec] = {spec.wire_type: spec for spec in _SPECS.values()}


# -- Decoding -------------------------------------------------------------------------------------------------


def _as_bytes(data: Any) -> bytes:
    if isinstance(data, str):
        try:
            return data.encode("utf-8")
        except UnicodeEncodeError as e:
            raise DecodeError(f"not UTF-8: {e.reason} at character {e.start}") from None
    if isinstance(data, (bytearray, memoryview)):
        if memoryview(data).nbytes > MAX_MESSAGE_BYTES:
            raise DecodeError(f"message is {memoryview(data).nbytes} bytes, above the {MAX_MESSAGE_BYTES}-byte limit")
        return bytes(data)
    if isinstance(data, bytes):
        return bytes(data)
    if data is None:  # a Kafka tombstone, or a record without a value
        raise DecodeError("empty message (null value)")
    raise DecodeError(f"not a message: decode() takes bytes or str, not {type(data).__name__}")


class Decoded(msgspec.Struct, frozen=True, gc=False):
    """A message decoded as far as routing needs (:func:`read`); :meth:`event` makes its event.

    Immutable and shared: every event made from it converts its own objects from the same payload. Never
    tracked by the cyclic garbage collector (it holds strings, a dict of strings and the payload, so it is in
    no reference cycle): a backlog of them costs the collector nothing, unlike a backlog of events.
    """

    event_type: EventType
    db_name: str
    table_name: str | None
    status: bool
    parameters: dict[str, str]
    raw: bytes
    payload: Envelope
    spec: _Spec

    @property
    def qualified_name(self) -> str:
        """``db.table`` (just ``db`` for database events), as :attr:`ListenerEvent.qualified_name`."""
        return self.db_name if self.table_name is None else f"{self.db_name}.{self.table_name}"

    def event(self, origin: Origin | None = None, handler: MetastoreClient | None = None) -> ListenerEvent:
        """A new event of this message (its objects are converted on first access)."""
        return self.spec.cls._lazy(
            self.db_name,
            self.table_name,
            self.status,
            self.parameters,
            self.payload,
            self.spec.loaders,
            self.raw,
            origin,
            handler,
        )


def decode(data: bytes | bytearray | memoryview | str, *, origin: Origin | None = None) -> ListenerEvent:
    """Decode one Apiary Kafka message value into an event.

    Raises :class:`~hivewire.errors.DecodeError` (and nothing else) when the message is not UTF-8 JSON (or
    not bytes or str at all, such as a tombstone's None), not an object, too large, has an unknown
    ``eventType``, misses a required field or has a field of the wrong type. The event's Thrift objects are
    converted on first access; a malformed one raises DecodeError then.
    """
    return read(data).event(origin)


def read(data: bytes | bytearray | memoryview | str) -> Decoded:
    """Check a message as :func:`decode` does, without making the event yet (the runtime routes on this)."""
    if type(data) is not bytes:
        data = _as_bytes(data)
    if len(data) > MAX_MESSAGE_BYTES:
        raise DecodeError(f"message is {len(data)} bytes, above the {MAX_MESSAGE_BYTES}-byte limit")
    if not data.isascii():  # msgspec checks the UTF-8 of the strings it builds, not of those it skips
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(f"not UTF-8: {e.reason} at byte {e.start}") from None
    try:
        env: Any = _DECODER.decode(data)  # one of the ENVELOPES (table envelopes have tableName)
    except msgspec.ValidationError as e:
        env = _with_null_parameters(data, e)
    except msgspec.DecodeError as e:
        raise _not_json(data, e) from None
    except RecursionError:
        raise DecodeError("not JSON: nested too deeply") from None
    spec = _SPECS[type(env)]
    for key, required, is_list in spec.checked:
        raw = getattr(env, key)
        if is_list:
            if raw is not None:
                for i, item in enumerate(raw):
                    if _first_byte(item)[0] != b"{":
                        raise decode_error(f"{key}[{i}]", "an object", _parse(item, f"{key}[{i}]"))
        elif not raw or (first := _first_byte(raw)[0]) == b"n":  # missing or null
            if required:
                raise DecodeError(f"{spec.wire_type} message has no {key}")
        elif first != b"{":
            raise decode_error(key, "an object", _parse(raw, key))
    context = env.environmentContext
    if context and _first_byte(context)[0] not in b"{n":
        raise decode_error("environmentContext", "an object", _parse(context, "environmentContext"))
    db_name = env.databaseName
    table_name = None if spec.is_database_event else env.tableName
    if spec.log_only:  # a log entry may name no database (transactions, catalogs) or table
        db_name = db_name or ""
    elif db_name is None or (table_name is None and not spec.is_database_event):
        db_name, table_name = _names_from_object(env, spec, db_name, table_name)
    status = env.status
    parameters = env.parameters
    return Decoded(
        spec.event_type,
        db_name,
        table_name,
        True if status is None else status,
        _NO_PARAMETERS if parameters is None else parameters,
        data,
        env,
        spec,
    )


def _names_from_object(env: Any, spec: _Spec, db_name: str | None, table_name: str | None) -> tuple[str, str | None]:
    """Names an older producer left out of the envelope, from the event's main object."""
    key = spec.names_key
    raw = getattr(env, key) if key else None
    main = _parse(raw, key) if key and raw else None
    if type(main) is dict:
        if db_name is None:
            db_name = main.get("name" if spec.is_database_event else "dbName")
        if table_name is None and not spec.is_database_event:
            table_name = main.get("tableName")
    if type(db_name) is not str:
        raise (
            DecodeError(f"{spec.wire_type} message has no databaseName")
            if db_name is None
            else decode_error("databaseName", "a string", db_name)
        )
    if not spec.is_database_event and type(table_name) is not str:
        raise (
            DecodeError(f"{spec.wire_type} message has no tableName")
            if table_name is None
            else decode_error("tableName", "a string", table_name)
        )
    return db_name, table_name


# A \u escape of a high surrogate not followed by one of a low surrogate (msgspec reports it as truncation).
_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])").search


def _not_json(data: bytes, error: msgspec.DecodeError) -> DecodeError:
    reason = str(error)
    if "truncated" in reason and _LONE_SURROGATE(data):
        reason = "a \\u escape encodes a lone UTF-16 surrogate"
    return DecodeError(f"not JSON: {reason[:200]}")


def _with_null_parameters(data: bytes, error: msgspec.ValidationError) -> Any:
    """The envelope of a message with null parameter values (Apiary 5.0.x: a setting the metastore did not
    have), those parameters left out as absent; else the DecodeError that explains ``error``."""
    try:
        env: Any = _TOLERANT_DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise _explain(data, error) from None
    if env.parameters is not None:
        env.parameters = {k: v for k, v in env.parameters.items() if v is not None}
    return env


def _explain(data: bytes, error: msgspec.ValidationError) -> DecodeError:
    """Why a message failed the envelope's types, naming the key and showing the value (the error path only)."""
    try:
        msg = _parse_any(data)
    except msgspec.DecodeError as e:  # the typed decode stopped at a type error before reaching this
        return _not_json(data, e)
    except RecursionError:
        return DecodeError("not JSON: nested too deeply")
    if type(msg) is not dict:
        return decode_error("message", "a JSON object", msg)
    wire_type = msg.get("eventType")
    spec = _BY_WIRE_TYPE.get(wire_type) if type(wire_type) is str else None
    if spec is None:
        known = ", ".join(sorted(w for w, s in _BY_WIRE_TYPE.items() if not s.log_only))
        return DecodeError(
            "missing eventType" if wire_type is None else f"unknown eventType {shown(wire_type)} (Apiary's are {known})"
        )
    checks: list[tuple[str, Kind | None]] = [(k.key, k.kind) for k in spec.keys if k.kind is not Kind.STRUCT]
    checks += [("databaseName", None), ("status", Kind.FLAG), ("parameters", Kind.STRING_MAP)]
    if not spec.is_database_event:
        checks.append(("tableName", None))
    for key, kind in checks:
        value = msg.get(key)
        if value is None:
            continue
        if kind is None and type(value) is not str:
            return decode_error(key, "a string", value)
        if kind is Kind.FLAG and type(value) is not bool:
            return decode_error(key, "true or false", value)
        if kind is Kind.STRING and type(value) is not str:
            return decode_error(key, "a string", value)
        if kind is Kind.INT and type(value) is not int:
            return decode_error(key, "a whole number", value)
        if kind is Kind.INT_LIST:
            if type(value) is not list:
                return decode_error(key, "a list of whole numbers", value)
            for i, item in enumerate(value):
                if type(item) is not int:
                    return decode_error(f"{key}[{i}]", "a whole number", item)
        if kind is Kind.STRUCT_LIST and type(value) is not list:
            return decode_error(key, "a list", value)
        if kind is Kind.STRING_LIST:
            if type(value) is not list:
                return decode_error(key, "a list of strings", value)
            for i, item in enumerate(value):
                if type(item) is not str:
                    return decode_error(f"{key}[{i}]", "a string", item)
        if kind is Kind.STRING_MAP:
            if type(value) is not dict:
                return decode_error(key, "an object of strings", value)
            for name, item in value.items():
                if type(item) is not str:
                    return decode_error(f"{key}[{name!r}]", "a string", item)
    return DecodeError(f"malformed message: {error}")  # not foreseen above; msgspec's reason names the path


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
