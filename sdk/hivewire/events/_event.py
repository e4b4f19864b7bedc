"""The base of every event (:class:`ListenerEvent`), where events come from (:class:`Origin`), and their fields.

The event classes themselves are generated from ``idl/events.toml`` into :mod:`hivewire.events._model`.

Events are immutable values: equal when their content is equal (the raw payload, Kafka coordinates and
handler do not take part), with a readable ``repr`` and a JSON-ready :meth:`~ListenerEvent.to_dict`.

Decoders build events lazily: the Thrift objects are converted from the payload on first access
(``hivewire.apiary`` does this), so a listener that reads only ``db_name`` and ``table_name`` never pays
for the table. A malformed object then raises :class:`~hivewire.errors.DecodeError` on access.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, TypeVar, cast, overload

from hivewire.errors import DecodeError
from hivewire.events._envelope import JSON, to_json_dict
from hivewire.events._event_type import EventType
from hivewire_thrift.hive_metastore.ttypes import EnvironmentContext

if TYPE_CHECKING:
    from typing_extensions import Self

    from hivewire.metastore import MetastoreClient


class Origin(NamedTuple):
    """Where an event was read from: Kafka topic, partition, offset and record timestamp (ms).

    A named tuple, because the runtime makes one per record and a tuple is the cheapest immutable value.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None

    def __str__(self) -> str:
        return f"{self.topic}/{self.partition}@{self.offset}"


# A loader makes one field's value (a Thrift object, a list of them, ...) from the decoder's payload, on first
# access. Decoders share one mapping of loaders per event type; an event built in Python holds its values directly.
Loader = Callable[[Any], object]
#: What an event shows in a notebook (:meth:`ListenerEvent._repr_html_`): facts by name, strings or lists of them.
Facts = dict[str, "str | list[str]"]
_E = TypeVar("_E", bound="ListenerEvent")
_T = TypeVar("_T")
_MISSING: Any = object()
_NO_LOADERS: Mapping[str, Loader] = MappingProxyType({})
_new = object.__new__


