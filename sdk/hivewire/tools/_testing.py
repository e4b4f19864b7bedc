"""Helpers for testing hivewire listeners in your own test suite, with no Kafka broker and no JVM.

Event factories (``create_table_event(...)``, ``add_partition_event(...)``, ...) build realistic events;
``app.dispatch(event)`` calls the matching listeners synchronously; ``run_app(app, events)`` runs them
through the real runtime (workers, retries, dead letters) on an in-memory topic, as FastStream's test
broker does::

    source = hw.testing.run_app(app, [hw.testing.create_table_event("sales", "orders")])
    assert source.dead_letters == []

``mock_kafka()`` gives a real Kafka-protocol endpoint: librdkafka's built-in mock cluster, which ships
inside the ``confluent-kafka`` wheel. Any Kafka client, in this process or another, can connect to it;
``produce()`` publishes events there as the Apiary listener does. ``app.run`` blocks until stopped, so run
it beside the test::

    import threading

    import hivewire as hw

    app = hw.App("orders-sync", config={"endpoint.port": 0})  # 0: no /metrics port to collide with
    done = threading.Event()

    @app.on_create_table
    def created(event: hw.CreateTableEvent) -> None:
        done.set()

    with hw.testing.mock_kafka() as bootstrap:
        hw.testing.produce(bootstrap, "apiary", [hw.testing.create_table_event("sales", "orders")])
        # A new consumer group starts at the end of the topic (Drone Fly's default, latest); read from the
        # beginning to see what was produced before the group joined.
        source = hw.KafkaSource(bootstrap, "apiary", consumer_config={"auto.offset.reset": "earliest"})
        worker = threading.Thread(target=app.run, args=(source,), kwargs={"handle_signals": False})
        worker.start()
        assert done.wait(60)
        app.stop()
        worker.join()

Limits of the mock (librdkafka's, not ours): topics are created on first produce with 4 partitions;
CreateTopics/DeleteTopics are not served; a new consumer group waits about 3 s before its first
assignment; the cluster lives exactly as long as the ``with`` block.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, overload

from hivewire_thrift.hive_metastore import ttypes as hms

if TYPE_CHECKING:
    from unittest.mock import MagicMock

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
    from hivewire.runtime._app import App
    from hivewire.runtime._listener import ListenerOptions
    from hivewire.runtime._source import MemorySource

_E = TypeVar("_E", bound="ListenerEvent")


@contextlib.contextmanager
def mock_kafka(num_brokers: int = 1) -> Iterator[str]:
    """Run a librdkafka mock cluster for the duration of the block; yield its bootstrap servers string."""
    from confluent_kafka import Producer

    owner = Producer(
        {
            "test.mock.num.brokers": num_brokers,
            "bootstrap.servers": "",
            "logger": logging.getLogger("hivewire.testing.mock_kafka"),
        }
    )
    try:
        metadata = owner.list_topics(timeout=10)
        yield ",".join(f"{b.host}:{b.port}" for b in sorted(metadata.brokers.values(), key=lambda b: b.id))
    finally:
        owner.flush(5)
        del owner


def produce(bootstrap_servers: str, topic: str, events: Iterable[ListenerEvent | bytes]) -> int:
    """Publish ``events`` to ``topic`` as the Apiary listener does: Apiary JSON, each table's events in the
    partition ``hivewire.apiary.partition_for`` picks (raw ``bytes`` are sent as they are, to partition 0).
    Returns how many were acknowledged; raises :class:`~hivewire.errors.HivewireError` if any was not."""
    from confluent_kafka import KafkaError, KafkaException, Producer

    from hivewire.errors import HivewireError
    from hivewire.events._apiary import encode, partition_for

    failures: list[KafkaError] = []

    def delivered(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    producer = Producer(
        {
            "bootstrap.servers": bootstrap_servers,
            "enable.idempotence": True,  # retries keep each partition's order, as the Apiary listener's do
            "linger.ms": 5,
            "logger": logging.getLogger("hivewire.testing.produce"),
        }
    )
    try:
        deadline = time.monotonic() + 10
        metadata = producer.list_topics(topic, timeout=10).topics[topic]
        while (metadata.error is not None or not metadata.partitions) and time.monotonic() < deadline:
            time.sleep(0.1)  # a broker that creates topics on first use answers "unknown" until it has
            metadata = producer.list_topics(topic, timeout=10).topics[topic]
        if metadata.error is not None or not metadata.partitions:
            raise HivewireError(
                f"topic {topic!r} is not available on {bootstrap_servers} ({metadata.error}); "
                "create it first if the cluster does not create topics on first use"
            )
        partitions = len(metadata.partitions)
        sent = 0
        for item in events:
            if isinstance(item, bytes):
                value, partition = item, 0
            else:
                value, partition = encode(item), partition_for(item.qualified_name, partitions)
            while True:
                try:
                    producer.produce(topic, value, partition=partition, on_delivery=delivered)
                    break
                except BufferError:  # librdkafka's local queue is full: let deliveries drain it
                    producer.poll(0.1)
            sent += 1
        left = producer.flush(30)
    except KafkaException as e:
        raise HivewireError(f"producing to {topic!r} on {bootstrap_servers} failed: {e}") from e
    if left:
        raise HivewireError(f"{left} of {sent} messages to {topic!r} were not acknowledged within 30 s")
    if failures:
        raise HivewireError(f"{len(failures)} of {sent} messages to {topic!r} were refused (first: {failures[0]})")
    return sent


# -- Thrift object factories ----------------------------------------------------------------------------
# Small builders for the metastore objects that events carry, with Hive's usual defaults (parquet, a
# location under a fake warehouse). They return the generated hivewire_thrift types.

_PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
)


class PartitionedTableOptions(TypedDict, total=False):
    """The keywords of :func:`make_table` that the partition event factories pass on (they take the partition
    keys themselves; ``parameters`` are the event's)."""

    columns: dict[str, str] | None
    location: str | None
    table_type: str
    owner: str
    skewed: hms.SkewedInfo | None
    create_time: int


class TableOptions(PartitionedTableOptions, total=False):
    """The keywords of :func:`make_table` that the table event factories pass on (``parameters`` are the
    event's)."""

    partition_keys: dict[str, str] | None


class DatabaseOptions(TypedDict, total=False):
    """The keywords of :func:`make_database` that the database event factories pass on (``parameters`` are the
    event's)."""

    location: str | None
    description: str | None
    owner: str


def make_database(
    name: str,
    *,
    location: str | None = None,
    description: str | None = None,
    parameters: dict[str, str] | None = None,
    owner: str = "hivewire",
) -> hms.Database:
    """A ``Database`` named ``name``."""
    return hms.Database(
        name=name,
        description=description,
        locationUri=location or f"file:/tmp/hivewire-warehouse/{name}.db",
        parameters=dict(parameters or {}),
        ownerName=owner,
        ownerType=hms.PrincipalType.USER,
    )


def make_table(
    db: str,
    name: str,
    *,
    columns: dict[str, str] | None = None,
    partition_keys: dict[str, str] | None = None,
    location: str | None = None,
    parameters: dict[str, str] | None = None,
    table_type: str = "MANAGED_TABLE",
    owner: str = "hivewire",
    skewed: hms.SkewedInfo | None = None,
    create_time: int = 0,
) -> hms.Table:
    """A parquet ``Table`` ``db.name`` with ``columns`` and ``partition_keys`` given as ``{name: type}``."""
    cols = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in (columns or {"id": "int"}).items()]
    pkeys = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in (partition_keys or {}).items()]
    sd = hms.StorageDescriptor(
        cols=cols,
        location=location or f"file:/tmp/hivewire-warehouse/{db}.db/{name}",
        inputFormat=_PARQUET[0],
        outputFormat=_PARQUET[1],
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(name=None, serializationLib=_PARQUET[2], parameters={"serialization.format": "1"}),
        bucketCols=[],
        sortCols=[],
        parameters={},
        skewedInfo=skewed,
        storedAsSubDirectories=False,
    )
    params = dict(parameters or {})
    if table_type == "EXTERNAL_TABLE":
        params.setdefault("EXTERNAL", "TRUE")
    return hms.Table(
        tableName=name,
        dbName=db,
        owner=owner,
        createTime=create_time,
        lastAccessTime=0,
        retention=0,
        sd=sd,
        partitionKeys=pkeys,
        parameters=params,
        viewOriginalText=None,
        viewExpandedText=None,
        tableType=table_type,
        temporary=False,
        rewriteEnabled=False,
    )


