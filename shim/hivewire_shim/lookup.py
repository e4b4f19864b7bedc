"""The shim's own reads of the upstream metastore: old objects before a change, stored objects after it.

A Java listener inside the metastore sees the table as stored (with the ``createTime`` and parameters the
server filled in) and, for alters, the object as it was before. The shim gets both by asking the
upstream itself, on connections of its own (a small pool shared by every client connection), never on
the client's connection, whose bytes it only relays.

An object that does not exist is None (or left out of a list). A read that fails for any other reason
(a timeout, the metastore restarting) raises :class:`ReadFailed`: the change then knows the object's
state is unknown, not absent, and falls back to what the request carried rather than dropping the event.

Reads run while the change holds its table's lock, so they are bounded by a short ``timeout`` (the
shim's ``read_timeout``, 10 s by default), not by the relayed calls' 600 s: waiting for a free pooled
connection, the call itself, and no reconnect-and-retry once the time is up (:class:`ReadClient`). A hung
upstream thus costs a change a few seconds and a stand-in object, not minutes of every writer's time.
Failed reads are counted in :attr:`Lookup.failures`.

What the upstream is (:meth:`Lookup.release`, see :mod:`hivewire_shim.release`) is asked once, by the
first change, and kept; after a failed attempt, changes ask again at most every :data:`RELEASE_RETRY`
seconds (in between their events say ``release`` in :data:`~hivewire_shim.change.INCOMPLETE`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hivewire.errors import HivewireError, MetastoreConnectionError, NoSuchObjectError
from hivewire.metastore import MetastoreClient, MetastoreClientPool
from hivewire_shim.names import partition_name, split_catalog
from hivewire_shim.release import Release, learn

__all__ = ["DEFAULT_READ_TIMEOUT", "Lookup", "ReadClient", "ReadFailed"]

log = logging.getLogger(__name__)
_T = TypeVar("_T")
#: Partitions asked for per get_partitions_by_names call (Hive's own client batches similarly).
BATCH = 500


#: Seconds one of the shim's own reads may take (``--read-timeout``).
DEFAULT_READ_TIMEOUT = 10.0

#: Seconds after a failed attempt to learn what the upstream is before a change asks again.
RELEASE_RETRY = 30.0


def _batched(names: Sequence[str], read: Callable[[Sequence[str]], list[Any]]) -> list[Any]:
    """``read`` of every name, :data:`BATCH` names a call."""
    return [obj for i in range(0, len(names), BATCH) for obj in read(names[i : i + BATCH])]


class ReadFailed(HivewireError):
    """A read of the upstream failed; the object's state is unknown (not absent)."""


class ReadClient(MetastoreClient):
    """A :class:`~hivewire.metastore.MetastoreClient` that does not reconnect once :attr:`deadline` passed.

    ``MetastoreClient`` retries a read once on a fresh connection when the first attempt fails; after a
    timeout that would double the wait on a hung metastore. :class:`Lookup` sets the deadline per read.
    """

    deadline: float | None = None

    def open(self) -> MetastoreClient:
        if not self.is_open and self.deadline is not None and time.monotonic() >= self.deadline:
            raise MetastoreConnectionError(
                f"the read took its {self.timeout:g} s already; not reconnecting to "
                f"retry it (raise --read-timeout if the metastore is just slow)"
            )
        return super().open()