class Field(Generic[_T]):
    """One of an event's own values (``table``, ``partitions``, ...): held, or loaded on first access.

    An unset value reads as None. Reading is the decode and dispatch hot path, so each kind of field has its
    own ``__get__`` with the lookup written out.
    """

    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, event: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, event: ListenerEvent, owner: type | None = None) -> _T: ...
    def __get__(self, event: ListenerEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = event._values.get(self.name, _MISSING)
        return event._load(self.name) if value is _MISSING else value


class ListField(Field[list[_T]]):
    """A list field: an unset value reads as a new empty list."""

    __slots__ = ()

    @overload
    def __get__(self, event: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, event: ListenerEvent, owner: type | None = None) -> list[_T]: ...
    def __get__(self, event: ListenerEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = event._values.get(self.name, _MISSING)
        if value is _MISSING:
            value = event._load(self.name)
        return [] if value is None else value


class MapField(Field[dict[str, str]]):
    """A map of strings: an unset value reads as a new empty dict."""

    __slots__ = ()

    @overload
    def __get__(self, event: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, event: ListenerEvent, owner: type | None = None) -> dict[str, str]: ...
    def __get__(self, event: ListenerEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = event._values.get(self.name, _MISSING)
        if value is _MISSING:
            value = event._load(self.name)
        return {} if value is None else value


class FlagField(Field[bool]):
    """A flag: an unset value reads as False."""

    __slots__ = ()

    @overload
    def __get__(self, event: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, event: ListenerEvent, owner: type | None = None) -> bool: ...
    def __get__(self, event: ListenerEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = event._values.get(self.name, _MISSING)
        if value is _MISSING:
            value = event._load(self.name)
        return bool(value)


class ListenerEvent:
    """Base of every event: what Hive's ``ListenerEvent`` offers, plus where the event came from.

    ``db_name``, ``table_name`` (None for database events), ``status`` (did the metastore operation
    succeed), ``parameters`` (read-only; Apiary adds ``hive.version``), ``environment_context``,
    ``handler`` (a live :class:`~hivewire.metastore.MetastoreClient`, the counterpart of Java's
    ``getIHMSHandler()``, or None outside a runtime with a metastore), ``raw`` (the wire payload, bytes)
    and ``origin`` (:class:`Origin` when read from Kafka).
    """

    event_type: ClassVar[EventType]
    #: The event's own value fields, in the order of Hive's accessors.
    fields: ClassVar[tuple[str, ...]] = ()
    #: Which field names the event's database and table, and whether it is a ``"table"`` or ``"database"``.
    names_from: ClassVar[tuple[str, str] | None] = None

    __slots__ = (
        "_db_name",
        "_handler",
        "_loaders",
        "_origin",
        "_parameters",
        "_payload",
        "_raw",
        "_status",
        "_table_name",
        "_values",
    )
    _db_name: str | None
    _table_name: str | None
    _status: bool
    _parameters: dict[str, str]  # never changed after construction; handed out read-only
    _values: dict[str, Any]  # values held directly, and those loaded so far
    _loaders: Mapping[str, Loader]  # shared by every event of a decoder's type
    _payload: Any  # what the loaders read (an Apiary envelope), None for events built in Python
    _raw: bytes | None
    _origin: Origin | None
    _handler: MetastoreClient | None

    def __init__(
        self,
        *,
        db_name: str | None = None,
        table_name: str | None = None,
        status: bool = True,
        parameters: Mapping[str, str] | None = None,
        environment_context: EnvironmentContext | None = None,
        raw: bytes | None = None,
        origin: Origin | None = None,
        **values: object,
    ) -> None:
        unknown = set(values) - set(self.fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(unknown)}; it has {self.fields}")
        values["environment_context"] = environment_context
        derived_db, derived_table = self._names_from(values)
        _set = object.__setattr__
        _set(self, "_db_name", db_name if db_name is not None else derived_db)
        _set(self, "_table_name", table_name if table_name is not None else derived_table)
        _set(self, "_status", bool(status))
        _set(self, "_parameters", dict(parameters or {}))
        _set(self, "_values", values)
        _set(self, "_loaders", _NO_LOADERS)
        _set(self, "_payload", None)
        _set(self, "_raw", raw)
        _set(self, "_origin", origin)
        _set(self, "_handler", None)

    @classmethod
    def _lazy(
        cls: type[_E],
        db_name: str | None,
        table_name: str | None,
        status: bool,
        parameters: dict[str, str],
        payload: object,
        loaders: Mapping[str, Loader],
        raw: bytes | None,
        origin: Origin | None,
        handler: MetastoreClient | None = None,
    ) -> _E:
        """A decoder's event: the fields in ``loaders`` are made from ``payload`` on first access.

        The decoder's fast path: nothing is copied, so ``parameters`` must not change afterwards.
        """
        event = _new(_Building)
        event._db_name = db_name
        event._table_name = table_name
        event._status = status
        event._parameters = parameters
        event._values = {}
        event._loaders = loaders
        event._payload = payload
        event._raw = raw
        event._origin = origin
        event._handler = handler
        return _become(event, cls)

    def _names_from(self, values: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """The database and table names implied by the event's objects (see :attr:`names_from`)."""
        if self.names_from is None:
            return None, None
        field, kind = self.names_from
        obj = values.get(field)
        if obj is None:
            return None, None
        return (obj.dbName, obj.tableName) if kind == "table" else (obj.name, None)

    def _load(self, name: str) -> Any:
        """A field not held yet: made by its loader (and kept), or None."""
        loader = self._loaders.get(name)
        if loader is None:
            return None
        value = loader(self._payload)
        self._values[name] = value
        return value

    # -- common accessors -----------------------------------------------------------------------------
    @property
    def db_name(self) -> str | None:
        return self._db_name

    @property
    def table_name(self) -> str | None:
        return self._table_name

    @property
    def qualified_name(self) -> str:
        """``db.table`` (just ``db`` for database events)."""
        return self._db_name or "" if self._table_name is None else f"{self._db_name}.{self._table_name}"

    @property
    def status(self) -> bool:
        return self._status

    @property
    def parameters(self) -> Mapping[str, str]:
        return MappingProxyType(self._parameters)

    @property
    def environment_context(self) -> EnvironmentContext | None:
        """The client's ``EnvironmentContext`` of the call, or None."""
        value = self._values.get("environment_context", _MISSING)
        return cast("EnvironmentContext | None", self._load("environment_context") if value is _MISSING else value)

    @property
    def hive_version(self) -> str | None:
        """The metastore's Hive version, from the ``hive.version`` parameter Apiary adds."""
        return self._parameters.get("hive.version")

    @property
    def raw(self) -> bytes | None:
        return self._raw

    @property
    def origin(self) -> Origin | None:
        return self._origin

    @property
    def handler(self) -> MetastoreClient | None:
        return self._handler

    # -- copies ---------------------------------------------------------------------------------------
    def copy(
        self, *, handler: MetastoreClient | object | None = _MISSING, origin: Origin | object | None = _MISSING
    ) -> Self:
        """A copy that shares the payload but not converted objects (so listeners cannot affect each other).

        Optionally bind a ``handler`` or set the ``origin``.
        """
        new = _new(_Building)
        new._db_name = self._db_name
        new._table_name = self._table_name
        new._status = self._status
        new._parameters = self._parameters
        # Values already loaded are dropped: they are made again from the (shared, never mutated) payload. The
        # others (values of events built in Python, the fetched insert table) are copied.
        loaders = self._loaders
        new._values = {k: _clone(v) for k, v in self._values.items() if k not in loaders} if self._values else {}
        new._loaders = loaders
        new._payload = self._payload
        new._raw = self._raw
        new._origin = self._origin if origin is _MISSING else cast("Origin | None", origin)
        new._handler = self._handler if handler is _MISSING else cast("MetastoreClient | None", handler)
        return _become(new, type(self))

    # -- value semantics ------------------------------------------------------------------------------
    def _key(self) -> tuple[object, ...]:
        return (
            self.event_type,
            self._db_name,
            self._table_name,
            self._status,
            dict(self._parameters),
            self.environment_context,
            *(getattr(self, f) for f in self.fields),
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ListenerEvent)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.event_type, self._db_name, self._table_name, self._status))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .copy() or build a new event")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .copy() or build a new event")

    def __repr__(self) -> str:
        where = f" at {self._origin}" if self._origin else ""
        status = "" if self._status else ", status=False"
        return f"{type(self).__name__}({self.qualified_name}{status}{where})"

    def to_dict(self) -> dict[str, JSON]:
        """The event as plain JSON-ready data, in the Apiary message shape (yours to change)."""
        return to_json_dict(self)

    def _repr_html_(self) -> str:
        """A compact HTML table for notebooks: what changed, where, and the key facts."""
        rows = [("event", self.event_type.value), ("object", self.qualified_name), ("status", str(self._status))]
        if self._origin:
            rows.append(("origin", str(self._origin)))
        try:
            summary = self._summary()
        except DecodeError as e:
            summary = {"error": str(e)}
        rows += [(k, ", ".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in summary.items()]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows
        )
        return f"<table class='hivewire-event'>{body}</table>"

    def _summary(self) -> Facts:
        """Type-specific facts for display (locations, partition values, ...): strings, or lists of them."""
        return {}


class _Building(ListenerEvent):
    """An event being assembled: the same layout, but assignable. Its ``__class__`` is then set to the real one.

    Assigning slots this way is much cheaper than ``object.__setattr__`` per slot, which matters on the
    decoder's and ``copy()``'s hot path.
    """

    __slots__ = ()
    __setattr__ = object.__setattr__  # type: ignore[assignment]
    __delattr__ = object.__delattr__  # both, or neither is the C slot


def _become(event: _Building, cls: type[_E]) -> _E:
    """``event``, now of class ``cls``."""
    try:
        event.__class__ = cls  # type: ignore[assignment]
    except TypeError:  # a subclass with a layout of its own (a __dict__, more slots): copy the slots over
        real = cls.__new__(cls)
        for slot in ListenerEvent.__slots__:
            object.__setattr__(real, slot, getattr(event, slot))
        return real
    return cast(_E, event)


_ATOMS = frozenset({str, int, float, bool, bytes, type(None)})


def _clone(value: Any) -> Any:
    """A deep copy of an event value: Thrift objects, lists, maps and sets of them, or plain values."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is list:
        return [_clone(v) for v in value]
    if kind is dict:
        return {k: _clone(v) for k, v in value.items()}
    if kind is set:
        return {_clone(v) for v in value}
    if getattr(kind, "thrift_spec", None) is not None:  # a generated Thrift struct: copy its fields
        new = object.__new__(kind)
        new.__dict__.update({k: _clone(v) for k, v in value.__dict__.items()})
        return new
    return copy.deepcopy(value)
