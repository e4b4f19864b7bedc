"""The records Kafka refused for good (too large, invalid): set aside in the spool directory's
:data:`REJECTED_FILE`, one JSON object a line, and put back in the spool by :func:`replay_rejected`.

Invariants: a line is appended whole and fsync'ed, or not at all; replaying takes the spool's lock, so it
never runs beside a shim, and at worst sends a record twice, never loses one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path

from hivewire_shim.spool import Spool
from hivewire_shim.spool_format import PRIVATE_FILE, write_all

__all__ = ["REJECTED_FILE", "replay_rejected"]

# The Kafka sink's logger, one name as before this module was split from it.
log = logging.getLogger("hivewire_shim.kafka_sink")

#: The file, in the spool directory, of the records Kafka refused for good (one JSON object a line).
REJECTED_FILE = "rejected"


def _append_line(path: Path, line: bytes) -> None:
    """Append ``line`` to ``path`` durably, or raise OSError with the file as it was (no torn line)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        size = os.fstat(fd).st_size
        try:
            write_all(fd, line)
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def replay_rejected(spool_dir: str | os.PathLike[str]) -> int:
    """Put the records Kafka refused (``<spool_dir>/rejected``) back into the spool; return how many.

    Run it while no shim uses ``spool_dir`` (it takes the spool's lock), after raising the size limits
    that made Kafka refuse them; the next shim start sends them, after what the spool already holds.
    The file is renamed ``rejected.replayed-<time>``. Raises :class:`~hivewire.errors.HivewireError` if a
    shim holds the spool, and :class:`OSError` if the spool cannot be written (re-running it then sends
    the records appended so far twice: duplicates, not loss).
    """
    directory = Path(spool_dir)
    path = directory / REJECTED_FILE
    if not path.exists():
        return 0
    with Spool(directory, fsync="always") as spool:
        count = 0
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            try:
                entry = json.loads(line)
                payload = str(entry["payload"]).encode("utf-8", errors="surrogateescape")  # as _reject wrote it
                spool.append(str(entry["key"]), payload, int(entry["timestamp_ms"]))
            except (ValueError, KeyError, TypeError) as e:
                log.error("%s line %d is not a rejected record (%s); left out", path, number, e)
                continue
            count += 1
        os.replace(path, directory / f"{REJECTED_FILE}.replayed-{time.strftime('%Y%m%dT%H%M%S')}")
    log.info("%d rejected event(s) from %s are back in the spool; the shim sends them when it starts", count, path)
    return count
