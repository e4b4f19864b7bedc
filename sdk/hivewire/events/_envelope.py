"""The Apiary message of each event type: its envelope (one ``msgspec.Struct`` per type, derived from the event
types' description at import) and the message of an event, as :func:`to_json_dict` and :func:`encode` write it.

Decoding is :mod:`hivewire.events._apiary`'s; this module knows events only through their description and their
values, so the event model can write its own :meth:`~hivewire.events.ListenerEvent.to_dict` without importing
the decoder.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import Any, Protocol, TypeAlias, cast

import msgspec
from msgspec import Raw

from hivewire.errors import DecodeError, HivewireError
from hivewire.events._description import ENVIRONMENT, EventSpec, FieldSpec, Kind
from hivewire.events._event_type import EventType
from hivewire.events._thriftjson import dump_struct, parse_version
from hivewire.events._types import TYPES


class Writable(Protocol):
    """What the message writer reads of an event (:class:`~hivewire.events.ListenerEvent` is one): named here, so
    that the event model, which writes itself through this module, and this module do not import each other."""

    _values: dict[str, Any]
    _payload: Any

    @property
    def event_type(self) -> EventType: ...
    @property
    def db_name(self) -> str | None: ...
    @property
    def table_name(self) -> str | None: ...
    @property
    def qualified_name(self) -> str: ...
    @property
    def status(self) -> bool: ...
    @property
    def parameters(self) -> Mapping[str, str]: ...
    @property
    def hive_version(self) -> str | None: ...
    def _load(self, name: str) -> Any: ...


#: JSON data: what :func:`to_json_dict` returns.
JSON: TypeAlias = str | int | float | bool | list["JSON"] | dict[str, "JSON"] | None

# -- The envelope, one struct per event type ------------------------------------------------------------------
# Typed keys are checked while parsing; Thrift objects stay Raw (a slice of the message: empty when the key is
# missing, b"null" for null). Keys not declared (qualifiedTableName, newer ones) are skipped, syntax-checked.
# gc=False: an envelope holds only strings, flags, a dict of strings and Raw slices, so it is in no reference
# cycle; untracked, the events a slow listener has queued cost the cyclic garbage collector less.


class Envelope(msgspec.Struct, forbid_unknown_fields=False, tag_field="eventType", gc=False):
    """What every Apiary message has; each event type's envelope adds its own keys."""

    databaseName: str | None = None
    status: bool | None = None
    parameters: dict[str, str] | None = None
    environmentContext: Raw = Raw()


class TableEnvelope(Envelope):
    """The envelope of a table's event."""

    tableName: str | None = None


# How the envelope types each kind of key, and its default (a missing key).
_KEY_TYPES: Mapping[Kind, tuple[object, object]] = {
    Kind.STRUCT: (Raw, Raw()),
    Kind.STRUCT_LIST: (list[Raw] | None, None),
    Kind.FLAG: (bool | None, None),
    Kind.STRING: (str | None, None),
    Kind.INT: (int | None, None),
    Kind.INT_LIST: (list[int] | None, None),
    Kind.STRING_LIST: (list[str] | None, None),
    Kind.STRING_MAP: (dict[str, str] | None, None),
}


def _envelope(spec: EventSpec, wire: str) -> type[Envelope]:
    envelope = msgspec.defstruct(
        f"_{spec.class_name.removesuffix('Event')}",
        [(f.key, *_KEY_TYPES[f.kind]) for f in spec.fields],
        bases=(Envelope if spec.database_event else TableEnvelope,),
        tag=wire,
        module=__name__,
    )
    return cast("type[Envelope]", envelope)


#: The envelope of each event type Apiary carries.
ENVELOPES: Mapping[EventType, type[Envelope]] = {
    t: _envelope(spec, spec.wire) for t, spec in TYPES.items() if spec.wire is not None
}
#: Every envelope, tagged by ``eventType``: what a message decodes to.
ANY_ENVELOPE = functools.reduce(operator.or_, ENVELOPES.values())


def _tolerant(envelope: type[Envelope]) -> type[Envelope]:
    return cast(
        "type[Envelope]",
        msgspec.defstruct(
            f"{envelope.__name__}Nulls",
            [("parameters", dict[str, str | None] | None, None)],
            bases=(envelope,),
            module=__name__,
        ),
    )


#: The envelopes again, with null parameter values allowed: Apiary 5.0.x listeners wrote
#: ``"hive.metastore.uris": null`` when the metastore had no such setting. Tried only when a message fails
#: the strict ones, so the usual message pays nothing for them.
TOLERANT_ENVELOPES: Mapping[EventType, type[Envelope]] = {t: _tolerant(e) for t, e in ENVELOPES.items()}
ANY_TOLERANT_ENVELOPE = functools.reduce(operator.or_, TOLERANT_ENVELOPES.values())

