"""The Kafka sink's durable spool: every event is written here before the producer sees it.

Layout of the spool directory::

    LOCK                          flock'ed by the one shim that owns the spool
    00000000000000000001.spool    segments, named by their first sequence number, append-only
    00000000000000004711.spool
    acked                         "every record up to this sequence number was delivered"

A record is one line: ``seq<TAB>crc32<TAB>timestamp-ms<TAB>key<TAB>payload\\n``; the key is JSON (the
Kafka partitioning key), the payload the Apiary JSON (which never holds a raw newline). The CRC covers
everything after it, so a line torn by a crash is recognised and cut off when the spool is opened.

Durability: each record reaches the operating system with one ``write`` before :meth:`Spool.append`
returns (so it survives the shim being killed); ``fsync`` is ``"always"`` (before returning),
``"interval"`` (a background flush every ``fsync_interval`` seconds: what a machine crash can lose) or
``"never"``. The acknowledged marker is written atomically (temp file + rename) at most every
``checkpoint_interval``; after a crash, records past it are sent again (duplicates, never loss).
Compaction is by segment: a new segment starts every ``segment_bytes``, and a segment whose records are
all acknowledged is deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import logging
import os
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from hivewire.errors import ConfigError, HivewireError

__all__ = ["Cursor", "Record", "Spool"]

log = logging.getLogger(__name__)

FsyncPolicy = Literal["always", "interval", "never"]
_SUFFIX = ".spool"


@dataclass(frozen=True)
class Record:
    seq: int
    timestamp_ms: int
    key: str
    payload: bytes


def _encode(record: Record) -> bytes:
    body = b"%d\t%s\t" % (record.timestamp_ms, json.dumps(record.key).encode("utf-8")) + record.payload
    return b"%d\t%08x\t" % (record.seq, zlib.crc32(body)) + body + b"\n"


def _decode(line: bytes) -> Record | None:
    """The record on ``line`` (with its newline), or None if it is torn or corrupt."""
    if not line.endswith(b"\n"):
        return None
    try:
        seq, crc, body = line[:-1].split(b"\t", 2)
        if int(crc, 16) != zlib.crc32(body):
            return None
        ts, key, payload = body.split(b"\t", 2)
        return Record(int(seq), int(ts), json.loads(key), payload)
    except ValueError:
        return None


def _segment_name(first_seq: int) -> str:
    return f"{first_seq:020d}{_SUFFIX}"


class Spool:
    """An append-only, segmented, crash-safe queue of records on disk (see the module docstring).

    One writer (any thread: appends are serialised) and one reader (a :class:`Cursor`). Raises
    :class:`~hivewire.errors.HivewireError` if another process holds the directory.
    """

    def __init__(self, directory: str | os.PathLike[str], *, fsync: FsyncPolicy = "interval",
                 fsync_interval: float = 0.2, segment_bytes: int = 64 << 20,
                 checkpoint_interval: float = 0.2) -> None:
        if fsync not in ("always", "interval", "never"):
            raise ConfigError("spool fsync", f"{fsync!r} is not always, interval or never")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.segment_bytes = segment_bytes
        self.checkpoint_interval = checkpoint_interval
        self._lock_file = open(self.directory / "LOCK", "a+b")  # noqa: SIM115 - held for the spool's life
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise HivewireError(f"the spool {self.directory} is in use by another process (one shim per "
                                f"spool directory)") from None
        self._lock = threading.Lock()
        self._checkpoint_lock = threading.Lock()
        self._appended = threading.Condition(self._lock)
        self._closed = False
        self._acked = self._read_acked()
        self._persisted_ack = self._acked
        self._last_checkpoint = time.monotonic()
        last = self._recover()
        self._next_seq = max(last, self._acked) + 1
        self._fd: int | None = None
        self._segment_size = 0
        self._dirty = False
        self._open_segment()
        self._flusher: threading.Thread | None = None
        if fsync == "interval":
            self._flusher = threading.Thread(target=self._flush_loop, args=(fsync_interval,),
                                             name="hivewire-spool-fsync", daemon=True)
            self._flusher.start()

    # -- state --------------------------------------------------------------------------------------------
    @property
    def acked(self) -> int:
        """Every record up to this sequence number was delivered."""
        return self._acked

    @property
    def last_seq(self) -> int:
        """The sequence number of the last record appended (0: none ever)."""
        return self._next_seq - 1

    @property
    def pending(self) -> int:
        """Records appended but not acknowledged."""
        return self._next_seq - 1 - self._acked

    def segments(self) -> list[Path]:
        return sorted(self.directory.glob(f"*{_SUFFIX}"))

    # -- opening ------------------------------------------------------------------------------------------
    def _read_acked(self) -> int:
        try:
            return int((self.directory / "acked").read_text().strip() or 0)
        except FileNotFoundError:
            return 0
        except ValueError:
            log.warning("spool %s: unreadable acked marker; replaying everything spooled", self.directory)
            return 0

    def _recover(self) -> int:
        """Cut a torn tail off the last segment; return the last sequence number on disk (0 if none)."""
        segments = self.segments()
        if not segments:
            return 0
        last_path = segments[-1]
        good_to = 0
        last_seq = int(last_path.name[:-len(_SUFFIX)]) - 1
        with open(last_path, "rb") as f:
            for line in f:
                record = _decode(line)
                if record is None:
                    break
                good_to += len(line)
                last_seq = record.seq
        size = last_path.stat().st_size
        if good_to < size:
            log.warning("spool %s: cutting %d bytes of a torn record off %s", self.directory, size - good_to,
                        last_path.name)
            with open(last_path, "r+b") as f:
                f.truncate(good_to)
                os.fsync(f.fileno())
        return last_seq

    def _open_segment(self) -> None:
        segments = self.segments()
        if segments and segments[-1].stat().st_size < self.segment_bytes:
            path = segments[-1]
        else:
            path = self.directory / _segment_name(self._next_seq)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._segment_size = os.fstat(self._fd).st_size
        self._sync_directory()

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- writing ------------------------------------------------------------------------------------------
    def append(self, key: str, payload: bytes, timestamp_ms: int | None = None) -> int:
        """Write one record; return its sequence number. ``payload`` must not contain a newline."""
        if b"\n" in payload:
            raise ValueError("a spool payload cannot contain a newline")
        ts = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
        with self._lock:
            if self._closed or self._fd is None:
                raise HivewireError(f"the spool {self.directory} is closed")
            if self._segment_size >= self.segment_bytes:
                self._roll()
            seq = self._next_seq
            line = _encode(Record(seq, ts, key, payload))
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            self._segment_size += len(line)
            self._next_seq = seq + 1
            if self.fsync == "always":
                os.fsync(self._fd)
            else:
                self._dirty = True
            self._appended.notify_all()
        return seq

    def _roll(self) -> None:
        assert self._fd is not None
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = os.open(self.directory / _segment_name(self._next_seq), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                           0o644)
        self._segment_size = 0
        self._sync_directory()

    def _flush_loop(self, interval: float) -> None:
        while True:
            time.sleep(interval)
            with self._lock:
                if self._closed:
                    return
                if self._dirty and self._fd is not None:
                    os.fsync(self._fd)
                    self._dirty = False

    def wait(self, after_seq: int, timeout: float) -> bool:
        """Block until a record past ``after_seq`` exists (or ``timeout``); True if one does."""
        with self._lock:
            return self._appended.wait_for(lambda: self._next_seq - 1 > after_seq or self._closed, timeout)

    # -- acknowledging --------------------------------------------------------------------------------------
    def ack(self, seq: int) -> None:
        """Every record up to ``seq`` was delivered. Persisted by :meth:`checkpoint`."""
        with self._lock:
            if seq > self._acked:
                self._acked = seq

    def checkpoint(self, force: bool = False) -> None:
        """Persist the acknowledged marker (at most every ``checkpoint_interval`` unless ``force``) and
        delete the segments it covers."""
        now = time.monotonic()
        if not force and now - self._last_checkpoint < self.checkpoint_interval:
            return
        with self._checkpoint_lock:
            self._last_checkpoint = now
            acked = self._acked
            if acked == self._persisted_ack:
                return
            tmp = self.directory / "acked.tmp"
            with open(tmp, "w") as f:
                f.write(f"{acked}\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.directory / "acked")
            self._persisted_ack = acked
            self._delete_acked_segments(acked)

    def _delete_acked_segments(self, acked: int) -> None:
        segments = self.segments()
        # A segment holds records [its first seq, the next segment's first seq); the last is being written.
        for path, after in itertools.pairwise(segments):
            if int(after.name[:-len(_SUFFIX)]) - 1 <= acked:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    # -- reading --------------------------------------------------------------------------------------------
    def cursor(self, after_seq: int | None = None) -> Cursor:
        """A reader of the records after ``after_seq`` (default: the acknowledged marker), in order."""
        return Cursor(self, self._acked if after_seq is None else after_seq)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None
            self._appended.notify_all()
        self.checkpoint(force=True)
        self._lock_file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Cursor:
    """Reads a spool's records in sequence order, following new appends and segment changes."""

    def __init__(self, spool: Spool, after_seq: int) -> None:
        self._spool = spool
        self.position = after_seq  # the last sequence number returned
        self._file: IO[bytes] | None = None
        self._first_of_open = 0

    def _open_next(self) -> bool:
        """Open the segment holding ``position + 1``; False if there is none yet."""
        want = self.position + 1
        candidates = [p for p in self._spool.segments() if int(p.name[:-len(_SUFFIX)]) <= want]
        later = [p for p in self._spool.segments() if int(p.name[:-len(_SUFFIX)]) > want]
        path = candidates[-1] if candidates else (later[0] if later else None)
        if path is None:
            return False
        first = int(path.name[:-len(_SUFFIX)])
        if self._file is not None and first == self._first_of_open:
            return False
        if self._file is not None:
            self._file.close()
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close() or the next segment
        self._first_of_open = first
        return True

    def read(self, max_records: int = 1000) -> list[Record]:
        """The next records available now (possibly none), at most ``max_records``."""
        out: list[Record] = []
        if self._file is None and not self._open_next():
            return out
        while len(out) < max_records:
            line = self._readline()
            if line is None:
                if not self._later_segment_exists():
                    break
                # The writer has moved to a later segment, so this one is complete: finish it first.
                line = self._readline()
                if line is None:
                    self._open_next()
                    continue
            record = _decode(line)
            if record is None:
                raise HivewireError(f"spool {self._spool.directory}: corrupt record after sequence {self.position}")
            if record.seq <= self.position:
                continue
            out.append(record)
            self.position = record.seq
        return out

    def _readline(self) -> bytes | None:
        """The next complete line of the open segment, or None (its end, or a record still being written)."""
        assert self._file is not None
        start = self._file.tell()
        line = self._file.readline()
        if line.endswith(b"\n"):
            return line
        self._file.seek(start)
        return None

    def _later_segment_exists(self) -> bool:
        return any(int(p.name[:-len(_SUFFIX)]) > self._first_of_open for p in self._spool.segments())

    def __iter__(self) -> Iterator[Record]:
        while batch := self.read():
            yield from batch

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
