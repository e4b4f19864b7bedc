"""The events each kind of change produces: what a listener inside the metastore would see.

Each :class:`Change` is one modeled call in flight. :meth:`Change.before` reads, on the shim's own
connections, what the event needs from before the change (the old table of an alter, the table and
partitions of a drop); :meth:`Change.events` builds the events once the reply is in, reading back what
the metastore stored when the request does not carry it (the server fills in ``createTime``, parameters,
locations). They mirror Hive's ``HMSHandler``: one AddPartitionEvent per add call, one
AlterPartitionEvent and one DropPartitionEvent per partition, DropTableEvents (``deleteData`` false)
before the DropDatabaseEvent of a cascading drop, an AddPartitionEvent on the destination plus a
DropPartitionEvent per source partition for exchange_partition(s), an AlterTableEvent (old -> new) for a
rename.

An object that does not exist is not reported (an alter of a table that was not there fails anyway). An
object that could not be *read* (a timeout, the metastore restarting) is replaced by what the request
carried, or by an object holding only the names the request gave; the event then says so in its
``parameters`` (:data:`INCOMPLETE`, e.g. ``"old_table"``) and a WARNING is logged. A successful change is
not left without its event because a read failed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

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
    InsertEvent,
    ListenerEvent,
)
from hivewire_shim.lookup import Lookup, ReadFailed
from hivewire_shim.names import database_key, partition_name, partition_spec, split_catalog, table_key
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = [
    "DDL_TIME",
    "INCOMPLETE",
    "OUTCOME",
    "TRANSACTION_ACTIVE",
    "AddPartitions",
    "AlterDatabase",
    "AlterPartitions",
    "AlterTable",
    "Change",
    "CreateDatabase",
    "CreateTable",
    "DropDatabase",
    "DropPartitions",
    "DropTable",
    "ExchangePartitions",
    "Insert",
    "Params",
    "copy_struct",
]

log = logging.getLogger(__name__)

Params = dict[str, str]
_T = TypeVar("_T")

#: The parameter Hive 2.3+ adds to the events it fires from a transaction's end (``MetaStoreListenerNotifier``):
#: "true" only for the tables a server-side cascading ``drop_database`` drops inside its own transaction.
TRANSACTION_ACTIVE = "HIVE_METASTORE_TRANSACTION_ACTIVE"

#: Hive's ``hive_metastoreConstants.DDL_TIME``: the metastore sets it on a change when the client did not.
DDL_TIME = "transient_lastDdlTime"

#: The event parameter that marks the events of a change whose outcome is unknown (value ``unknown``).
OUTCOME = "hivewire.shim.outcome"

#: The event parameter naming the objects that stand in for ones the shim could not read (comma-separated:
#: ``table``, ``old_table``, ``partitions``, ``old_partitions``, ``tables``, ``database``, ``old_database``).
INCOMPLETE = "hivewire.shim.incomplete"


def copy_struct(obj: _T) -> _T:
    """A shallow copy of a generated Thrift struct (its fields are shared, not copied)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    return new


def _txn(params: Params, active: bool = False) -> Params:
    """``params`` with :data:`TRANSACTION_ACTIVE`, as the metastore adds it to this kind of event."""
    return {**params, TRANSACTION_ACTIVE: "true" if active else "false"}


def as_fired(sent: Any, stored: Any, *, location: bool = True, create_time: bool = True) -> Any:
    """The object the metastore's event carries: the client's own ``sent`` object as the metastore changed it
    in place before storing it (``createTime``, ``parameters`` with ``transient_lastDdlTime`` and statistics,
    a default ``sd.location``), taken from ``stored``, the same object read back. Every other field stays as
    the client sent it, unset ones included (a read-back would turn them into ``[]``, ``{}`` or defaults).
    Without a read-back (``stored`` None) it is ``sent``; without a storage descriptor, ``stored``."""
    if stored is None:
        return sent
    if sent.sd is None:
        return stored
    out = copy_struct(sent)
    if create_time:
        out.createTime = stored.createTime
    out.parameters = stored.parameters
    if location and stored.sd is not None and stored.sd.location != sent.sd.location:
        out.sd = copy_struct(sent.sd)
        out.sd.location = stored.sd.location
    return out


