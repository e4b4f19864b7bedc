"""A bounded pool of :class:`~hivewire.metastore.MetastoreClient` shared by threads."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator

from hivewire.errors import ConfigError, MetastoreConnectionError, MetastoreError
from hivewire.metastore._client import MetastoreClient


class MetastoreClientPool:
    """A bounded pool of :class:`MetastoreClient` for many threads::

        pool = MetastoreClientPool(lambda: MetastoreClient(uris), size=4)
        with pool.client() as c:
            c.get_table("db", "t")

    A client whose call raised :class:`MetastoreConnectionError` is closed before it goes back, so the next
    user reconnects (possibly to another URI).
    """

    def __init__(self, factory: Callable[[], MetastoreClient], size: int = 4) -> None:
        if size < 1:
            raise ConfigError("pool size", "must be at least 1")
        self._factory = factory
        self._idle: queue.LifoQueue[MetastoreClient] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._closed = False

    @contextlib.contextmanager
    def client(self, timeout: float | None = None) -> Iterator[MetastoreClient]:
        if self._closed:
            raise MetastoreError("the metastore client pool is closed")
        if not self._slots.acquire(timeout=timeout):
            raise MetastoreError("no metastore client became free in time")
        try:
            try:
                c = self._idle.get_nowait()
            except queue.Empty:
                c = self._factory()
            try:
                yield c
            except MetastoreConnectionError:
                c.close()
                raise
            finally:
                if self._closed:
                    c.close()
                else:
                    self._idle.put(c)
        finally:
            self._slots.release()

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