class Lookup:
    """Reads through a pool of :class:`~hivewire.metastore.MetastoreClient` made by ``factory``.

    ``timeout`` bounds the wait for a free pooled client and, with a :class:`ReadClient`, the reconnect
    retry; the clients' own ``timeout`` bounds each call (make them with the same value).
    """

    def __init__(
        self, factory: Callable[[], MetastoreClient], size: int = 16, timeout: float = DEFAULT_READ_TIMEOUT
    ) -> None:
        self._pool = MetastoreClientPool(factory, size=size)
        self.timeout = timeout
        self._failures = 0
        self._failures_lock = threading.Lock()
        self._release: Release | None = None
        self._release_retry_at = 0.0

    @property
    def failures(self) -> int:
        """Reads that failed (timed out, or the metastore could not be reached) since the start."""
        return self._failures

    def close(self) -> None:
        self._pool.close()

    def _read(self, what: str, fn: Callable[[MetastoreClient], _T], absent: _T) -> _T:
        deadline = time.monotonic() + self.timeout  # the wait for a pooled client counts too
        try:
            with self._pool.client(timeout=self.timeout) as client:
                if isinstance(client, ReadClient):
                    client.deadline = deadline
                return fn(client)
        except NoSuchObjectError:
            return absent
        except HivewireError as e:
            self._failed()
            raise ReadFailed(f"could not read {what} from the upstream metastore ({e})") from e
        except Exception as e:  # a modeling problem must never reach the client's call
            self._failed()
            log.debug("unexpected error reading %s", what, exc_info=True)
            raise ReadFailed(f"could not read {what} from the upstream metastore ({type(e).__name__}: {e})") from e

    def _failed(self) -> None:
        with self._failures_lock:
            self._failures += 1

    def release(self) -> Release:
        """What the upstream metastore is (asked once; :class:`ReadFailed` while it cannot be asked, and for
        :data:`RELEASE_RETRY` seconds after an attempt failed, without asking: an unreachable metastore
        costs one read timeout then, not one per change)."""
        release = self._release
        if release is not None:
            return release
        if time.monotonic() < self._release_retry_at:
            raise ReadFailed("what the upstream metastore is is not known yet (the last attempt to ask failed)")
        try:
            release = self._read("what the metastore is", learn, None)
        except ReadFailed:
            self._release_retry_at = time.monotonic() + RELEASE_RETRY
            raise
        assert release is not None  # learn() raises or answers
        self._release = release
        return release

    def table(self, db: str, name: str) -> Any | None:
        db = split_catalog(db)[1]
        return self._read(f"table {db}.{name}", lambda c: c.get_table(db, name), None)

    def table_names(self, db: str) -> list[str]:
        db = split_catalog(db)[1]
        return self._read(f"the table names of {db}", lambda c: list(c.get_all_tables(db)), [])

    def tables(self, db: str, names: Sequence[str]) -> list[Any]:
        """The tables of ``db`` with these names that exist (for the drop events of a cascading drop)."""
        db = split_catalog(db)[1]
        names = list(names)
        if not names:
            return []
        return self._read(
            f"{len(names)} table(s) of {db}", lambda c: _batched(names, lambda b: c.get_table_objects(db, b)), []
        )

    def database(self, name: str) -> Any | None:
        name = split_catalog(name)[1]
        return self._read(f"database {name}", lambda c: c.get_database(name), None)

    def partitions(self, db: str, table: str, names: Sequence[str]) -> list[Any]:
        """The partitions with these names that exist, in the metastore's order."""
        db = split_catalog(db)[1]
        names = list(names)
        if not names:
            return []
        return self._read(
            f"{len(names)} partition(s) of {db}.{table}",
            lambda c: _batched(names, lambda b: c.get_partitions_by_names(db, table, b)),
            [],
        )

    def partitions_by_values(self, db: str, table: Any, values: Sequence[Sequence[str]]) -> list[Any]:
        """The partitions of ``table`` (a Table) with these value lists that exist."""
        keys = [k.name for k in table.partitionKeys or []]
        names = []
        for vals in values:
            try:
                names.append(partition_name(keys, list(vals)))
            except ValueError:
                continue  # wrong number of values: the metastore refuses the call anyway
        return self.partitions(db, table.tableName, names)

    def partition_names(self, db: str, table: str) -> list[str]:
        db = split_catalog(db)[1]
        return self._read(f"the partition names of {db}.{table}", lambda c: c.get_partition_names(db, table), [])

    def all_partitions(self, db: str, table: str) -> list[Any]:
        db = split_catalog(db)[1]
        return self._read(f"the partitions of {db}.{table}", lambda c: c.get_partitions(db, table), [])

    def call(self, what: str, method: str, *args: Any) -> Any | None:
        """Any other read, by Thrift method name (None: no such object)."""
        return self._read(what, lambda c: c.call(method, *args), None)
