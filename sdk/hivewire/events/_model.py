"""The event model: one typed event per metastore change, whatever wire format it arrived in.

Names follow Hive's ``MetaStoreEventListener`` API in snake case (``CreateTableEvent.table``,
``AlterTableEvent.old_table``, ...). Table, Partition, Database and EnvironmentContext values are the
generated ``hivewire_thrift`` types.

Events are immutable values: equal when their content is equal (the raw payload, Kafka coordinates and
handler do not take part), with a readable ``repr`` and a JSON-ready :meth:`~ListenerEvent.to_dict`.

Decoders build events lazily: the Thrift objects are converted from the payload on first access
(``hivewire.apiary`` does this), so a listener that reads only ``db_name`` and ``table_name`` never pays
for the table. A malformed object then raises :class:`~hivewire.errors.DecodeError` on access.
"""

from __future__ import annotations

import copy
import enum
import html
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar, cast

from hivewire.errors import DecodeError, HivewireError

if TYPE_CHECKING:
    from hivewire.metastore import MetastoreClient


class EventType(str, enum.Enum):
    """The metastore change an event reports (the names of Hive's ``EventMessage.EventType``)."""

    CREATE_TABLE = "CREATE_TABLE"
    ALTER_TABLE = "ALTER_TABLE"
    DROP_TABLE = "DROP_TABLE"
    ADD_PARTITION = "ADD_PARTITION"
    ALTER_PARTITION = "ALTER_PARTITION"
    DROP_PARTITION = "DROP_PARTITION"
    INSERT = "INSERT"
    CREATE_DATABASE = "CREATE_DATABASE"
    ALTER_DATABASE = "ALTER_DATABASE"
    DROP_DATABASE = "DROP_DATABASE"

    def __str__(self) -> str:
        return self.value


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
Loader = Callable[[Any], Any]
_E = TypeVar("_E", bound="ListenerEvent")
_MISSING = object()
_NO_LOADERS: Mapping[str, Loader] = MappingProxyType({})
_new = object.__new__


class _Field:
    """One of an event's own values (``table``, ``partitions``, ...), read through ``ListenerEvent._get``.

    An unset value reads as ``empty()`` when given (``[]`` for lists) and goes through ``kind`` when given.
    """

    __slots__ = ("empty", "kind", "name")

    def __init__(self, *, empty: Callable[[], Any] | None = None, kind: Callable[[Any], Any] | None = None) -> None:
        self.empty = empty
        self.kind = kind
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, event: ListenerEvent | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = event._get(self.name)
        if value is None and self.empty is not None:
            return self.empty()
        return value if self.kind is None else self.kind(value)


class ListenerEvent:
    """Base of every event: what Hive's ``ListenerEvent`` offers, plus where the event came from.

    ``db_name``, ``table_name`` (None for database events), ``status`` (did the metastore operation
    succeed), ``parameters`` (read-only; Apiary adds ``hive.version``), ``environment_context``,
    ``handler`` (a live :class:`~hivewire.metastore.MetastoreClient`, the counterpart of Java's
    ``getIHMSHandler()``, or None outside a runtime with a metastore), ``raw`` (the wire payload, bytes)
    and ``origin`` (:class:`Origin` when read from Kafka).
    """

    event_type: ClassVar[EventType]
    #: The event's own value fields, in the order of Hive's accessors (its ``_Field`` attributes).
    fields: ClassVar[tuple[str, ...]] = ()
    #: Which field names the event's database and table, and whether it is a ``"table"`` or ``"database"``.
    names_from: ClassVar[tuple[str, str] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = tuple(name for name, value in vars(cls).items() if isinstance(value, _Field))
        if own:
            cls.fields = own

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
        environment_context: Any = None,
        raw: bytes | None = None,
        origin: Origin | None = None,
        **values: Any,
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
        payload: Any,
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

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        """The database and table names implied by the event's objects (see :attr:`names_from`)."""
        if self.names_from is None:
            return None, None
        field, kind = self.names_from
        obj = values.get(field)
        if obj is None:
            return None, None
        return (obj.dbName, obj.tableName) if kind == "table" else (obj.name, None)

    def _get(self, name: str) -> Any:
        value = self._values.get(name, _MISSING)
        if value is _MISSING:
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
    def environment_context(self) -> Any:
        return self._get("environment_context")

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
        self: _E, *, handler: MetastoreClient | object | None = _MISSING, origin: Origin | object | None = _MISSING
    ) -> _E:
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
    def _key(self) -> tuple[Any, ...]:
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

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .copy() or build a new event")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .copy() or build a new event")

    def __repr__(self) -> str:
        where = f" at {self._origin}" if self._origin else ""
        status = "" if self._status else ", status=False"
        return f"{type(self).__name__}({self.qualified_name}{status}{where})"

    def to_dict(self) -> dict[str, Any]:
        """The event as plain JSON-ready data, in the Apiary message shape."""
        from hivewire.events._apiary import to_json_dict

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

    def _summary(self) -> dict[str, Any]:
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