_ENCODE = msgspec.json.Encoder().encode
_parse_any = msgspec.json.Decoder().decode
# The kinds as module globals: the encoder compares each key's kind, and a global is cheaper than Kind.X.
_STRUCT, _STRUCT_LIST, _FLAG, _STRING_LIST = Kind.STRUCT, Kind.STRUCT_LIST, Kind.FLAG, Kind.STRING_LIST
_INT_LIST, _STRING_MAP = Kind.INT_LIST, Kind.STRING_MAP


class _Writing:
    """What writing an event type's message needs: its ``eventType``, keys, and whether it names a database."""

    __slots__ = ("database_event", "keys", "wire_type")

    def __init__(self, spec: EventSpec, wire_type: str) -> None:
        self.wire_type = wire_type
        self.keys: tuple[FieldSpec, ...] = (ENVIRONMENT, *spec.fields)
        self.database_event = spec.database_event


_WRITING: Mapping[EventType, _Writing] = {
    t: _Writing(spec, spec.wire) for t, spec in TYPES.items() if spec.wire is not None
}


def _message(event: Writable, hive_version: str | None) -> dict[str, Any]:
    """The Apiary message of ``event``; never-converted objects are the payload's own values (shared)."""
    version = parse_version(hive_version or event.hive_version)
    # Asked for another Hive version's field set: objects still in their wire form are converted and written
    # with that version's fields, not passed through with the fields they arrived with.
    passthrough = hive_version is None or version == parse_version(event.hive_version)
    writing = _WRITING.get(event.event_type)
    if writing is None:
        raise HivewireError(
            f"{event.event_type.value} events have no Apiary message form: write them another way (to_dict is "
            "the Apiary message)"
        )
    out: dict[str, Any] = {
        "eventType": writing.wire_type,
        "databaseName": event.db_name,
        "tableName": event.table_name,
        "qualifiedTableName": event.db_name if writing.database_event else event.qualified_name,
        "status": event.status,
        "parameters": dict(event.parameters),
    }
    values, payload = event._values, event._payload
    for k in writing.keys:
        kind = k.kind
        value: Any
        if k.name in values or (not passthrough and (kind is _STRUCT or kind is _STRUCT_LIST)):
            value = values[k.name] if k.name in values else event._load(k.name)
            if value is None:
                value = False if kind is _FLAG else None
            elif kind is _STRUCT:
                value = dump_struct(value, version)
            elif kind is _STRUCT_LIST:
                value = [None if v is None else dump_struct(v, version) for v in value]
            elif kind is _FLAG:
                value = bool(value)
            elif kind is _STRING_LIST or kind is _INT_LIST:
                value = list(value)
            elif kind is _STRING_MAP:
                value = dict(value)
        elif isinstance(payload, Envelope):
            value = getattr(payload, k.key)
            if kind is _FLAG:
                value = bool(value)
            elif kind is _STRUCT and not value:  # a missing key
                value = None
        else:
            value = False if kind is _FLAG else None
        out[k.key] = value
    return out


def to_json_dict(event: Writable, hive_version: str | None = None) -> dict[str, JSON]:
    """The Apiary message of ``event`` as JSON-ready data (what :func:`encode` serialises), yours to change.

    Objects that were never converted are written back from the payload they came in unchanged, so
    fields this hivewire does not know survive a decode/encode round trip.
    """
    try:
        copied: dict[str, JSON] = _parse_any(_ENCODE(_message(event, hive_version)))
    except RecursionError:
        raise DecodeError(f"{event.qualified_name}: the message nests too deeply to copy") from None
    except msgspec.DecodeError as e:  # a number out of range in a payload object
        raise DecodeError(f"{event.qualified_name}: {e}") from None
    return copied


def encode(event: Writable, *, hive_version: str | None = None) -> bytes:
    """Serialise ``event`` as the Apiary Kafka listener's JSON (UTF-8 bytes).

    ``hive_version`` (``"2.3.9"``, ``"3.1.3"``, ``"4.0.1"``) selects the Thrift fields written, as the
    Java listener of that version writes them; by default the event's ``hive.version`` parameter decides,
    and without one every field hivewire knows is written. An event that was decoded encodes or raises
    :class:`~hivewire.errors.DecodeError` (an object that does not convert); one built in Python raises
    ``ValueError`` for a NaN or infinite double or a string that is not valid Unicode.
    """
    try:
        return _ENCODE(_message(event, hive_version))
    except RecursionError:
        raise DecodeError(f"{event.qualified_name}: the message nests too deeply to encode") from None