def _table(db: str, name: str) -> Any:
    """A table known only by its names (the request gave no more)."""
    return hms.Table(dbName=db, tableName=name)


def _table_like(table: Any, db: str, name: str) -> Any:
    """The request's table under other names: the best stand-in for the table as it was before an alter."""
    if table is None:
        return _table(db, name)
    out = copy_struct(table)
    out.dbName, out.tableName = db, name
    return out


def _partition(db: str, table: str, values: Sequence[str]) -> Any:
    return hms.Partition(values=list(values), dbName=db, tableName=table)


class Change:
    """One modeled call in flight. ``keys`` are the lock keys it holds exclusively, ``shared`` the ones it
    holds shared; subclasses read in :meth:`before` and build events in :meth:`events` (``ok``: the call
    succeeded; ``result``: the decoded ``*_result``).

    A change to a table holds its table's key exclusively and its database's key shared: changes to one
    table run one at a time, changes to different tables of a database run side by side, and a change to
    the database itself (a cascading ``drop_database`` above all) holds the database key exclusively, so
    it runs alone in that database and sees exactly the tables it drops.
    """

    keys: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    #: Database changes are hivewire's extension to Apiary's event types and can be switched off.
    database_event = False
    _incomplete_parts: set[str] | None = None

    def before(self, look: Lookup) -> None:
        return None

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        raise NotImplementedError

    def outcome_unknown(self, look: Lookup, params: Params) -> list[ListenerEvent]:
        """The events of this change when nobody knows whether the metastore made it (the shim was killed
        between forwarding it and publishing, or the upstream failed after taking it): what the metastore's
        state shows now, as if it succeeded, or the request's objects where that state has nothing."""
        self.before(look)
        return self.events(look, True, None, params)

    # -- reads that may fail ------------------------------------------------------------------------------
    def _read(self, read: Callable[[], _T], stand_in: Callable[[], _T], part: str) -> _T:
        """``read()``, or ``stand_in()`` if the read failed (logged, and noted in the event's parameters)."""
        try:
            return read()
        except ReadFailed as e:
            log.warning("%s; the event of %s carries %s instead", e, self, _STAND_INS.get(part, part))
            self._incomplete().add(part)
            return stand_in()

    def _read_table(self, look: Lookup, db: str, name: str) -> Any:
        """The table as stored; if it cannot be read, one with only its names; None if it does not exist."""
        return self._read(lambda: look.table(db, name), lambda: _table(db, name), "table")

    def _incomplete(self) -> set[str]:
        if self._incomplete_parts is None:
            self._incomplete_parts = set()
        return self._incomplete_parts

    def _params(self, params: Params) -> Params:
        incomplete = self._incomplete()
        return {**params, INCOMPLETE: ",".join(sorted(incomplete))} if incomplete else params

    def __str__(self) -> str:
        names = [k.split(":", 1)[1] for k in self.keys]
        return f"{type(self).__name__}({', '.join(names)})"


_STAND_INS = {
    "table": "a table with only the names the call gave (or the request's table)",
    "old_table": "the request's new table under the old name as the old table",
    "partitions": "the partitions the request gave",
    "old_partitions": "the new partitions as the old ones",
    "tables": "tables with only their names",
    "database": "the request's database (or only its name)",
    "old_database": "the request's new database as the old one",
}


def _names(db: str | None, table: str | None) -> tuple[str, str]:
    return split_catalog(db or "")[1], table or ""


