"""The modeled methods: which calls change the metastore, and each one's arguments decoded into a
:class:`~hivewire_shim.change.Change`.

:func:`change_for` decodes a call's arguments from the request bytes (the original bytes are forwarded
untouched) and maps them onto the Change that models it, the way Hive's ``HMSHandler`` reads them: an
``alter_table_with_cascade`` is an alter with a CASCADE environment context, an ``append_partition`` a new
partition built from its values, an ``add_partitions_pspec`` the partitions its PartitionSpecs stand for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from thrift.Thrift import TType

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
    copy_struct,
)
from hivewire_shim.names import partition_spec, split_catalog
from hivewire_shim.wire import decode_args
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as _service
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["MODELED_METHODS", "change_for"]

_T = TypeVar("_T")


def change_for(name: str, body: bytes, offset: int) -> Change | None:
    """The Change a call of the modeled method ``name`` makes (None: its arguments make none), from its
    message ``body`` whose arguments start at ``offset``. Raises on arguments it cannot decode."""
    if name == "fire_listener_event":
        return _insert(body, offset)
    return _CHANGES[name](as_received(decode_args(getattr(_service, f"{name}_args"), body, offset)))


#: The fields of plain (not optional) primitive type of the structs a change carries. The metastore's Java
#: objects hold 0 or false where a client left such a field out, and its events carry those values.
_PRIMITIVES: dict[type, tuple[str, ...]] = {
    hms.Table: ("createTime", "lastAccessTime", "retention"),
    hms.Partition: ("createTime", "lastAccessTime"),
    hms.StorageDescriptor: ("compressed", "numBuckets"),
    hms.Order: ("order",),
    hms.PrivilegeGrantInfo: ("createTime", "grantOption"),
}


def as_received(obj: _T) -> _T:
    """``obj`` (call arguments) as the metastore's Java side reads it: unset plain primitives become 0/false
    in every struct of :data:`_PRIMITIVES` it holds (changed in place). Unset objects stay unset."""
    if isinstance(obj, list):
        for item in obj:
            as_received(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            as_received(item)
    elif hasattr(obj, "thrift_spec"):
        for field in _PRIMITIVES.get(type(obj), ()):
            if getattr(obj, field) is None:
                setattr(obj, field, False if field in ("compressed", "grantOption") else 0)
        for value in obj.__dict__.values():
            if value is not None and not isinstance(value, (str, int, float, bytes)):
                as_received(value)
    return obj


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
                sd = None
                if shared.sd is not None:
                    sd = copy_struct(shared.sd)
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


def _append_partition_req(r: Any) -> Change:
    if r.name:
        return _append_by_name(r.dbName, r.tableName, r.name, r.environmentContext)
    parts = [_new_partition(r.dbName, r.tableName, r.partVals or [])]
    return AddPartitions(r.dbName, r.tableName, parts, r.environmentContext, stored_from=_single)


def _add_partitions_req(r: Any) -> Change:
    return AddPartitions(
        r.dbName,
        r.tblName,
        r.parts or [],
        r.environmentContext,
        stored_from=_listed if r.needResult is not False else lambda result: None,
        if_not_exists=bool(r.ifNotExists),
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


def _exchange(a: Any) -> Change:
    return ExchangePartitions(a.partitionSpecs, a.source_db, a.source_table_name, a.dest_db, a.dest_table_name)


# Each modeled method: its arguments (a decoded ``*_args``) -> a Change (None: nothing to model).
_CHANGES: dict[str, Callable[[Any], Change | None]] = {
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
    "append_partition_req": lambda a: _append_partition_req(a.appendPartitionsReq),
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
    "exchange_partition": _exchange,
    "exchange_partitions": _exchange,
}
#: fire_listener_event is decoded by hand (Hive 2.x and 3.x+ number InsertEventRequestData's fields apart).
MODELED_METHODS = frozenset([*_CHANGES, "fire_listener_event"])


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


def _insert(body: bytes, offset: int) -> Change | None:
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
