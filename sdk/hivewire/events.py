"""The event model: one typed event per metastore change, whatever wire format it arrived in.

Names follow Hive's ``MetaStoreEventListener`` API in snake case (``CreateTableEvent.table``,
``AlterTableEvent.old_table``, ...). Table, Partition, Database and EnvironmentContext values are the
generated ``hivewire_thrift`` types.

Events are immutable values: equal when their content is equal (the raw payload, Kafka coordinates and
handler do not take part), with a readable ``repr`` and a JSON-ready :meth:`~ListenerEvent.to_dict`.

Decoders build events lazily: the Thrift objects are converted from the parsed payload on first access
(``hivewire.apiary`` does this), so a listener that reads only ``db_name`` and ``table_name`` never pays
for the table. A malformed object then raises :class:`~hivewire.errors.DecodeError` on access.
"""

from __future__ import annotations

import copy
import enum
import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from hivewire.errors import HivewireError

if TYPE_CHECKING:
    from hivewire.metastore import MetastoreClient

__all__ = [
    "EVENT_CLASSES",
    "AddPartitionEvent",
    "AlterDatabaseEvent",
    "AlterPartitionEvent",
    "AlterTableEvent",
    "CreateDatabaseEvent",
    "CreateTableEvent",
    "DropDatabaseEvent",
    "DropPartitionEvent",
    "DropTableEvent",
    "EventType",
    "InsertEvent",
    "ListenerEvent",
    "Origin",
]


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


@dataclass(frozen=True)
class Origin:
    """Where an event was read from: Kafka topic, partition, offset and record timestamp (ms)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None

    def __str__(self) -> str:
        return f"{self.topic}/{self.partition}@{self.offset}"


# A loader turns the payload's JSON value of one field into the event's value (a Thrift object, a list of
# them, ...). Decoders supply them; an event built in Python holds its values directly.
Loader = Callable[[Any], Any]
_E = TypeVar("_E", bound="ListenerEvent")
_MISSING = object()


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

    __slots__ = ("_db_name", "_handler", "_loaders", "_origin", "_parameters", "_raw", "_status",
                 "_table_name", "_values")
    _db_name: str | None
    _table_name: str | None
    _status: bool
    _parameters: Mapping[str, str]
    _values: dict[str, Any]
    _loaders: dict[str, tuple[Loader, Any]]
    _raw: bytes | None
    _origin: Origin | None
    _handler: MetastoreClient | None

    def __init__(self, *, db_name: str | None = None, table_name: str | None = None, status: bool = True,
                 parameters: Mapping[str, str] | None = None, environment_context: Any = None,
                 raw: bytes | None = None, origin: Origin | None = None, **values: Any) -> None:
        unknown = set(values) - set(self.fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(unknown)}; it has {self.fields}")
        values["environment_context"] = environment_context
        derived_db, derived_table = self._names_from(values)
        _set = object.__setattr__
        _set(self, "_db_name", db_name if db_name is not None else derived_db)
        _set(self, "_table_name", table_name if table_name is not None else derived_table)
        _set(self, "_status", bool(status))
        _set(self, "_parameters", MappingProxyType(dict(parameters or {})))
        _set(self, "_values", values)
        _set(self, "_loaders", {})
        _set(self, "_raw", raw)
        _set(self, "_origin", origin)
        _set(self, "_handler", None)

    @classmethod
    def _lazy(cls: type[_E], *, db_name: str | None, table_name: str | None, status: bool,
              parameters: Mapping[str, str], loaders: dict[str, tuple[Loader, Any]], values: dict[str, Any],
              raw: bytes | None, origin: Origin | None) -> _E:
        """Build an event whose fields in ``loaders`` are converted from their payload on first access."""
        event = cls.__new__(cls)
        _set = object.__setattr__
        _set(event, "_db_name", db_name)
        _set(event, "_table_name", table_name)
        _set(event, "_status", status)
        _set(event, "_parameters", MappingProxyType(dict(parameters)))
        _set(event, "_values", values)
        _set(event, "_loaders", loaders)
        _set(event, "_raw", raw)
        _set(event, "_origin", origin)
        _set(event, "_handler", None)
        return event

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        """The database and table names implied by the event's objects."""
        return None, None

    def _get(self, name: str) -> Any:
        value = self._values.get(name, _MISSING)
        if value is _MISSING:
            loader = self._loaders.get(name)
            if loader is None:
                return None
            fn, payload = loader
            value = fn(payload)
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
        return self._parameters

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
    def copy(self: _E, *, handler: MetastoreClient | object | None = _MISSING,
             origin: Origin | object | None = _MISSING) -> _E:
        """A copy that shares the payload but not converted objects (so listeners cannot affect each other).

        Optionally bind a ``handler`` or set the ``origin``.
        """
        new = type(self).__new__(type(self))
        _set = object.__setattr__
        for slot in ListenerEvent.__slots__:
            _set(new, slot, getattr(self, slot))
        # Objects already converted are dropped when they can be converted again from the (shared, never
        # mutated) payload; the others (values of events built in Python, plain lists and maps) are copied.
        _set(new, "_values", {k: _clone(v) for k, v in self._values.items() if k not in self._loaders})
        _set(new, "_handler", self._handler if handler is _MISSING else handler)
        if origin is not _MISSING:
            _set(new, "_origin", origin)
        return new

    # -- value semantics ------------------------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return (self.event_type, self._db_name, self._table_name, self._status, dict(self._parameters),
                self.environment_context, *(getattr(self, f) for f in self.fields))

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
        from hivewire.apiary import to_json_dict

        return to_json_dict(self)

    def _repr_html_(self) -> str:
        """A compact HTML table for notebooks: what changed, where, and the key facts."""
        rows = [("event", self.event_type.value), ("object", self.qualified_name), ("status", str(self._status))]
        if self._origin:
            rows.append(("origin", str(self._origin)))
        rows += [(k, ", ".join(v) if isinstance(v, list) else str(v)) for k, v in self._summary().items()]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in rows)
        return f"<table class='hivewire-event'>{body}</table>"

    def _summary(self) -> dict[str, Any]:
        """Type-specific facts for display (locations, partition values, ...)."""
        return {}


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