_ATOMS = frozenset({str, int, float, bool, bytes, type(None), EventType})


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


# -- display facts (_summary): read defensively, since events built in Python may hold partial objects ---------

_LISTED = 10  # items shown of a long list (partitions, files)


def _listed(items: list[str]) -> list[str]:
    return items if len(items) <= _LISTED else [*items[:_LISTED], f"... and {len(items) - _LISTED} more"]


def _location(obj: Any) -> str | None:
    """The storage location of a table or partition."""
    return getattr(getattr(obj, "sd", None), "location", None)


def _facts(**facts: Any) -> dict[str, Any]:
    """The facts that are known (not None)."""
    return {k.replace("_", " "): v for k, v in facts.items() if v is not None}


def _table_facts(table: Any) -> dict[str, Any]:
    return _facts(table_type=getattr(table, "tableType", None), location=_location(table))


def _partition_name(table: Any, partition: Any) -> str:
    """``dt=2024-05-01/hour=3`` (just the values when the table's partition keys do not match them)."""
    values = [str(v) for v in getattr(partition, "values", None) or ()]
    keys = [str(getattr(k, "name", k)) for k in getattr(table, "partitionKeys", None) or ()]
    if len(keys) != len(values):
        return "/".join(values)
    return "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


def _partition_facts(table: Any, partition: Any) -> str:
    location = _location(partition)
    name = _partition_name(table, partition)
    return name if location is None else f"{name} at {location}"


class CreateTableEvent(ListenerEvent):
    """A table was created. ``table`` is the table as stored."""

    event_type = EventType.CREATE_TABLE
    names_from = ("table", "table")
    __slots__ = ()
    table = _Field()

    def _summary(self) -> dict[str, Any]:
        return _table_facts(self.table)


class AlterTableEvent(ListenerEvent):
    """A table was altered or renamed. ``db_name``/``table_name`` are the new table's."""

    event_type = EventType.ALTER_TABLE
    names_from = ("new_table", "table")
    __slots__ = ()
    old_table = _Field()
    new_table = _Field()

    @property
    def is_rename(self) -> bool:
        old, new = self.old_table, self.new_table
        return (old.dbName, old.tableName) != (new.dbName, new.tableName)

    def _summary(self) -> dict[str, Any]:
        old, new = self.old_table, self.new_table
        old_name = (getattr(old, "dbName", None), getattr(old, "tableName", None))
        renamed = old_name != (getattr(new, "dbName", None), getattr(new, "tableName", None))
        moved = _location(old) != _location(new)
        return _facts(
            renamed_from=".".join(map(str, old_name)) if renamed else None,
            **_table_facts(new),
            previous_location=_location(old) if moved else None,
        )


class DropTableEvent(ListenerEvent):
    """A table was dropped. ``delete_data`` says whether its data was deleted too."""

    event_type = EventType.DROP_TABLE
    names_from = ("table", "table")
    __slots__ = ()
    table = _Field()
    delete_data = _Field(kind=bool)

    def _summary(self) -> dict[str, Any]:
        return {**_table_facts(self.table), "delete data": str(self.delete_data)}