def _table_locks(*tables: tuple[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The exclusive keys (the tables) and the shared keys (their databases) of a change to ``tables``."""
    return (
        tuple(dict.fromkeys(table_key(db, name) for db, name in tables)),
        tuple(dict.fromkeys(database_key(db) for db, _ in tables)),
    )


def _none() -> None:
    return None


class CreateTable(Change):
    def __init__(self, table: Any, env: Any = None) -> None:
        self.table, self.env = table, env
        self.db, self.name = _names(table.dbName, table.tableName)
        self.keys, self.shared = _table_locks((self.db, self.name))

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        # The metastore fires its event with the client's table (privileges included, which it never returns)
        # as it changed it; a failed create fires the table as sent.
        stored = self._read(lambda: look.table(self.db, self.name), _none, "table") if ok else None
        return [
            CreateTableEvent(
                table=as_fired(self.table, stored),
                status=ok,
                environment_context=self.env,
                parameters=_txn(self._params(params)),
            )
        ]


class AlterTable(Change):
    def __init__(self, db: str, name: str, new_table: Any, env: Any = None) -> None:
        self.db, self.name = _names(db, name)
        self.new_table, self.env = new_table, env
        self.new_db = split_catalog(new_table.dbName)[1] if new_table.dbName else self.db
        self.new_name = new_table.tableName or self.name
        self.keys, self.shared = _table_locks((self.db, self.name), (self.new_db, self.new_name))
        self.old: Any = None

    def before(self, look: Lookup) -> None:
        self.old = self._read(
            lambda: look.table(self.db, self.name), lambda: _table_like(self.new_table, self.db, self.name), "old_table"
        )

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.old is None:
            log.warning("alter of %s.%s: no old table to report (it did not exist before)", self.db, self.name)
            return []
        # The event's new table is the client's as the metastore changed it (its createTime is not stored).
        read_back = ok and self._changed_by_the_metastore()
        stored = self._read(lambda: look.table(self.new_db, self.new_name), _none, "table") if read_back else None
        return [
            AlterTableEvent(
                old_table=self.old,
                new_table=as_fired(self.new_table, stored, create_time=False),
                status=ok,
                environment_context=self.env,
                parameters=_txn(self._params(params)),
            )
        ]

    def outcome_unknown(self, look: Lookup, params: Params) -> list[ListenerEvent]:
        self.before(look)
        if self.old is None:  # renamed already: the new table under the old name stands in
            self.old = _table_like(self.new_table, self.db, self.name)
        return self.events(look, True, None, params)

    def _changed_by_the_metastore(self) -> bool:
        """Whether the metastore changes the client's new table before storing it, so it must be read back:
        a rename moves a managed table's location, a missing ``transient_lastDdlTime`` is set, and the
        statistics of an unpartitioned table are computed again (``HiveAlterHandler.alterTable``) unless
        the context says ``DO_NOT_UPDATE_STATS`` or it is a view."""
        new = self.new_table
        if new.sd is None or (self.new_db.lower(), self.new_name.lower()) != (self.db.lower(), self.name.lower()):
            return True
        if not (new.parameters or {}).get(DDL_TIME):
            return True
        if new.tableType == "VIRTUAL_VIEW":
            return False
        context = (self.env.properties or {}) if self.env is not None else {}
        if context.get("DO_NOT_UPDATE_STATS") == "true":
            return False
        return not (new.partitionKeys and self.old.partitionKeys)


class DropTable(Change):
    def __init__(self, db: str, name: str, delete_data: bool | None, env: Any = None) -> None:
        self.db, self.name = _names(db, name)
        self.delete_data, self.env = bool(delete_data), env
        self.keys, self.shared = _table_locks((self.db, self.name))
        self.table: Any = None

    def before(self, look: Lookup) -> None:
        self.table = self._read_table(look, self.db, self.name)

    def outcome_unknown(self, look: Lookup, params: Params) -> list[ListenerEvent]:
        self.before(look)
        if self.table is None:  # dropped already: a table with only its names stands in
            self.table = _table(self.db, self.name)
        return self.events(look, True, None, params)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.table is None:
            return []
        return [
            DropTableEvent(
                table=self.table,
                delete_data=self.delete_data,
                status=ok,
                environment_context=self.env,
                parameters=_txn(self._params(params)),
            )
        ]


class AddPartitions(Change):
    """add_partition(s), add_partitions_req/_pspec, append_partition*: one AddPartitionEvent per call.

    ``parts`` are the request's partitions (or ones built from its values); ``stored_from(result)`` gives the
    partitions the reply carries, if any, else they are read back by name.
    """

    def __init__(
        self,
        db: str,
        table: str,
        parts: Sequence[Any],
        env: Any = None,
        *,
        stored_from: Callable[[Any], list[Any] | None] = lambda result: None,
        if_not_exists: bool = False,
    ) -> None:
        self.db, self.name = _names(db, table)
        self.parts, self.env, self.stored_from = list(parts), env, stored_from
        self.if_not_exists = if_not_exists
        self.keys, self.shared = _table_locks((self.db, self.name))
        self.existing: set[str] = set()

    def _named(self, table: Any) -> list[tuple[Any, str]]:
        """The request's partitions with their names (ones with the wrong number of values left out)."""
        keys = [k.name for k in table.partitionKeys or []]
        named = []
        for p in self.parts:
            with contextlib.suppress(ValueError, TypeError):
                named.append((p, partition_name(keys, list(p.values or []))))
        return named

    def before(self, look: Lookup) -> None:
        if not self.if_not_exists:
            return
        # Only the partitions that did not exist yet are added (and reported), as the metastore does.
        # Unreadable: every requested partition is reported (some may have existed already).
        table = self._read(lambda: look.table(self.db, self.name), _none, "partitions")
        if table is not None:
            names = [n for _, n in self._named(table)]
            keys = [k.name for k in table.partitionKeys]
            self.existing = self._read(
                lambda: {partition_name(keys, p.values) for p in look.partitions(self.db, self.name, names)},
                set,
                "partitions",
            )

    def outcome_unknown(self, look: Lookup, params: Params) -> list[ListenerEvent]:
        # Every requested partition, as stored if it is there now (what existed before cannot be told).
        return self.events(look, True, None, params)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        table = self._read_table(look, self.db, self.name)
        if table is None:
            return []
        p = _txn(self._params(params))

        def event(parts: list[Any], status: bool) -> ListenerEvent:
            return AddPartitionEvent(
                table=table, partitions=parts, status=status, environment_context=self.env, parameters=p
            )

        if not ok:  # HMSHandler.add_partitions_core: every requested partition, as sent
            return [event(self.parts, False)]
        if table.partitionKeys is None:  # a stand-in table: the request's partitions are all we know
            return [event(self.parts, True)]
        keys = [k.name for k in table.partitionKeys]
        named = self._named(table)
        new = [(part, name) for part, name in named if name not in self.existing]
        carried = self.stored_from(result)
        if carried is not None:
            stored = {partition_name(keys, c.values): c for c in carried}
        elif new:
            stored = self._read(
                lambda: {
                    partition_name(keys, c.values): c for c in look.partitions(self.db, self.name, [n for _, n in new])
                },
                dict,
                "partitions",
            )
        else:
            stored = {}
        # The metastore fires the client's partitions as it changed them, and does so even when an
        # ifNotExists request added none; the ones it skipped follow in a status=false event, as sent.
        out = [event([as_fired(part, stored.get(name)) for part, name in new], True)]
        skipped = [part for part, name in named if name in self.existing]
        if skipped:
            out.append(event(skipped, False))
        return out


class AlterPartitions(Change):
    """alter_partition(s) and rename_partition: one AlterPartitionEvent per partition, in request order.

    ``old_values`` (rename only) are the values the partition had before.
    """

    def __init__(
        self, db: str, table: str, new_parts: Sequence[Any], env: Any = None, *, old_values: Sequence[str] | None = None
    ) -> None:
        self.db, self.name = _names(db, table)
        self.new_parts, self.env = list(new_parts), env
        self.old_values = list(old_values) if old_values is not None else None
        self.keys, self.shared = _table_locks((self.db, self.name))
        self.table: Any = None
        self.old: dict[tuple[str, ...], Any] | None = {}  # None: could not be read

    def _before_values(self, new: Any) -> list[str]:
        return self.old_values if self.old_values is not None else list(new.values or [])

    def before(self, look: Lookup) -> None:
        self.table = self._read_table(look, self.db, self.name)
        if self.table is None:
            return
        if self.table.partitionKeys is None:  # a stand-in: the partitions cannot be named
            self.old = None
            self._incomplete().add("old_partitions")
            return
        wanted = [self._before_values(p) for p in self.new_parts]
        self.old = self._read(
            lambda: {tuple(p.values): p for p in look.partitions_by_values(self.db, self.table, wanted)},
            _none,
            "old_partitions",
        )

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.table is None:
            return []
        stored: dict[tuple[str, ...], Any] = {}
        if ok and self.table.partitionKeys is not None:
            stored = self._read(
                lambda: {
                    tuple(p.values): p
                    for p in look.partitions_by_values(self.db, self.table, [p.values or [] for p in self.new_parts])
                },
                dict,
                "partitions",
            )
        out: list[ListenerEvent] = []
        for new in self.new_parts:
            before_values = self._before_values(new)
            if self.old is None:  # unreadable: the new partition under its old values stands in
                old = copy_struct(new)
                old.values = list(before_values)
            else:
                old = self.old.get(tuple(before_values))
            if old is None:
                log.warning(
                    "alter of partition %s of %s.%s: it did not exist before; no event",
                    before_values,
                    self.db,
                    self.name,
                )
                continue
            out.append(
                AlterPartitionEvent(
                    table=self.table,
                    old_partition=old,
                    new_partition=as_fired(new, stored.get(tuple(new.values or [])), create_time=False),
                    status=ok,
                    environment_context=self.env,
                    parameters=self._params(params),
                )
            )
        return out


class DropPartitions(Change):
    """drop_partition*, drop_partitions_req: one DropPartitionEvent per dropped partition.

    The partitions are read before the drop, by ``names``/``values``; a drop by expression reads all of them
    (unless the reply will carry the dropped ones: ``stored_from``).
    """

    def __init__(
        self,
        db: str,
        table: str,
        *,
        names: Sequence[str] = (),
        values: Sequence[Sequence[str]] = (),
        by_expression: bool = False,
        delete_data: bool | None = False,
        env: Any = None,
        stored_from: Callable[[Any], list[Any] | None] = lambda result: None,
        reply_carries: bool = False,
    ) -> None:
        self.db, self.name = _names(db, table)
        self.names, self.values = list(names), [list(v) for v in values]
        self.by_expression, self.reply_carries = by_expression, reply_carries
        self.delete_data, self.env, self.stored_from = bool(delete_data), env, stored_from
        self.keys, self.shared = _table_locks((self.db, self.name))
        self.table: Any = None
        self.parts: list[Any] | None = []  # None: unknown (a drop by expression that could not be read)

    def _requested(self) -> list[Any]:
        """Partitions with only the values the request named."""
        out = []
        for name in self.names:
            with contextlib.suppress(ValueError):
                out.append(_partition(self.db, self.name, list(partition_spec(name).values())))
        return out + [_partition(self.db, self.name, v) for v in self.values]

    def before(self, look: Lookup) -> None:
        self.table = self._read_table(look, self.db, self.name)
        if self.table is None:
            return
        if self.by_expression:
            if self.reply_carries:
                pass
            elif self.table.partitionKeys is None:  # a stand-in: what is left afterwards cannot be named
                self.parts = None
            else:
                self.parts = self._read(lambda: look.all_partitions(self.db, self.name), _none, "partitions")
        elif self.table.partitionKeys is None:
            self.parts = self._requested()
        else:
            self.parts = self._read(
                lambda: (
                    look.partitions(self.db, self.name, self.names)
                    + look.partitions_by_values(self.db, self.table, self.values)
                ),
                self._requested,
                "partitions",
            )

    def outcome_unknown(self, look: Lookup, params: Params) -> list[ListenerEvent]:
        self.before(look)
        if self.table is not None and not self.by_expression and not self.parts:
            self.parts = self._requested()  # dropped already: partitions with the values named stand in
        return self.events(look, True, None, params)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.table is None:
            return []
        dropped = self.stored_from(result) if ok else None
        if dropped is None:
            dropped = self.parts
            if dropped and ok and self.by_expression:  # which of them went: the ones no longer there
                names = self._read(lambda: look.partition_names(self.db, self.name), _none, "partitions")
                if names is None:
                    dropped = None
                else:
                    remaining = set(names)
                    keys = [k.name for k in self.table.partitionKeys]
                    dropped = [p for p in dropped if partition_name(keys, p.values) not in remaining]
        if dropped is None:
            # Publishing every candidate would report partitions that still exist as dropped.
            log.warning(
                "%s: which partitions the expression dropped could not be read; no event for this drop "
                "(the metastore has the truth: compare its partitions with your consumers')",
                self,
            )
            return []
        return [
            DropPartitionEvent(
                table=self.table,
                partitions=[p],
                delete_data=self.delete_data,
                status=ok,
                environment_context=self.env,
                parameters=_txn(self._params(params)),
            )
            for p in dropped
        ]


class ExchangePartitions(Change):
    """exchange_partition(s): an AddPartitionEvent on the destination and a DropPartitionEvent (deleteData
    true) per partition on the source, as ``HMSHandler.exchange_partitions`` fires them."""

    def __init__(self, spec: dict[str, str], source_db: str, source: str, dest_db: str, dest: str) -> None:
        self.spec = dict(spec or {})
        self.src_db, self.src = _names(source_db, source)
        self.dst_db, self.dst = _names(dest_db, dest)
        self.keys, self.shared = _table_locks((self.src_db, self.src), (self.dst_db, self.dst))
        self.src_table: Any = None
        self.names: list[str] | None = []  # None: unknown
        self.parts: list[Any] = []

    def before(self, look: Lookup) -> None:
        self.src_table = self._read_table(look, self.src_db, self.src)
        all_names = self._read(lambda: look.partition_names(self.src_db, self.src), _none, "partitions")
        if all_names is None:
            self.names = None
            return
        wanted = {k.lower(): v for k, v in self.spec.items()}
        self.names = []
        for name in all_names:
            with contextlib.suppress(ValueError):
                spec = {k.lower(): v for k, v in partition_spec(name).items()}
                if all(spec.get(k) == v for k, v in wanted.items()):
                    self.names.append(name)
        names = self.names
        self.parts = self._read(
            lambda: look.partitions(self.src_db, self.src, names),
            lambda: [_partition(self.src_db, self.src, list(partition_spec(n).values())) for n in names],
            "partitions",
        )

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.names is None:
            log.warning("%s: which partitions moved could not be read; no event for this exchange", self)
            return []
        dst_table = self._read_table(look, self.dst_db, self.dst)
        if self.src_table is None or dst_table is None or not self.parts:
            return []
        names = self.names
        added = self._read(lambda: look.partitions(self.dst_db, self.dst, names), list, "partitions") if ok else []
        p = _txn(self._params(params))
        out: list[ListenerEvent] = [
            AddPartitionEvent(table=dst_table, partitions=added or self.parts, status=ok, parameters=p)
        ]
        out += [
            DropPartitionEvent(table=self.src_table, partitions=[part], delete_data=True, status=ok, parameters=p)
            for part in self.parts
        ]
        return out


class CreateDatabase(Change):
    database_event = True

    def __init__(self, database: Any) -> None:
        self.database = database
        self.name = split_catalog(database.name or "")[1]
        self.keys = (database_key(self.name),)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if not ok and (result is None or result.o3 is None):
            # An existing database or a bad name is refused before HMSHandler.create_database_core fires
            # anything; only a failure inside it (a MetaException) fires a status=false event.
            return []
        # The event has the client's database with the location the metastore gave it (an unset owner type
        # stays unset, though the metastore stores USER).
        stored = self._read(lambda: look.database(self.name), _none, "database") if ok else None
        database = self.database
        if stored is not None and stored.locationUri != database.locationUri:
            database = copy_struct(database)
            database.locationUri = stored.locationUri
        return [CreateDatabaseEvent(database=database, status=ok, parameters=_txn(self._params(params)))]


class AlterDatabase(Change):
    database_event = True

    def __init__(self, name: str, new_database: Any) -> None:
        self.name = split_catalog(name)[1]
        self.new_database = new_database
        self.keys = (database_key(self.name),)
        self.old: Any = None

    def _stand_in(self) -> Any:
        old = copy_struct(self.new_database) if self.new_database is not None else hms.Database()
        old.name = self.name
        return old

    def before(self, look: Lookup) -> None:
        self.old = self._read(lambda: look.database(self.name), self._stand_in, "old_database")

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.old is None:
            return []
        stored = self._read(lambda: look.database(self.name), _none, "database") if ok else None
        return [
            AlterDatabaseEvent(
                old_database=self.old,
                new_database=stored or self.new_database,
                status=ok,
                parameters=self._params(params),
            )
        ]


class DropDatabase(Change):
    """A DropDatabaseEvent, preceded for ``cascade`` by a DropTableEvent (``deleteData`` false) per table:
    Hive's ``drop_database_core`` drops each table through ``drop_table(db, name, false)``.

    It holds the database's key exclusively, so no change to a table of the database made through the
    shim runs between its listing of the tables and the drop: a table created at the same time is either
    created first (then listed, and its DROP_TABLE published) or after the drop (then it fails).
    """

    database_event = True

    def __init__(self, name: str, cascade: bool | None, database_events: bool = True) -> None:
        self.name = split_catalog(name)[1]
        self.cascade, self.database_events = bool(cascade), database_events
        self.keys = (database_key(self.name),)
        self.database: Any = None
        self.tables: list[Any] | None = []  # None: unknown

    def before(self, look: Lookup) -> None:
        self.database = self._read(lambda: look.database(self.name), lambda: hms.Database(name=self.name), "database")
        self.tables = []
        if not self.cascade or self.database is None:
            return
        names = self._read(lambda: look.table_names(self.name), _none, "tables")
        if names is None:
            self.tables = None
            return
        self.tables = self._read(
            lambda: look.tables(self.name, names), lambda: [_table(self.name, n) for n in names], "tables"
        )

    def outcome_unknown(self, look: Lookup, params: Params) -> list[ListenerEvent]:
        self.before(look)
        if self.database is None:  # dropped already (its tables' events cannot be told)
            self.database = hms.Database(name=self.name)
        return self.events(look, True, None, params)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if self.database is None:
            return []
        out: list[ListenerEvent] = []
        p = _txn(self._params(params))
        if ok and self.tables is None:
            log.warning("%s: its tables could not be read before the drop; their DROP_TABLE events are missing", self)
        if ok:  # a failed cascade rolled back: no table was dropped
            # drop_database_core drops them inside its own transaction: the only events where it is "true".
            inner = _txn(self._params(params), active=True)
            out += [
                DropTableEvent(table=t, delete_data=False, status=True, parameters=inner) for t in self.tables or []
            ]
        if self.database_events:
            out.append(DropDatabaseEvent(database=self.database, status=ok, parameters=p))
        return out


class Insert(Change):
    """fire_listener_event with insert data: an InsertEvent per insert (``status`` is the request's
    ``successful``, as in ``HMSHandler.fire_listener_event``). Failed calls fire nothing."""

    def __init__(
        self, db: str, table: str, inserts: list[tuple[list[str], list[str], list[str]]], successful: bool
    ) -> None:
        self.db, self.name = _names(db, table)
        self.inserts, self.successful = inserts, successful
        self.sent_names = (db, table)  # the InsertEvent names the table as the request did, case and all
        self.keys, self.shared = _table_locks((self.db, self.name))

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        if not ok:
            return []
        # Unreadable: the partition values cannot be named, so they are left out (noted in the parameters).
        table = self._read(lambda: look.table(self.db, self.name), _none, "table")
        keys = [k.name for k in table.partitionKeys or []] if table is not None else []
        db, name = self.sent_names
        out: list[ListenerEvent] = []
        for values, files, checksums in self.inserts:
            key_values = dict(zip(keys, values, strict=False)) if values else {}
            out.append(
                InsertEvent(
                    db_name=db,
                    table_name=name,
                    partition_key_values=key_values,
                    files=files,
                    file_checksums=checksums,
                    status=self.successful,
                    parameters=self._params(params),
                )
            )
        return out
