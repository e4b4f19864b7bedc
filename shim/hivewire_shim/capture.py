"""Which calls change the metastore: decoding them into :class:`~hivewire_shim.changes.Change` objects and
running them so their events come out right.

:meth:`Capture.plan` looks at a call's name and, for a modeled method, decodes its arguments (from a copy
of the request bytes; the original bytes are forwarded untouched). The connection then runs the call
through :meth:`Capture.execute`, which

1. takes the lock of every table the change touches (exclusively) and of their databases (shared), or
   of the database it changes (exclusively), so changes to one table made through this shim run one at
   a time and their events are published in the order the metastore applied them, changes to other
   tables of the database run side by side, and a drop_database runs alone in its database;
2. reads what the event needs from *before* the change (the old table of an alter, the table of a drop);
3. forwards the call and reads the whole reply (the caller's function), *without* relaying it yet;
4. on success, reads back what the metastore stored and publishes the events, still under the lock.
   Failed calls publish nothing, or ``status=false`` events when ``publish_failures`` (as Apiary does);
   a call whose outcome is unknown (the upstream failed after it was sent) publishes nothing.

The caller relays the reply once this returns, outside the lock: a client only sees its change succeed
once the event is in the sinks (the Kafka sink's spool is on disk), and a slow client holds no lock.

Nothing here may fail a client's call: errors in modeling are logged and the call goes through unmodeled.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TType
from thrift.transport import TTransport

from hivewire.events._model import ListenerEvent
from hivewire_shim.changes import (
    AddPartitions,
    AlterDatabase,
    AlterPartitions,
    AlterTable,
    Change,
    CreateDatabase,
    CreateTable,
    DropDatabase,
    DropPartitions,
    DropTable,
    ExchangePartitions,
    Insert,
)
from hivewire_shim.lookup import Lookup
from hivewire_shim.names import partition_spec, split_catalog
from hivewire_shim.wire import Header, parse_header
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as _service
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["MODELED_METHODS", "Capture", "Change", "Reply", "Settings", "decode_args", "succeeded"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    """The upstream's answer to a call: its header, whether it succeeded, the decoded ``*_result`` (for
    modeled methods) and, on failure, a short description.

    ``from_upstream`` is False when the shim answered itself because the upstream failed; then
    ``maybe_applied`` says whether the call had been sent (so the metastore may have made the change).
    """

    header: Header | None
    ok: bool
    result: Any = None
    error: str | None = None
    from_upstream: bool = True
    maybe_applied: bool = False


@dataclass(frozen=True)
class Settings:
    """How events are made: the ``hive.version`` parameter, status=false events, database events."""

    hive_version: str = "2.3.10"
    publish_failures: bool = False
    database_events: bool = True


def succeeded(result: Any) -> bool:
    """True when a decoded ``*_result`` carries no declared exception (fields 1..n are the exceptions)."""
    return all(getattr(result, spec[2]) is None for spec in result.thrift_spec[1:] if spec is not None)


def _error_of(result: Any) -> str | None:
    for spec in result.thrift_spec[1:]:
        if spec is not None:
            exc = getattr(result, spec[2])
            if exc is not None:
                return f"{type(exc).__name__}: {getattr(exc, 'message', '')}"
    return None


# -- decoding the calls -------------------------------------------------------------------------------------


def _env_cascade(cascade: bool | None) -> Any:
    # HMSHandler.alter_table_with_cascade turns the flag into this environment context.
    return hms.EnvironmentContext(properties={"CASCADE": "true"}) if cascade else None


def _from_pspec(specs: Sequence[Any]) -> tuple[str, str, list[Any]]:
    """The partitions a list of PartitionSpec stands for (PartitionSpecProxy's view)."""
    db = table = ""
    parts: list[Any] = []
    for spec in specs or []:
        db, table = spec.dbName or db, spec.tableName or table
        if spec.partitionList is not None:
            parts += list(spec.partitionList.partitions or [])
        if spec.sharedSDPartitionSpec is not None:
            shared = spec.sharedSDPartitionSpec
            for p in shared.partitions or []:
                sd = _copy_struct(shared.sd)
                if sd is not None:
                    sd.location = (spec.rootPath or "") + (p.relativePath or "")
                parts.append(
                    hms.Partition(
                        values=p.values,
                        dbName=spec.dbName,
                        tableName=spec.tableName,
                        createTime=p.createTime,
                        lastAccessTime=p.lastAccessTime,
                        sd=sd,
                        parameters=p.parameters,
                        privileges=p.privileges,
                    )
                )
    return db, table, parts


def _copy_struct(obj: Any) -> Any:
    if obj is None:
        return None
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    return new


def _single(result: Any) -> list[Any] | None:
    return [result.success] if result is not None and result.success is not None else None


def _listed(result: Any) -> list[Any] | None:
    if result is None or result.success is None or result.success.partitions is None:
        return None
    return list(result.success.partitions)


def _new_partition(db: str, table: str, values: Sequence[str]) -> Any:
    return hms.Partition(values=list(values), dbName=split_catalog(db)[1], tableName=table)


def _append_by_name(db: str, table: str, name: str, env: Any) -> Change:
    values = list(partition_spec(name).values())
    return AddPartitions(db, table, [_new_partition(db, table, values)], env, stored_from=_single)


def _add_partitions_req(r: Any) -> Change:
    return AddPartitions(
        r.dbName,
        r.tblName,
        r.parts or [],
        r.environmentContext,
        stored_from=_listed if r.needResult is not False else lambda result: None,
        if_not_exists=bool(r.ifNotExists) and r.needResult is False,
    )


def _add_partitions_pspec(a: Any) -> Change | None:
    db, table, parts = _from_pspec(a.new_parts)
    return AddPartitions(db, table, parts) if parts else None


def _drop_partitions_req(r: Any) -> Change:
    names = r.parts.names if r.parts is not None else None
    carries = r.needResult is not False
    return DropPartitions(
        r.dbName,
        r.tblName,
        names=names or [],
        by_expression=names is None,
        delete_data=r.deleteData,
        env=r.environmentContext,
        stored_from=_listed if carries else lambda result: None,
        reply_carries=carries,
    )


def _drop_partition_req(r: Any) -> Change:
    return DropPartitions(
        r.dbName,
        r.tblName,
        names=[r.partName] if r.partName else [],
        values=[r.partVals] if r.partVals and not r.partName else [],
        delete_data=r.deleteData,
        env=r.environmentContext,
    )


def _create_database_req(r: Any) -> Change:
    return CreateDatabase(
        hms.Database(
            name=r.databaseName,
            description=r.description,
            locationUri=r.locationUri,
            parameters=r.parameters,
            privileges=r.privileges,
            ownerName=r.ownerName,
            ownerType=r.ownerType,
            catalogName=r.catalogName,
        )
    )


# Each modeled method: its arguments (a decoded ``*_args``) -> a Change (None: nothing to model).
_PLANS: dict[str, Callable[[Any], Change | None]] = {
    "create_database": lambda a: CreateDatabase(a.database) if a.database is not None else None,
    "create_database_req": lambda a: _create_database_req(a.createDatabaseRequest),
    "alter_database": lambda a: AlterDatabase(a.dbname, a.db),
    "alter_database_req": lambda a: AlterDatabase(a.alterDbReq.oldDbName, a.alterDbReq.newDb),
    "drop_database": lambda a: DropDatabase(a.name, a.cascade),
    "drop_database_req": lambda a: DropDatabase(a.req.name, a.req.cascade),
    "create_table": lambda a: CreateTable(a.tbl),
    "create_table_with_environment_context": lambda a: CreateTable(a.tbl, a.environment_context),
    "create_table_with_constraints": lambda a: CreateTable(a.tbl),
    "create_table_req": lambda a: CreateTable(a.request.table, a.request.envContext),
    "alter_table": lambda a: AlterTable(a.dbname, a.tbl_name, a.new_tbl),
    "alter_table_with_environment_context": lambda a: AlterTable(
        a.dbname, a.tbl_name, a.new_tbl, a.environment_context
    ),
    "alter_table_with_cascade": lambda a: AlterTable(a.dbname, a.tbl_name, a.new_tbl, _env_cascade(a.cascade)),
    "alter_table_req": lambda a: AlterTable(a.req.dbName, a.req.tableName, a.req.table, a.req.environmentContext),
    "drop_table": lambda a: DropTable(a.dbname, a.name, a.deleteData),
    "drop_table_with_environment_context": lambda a: DropTable(a.dbname, a.name, a.deleteData, a.environment_context),
    "drop_table_req": lambda a: DropTable(
        a.dropTableReq.dbName, a.dropTableReq.tableName, a.dropTableReq.deleteData, a.dropTableReq.envContext
    ),
    "add_partition": lambda a: AddPartitions(
        a.new_part.dbName, a.new_part.tableName, [a.new_part], stored_from=_single
    ),
    "add_partition_with_environment_context": lambda a: AddPartitions(
        a.new_part.dbName, a.new_part.tableName, [a.new_part], a.environment_context, stored_from=_single
    ),
    "add_partitions": lambda a: (
        AddPartitions(a.new_parts[0].dbName, a.new_parts[0].tableName, a.new_parts) if a.new_parts else None
    ),
    "add_partitions_req": lambda a: _add_partitions_req(a.request),
    "add_partitions_pspec": _add_partitions_pspec,
    "append_partition": lambda a: AddPartitions(
        a.db_name, a.tbl_name, [_new_partition(a.db_name, a.tbl_name, a.part_vals or [])], stored_from=_single
    ),
    "append_partition_with_environment_context": lambda a: AddPartitions(
        a.db_name,
        a.tbl_name,
        [_new_partition(a.db_name, a.tbl_name, a.part_vals or [])],
        a.environment_context,
        stored_from=_single,
    ),
    "append_partition_by_name": lambda a: _append_by_name(a.db_name, a.tbl_name, a.part_name, None),
    "append_partition_by_name_with_environment_context": lambda a: _append_by_name(
        a.db_name, a.tbl_name, a.part_name, a.environment_context
    ),
    "append_partition_req": lambda a: (
        _append_by_name(
            a.appendPartitionsReq.dbName,
            a.appendPartitionsReq.tableName,
            a.appendPartitionsReq.name,
            a.appendPartitionsReq.environmentContext,
        )
        if a.appendPartitionsReq.name
        else AddPartitions(
            a.appendPartitionsReq.dbName,
            a.appendPartitionsReq.tableName,
            [
                _new_partition(
                    a.appendPartitionsReq.dbName, a.appendPartitionsReq.tableName, a.appendPartitionsReq.partVals or []
                )
            ],
            a.appendPartitionsReq.environmentContext,
            stored_from=_single,
        )
    ),
    "alter_partition": lambda a: AlterPartitions(a.db_name, a.tbl_name, [a.new_part]),
    "alter_partition_with_environment_context": lambda a: AlterPartitions(
        a.db_name, a.tbl_name, [a.new_part], a.environment_context
    ),
    "alter_partitions": lambda a: AlterPartitions(a.db_name, a.tbl_name, a.new_parts or []),
    "alter_partitions_with_environment_context": lambda a: AlterPartitions(
        a.db_name, a.tbl_name, a.new_parts or [], a.environment_context
    ),
    "alter_partitions_req": lambda a: AlterPartitions(
        a.req.dbName, a.req.tableName, a.req.partitions or [], a.req.environmentContext
    ),
    "rename_partition": lambda a: AlterPartitions(a.db_name, a.tbl_name, [a.new_part], old_values=a.part_vals),
    "rename_partition_req": lambda a: AlterPartitions(
        a.req.dbName, a.req.tableName, [a.req.newPart], old_values=a.req.partVals
    ),
    "drop_partition": lambda a: DropPartitions(
        a.db_name, a.tbl_name, values=[a.part_vals or []], delete_data=a.deleteData
    ),
    "drop_partition_with_environment_context": lambda a: DropPartitions(
        a.db_name, a.tbl_name, values=[a.part_vals or []], delete_data=a.deleteData, env=a.environment_context
    ),
    "drop_partition_req": lambda a: _drop_partition_req(a.dropPartitionReq),
    "drop_partition_by_name": lambda a: DropPartitions(
        a.db_name, a.tbl_name, names=[a.part_name], delete_data=a.deleteData
    ),
    "drop_partition_by_name_with_environment_context": lambda a: DropPartitions(
        a.db_name, a.tbl_name, names=[a.part_name], delete_data=a.deleteData, env=a.environment_context
    ),
    "drop_partitions_req": lambda a: _drop_partitions_req(a.req),
    "exchange_partition": lambda a: ExchangePartitions(
        a.partitionSpecs, a.source_db, a.source_table_name, a.dest_db, a.dest_table_name
    ),
    "exchange_partitions": lambda a: ExchangePartitions(
        a.partitionSpecs, a.source_db, a.source_table_name, a.dest_db, a.dest_table_name
    ),
}
#: fire_listener_event is decoded by hand (Hive 2.x and 3.x+ number InsertEventRequestData's fields apart).
MODELED_METHODS = frozenset([*_PLANS, "fire_listener_event"])


# Hive 2.x's InsertEventRequestData is {1: list filesAdded, 2: list filesAddedChecksum}; 3.0 put
# {1: bool replace} first and moved the lists to 2 and 3. A 2.x client's request decoded with our (3.x+)
# IDL would read the checksums as the files, so it is decoded a second time with the 2.x layout, and
# field 1's wire type (list or bool) says which reading is right.
class _Struct:
    thrift_spec: tuple[Any, ...] = ()

    def __init__(self, **fields: Any) -> None:
        for spec in self.thrift_spec:
            if spec is not None:
                setattr(self, spec[2], fields.get(spec[2]))

    def read(self, iprot: Any) -> None:
        # Decoded by thrift's C extension only; without it the fields stay None and the request is read
        # with the 3.x+ layout (a 2.x client's insert then reports its checksums as files).
        if iprot._fast_decode is not None:
            iprot._fast_decode(self, iprot, [type(self), self.thrift_spec])


_STRINGS = (TType.STRING, "UTF8", False)


class _InsertData2(_Struct):
    thrift_spec = (
        None,
        (1, TType.LIST, "filesAdded", _STRINGS, None),
        (2, TType.LIST, "filesAddedChecksum", _STRINGS, None),
    )


class _FireData2(_Struct):
    thrift_spec = (None, (1, TType.STRUCT, "insertData", [_InsertData2, _InsertData2.thrift_spec], None))


class _FireRequest2(_Struct):
    thrift_spec = (
        None,
        (1, TType.BOOL, "successful", None, None),
        (2, TType.STRUCT, "data", [_FireData2, _FireData2.thrift_spec], None),
        (3, TType.STRING, "dbName", "UTF8", None),
        (4, TType.STRING, "tableName", "UTF8", None),
        (5, TType.LIST, "partitionVals", _STRINGS, None),
    )


class _FireArgs2(_Struct):
    thrift_spec = (None, (1, TType.STRUCT, "rqst", [_FireRequest2, _FireRequest2.thrift_spec], None))


def _plan_insert(body: bytes, offset: int) -> Change | None:
    rqst = decode_args(_service.fire_listener_event_args, body, offset).rqst
    if rqst is None or rqst.data is None or not rqst.dbName or not rqst.tableName:
        return None
    inserts: list[tuple[list[str], list[str], list[str]]] = []
    old = decode_args(_FireArgs2, body, offset).rqst
    old_data = old.data.insertData if old is not None and old.data is not None else None
    if old_data is not None and old_data.filesAdded is not None:  # field 1 is a list: a Hive 2.x client
        inserts.append(
            (list(rqst.partitionVals or []), list(old_data.filesAdded), list(old_data.filesAddedChecksum or []))
        )
    elif rqst.data.insertData is not None:
        data = rqst.data.insertData
        inserts.append(
            (list(rqst.partitionVals or []), list(data.filesAdded or []), list(data.filesAddedChecksum or []))
        )
    elif rqst.data.insertDatas is not None:  # Hive 4: one insert per partition, values on each
        for data in rqst.data.insertDatas:
            inserts.append(
                (list(data.partitionVal or []), list(data.filesAdded or []), list(data.filesAddedChecksum or []))
            )
    if not inserts:
        return None  # a refresh event, or nothing we know
    return Insert(rqst.dbName, rqst.tableName, inserts, bool(rqst.successful))


def decode_args(cls: Any, body: bytes, offset: int) -> Any:
    """``cls`` (a generated struct) decoded from ``body[offset:]`` (a message body after its header)."""
    proto = TBinaryProtocol.TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(body[offset:]))
    obj = cls()
    obj.read(proto)
    return obj


