"""Events for tests (``hivewire.testing.create_table_event(...)``, ...): as the Apiary listener of a Hive
2.3.10 metastore would publish them, their objects made by :mod:`hivewire.tools._sample_objects`.

Invariants: each event's parameters carry ``hive.version``; keyword arguments not named by a factory go to
``make_table`` (``make_database`` for database events).
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, overload

from hivewire.tools._sample_objects import (
    DatabaseOptions,
    PartitionedTableOptions,
    TableOptions,
    _sd,
    make_database,
    make_partition,
    make_table,
)
from hivewire_thrift.hive_metastore import ttypes as hms

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from hivewire.events._model import (
        AddPartitionEvent,
        AlterDatabaseEvent,
        AlterPartitionEvent,
        AlterTableEvent,
        CreateDatabaseEvent,
        CreateTableEvent,
        DropDatabaseEvent,
        DropPartitionEvent,
        DropTableEvent,
        EventType,
        InsertEvent,
        ListenerEvent,
    )

_E = TypeVar("_E", bound="ListenerEvent")

_HIVE_PARAMS = {"hive.version": "2.3.10"}
_PARTITION_KEYS = {"dt": "string"}
_PARTITION_VALUES = ["2024-01-01"]


class _Common(TypedDict):
    status: bool
    parameters: dict[str, str]
    environment_context: hms.EnvironmentContext | None


def _common(status: bool, parameters: dict[str, str] | None, environment_context: dict[str, str] | None) -> _Common:
    env = hms.EnvironmentContext(properties=dict(environment_context)) if environment_context else None
    return {"status": status, "parameters": {**_HIVE_PARAMS, **(parameters or {})}, "environment_context": env}


@overload
def make_event(
    event_type: type[_E],
    db: str = "db",
    table: str = "t",
    *,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **fields: object,
) -> _E: ...
@overload
def make_event(
    event_type: EventType | str,
    db: str = "db",
    table: str = "t",
    *,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **fields: object,
) -> ListenerEvent: ...
def make_event(
    event_type: type[ListenerEvent] | EventType | str,
    db: str = "db",
    table: str = "t",
    *,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **fields: object,
) -> ListenerEvent:
    """An event of any type (its class, ``EventType`` or name), every field filled from the event types'
    description unless given in ``fields``.

    Defaults: a Table field is ``make_table(db, table)`` (partitioned by ``dt`` when the type carries
    partitions), a Partition ``dt=2024-01-01`` of that table, a Database ``make_database(db)``, another
    required object (a Function, ColumnStatistics, ...) one with every field unset, a flag False, strings,
    numbers and other objects None, lists and maps empty. ``table`` is ignored for database events. So a new
    event type needs no factory of its own::

        event = hw.testing.make_event(hw.AddPartitionEvent, "sales", "orders", delete_data=True)
    """
    from hivewire.events._description import Kind
    from hivewire.events._event_type import EventType
    from hivewire.events._model import EVENT_CLASSES
    from hivewire.events._types import TYPES

    if isinstance(event_type, type):
        cls = event_type
        kind = cls.event_type
    else:
        kind = EventType(event_type)
        cls = EVENT_CLASSES[kind]
    spec = TYPES[kind]
    unknown = sorted(set(fields) - {f.name for f in spec.fields})
    if unknown:
        raise TypeError(f"{spec.class_name} has no field(s) {unknown}; it has {[f.name for f in spec.fields]}")
    partitioned = any(f.thrift is hms.Partition for f in spec.fields)
    the_table = make_table(db, table, partition_keys=_PARTITION_KEYS if partitioned else None)
    values: dict[str, Any] = {}
    for f in spec.fields:
        if f.name in fields:
            values[f.name] = fields[f.name]
        elif f.thrift is hms.Table:
            table_copy = copy.deepcopy(the_table)
            values[f.name] = [table_copy] if f.kind is Kind.STRUCT_LIST else table_copy
        elif f.thrift is hms.Partition:
            partition = make_partition(the_table, _PARTITION_VALUES)
            values[f.name] = [partition] if f.kind is Kind.STRUCT_LIST else partition
        elif f.thrift is hms.Database:
            values[f.name] = make_database(db)
        elif f.thrift is hms.NotificationEvent:
            message = json.dumps({"server": "", "servicePrincipal": "", "db": db, "functionName": "f", "timestamp": 0})
            values[f.name] = hms.NotificationEvent(1, 0, "DROP_FUNCTION", db, table, message, "json-0.2")
        elif f.kind is Kind.FLAG:
            values[f.name] = False
        elif f.kind is Kind.STRING_MAP:
            values[f.name] = {}
        elif f.kind is Kind.STRUCT and f.required and f.thrift is not None:
            values[f.name] = f.thrift()  # an object of the notification log's types, every field unset
        elif f.kind in (Kind.STRUCT, Kind.STRING, Kind.INT):
            values[f.name] = None
        else:
            values[f.name] = []
    if spec.names_from is None:  # the names come from the message alone
        values["db_name"] = db
        if not spec.database_event:
            values["table_name"] = table
    return cls(**values, **_common(status, parameters, environment_context))


def create_table_event(
    db: str = "db",
    table: str = "t",
    *,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **table_kwargs: Unpack[TableOptions],
) -> CreateTableEvent:
    from hivewire.events._model import CreateTableEvent

    return CreateTableEvent(
        table=make_table(db, table, **table_kwargs), **_common(status, parameters, environment_context)
    )


def alter_table_event(
    db: str = "db",
    table: str = "t",
    *,
    rename_to: str | None = None,
    add_columns: dict[str, str] | None = None,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **table_kwargs: Unpack[TableOptions],
) -> AlterTableEvent:
    """An alter of ``db.table``: a rename (``rename_to``) and/or new columns (``add_columns``)."""
    from hivewire.events._model import AlterTableEvent

    old = make_table(db, table, **table_kwargs)
    new = copy.deepcopy(old)
    if rename_to:
        new.tableName = rename_to
    if add_columns:
        sd = _sd(new)
        sd.cols = [*(sd.cols or ()), *(hms.FieldSchema(name=k, type=v, comment=None) for k, v in add_columns.items())]
    return AlterTableEvent(old_table=old, new_table=new, **_common(status, parameters, environment_context))


def drop_table_event(
    db: str = "db",
    table: str = "t",
    *,
    delete_data: bool = True,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **table_kwargs: Unpack[TableOptions],
) -> DropTableEvent:
    from hivewire.events._model import DropTableEvent

    return DropTableEvent(
        table=make_table(db, table, **table_kwargs),
        delete_data=delete_data,
        **_common(status, parameters, environment_context),
    )


def _partitioned(
    db: str,
    table: str,
    values: list[list[str]],
    partition_keys: dict[str, str] | None,
    table_kwargs: PartitionedTableOptions,
) -> tuple[hms.Table, list[hms.Partition]]:
    keys = partition_keys or {f"p{i}": "string" for i in range(len(values[0]) if values else 1)}
    t = make_table(db, table, partition_keys=keys, **table_kwargs)
    return t, [make_partition(t, list(v)) for v in values]


def add_partition_event(
    db: str = "db",
    table: str = "t",
    values: list[list[str]] | None = None,
    *,
    partition_keys: dict[str, str] | None = None,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **table_kwargs: Unpack[PartitionedTableOptions],
) -> AddPartitionEvent:
    """Partitions with ``values`` (one list per partition, default ``[["2024-01-01"]]``) added to ``db.table``."""
    from hivewire.events._model import AddPartitionEvent

    t, parts = _partitioned(db, table, values or [_PARTITION_VALUES], partition_keys or _PARTITION_KEYS, table_kwargs)
    return AddPartitionEvent(table=t, partitions=parts, **_common(status, parameters, environment_context))


def alter_partition_event(
    db: str = "db",
    table: str = "t",
    values: list[str] | None = None,
    *,
    new_location: str | None = None,
    partition_keys: dict[str, str] | None = None,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **table_kwargs: Unpack[PartitionedTableOptions],
) -> AlterPartitionEvent:
    from hivewire.events._model import AlterPartitionEvent

    t, (old,) = _partitioned(db, table, [values or _PARTITION_VALUES], partition_keys or _PARTITION_KEYS, table_kwargs)
    new = copy.deepcopy(old)
    if new_location:
        _sd(new).location = new_location
    return AlterPartitionEvent(
        table=t, old_partition=old, new_partition=new, **_common(status, parameters, environment_context)
    )


def drop_partition_event(
    db: str = "db",
    table: str = "t",
    values: list[list[str]] | None = None,
    *,
    delete_data: bool = True,
    partition_keys: dict[str, str] | None = None,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    environment_context: dict[str, str] | None = None,
    **table_kwargs: Unpack[PartitionedTableOptions],
) -> DropPartitionEvent:
    from hivewire.events._model import DropPartitionEvent

    t, parts = _partitioned(db, table, values or [_PARTITION_VALUES], partition_keys or _PARTITION_KEYS, table_kwargs)
    return DropPartitionEvent(
        table=t, partitions=parts, delete_data=delete_data, **_common(status, parameters, environment_context)
    )


def insert_event(
    db: str = "db",
    table: str = "t",
    *,
    files: list[str] | None = None,
    partition_key_values: dict[str, str] | None = None,
    status: bool = True,
    parameters: dict[str, str] | None = None,
) -> InsertEvent:
    from hivewire.events._model import InsertEvent

    names = files if files is not None else [f"file:/tmp/hivewire-warehouse/{db}.db/{table}/part-00000.parquet"]
    return InsertEvent(
        db_name=db,
        table_name=table,
        files=names,
        file_checksums=["" for _ in names],
        partition_key_values=dict(partition_key_values or {}),
        **_common(status, parameters, None),
    )


def create_database_event(
    name: str = "db",
    *,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    **database_kwargs: Unpack[DatabaseOptions],
) -> CreateDatabaseEvent:
    from hivewire.events._model import CreateDatabaseEvent

    return CreateDatabaseEvent(database=make_database(name, **database_kwargs), **_common(status, parameters, None))


def alter_database_event(
    name: str = "db",
    *,
    new_parameters: dict[str, str] | None = None,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    **database_kwargs: Unpack[DatabaseOptions],
) -> AlterDatabaseEvent:
    from hivewire.events._model import AlterDatabaseEvent

    old = make_database(name, **database_kwargs)
    new = copy.deepcopy(old)
    new.parameters = {**(new.parameters or {}), **(new_parameters or {})}
    return AlterDatabaseEvent(old_database=old, new_database=new, **_common(status, parameters, None))


def drop_database_event(
    name: str = "db",
    *,
    status: bool = True,
    parameters: dict[str, str] | None = None,
    **database_kwargs: Unpack[DatabaseOptions],
) -> DropDatabaseEvent:
    from hivewire.events._model import DropDatabaseEvent

    return DropDatabaseEvent(database=make_database(name, **database_kwargs), **_common(status, parameters, None))