def _table_names(table: Any) -> tuple[str | None, str | None]:
    return (table.dbName, table.tableName) if table is not None else (None, None)


class CreateTableEvent(ListenerEvent):
    """A table was created. ``table`` is the table as stored."""

    event_type = EventType.CREATE_TABLE
    fields = ("table",)
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _table_names(values.get("table"))

    @property
    def table(self) -> Any:
        return self._get("table")


class AlterTableEvent(ListenerEvent):
    """A table was altered or renamed. ``db_name``/``table_name`` are the new table's."""

    event_type = EventType.ALTER_TABLE
    fields = ("old_table", "new_table")
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _table_names(values.get("new_table"))

    @property
    def old_table(self) -> Any:
        return self._get("old_table")

    @property
    def new_table(self) -> Any:
        return self._get("new_table")

    @property
    def is_rename(self) -> bool:
        old, new = self.old_table, self.new_table
        return (old.dbName, old.tableName) != (new.dbName, new.tableName)


class DropTableEvent(ListenerEvent):
    """A table was dropped. ``delete_data`` says whether its data was deleted too."""

    event_type = EventType.DROP_TABLE
    fields = ("table", "delete_data")
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _table_names(values.get("table"))

    @property
    def table(self) -> Any:
        return self._get("table")

    @property
    def delete_data(self) -> bool:
        return bool(self._get("delete_data"))


class AddPartitionEvent(ListenerEvent):
    """Partitions were added to ``table``."""

    event_type = EventType.ADD_PARTITION
    fields = ("table", "partitions")
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _table_names(values.get("table"))

    @property
    def table(self) -> Any:
        return self._get("table")

    @property
    def partitions(self) -> list[Any]:
        return self._get("partitions") or []


class AlterPartitionEvent(ListenerEvent):
    """A partition of ``table`` was altered."""

    event_type = EventType.ALTER_PARTITION
    fields = ("table", "old_partition", "new_partition")
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _table_names(values.get("table"))

    @property
    def table(self) -> Any:
        return self._get("table")

    @property
    def old_partition(self) -> Any:
        return self._get("old_partition")

    @property
    def new_partition(self) -> Any:
        return self._get("new_partition")


class DropPartitionEvent(ListenerEvent):
    """Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first)."""

    event_type = EventType.DROP_PARTITION
    fields = ("table", "partitions", "delete_data")
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _table_names(values.get("table"))

    @property
    def table(self) -> Any:
        return self._get("table")

    @property
    def partitions(self) -> list[Any]:
        return self._get("partitions") or []

    @property
    def delete_data(self) -> bool:
        return bool(self._get("delete_data"))


class InsertEvent(ListenerEvent):
    """Data was inserted into a table or partition (fired by ``fire_listener_event``).

    ``partition_key_values`` maps partition column to value, in the table's key order. The message carries
    no table; :attr:`table` fetches it through :attr:`handler` on first use, as Hive's ``InsertEvent`` does.
    """

    event_type = EventType.INSERT
    fields = ("partition_key_values", "files", "file_checksums")
    __slots__ = ()

    @property
    def partition_key_values(self) -> dict[str, str]:
        return self._get("partition_key_values") or {}

    @property
    def files(self) -> list[str]:
        return self._get("files") or []

    @property
    def file_checksums(self) -> list[str]:
        return self._get("file_checksums") or []

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


def _database_names(db: Any) -> tuple[str | None, str | None]:
    return (db.name if db is not None else None), None


class CreateDatabaseEvent(ListenerEvent):
    """A database was created."""

    event_type = EventType.CREATE_DATABASE
    fields = ("database",)
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _database_names(values.get("database"))

    @property
    def database(self) -> Any:
        return self._get("database")


class AlterDatabaseEvent(ListenerEvent):
    """A database was altered."""

    event_type = EventType.ALTER_DATABASE
    fields = ("old_database", "new_database")
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _database_names(values.get("new_database"))

    @property
    def old_database(self) -> Any:
        return self._get("old_database")

    @property
    def new_database(self) -> Any:
        return self._get("new_database")


class DropDatabaseEvent(ListenerEvent):
    """A database was dropped."""

    event_type = EventType.DROP_DATABASE
    fields = ("database",)
    __slots__ = ()

    def _names_from(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        return _database_names(values.get("database"))

    @property
    def database(self) -> Any:
        return self._get("database")


EVENT_CLASSES: Mapping[EventType, type[ListenerEvent]] = MappingProxyType({
    cls.event_type: cls
    for cls in (CreateTableEvent, AlterTableEvent, DropTableEvent, AddPartitionEvent, AlterPartitionEvent,
                DropPartitionEvent, InsertEvent, CreateDatabaseEvent, AlterDatabaseEvent, DropDatabaseEvent)
})
