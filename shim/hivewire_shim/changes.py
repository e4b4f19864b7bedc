"""The events each kind of change produces: what a listener inside the metastore would see.

Each :class:`Change` is one modeled call in flight. :meth:`Change.before` reads, on the shim's own
connections, what the event needs from before the change (the old table of an alter, the table and
partitions of a drop); :meth:`Change.events` builds the events once the reply is in, reading back what
the metastore stored when the request does not carry it (the server fills in ``createTime``, parameters,
locations). They mirror Hive's ``HMSHandler``: one AddPartitionEvent per add call, one
AlterPartitionEvent and one DropPartitionEvent per partition, DropTableEvents (``deleteData`` false)
before the DropDatabaseEvent of a cascading drop, an AddPartitionEvent on the destination plus a
DropPartitionEvent per source partition for exchange_partition(s), an AlterTableEvent (old -> new) for a
rename. An object that cannot be read falls back to what the request carried.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from hivewire.events import (
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropDatabaseEvent,
    DropPartitionEvent,
    DropTableEvent,
    InsertEvent,
    ListenerEvent,
)
from hivewire_shim.lookup import Lookup
from hivewire_shim.names import database_key, partition_name, partition_spec, split_catalog, table_key

__all__ = ["AddPartitions", "AlterDatabase", "AlterPartitions", "AlterTable", "Change", "CreateDatabase",
           "CreateTable", "DropDatabase", "DropPartitions", "DropTable", "ExchangePartitions", "Insert", "Params"]

log = logging.getLogger(__name__)

Params = dict[str, str]


class Change:
    """One modeled call in flight. ``keys`` are the lock keys; subclasses read in :meth:`before` and
    build events in :meth:`events` (``ok``: the call succeeded; ``result``: the decoded ``*_result``)."""

    keys: tuple[str, ...] = ()
    #: Database changes are hivewire's extension to Apiary's event types and can be switched off.
    database_event = False

    def before(self, look: Lookup) -> None:
        return None

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        raise NotImplementedError


def _names(db: str | None, table: str | None) -> tuple[str, str]:
    return split_catalog(db or "")[1], table or ""


class CreateTable(Change):
    def __init__(self, table: Any, env: Any = None) -> None:
        self.table, self.env = table, env
        self.db, self.name = _names(table.dbName, table.tableName)
        self.keys = (table_key(self.db, self.name),)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        stored = look.table(self.db, self.name) if ok else None
        return [CreateTableEvent(table=stored or self.table, status=ok, environment_context=self.env,
                                 parameters=params)]


class AlterTable(Change):
    def __init__(self, db: str, name: str, new_table: Any, env: Any = None) -> None:
        self.db, self.name = _names(db, name)
        self.new_table, self.env = new_table, env
        self.new_db = split_catalog(new_table.dbName)[1] if new_table.dbName else self.db
        self.new_name = new_table.tableName or self.name
        self.keys = (table_key(self.db, self.name), table_key(self.new_db, self.new_name))
        self.old: Any = None

    def before(self, look: Lookup) -> None:
        self.old = look.table(self.db, self.name)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.old is None:
            log.warning("alter of %s.%s: no old table to report (it did not exist before)", self.db, self.name)
            return []
        stored = look.table(self.new_db, self.new_name) if ok else None
        return [AlterTableEvent(old_table=self.old, new_table=stored or self.new_table, status=ok,
                                environment_context=self.env, parameters=params)]


class DropTable(Change):
    def __init__(self, db: str, name: str, delete_data: bool | None, env: Any = None) -> None:
        self.db, self.name = _names(db, name)
        self.delete_data, self.env = bool(delete_data), env
        self.keys = (table_key(self.db, self.name),)
        self.table: Any = None

    def before(self, look: Lookup) -> None:
        self.table = look.table(self.db, self.name)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.table is None:
            return []
        return [DropTableEvent(table=self.table, delete_data=self.delete_data, status=ok,
                               environment_context=self.env, parameters=params)]


class AddPartitions(Change):
    """add_partition(s), add_partitions_req/_pspec, append_partition*: one AddPartitionEvent per call.

    ``parts`` are the request's partitions (or ones built from its values); ``stored_from(result)`` gives the
    partitions the reply carries, if any, else they are read back by name.
    """

    def __init__(self, db: str, table: str, parts: Sequence[Any], env: Any = None, *,
                 stored_from: Callable[[Any], list[Any] | None] = lambda result: None,
                 if_not_exists: bool = False) -> None:
        self.db, self.name = _names(db, table)
        self.parts, self.env, self.stored_from = list(parts), env, stored_from
        self.if_not_exists = if_not_exists
        self.keys = (table_key(self.db, self.name),)
        self.existing: set[str] = set()

    def _part_names(self, table: Any) -> list[str]:
        keys = [k.name for k in table.partitionKeys or []]
        names = []
        for p in self.parts:
            with contextlib.suppress(ValueError, TypeError):
                names.append(partition_name(keys, list(p.values or [])))
        return names

    def before(self, look: Lookup) -> None:
        if self.if_not_exists:
            # Only the partitions that did not exist yet are added (and reported), as the metastore does.
            table = look.table(self.db, self.name)
            if table is not None:
                self.existing = {partition_name([k.name for k in table.partitionKeys], p.values)
                                 for p in look.partitions(self.db, self.name, self._part_names(table))}

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        table = look.table(self.db, self.name)
        if table is None:
            return []
        if not ok:
            added = self.parts
        else:
            carried = self.stored_from(result)
            if carried is not None:
                added = carried
            else:
                names = [n for n in self._part_names(table) if n not in self.existing]
                added = look.partitions(self.db, self.name, names) or [
                    p for p, n in zip(self.parts, self._part_names(table), strict=False) if n not in self.existing]
        if not added:
            return []
        return [AddPartitionEvent(table=table, partitions=list(added), status=ok, environment_context=self.env,
                                  parameters=params)]


class AlterPartitions(Change):
    """alter_partition(s) and rename_partition: one AlterPartitionEvent per partition, in request order.

    ``old_values`` (rename only) are the values the partition had before.
    """

    def __init__(self, db: str, table: str, new_parts: Sequence[Any], env: Any = None, *,
                 old_values: Sequence[str] | None = None) -> None:
        self.db, self.name = _names(db, table)
        self.new_parts, self.env = list(new_parts), env
        self.old_values = list(old_values) if old_values is not None else None
        self.keys = (table_key(self.db, self.name),)
        self.table: Any = None
        self.old: dict[tuple[str, ...], Any] = {}

    def before(self, look: Lookup) -> None:
        self.table = look.table(self.db, self.name)
        if self.table is None:
            return
        wanted = [self.old_values] if self.old_values is not None else [p.values or [] for p in self.new_parts]
        self.old = {tuple(p.values): p for p in look.partitions_by_values(self.db, self.table, wanted)}

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.table is None:
            return []
        stored = ({tuple(p.values): p for p in look.partitions_by_values(
            self.db, self.table, [p.values or [] for p in self.new_parts])} if ok else {})
        out: list[ListenerEvent] = []
        for new in self.new_parts:
            before_values = self.old_values if self.old_values is not None else new.values or []
            old = self.old.get(tuple(before_values))
            if old is None:
                log.warning("alter of partition %s of %s.%s: it did not exist before; no event", before_values,
                            self.db, self.name)
                continue
            out.append(AlterPartitionEvent(table=self.table, old_partition=old,
                                           new_partition=stored.get(tuple(new.values or []), new), status=ok,
                                           environment_context=self.env, parameters=params))
        return out


class DropPartitions(Change):
    """drop_partition*, drop_partitions_req: one DropPartitionEvent per dropped partition.

    The partitions are read before the drop, by ``names``/``values``; a drop by expression reads all of them
    (unless the reply will carry the dropped ones: ``stored_from``).
    """

    def __init__(self, db: str, table: str, *, names: Sequence[str] = (), values: Sequence[Sequence[str]] = (),
                 by_expression: bool = False, delete_data: bool | None = False, env: Any = None,
                 stored_from: Callable[[Any], list[Any] | None] = lambda result: None,
                 reply_carries: bool = False) -> None:
        self.db, self.name = _names(db, table)
        self.names, self.values = list(names), [list(v) for v in values]
        self.by_expression, self.reply_carries = by_expression, reply_carries
        self.delete_data, self.env, self.stored_from = bool(delete_data), env, stored_from
        self.keys = (table_key(self.db, self.name),)
        self.table: Any = None
        self.parts: list[Any] = []

    def before(self, look: Lookup) -> None:
        self.table = look.table(self.db, self.name)
        if self.table is None:
            return
        if self.by_expression:
            if not self.reply_carries:
                self.parts = look.all_partitions(self.db, self.name)
        else:
            self.parts = (look.partitions(self.db, self.name, self.names)
                          + look.partitions_by_values(self.db, self.table, self.values))

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.table is None:
            return []
        dropped = self.stored_from(result) if ok else None
        if dropped is None:
            dropped = self.parts
            if ok and self.by_expression:  # which of them went: the ones no longer there
                remaining = set(look.partition_names(self.db, self.name))
                keys = [k.name for k in self.table.partitionKeys]
                dropped = [p for p in dropped if partition_name(keys, p.values) not in remaining]
        return [DropPartitionEvent(table=self.table, partitions=[p], delete_data=self.delete_data, status=ok,
                                   environment_context=self.env, parameters=params) for p in dropped]


class ExchangePartitions(Change):
    """exchange_partition(s): an AddPartitionEvent on the destination and a DropPartitionEvent (deleteData
    true) per partition on the source, as ``HMSHandler.exchange_partitions`` fires them."""

    def __init__(self, spec: dict[str, str], source_db: str, source: str, dest_db: str, dest: str) -> None:
        self.spec = dict(spec or {})
        self.src_db, self.src = _names(source_db, source)
        self.dst_db, self.dst = _names(dest_db, dest)
        self.keys = (table_key(self.src_db, self.src), table_key(self.dst_db, self.dst))
        self.src_table: Any = None
        self.names: list[str] = []
        self.parts: list[Any] = []

    def before(self, look: Lookup) -> None:
        self.src_table = look.table(self.src_db, self.src)
        wanted = {k.lower(): v for k, v in self.spec.items()}
        for name in look.partition_names(self.src_db, self.src):
            with contextlib.suppress(ValueError):
                spec = {k.lower(): v for k, v in partition_spec(name).items()}
                if all(spec.get(k) == v for k, v in wanted.items()):
                    self.names.append(name)
        self.parts = look.partitions(self.src_db, self.src, self.names)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        dst_table = look.table(self.dst_db, self.dst)
        if self.src_table is None or dst_table is None or not self.parts:
            return []
        added = look.partitions(self.dst_db, self.dst, self.names) if ok else []
        out: list[ListenerEvent] = [AddPartitionEvent(table=dst_table, partitions=added or self.parts, status=ok,
                                                      parameters=params)]
        out += [DropPartitionEvent(table=self.src_table, partitions=[p], delete_data=True, status=ok,
                                   parameters=params) for p in self.parts]
        return out


class CreateDatabase(Change):
    database_event = True

    def __init__(self, database: Any) -> None:
        self.database = database
        self.name = split_catalog(database.name or "")[1]
        self.keys = (database_key(self.name),)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        stored = look.database(self.name) if ok else None
        return [CreateDatabaseEvent(database=stored or self.database, status=ok, parameters=params)]


class AlterDatabase(Change):
    database_event = True

    def __init__(self, name: str, new_database: Any) -> None:
        self.name = split_catalog(name)[1]
        self.new_database = new_database
        self.keys = (database_key(self.name),)
        self.old: Any = None

    def before(self, look: Lookup) -> None:
        self.old = look.database(self.name)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.old is None:
            return []
        stored = look.database(self.name) if ok else None
        return [AlterDatabaseEvent(old_database=self.old, new_database=stored or self.new_database, status=ok,
                                   parameters=params)]


class DropDatabase(Change):
    """A DropDatabaseEvent, preceded for ``cascade`` by a DropTableEvent (``deleteData`` false) per table:
    Hive's ``drop_database_core`` drops each table through ``drop_table(db, name, false)``."""

    database_event = True

    def __init__(self, name: str, cascade: bool | None, database_events: bool = True) -> None:
        self.name = split_catalog(name)[1]
        self.cascade, self.database_events = bool(cascade), database_events
        self.keys = (database_key(self.name),)
        self.database: Any = None
        self.tables: list[Any] = []

    def before(self, look: Lookup) -> None:
        self.database = look.database(self.name)
        if self.cascade and self.database is not None:
            self.tables = look.tables(self.name)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.database is None:
            return []
        out: list[ListenerEvent] = []
        if ok:  # a failed cascade rolled back: no table was dropped
            out += [DropTableEvent(table=t, delete_data=False, status=True, parameters=params) for t in self.tables]
        if self.database_events:
            out.append(DropDatabaseEvent(database=self.database, status=ok, parameters=params))
        return out


class Insert(Change):
    """fire_listener_event with insert data: an InsertEvent per insert (``status`` is the request's
    ``successful``, as in ``HMSHandler.fire_listener_event``). Failed calls fire nothing."""

    def __init__(self, db: str, table: str, inserts: list[tuple[list[str], list[str], list[str]]],
                 successful: bool) -> None:
        self.db, self.name = _names(db, table)
        self.inserts, self.successful = inserts, successful
        self.keys = (table_key(self.db, self.name),)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if not ok:
            return []
        table = look.table(self.db, self.name)
        keys = [k.name for k in table.partitionKeys or []] if table is not None else []
        db, name = (table.dbName, table.tableName) if table is not None else (self.db, self.name)
        out: list[ListenerEvent] = []
        for values, files, checksums in self.inserts:
            key_values = dict(zip(keys, values, strict=False)) if values else {}
            out.append(InsertEvent(db_name=db, table_name=name, partition_key_values=key_values, files=files,
                                   file_checksums=checksums, status=self.successful, parameters=params))
        return out
