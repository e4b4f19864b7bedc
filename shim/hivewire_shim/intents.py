"""Intents: a change is written down before it is forwarded and crossed out once its events are published, so a
shim killed in between (or an upstream that failed after taking the call) leaves a record of a change that may
have been made without an event.

The file ``intents`` (in the spool directory) holds one line per intent, ``B <id> <method> <body>`` (base64),
and one per completion, ``E <id>``; each is one ``write`` to a file opened for appending, so a ``kill -9`` of
the shim loses none (with ``--spool-fsync always`` it is also forced to disk, for a machine crash). On start,
the intents without a completion are handed back (:meth:`Intents.pending`) and the shim publishes, for each,
the events the metastore's state now shows, marked ``hivewire.shim.outcome=unknown``.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import threading
from pathlib import Path

from hivewire_shim.spool_format import PRIVATE_FILE

__all__ = ["Intents"]

log = logging.getLogger(__name__)

#: Past this size, and with no intent open, the file starts afresh.
_COMPACT_BYTES = 16 << 20


class Intents:
    """The intent file in ``directory``; ``fsync``: force each line to disk before going on."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(directory) / "intents"
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.fsync = fsync
        self._lock = threading.Lock()
        self._pending = self._read()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        self._size = 0
        # What was pending stays written down until it has been reconciled.
        for intent_id, (method, body) in self._pending.items():
            self._write(_begin_line(intent_id, method, body))
        self._next = max(self._pending, default=0) + 1
        self._open: set[int] = set(self._pending)

    def _read(self) -> dict[int, tuple[str, bytes]]:
        pending: dict[int, tuple[str, bytes]] = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return pending
        for line in data.split(b"\n"):
            fields = line.split(b"\t")
            try:
                if fields[0] == b"B" and len(fields) == 4:
                    pending[int(fields[1])] = (base64.b64decode(fields[2]).decode(), base64.b64decode(fields[3]))
                elif fields[0] == b"E" and len(fields) == 2:
                    pending.pop(int(fields[1]), None)
            except ValueError:
                continue  # a line torn by a crash mid-write: its change was not forwarded yet
        return pending

    def pending(self) -> dict[int, tuple[str, bytes]]:
        """The intents of the last run that were not completed: id -> (method, the call's message bytes)."""
        return dict(self._pending)

    def begin(self, method: str, body: bytes) -> int:
        """Write down the intent to forward ``body`` (a call of ``method``); returns its id."""
        with self._lock:
            intent_id = self._next
            self._next += 1
            self._open.add(intent_id)
            self._write(_begin_line(intent_id, method, body))
            return intent_id

    def end(self, intent_id: int) -> None:
        """Cross the intent out: its events are published (or it is known to have made no change)."""
        with self._lock:
            self._open.discard(intent_id)
            self._pending.pop(intent_id, None)
            self._write(b"E\t%d\n" % intent_id)
            if not self._open and self._size > _COMPACT_BYTES:
                os.ftruncate(self._fd, 0)
                self._size = 0

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self._size += len(line)
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            os.close(self._fd)


def _begin_line(intent_id: int, method: str, body: bytes) -> bytes:
    return b"B\t%d\t%s\t%s\n" % (intent_id, base64.b64encode(method.encode()), base64.b64encode(body))
