"""The changes to a database and the events they make: create, alter, drop (cascading or not).

Invariants: database events are hivewire's extension to Apiary's types (``database_event``: they can be
switched off); a cascading drop is preceded by a DropTableEvent (``deleteData`` false) per table it
dropped, as Hive's ``drop_database_core`` drops each through ``drop_table``.
"""

from __future__ import annotations

import logging
from typing import Any

from hivewire.events._model import (
    AlterDatabaseEvent,
    CreateDatabaseEvent,
    DropDatabaseEvent,
    DropTableEvent,
    ListenerEvent,
)
from hivewire_shim.change import Change, Params, _none, _table, _txn, copy_struct
from hivewire_shim.lookup import Lookup
from hivewire_shim.names import database_key, split_catalog
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["AlterDatabase", "CreateDatabase", "DropDatabase"]

# The logger of all the kinds of change, one name as before they had modules of their own.
log = logging.getLogger("hivewire_shim.changes")


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
