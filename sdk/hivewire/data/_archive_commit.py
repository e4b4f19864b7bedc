"""One Delta commit of an archiver's buffered messages (:func:`commit`): their rows and, in the same commit, the
last offset written of each Kafka partition, as the table's app transaction ``<app_id>-<partition>``.

Invariants: data and offsets land atomically, or nothing lands; rows at or below a partition's stored version
are never written again (delta-rs does not skip them itself), so every offset has at most one row; the commit
is made against exactly the snapshot it was checked against, so when another writer's commit for the same
partitions wins the race delta-rs refuses this one (``ConcurrentTransaction``) and nothing is written: the
caller checks a fresh snapshot and tries again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hivewire.data._archive_table import PARTITION_BY, txn_app_id
from hivewire.data._arrow import Message, Undecodable, paused_gc, to_arrow
from hivewire.errors import PrerequisiteError
from hivewire.events._model import ListenerEvent

try:
    import deltalake
    from deltalake.exceptions import CommitFailedError
except ImportError as e:  # pragma: no cover - depends on the environment
    raise PrerequisiteError(
        "hivewire archive needs deltalake, which is not installed: pip install 'hivewire[delta]'"
    ) from e

log = logging.getLogger("hivewire.archive")

#: What the buffers hold: raw messages as read, or (from tests and callers of ``Archiver._add``) events and
#: undecodable messages; :func:`~hivewire.data._arrow.to_arrow` takes each.
Item = Message | ListenerEvent | Undecodable


@dataclass
class Commit:
    """What one attempt to commit the buffers did."""

    won: bool = True  # False: another writer's commit to the same partitions won the race; nothing written
    rows: int = 0  # written
    undecodable: int = 0  # rows written without an event type (decode_error set)
    skipped: int = 0  # buffered rows the snapshot already held (another writer had them)
    versions: dict[int, int] = field(default_factory=dict)  # partition -> last offset written
    behind: dict[int, int] = field(default_factory=dict)  # partition -> stored version past all its buffered rows


def offset_of(item: Item) -> int:
    """The Kafka offset a buffered item was read at."""
    origin = item.origin
    assert origin is not None  # every buffered item was read from Kafka
    return origin.offset


def commit(table: Any, buffers: Mapping[int, Sequence[Item]], *, app_id: str, topic: str) -> Commit:
    """Commit ``buffers`` ({partition: items in offset order}) against the snapshot ``table``, skipping what it
    holds already."""
    done = Commit()
    items: list[Item] = []
    txns = []
    last: dict[int, int] = {}
    for p, buffered in buffers.items():
        stored = table.transaction_version(txn_app_id(app_id, p))
        # delta-rs would happily commit rows at or below the stored version again: drop them here.
        keep = buffered if stored is None else [x for x in buffered if offset_of(x) > stored]
        done.skipped += len(buffered) - len(keep)
        if keep:
            items.extend(keep)
            last[p] = offset_of(keep[-1])
            txns.append(deltalake.Transaction(txn_app_id(app_id, p), last[p]))
        if stored is not None and buffered and stored >= offset_of(buffered[-1]):
            done.behind[p] = int(stored)
    if not items:
        return done
    with paused_gc():
        data = to_arrow(items, on_error="record")
    try:
        # Committed against ``table``'s snapshot: a concurrent commit with any of these app transactions
        # makes delta-rs fail this one (ConcurrentTransaction) instead of writing the rows twice.
        deltalake.write_deltalake(
            table,
            data,
            mode="append",
            partition_by=PARTITION_BY,
            writer_properties=deltalake.WriterProperties(compression="ZSTD"),
            commit_properties=deltalake.CommitProperties(
                app_transactions=txns, custom_metadata={"hivewire.topic": topic, "hivewire.app_id": app_id}
            ),
        )
    except CommitFailedError as e:
        log.info("a commit of %d rows lost a race (%s); re-checking the table", len(items), e)
        done.won = False
        return done
    done.rows = len(items)
    done.undecodable = data.column("event_type").null_count
    done.versions = last
    log.debug(
        "committed %d rows at table version %s: %s", done.rows, table.version(), {t.app_id: t.version for t in txns}
    )
    return done
