"""The changes to a table's partitions and the events they make: add, alter (and rename), drop, exchange.

Invariants: as Hive's ``HMSHandler`` fires them: one AddPartitionEvent per add call, one
AlterPartitionEvent and one DropPartitionEvent per partition, and for exchange_partition(s) an
AddPartitionEvent on the destination plus a DropPartitionEvent per source partition.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from hivewire.events._model import (
    AddPartitionEvent,
    AlterPartitionEvent,
    DropPartitionEvent,
    ListenerEvent,
)
from hivewire_shim.change import Change, Params, _names, _none, _partition, _table_locks, _txn, as_fired, copy_struct
from hivewire_shim.lookup import Lookup
from hivewire_shim.names import partition_name, partition_spec

__all__ = ["AddPartitions", "AlterPartitions", "DropPartitions", "ExchangePartitions"]

# The logger of all the kinds of change, one name as before they had modules of their own.
log = logging.getLogger("hivewire_shim.changes")


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