def make_partition(
    table: hms.Table,
    values: list[str],
    *,
    location: str | None = None,
    parameters: dict[str, str] | None = None,
    create_time: int = 0,
) -> hms.Partition:
    """A ``Partition`` of ``table`` with ``values`` (one per partition key), located under the table."""
    keys = [k.name for k in table.partitionKeys or ()]
    if len(keys) != len(values):
        raise ValueError(f"{table.dbName}.{table.tableName} has partition keys {keys}, got values {values}")
    sd = copy.deepcopy(_sd(table))
    spec = "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
    sd.location = location or f"{sd.location}/{spec}"
    return hms.Partition(
        values=list(values),
        dbName=table.dbName,
        tableName=table.tableName,
        createTime=create_time,
        lastAccessTime=0,
        sd=sd,
        parameters=dict(parameters or {}),
    )


def _sd(obj: hms.Table | hms.Partition) -> hms.StorageDescriptor:
    """The storage descriptor of a table or partition (the factories' objects always have one)."""
    if obj.sd is None:
        raise ValueError(f"{obj.dbName}.{obj.tableName} has no storage descriptor (sd): give it one")
    return obj.sd


# -- Event factories --------------------------------------------------------------------------------------
# Events as the Apiary listener of a Hive 2.3.10 metastore would publish them (parameters carry
# hive.version). Keyword arguments not named here go to make_table (make_database for database events).

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
    from hivewire.events._model import EVENT_CLASSES
    from hivewire.events._types import TYPES, EventType

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


