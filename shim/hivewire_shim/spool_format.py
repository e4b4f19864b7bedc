"""The spool's files as bytes: a record line (``seq<TAB>crc32<TAB>timestamp-ms<TAB>key<TAB>payload\\n``),
the segments' names (their first sequence number), the acknowledged marker's ranges (``17,19-23``), whole
writes, and the permissions every spool file and directory gets.

Invariants: the CRC covers everything after it, so a damaged line is recognised, and a valid record
inside a damaged line can be salvaged; spool files are readable by the shim's user only
(:data:`PRIVATE_FILE`, :data:`PRIVATE_DIRECTORY`), whatever the ``umask``.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PRIVATE_DIRECTORY", "PRIVATE_FILE", "SpoolRecord", "write_all"]

# The spool's logger, one name as before this module was split from it.
log = logging.getLogger("hivewire_shim.spool")

_SUFFIX = ".spool"
#: Where a record may start inside a damaged line: seq, crc, timestamp (raw tabs only separate fields).
_RECORD_START = re.compile(rb"(?=\d+\t[0-9a-f]{8}\t\d+\t)")
#: Spool files hold every event's full objects (table locations, parameters): readable by the shim's user only,
#: in a directory only that user can list (``umask`` notwithstanding).
PRIVATE_FILE = 0o600
PRIVATE_DIRECTORY = 0o700


def _private_directory(directory: Path) -> None:
    """Create ``directory`` (0700) or make an existing one and its files private (0700/0600)."""
    directory.mkdir(mode=PRIVATE_DIRECTORY, parents=True, exist_ok=True)
    try:
        os.chmod(directory, PRIVATE_DIRECTORY)
        for entry in os.scandir(directory):
            if entry.is_file(follow_symlinks=False):
                os.chmod(entry.path, PRIVATE_FILE)
    except OSError as e:
        log.warning("spool %s: could not make it private to the shim's user (%s); check its owner", directory, e)


@dataclass(frozen=True)
class SpoolRecord:
    """One spooled event: its sequence number, when it was published, its Kafka key and its Apiary JSON."""

    seq: int
    timestamp_ms: int
    key: str
    payload: bytes


def _encode(record: SpoolRecord) -> bytes:
    body = b"%d\t%s\t" % (record.timestamp_ms, json.dumps(record.key).encode("utf-8")) + record.payload
    return b"%d\t%08x\t" % (record.seq, zlib.crc32(body)) + body + b"\n"


def _decode(line: bytes) -> SpoolRecord | None:
    """The record on ``line`` (with its newline), or None if it is torn or corrupt."""
    if not line.endswith(b"\n"):
        return None
    try:
        seq, crc, body = line[:-1].split(b"\t", 2)
        if not seq.isdigit() or len(crc) != 8 or int(crc, 16) != zlib.crc32(body):
            return None
        ts, key, payload = body.split(b"\t", 2)
        return SpoolRecord(int(seq), int(ts), json.loads(key), payload)
    except ValueError:
        return None


def _salvage(line: bytes, after_seq: int) -> SpoolRecord | None:
    """A valid record at the end of a damaged ``line``: what an append after a torn record looks like.

    The CRC does not cover the sequence number, so digits of the torn part may run into it ("…1" + "13"):
    of the readings that pass the CRC, the smallest sequence number after ``after_seq`` is the record's.
    """
    best: SpoolRecord | None = None
    for match in _RECORD_START.finditer(line, 1):
        record = _decode(line[match.start() :])
        if record is not None and record.seq > after_seq and (best is None or record.seq < best.seq):
            best = record
    return best


def _format_ranges(seqs: frozenset[int] | set[int]) -> str:
    """``{3, 4, 5, 9}`` -> ``"3-5,9"``."""
    out: list[str] = []
    ordered = sorted(seqs)
    start = prev = ordered[0]
    for seq in [*ordered[1:], None]:
        if seq is not None and seq == prev + 1:
            prev = seq
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if seq is not None:
            start = prev = seq
    return ",".join(out)


def _parse_ranges(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first or last - first > 10_000_000:
            raise ValueError(part)
        out.update(range(first, last + 1))
    return out


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` or raise :class:`OSError` (a write that makes no progress: a full disk)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _segment_name(first_seq: int) -> str:
    return f"{first_seq:020d}{_SUFFIX}"


def _first_seq(path: Path) -> int:
    return int(path.name[: -len(_SUFFIX)])
