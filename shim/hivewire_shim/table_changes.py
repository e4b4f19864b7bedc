"""The changes to one table and the events they make: create, alter (and rename), drop, insert.

Invariants: as Hive's ``HMSHandler`` fires them: an AlterTableEvent (old -> new) for a rename, a
DropTableEvent with the table as it was, an InsertEvent naming the table as the request did on Hive 2 and
as stored (lower case) on Hive 3+.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hivewire.events._model import (
    AlterTableEvent,
    CreateTableEvent,
    DropTableEvent,
    InsertEvent,
    ListenerEvent,
)
from hivewire_shim.change import (
    DDL_TIME,
    Change,
    Params,
    _names,
    _none,
    _table,
    _table_like,
    _table_locks,
    _txn,
    as_fired,
)
from hivewire_shim.lookup import Lookup
from hivewire_shim.names import split_catalog
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["AlterTable", "CreateTable", "DropTable", "Insert"]

# The logger of all the kinds of change, one name as before they had modules of their own.
log = logging.getLogger("hivewire_shim.changes")


class CreateTable(Change):
    def __init__(self, table: Any, env: Any = None) -> None:
        self.table, self.env = table, env
        self.db, self.name = _names(table.dbName, table.tableName)
        self.keys, self.shared = _table_locks((self.db, self.name))

    def _sent(self) -> Sequence[Any]:
        return (self.table,)

    def events(self, look: Lookup, ok: bool, result: Any, params: Params) -> list[ListenerEvent]:
        # The metastore fires its event with the client's table (privileges included, which it never returns)
        # as it changed it; a failed create fires the table as sent, except that Hive 4 refuses an existing
        # table before it fires anything.
        if (
            not ok
            and self.release.fills_new_objects
            and isinstance(getattr(result, "o1", None), hms.AlreadyExistsException)
        ):
            return []
        stored = self._read(lambda: look.table(self.db, self.name), _none, "table") if ok else None
        return [
            CreateTableEvent(
                table=as_fired(self.table, stored, release=self.release),
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

    def _sent(self) -> Sequence[Any]:
        return (self.new_table,)

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
        env = self.env
        if env is None and self.release.fills_new_objects:  # Hive 4 alters with an empty context then
            env = hms.EnvironmentContext()
        return [
            AlterTableEvent(
                old_table=self.old,
                new_table=as_fired(self.new_table, stored, create_time=False),
                status=ok,
                environment_context=env,
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


class Insert(Change):
    """fire_listener_event with insert data: an InsertEvent per insert (``status`` is the request's
    ``successful``, as in ``HMSHandler.fire_listener_event``), published whatever that status, as Apiary 8.2.2
    publishes what the metastore fires. Failed calls fire nothing."""

    publishes_any_status = True

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
        if self.release.catalog is not None:  # Hive 3+ names the event by its table object: as stored
            db, name = (table.dbName, table.tableName) if table is not None else (self.db.lower(), self.name.lower())
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