# -- locking and running ------------------------------------------------------------------------------------


class _Stripe:
    """A readers-writer lock: many shared holders or one exclusive one. A waiting exclusive holder keeps
    new shared ones out, so a database drop is not starved by a stream of table changes."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.shared = 0
        self.exclusive = False
        self.waiting_exclusive = 0
        self.waiting_shared = 0

    def acquire(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self.waiting_exclusive += 1
                try:
                    self._cond.wait_for(lambda: not self.exclusive and self.shared == 0)
                finally:
                    self.waiting_exclusive -= 1
                self.exclusive = True
            else:
                self.waiting_shared += 1
                try:
                    self._cond.wait_for(lambda: not self.exclusive and self.waiting_exclusive == 0)
                finally:
                    self.waiting_shared -= 1
                self.shared += 1

    def release(self, exclusive: bool) -> None:
        with self._cond:
            if exclusive:
                self.exclusive = False
            else:
                self.shared -= 1
            self._cond.notify_all()


class Locks:
    """Striped readers-writer locks over string keys.

    :meth:`holding` takes keys exclusively or shared, every stripe in one global order (no deadlock: a
    thread waiting on a stripe holds only lower ones); a stripe wanted both ways is taken exclusively.
    """

    def __init__(self, stripes: int = 1024) -> None:
        self._stripes = [_Stripe() for _ in range(stripes)]

    def _stripe(self, key: str) -> _Stripe:
        return self._stripes[hash(key) % len(self._stripes)]

    def held(self, key: str) -> bool:
        """Whether ``key``'s lock (its stripe's) is held by anyone, in either mode."""
        stripe = self._stripe(key)
        return stripe.exclusive or stripe.shared > 0

    def held_exclusively(self, key: str) -> bool:
        return self._stripe(key).exclusive

    def waiting(self, key: str) -> int:
        """How many threads wait for ``key``'s stripe (for tests and diagnostics)."""
        stripe = self._stripe(key)
        return stripe.waiting_exclusive + stripe.waiting_shared

    @contextlib.contextmanager
    def holding(self, keys: Sequence[str], shared: Sequence[str] = ()) -> Iterator[None]:
        """Hold ``keys`` exclusively and ``shared`` shared."""
        modes: dict[int, bool] = {}
        for key in shared:
            modes.setdefault(hash(key) % len(self._stripes), False)
        for key in keys:
            modes[hash(key) % len(self._stripes)] = True
        taken: list[tuple[int, bool]] = []
        try:
            for i in sorted(modes):
                self._stripes[i].acquire(modes[i])
                taken.append((i, modes[i]))
            yield
        finally:
            for i, exclusive in reversed(taken):
                self._stripes[i].release(exclusive)


