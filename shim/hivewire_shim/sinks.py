"""Where the shim's events go: the :class:`Sink` protocol and the in-process :class:`AppSink`.

The Kafka sink, Apiary JSON through a durable spool, is :mod:`hivewire_shim.kafka_sink`.

A sink's :meth:`~Sink.publish` is called on the client's connection thread, under the lock of the table
the event is about and before the client gets its reply, so it must be quick, must not block on the
slow parts and must not raise: the Kafka sink appends to its spool (or, while the spool cannot be
written, keeps the event in memory), the App sink queues the event in memory (spilling to disk when
the App falls far behind). The slow parts (the producer, the listeners) run on the sink's own thread.
"""

from __future__ import annotations

import collections
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from hivewire._ratelimit import RateLimit
from hivewire.errors import ConfigError, HivewireError
from hivewire.events import _apiary as apiary
from hivewire.events._model import AlterTableEvent, ListenerEvent
from hivewire_shim.spool import Spool

__all__ = ["AppSink", "Dispatcher", "Sink", "fan_out", "partition_key"]

log = logging.getLogger(__name__)


class Sink(Protocol):
    def publish(self, event: ListenerEvent) -> None:
        """Take an event (quickly, without raising)."""
        ...

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is pending (up to ``timeout`` seconds) and stop."""
        ...


class Dispatcher(Protocol):
    """What the App sink needs of a ``hivewire.runtime.App``."""

    def dispatch(self, event: ListenerEvent) -> Any: ...


def fan_out(sinks: Sequence[Sink]) -> Callable[[ListenerEvent], None]:
    """One publish function over several sinks; a sink that raises is logged, never propagated."""

    def publish(event: ListenerEvent) -> None:
        for sink in sinks:
            try:
                sink.publish(event)
            except Exception:
                log.exception("sink %s failed to take %r; the event is lost for that sink", sink, event)

    return publish


def partition_key(event: ListenerEvent, *, alter_by_old_name: bool = False) -> str:
    """The ``db.table`` the Apiary producer hashes to pick the partition (``db`` for database events).

    For a table rename, Apiary 8.1.15 hashed the old name and apiary-extensions#145 went back to the new
    one; the new name is the default here, ``alter_by_old_name`` picks the old.
    """
    if alter_by_old_name and isinstance(event, AlterTableEvent) and event.old_table is not None:
        old = event.old_table
        return f"{old.dbName}.{old.tableName}"
    return event.qualified_name


class AppSink:
    """Delivers events to ``app.dispatch`` on a background thread, in the order they were published.

    :meth:`publish` encodes each event to Apiary JSON on the caller's thread and queues the bytes; the
    sink's thread decodes them and dispatches, so listeners get exactly what they would get from Kafka
    (the same field set for the Hive version, ``raw`` set). A listener error (``hivewire.ListenerError``
    from ``dispatch``) is logged; it never reaches the metastore client.

    Memory is bounded: up to ``max_memory_bytes`` of encoded events wait in memory. Past that, while the
    App is slower than the changes, later events *spill* to files in a fresh directory under
    ``spill_dir`` (default: the system's temporary directory), in order, and are dispatched from there
    once the ones in memory are; publishing never blocks on a slow listener and never fails a call. The
    spill is not kept across restarts (like the queue in memory, it goes with the process). An event
    that can be neither held nor spilled (the spill's disk is full) is lost: counted in :attr:`lost`
    and logged as an ERROR.
    """

    def __init__(
        self,
        app: Dispatcher,
        *,
        name: str = "app",
        max_memory_bytes: int = 64 << 20,
        spill_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if max_memory_bytes < 0:
            raise ConfigError("max_memory_bytes", f"{max_memory_bytes} must be zero or more")
        self.app = app
        self.name = name
        self.max_memory_bytes = max_memory_bytes
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self._lock = threading.Condition()
        self._memory: collections.deque[bytes] = collections.deque()
        self._memory_bytes = 0
        self._spill: Spool | None = None
        self._spill_cursor: Any = None
        self._spill_path: Path | None = None
        # Once an event spilled, later ones spill too until the dispatcher caught up with the spill: order.
        self._spilling = False
        self._closing = False
        self._outstanding = 0
        self.dispatched = 0
        self.failed = 0
        #: Events written to the spill because memory was full.
        self.spilled = 0
        #: Events that could be neither held in memory nor spilled (each one logged).
        self.lost = 0
        self._spill_errors = RateLimit(30.0)
        self._thread = threading.Thread(target=self._run, name=f"hivewire-shim-sink-{name}", daemon=True)
        self._thread.start()

    @property
    def memory_bytes(self) -> int:
        """Bytes of encoded events waiting in memory (at most ``max_memory_bytes``)."""
        return self._memory_bytes

    @property
    def pending(self) -> int:
        """Events published and not dispatched yet (in memory or spilled)."""
        return self._outstanding

    def publish(self, event: ListenerEvent) -> None:
        try:
            payload = apiary.encode(event)
        except Exception:
            log.exception("sink %s: could not encode %r as Apiary JSON; not dispatched", self.name, event)
            return
        with self._lock:
            if not self._spilling and self._memory_bytes + len(payload) <= self.max_memory_bytes:
                self._memory.append(payload)
                self._memory_bytes += len(payload)
            else:
                try:
                    self._spill_one(event.qualified_name, payload)
                except (OSError, HivewireError) as e:
                    self.lost += 1
                    log.error(
                        "sink %s: an event for %s is LOST: %d MB of events wait in memory and the spill "
                        "cannot be written (%s); free space under %s, or make the listeners faster",
                        self.name,
                        event.qualified_name,
                        self._memory_bytes >> 20,
                        e,
                        self.spill_dir or tempfile.gettempdir(),
                    )
                    return
            self._outstanding += 1
            self._lock.notify_all()

    def _spill_one(self, key: str, payload: bytes) -> None:
        """Append to the spill (call with the lock); raise OSError/HivewireError if it cannot be written."""
        if self._spill is None:
            base = self.spill_dir or Path(tempfile.gettempdir())
            base.mkdir(parents=True, exist_ok=True)
            path = Path(tempfile.mkdtemp(prefix=f"hivewire-appsink-{self.name}-", dir=base))
            self._spill = Spool(path, fsync="never")
            self._spill_path = path
            self._spill_cursor = self._spill.cursor()
        if not self._spilling and self._spill_errors.due():
            log.warning(
                "sink %s: %d MB of events wait for the App's listeners; later ones spill to %s until they "
                "catch up (the listeners are slower than the metastore's changes)",
                self.name,
                self._memory_bytes >> 20,
                self._spill_path,
            )
        self._spill.append(key, payload)
        self._spilling = True
        self.spilled += 1

    def _next(self) -> tuple[list[bytes], int | None] | None:
        """The next payloads to dispatch and, if they come from the spill, the last one's sequence number;
        None once closing and nothing is left."""
        with self._lock:
            while True:
                if self._memory:
                    payload = self._memory.popleft()
                    self._memory_bytes -= len(payload)
                    return [payload], None
                if self._spilling:
                    assert self._spill is not None
                    records = self._spill_cursor.read(100)
                    if records:
                        return [r.payload for r in records], records[-1].seq
                    if self._spill_cursor.position >= self._spill.last_seq:
                        self._spilling = False  # caught up: memory again (appends happen under this lock)
                        continue
                if self._closing:
                    return None
                self._lock.wait()

    def _run(self) -> None:
        try:
            while (batch := self._next()) is not None:
                payloads, last_seq = batch
                for payload in payloads:
                    self._dispatch(payload)
                if last_seq is not None and self._spill is not None:
                    self._spill.ack(last_seq)
                    self._spill.checkpoint()
        finally:
            self._drop_spill()

    def _dispatch(self, payload: bytes) -> None:
        event: Any = None
        try:
            event = apiary.decode(payload)
            self.app.dispatch(event)
            self.dispatched += 1
        except Exception as e:  # ListenerError after every listener ran, or anything else: log only
            self.failed += 1
            log.error(
                "sink %s: dispatching %r failed: %s", self.name, event, e, exc_info=type(e).__name__ != "ListenerError"
            )
        finally:
            with self._lock:
                self._outstanding -= 1
                self._lock.notify_all()

    def _drop_spill(self) -> None:
        with self._lock:
            spill, path, self._spill = self._spill, self._spill_path, None
        if spill is not None:
            spill.close()
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every published event was dispatched; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: self._outstanding == 0, timeout)

    def close(self, timeout: float | None = None) -> None:
        """Dispatch what is pending (up to ``timeout`` seconds), then stop; the rest is dropped."""
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning(
                "sink %s: %d event(s) were not dispatched before the shim stopped (a listener is still running)",
                self.name,
                self._outstanding,
            )

    def __repr__(self) -> str:
        return f"AppSink({self.name!r})"