class AddPartitionEvent(ListenerEvent):
    """Partitions were added to ``table``."""

    event_type = EventType.ADD_PARTITION
    names_from = ("table", "table")
    __slots__ = ()
    table = _Field()
    partitions = _Field(empty=list)

    def _summary(self) -> dict[str, Any]:
        table = self.table
        return {**_table_facts(table), "partitions": _listed([_partition_facts(table, p) for p in self.partitions])}


class AlterPartitionEvent(ListenerEvent):
    """A partition of ``table`` was altered."""

    event_type = EventType.ALTER_PARTITION
    names_from = ("table", "table")
    __slots__ = ()
    table = _Field()
    old_partition = _Field()
    new_partition = _Field()

    def _summary(self) -> dict[str, Any]:
        table, old, new = self.table, self.old_partition, self.new_partition
        before, after = _partition_facts(table, old), _partition_facts(table, new)
        return _facts(
            table_type=getattr(table, "tableType", None),
            partition=after,
            previously=before if before != after else None,
        )


class DropPartitionEvent(ListenerEvent):
    """Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first)."""

    event_type = EventType.DROP_PARTITION
    names_from = ("table", "table")
    __slots__ = ()
    table = _Field()
    partitions = _Field(empty=list)
    delete_data = _Field(kind=bool)

    def _summary(self) -> dict[str, Any]:
        table = self.table
        return {
            **_table_facts(table),
            "partitions": _listed([_partition_facts(table, p) for p in self.partitions]),
            "delete data": str(self.delete_data),
        }


class InsertEvent(ListenerEvent):
    """Data was inserted into a table or partition (fired by ``fire_listener_event``).

    ``partition_key_values`` maps partition column to value, in the table's key order. The message carries
    no table; :attr:`table` fetches it through :attr:`handler` on first use, as Hive's ``InsertEvent`` does.
    """

    event_type = EventType.INSERT
    __slots__ = ()
    partition_key_values = _Field(empty=dict)
    files = _Field(empty=list)
    file_checksums = _Field(empty=list)

    @property
    def table(self) -> Any:
        cached = self._values.get("_table", _MISSING)
        if cached is not _MISSING:
            return cached
        if self._handler is None:
            raise HivewireError(
                f"InsertEvent.table for {self.qualified_name} needs a metastore connection: run the app with "
                "metastore URIs configured (metastore.uris / --metastore-uris), or use db_name/table_name"
            )
        assert self._db_name is not None and self._table_name is not None
        table = self._handler.get_table(self._db_name, self._table_name)
        self._values["_table"] = table
        return table

    def _summary(self) -> dict[str, Any]:
        partition = "/".join(f"{k}={v}" for k, v in self.partition_key_values.items())
        return _facts(partition=partition or None, files=_listed([str(f) for f in self.files]))


class CreateDatabaseEvent(ListenerEvent):
    """A database was created."""

    event_type = EventType.CREATE_DATABASE
    names_from = ("database", "database")
    __slots__ = ()
    database = _Field()

    def _summary(self) -> dict[str, Any]:
        return _facts(location=getattr(self.database, "locationUri", None))


class AlterDatabaseEvent(ListenerEvent):
    """A database was altered."""

    event_type = EventType.ALTER_DATABASE
    names_from = ("new_database", "database")
    __slots__ = ()
    old_database = _Field()
    new_database = _Field()

    def _summary(self) -> dict[str, Any]:
        old = getattr(self.old_database, "locationUri", None)
        new = getattr(self.new_database, "locationUri", None)
        return _facts(location=new, previous_location=old if old != new else None)


class DropDatabaseEvent(ListenerEvent):
    """A database was dropped."""

    event_type = EventType.DROP_DATABASE
    names_from = ("database", "database")
    __slots__ = ()
    database = _Field()

    def _summary(self) -> dict[str, Any]:
        return _facts(location=getattr(self.database, "locationUri", None))


EVENT_CLASSES: Mapping[EventType, type[ListenerEvent]] = MappingProxyType(
    {
        cls.event_type: cls
        for cls in (
            CreateTableEvent,
            AlterTableEvent,
            DropTableEvent,
            AddPartitionEvent,
            AlterPartitionEvent,
            DropPartitionEvent,
            InsertEvent,
            CreateDatabaseEvent,
            AlterDatabaseEvent,
            DropDatabaseEvent,
        )
    }
)