class Capture:
    """Turns modeled calls into events and hands them to ``publish`` (see the module docstring)."""

    def __init__(
        self, lookup: Lookup, publish: Callable[[ListenerEvent], None], settings: Settings = Settings()
    ) -> None:
        self.lookup = lookup
        self.publish = publish
        self.settings = settings
        self._params = {"hive.version": settings.hive_version}
        self._locks = Locks()

    def plan(self, header: Header, body: bytes) -> Change | None:
        """The Change for a call, or None when the method is not modeled (or its arguments make no change)."""
        name = header.name
        if name not in MODELED_METHODS:
            return None
        try:
            parsed = parse_header(body)
            assert parsed is not None
            offset = parsed[1]
            if name == "fire_listener_event":
                return _plan_insert(body, offset)
            args = decode_args(getattr(_service, f"{name}_args"), body, offset)
            change = _PLANS[name](args)
            if change is not None and change.database_event and not self.settings.database_events:
                if isinstance(change, DropDatabase) and change.cascade:
                    change.database_events = False  # its tables' drop events are table events: keep them
                else:
                    return None
            return change
        except Exception:  # a request we cannot model still goes through, unmodeled
            log.warning("could not model %s; forwarding it without an event", header, exc_info=True)
            return None

    @staticmethod
    def result_class(header: Header) -> Any:
        return getattr(_service, f"{header.name}_result")

    def execute(self, change: Change, header: Header, call: Callable[[Any], Reply]) -> Reply:
        """Run ``call`` (forward and read the reply, given the ``*_result`` class to decode) as ``change``,
        publish its events, and return the reply for the caller to relay (the locks are released by then)."""
        with self._locks.holding(change.keys, change.shared):
            try:
                change.before(self.lookup)
            except Exception:
                log.exception("reading the state before %s failed; its event may lack the old object", header)
            return self._run(change, header, call)

    def _run(self, change: Change, header: Header, call: Callable[[Any], Reply]) -> Reply:
        reply = call(self.result_class(header))
        if not reply.from_upstream:
            if reply.maybe_applied:
                # A status=false event would be wrong if the change was made, a status=true one if not.
                log.warning(
                    "%s: the upstream failed after the call was sent, so %s may or may not have been made; "
                    "no event is published for it (%s)",
                    header,
                    change,
                    reply.error,
                )
            return reply
        if reply.ok or self.settings.publish_failures:
            try:
                events = change.events(self.lookup, reply.ok, reply.result, self._params)
            except Exception:
                log.exception("building the events of %s failed; none published", header)
                events = []
            for event in events:
                self.publish(event)
        elif reply.error:
            log.debug("%s failed (%s): no event", header, reply.error)
        return reply

    @staticmethod
    def reply_of(header: Header, result: Any) -> Reply:
        """A :class:`Reply` for a decoded ``*_result``."""
        ok = succeeded(result)
        return Reply(header, ok, result, None if ok else _error_of(result))
