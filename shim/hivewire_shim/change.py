"""One modeled call in flight (:class:`Change`), and what every kind of change shares: its locks, its reads that
may fail and their stand-ins, the event parameters the shim adds.

Invariants: a change to a table holds its table's key exclusively and its database's shared; a read that
fails never leaves a successful change without its event (a stand-in takes its place, named in
:data:`INCOMPLETE`); the request's objects the events carry get what the upstream's release fills in
(:meth:`Change.prepare`: an unset catalog on Hive 3+; see ``release.py``), as its listeners see them (the
request's bytes are forwarded untouched). The kinds of change are in ``table_changes.py``,
``partition_changes.py`` and ``database_changes.py``; ``changes.py`` lists them all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hivewire.events._model import (
    ListenerEvent,
)
from hivewire_shim.lookup import Lookup, ReadFailed
from hivewire_shim.names import database_key, split_catalog, table_key
from hivewire_shim.release import HIVE_2, Release
from hivewire_thrift.hive_metastore import ttypes as hms

__all__ = ["DDL_TIME", "INCOMPLETE", "OUTCOME", "TRANSACTION_ACTIVE", "Change", "Params", "copy_struct"]

# The logger of all the kinds of change, one name as before they had modules of their own.
log = logging.getLogger("hivewire_shim.changes")

_T = TypeVar("_T")

Params = dict[str, str]
#: The parameter Hive 2.3+ adds to the events it fires from a transaction's end (``MetaStoreListenerNotifier``):
#: "true" only for the tables a server-side cascading ``drop_database`` drops inside its own transaction.
TRANSACTION_ACTIVE = "HIVE_METASTORE_TRANSACTION_ACTIVE"
#: Hive's ``hive_metastoreConstants.DDL_TIME``: the metastore sets it on a change when the client did not.
DDL_TIME = "transient_lastDdlTime"
#: The event parameter that marks the events of a change whose outcome is unknown (value ``unknown``).
OUTCOME = "hivewire.shim.outcome"
#: The event parameter naming the objects that stand in for ones the shim could not read (comma-separated:
#: ``table``, ``old_table``, ``partitions``, ``old_partitions``, ``tables``, ``database``, ``old_database``;
#: ``release``: what the upstream is could not be asked, so the objects lack what Hive 3+ fills in).
INCOMPLETE = "hivewire.shim.incomplete"


def copy_struct(obj: _T) -> _T:
    """A shallow copy of a generated Thrift struct (its fields are shared, not copied)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    return new


def _txn(params: Params, active: bool = False) -> Params:
    """``params`` with :data:`TRANSACTION_ACTIVE`, as the metastore adds it to this kind of event."""
    return {**params, TRANSACTION_ACTIVE: "true" if active else "false"}


def as_fired(
    sent: Any, stored: Any, *, location: bool = True, create_time: bool = True, release: Release = HIVE_2
) -> Any:
    """The object the metastore's event carries: the client's own ``sent`` object as the metastore changed it
    in place before storing it (``createTime``, ``parameters`` with ``transient_lastDdlTime`` and statistics,
    a default ``sd.location``; on Hive 4 a table's ``id`` and the ``tableType`` its translation chose), taken
    from ``stored``, the same object read back. Every other field stays as the client sent it, unset ones
    included (a read-back would turn them into ``[]``, ``{}`` or defaults). Without a read-back (``stored``
    None) it is ``sent``; without a storage descriptor, ``stored``."""
    if stored is None:
        return sent
    if sent.sd is None:
        return stored
    out = copy_struct(sent)
    if create_time:
        out.createTime = stored.createTime
    if release.fills_new_objects and isinstance(sent, hms.Table):
        out.id = stored.id
        if sent.tableType is not None:  # the translation's choice (an unset type stays unset in the event)
            out.tableType = stored.tableType
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
    #: The events of a call that succeeded are published whatever their status, as Apiary's listener publishes
    #: them (the INSERT of ``fire_listener_event(successful=false)``); otherwise a status=false event is
    #: published only with ``publish_failures``.
    publishes_any_status = False
    _incomplete_parts: set[str] | None = None
    #: What the upstream fills in (:meth:`prepare` sets it).
    release: Release = HIVE_2

    def prepare(self, look: Lookup) -> None:
        """Learn what the upstream is (asked once per shim) and give the request's objects what it fills in
        before it stores them or fires anything (call it before :meth:`before`)."""
        self.release = self._read(look.release, lambda: HIVE_2, "release")
        for obj in self._sent():
            self.release.with_catalog(obj)

    def _sent(self) -> Sequence[Any]:
        """The request's objects (tables, partitions, databases) the events carry."""
        return ()

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
    "release": "the objects as a Hive 2 metastore fires them (no default catalog filled in)",
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