# -- Running an app without a broker ---------------------------------------------------------------------


def run_app(
    app: App,
    events: Iterable[ListenerEvent | bytes],
    *,
    config: Mapping[str, str | int | float | bool] | None = None,
    partitions: int = 4,
    raise_errors: bool = True,
) -> MemorySource:
    """Run ``app`` through the real runtime (workers, retries, dead letters, commits) on ``events``.

    Events are encoded to Apiary JSON first, exactly as they travel through Kafka (raw ``bytes`` are sent
    as they are, so malformed messages can be tested too). Returns when every event is handled or
    dead-lettered; the returned :class:`~hivewire.runtime.MemorySource` holds ``dead_letters`` and
    ``committed``. ``config`` overrides settings (retries default to 3 attempts, 10 ms apart).

    A listener that fails on an event after its retries makes ``run_app`` raise that listener's own exception
    (the first one, once every event is done), so the test fails where the listener did; with
    ``raise_errors=False`` it returns, and the failures are in ``dead_letters`` as in production.
    """
    from hivewire.config._config import Config
    from hivewire.events._apiary import encode
    from hivewire.runtime._source import MemorySource

    source = MemorySource(partitions=partitions)
    for item in events:
        source.send(item if isinstance(item, bytes) else encode(item))
    settings = {
        "endpoint.port": "0",
        "hivewire.retry.max.attempts": "3",
        "hivewire.retry.initial.delay.ms": "10",
        "hivewire.retry.multiplier": "1",
        "hivewire.commit.interval.ms": "20",
        **(config or {}),
    }
    app.run(source, config=Config.load(base={**app.config, **settings}, env={}), handle_signals=False)
    failures = app._failures
    if raise_errors and failures:
        raise failures[0][1]
    return source


def mock_listener(app: App, *types: EventType | str, **options: Unpack[ListenerOptions]) -> MagicMock:
    """Register a :class:`unittest.mock.MagicMock` as a listener of ``types`` (all when none is given) and return
    it, to assert on the events a filter lets through without writing a listener (FastStream's
    ``handler.mock``)::

        app = hw.App("orders-sync")
        mock = hw.testing.mock_listener(app, hw.EventType.CREATE_TABLE, db="sales")
        hw.testing.run_app(app, [hw.testing.create_table_event("sales", "orders")])
        mock.assert_called_once()
        assert mock.call_args.args[0].table_name == "orders"

    ``options`` are those of :meth:`hivewire.App.on` (``db``, ``table``, ``status``, ``name``: "mock" unless
    given, ...); the mock's ``side_effect`` makes it fail or do more.
    """
    from unittest.mock import MagicMock

    options["name"] = options.get("name") or "mock"
    mock = MagicMock(name=options["name"])
    app.add_listener(mock, types=types or None, **options)
    return mock
