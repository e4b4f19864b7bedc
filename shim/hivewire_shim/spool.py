"""The Kafka sink's durable spool: every event is written here before the producer sees it.

Layout of the spool directory::

    LOCK                          flock'ed by the one shim that owns the spool
    00000000000000000001.spool    segments, named by their first sequence number, append-only
    00000000000000004711.spool
    acked                         "every record up to this sequence number was delivered", and on a second
                                  line ("done 17,19-23") the records past it that were delivered too
    rejected                      records Kafka refused for good (see hivewire_shim.rejected), to replay

A record is one line: ``seq<TAB>crc32<TAB>timestamp-ms<TAB>key<TAB>payload\n``; the key is JSON (the
Kafka partitioning key), the payload the Apiary JSON (which never holds a raw newline or tab). The CRC
covers everything after it, so a damaged line is recognised.

Durability: each record reaches the operating system with one ``write`` before :meth:`Spool.append`
returns (so it survives the shim being killed); ``fsync`` is ``"always"`` (before returning),
``"interval"`` (a background flush every ``fsync_interval`` seconds: what a machine crash can lose) or
``"never"``. fsync runs outside the append lock (appends happen on client threads), and concurrent
``"always"`` appends share one fsync. The acknowledged marker is written atomically (temp file + rename)
at most every ``checkpoint_interval``; after a crash, records past it are sent again (duplicates, never
loss). Records delivered out of sequence order (Kafka acknowledges partitions independently) are kept
in a set beside the marker (:meth:`Spool.mark_done`), persisted with it, so a sender that starts over
from the marker skips them instead of sending them twice. Compaction is by segment: a new segment
starts every ``segment_bytes``, and a segment whose records are all acknowledged is deleted.

Damage: a write that fails part-way (a full disk) is rolled back before :meth:`Spool.append` raises,
and no record is written after a torn one until it is cut off, so torn lines can only be at the tail,
which opening the spool cuts off. A damaged line elsewhere (a disk error, a machine crash) does not
stop anything: opening the spool keeps the valid records after it, and the reader logs and skips it.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from hivewire._ratelimit import RateLimit
from hivewire.errors import ConfigError, HivewireError
from hivewire_shim.spool_format import (
    _SUFFIX,
    PRIVATE_FILE,
    SpoolRecord,
    _decode,
    _encode,
    _first_seq,
    _format_ranges,
    _parse_ranges,
    _private_directory,
    _salvage,
    _segment_name,
    write_all,
)

__all__ = ["Cursor", "Spool", "SpoolRecord", "write_all"]

log = logging.getLogger(__name__)

FsyncPolicy = Literal["always", "interval", "never"]
_READ_CHUNK = 1 << 20


class Spool:
    """An append-only, segmented, crash-safe queue of records on disk (see the module docstring).

    One writer (any thread: appends are serialised) and one reader (a :class:`Cursor`). Raises
    :class:`~hivewire.errors.HivewireError` if another process holds the directory. :meth:`append` raises
    :class:`OSError` (the disk is full, ...) with nothing written; the caller keeps the record.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        fsync: FsyncPolicy = "interval",
        fsync_interval: float = 0.2,
        segment_bytes: int = 64 << 20,
        checkpoint_interval: float = 0.2,
    ) -> None:
        if fsync not in ("always", "interval", "never"):
            raise ConfigError("spool fsync", f"{fsync!r} is not always, interval or never")
        self.directory = Path(directory)
        _private_directory(self.directory)
        self.fsync = fsync
        self.segment_bytes = segment_bytes
        self.checkpoint_interval = checkpoint_interval
        self._lock_file = os.fdopen(
            os.open(self.directory / "LOCK", os.O_RDWR | os.O_APPEND | os.O_CREAT, PRIVATE_FILE), "a+b"
        )
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise HivewireError(
                f"the spool {self.directory} is in use by another process (one shim per spool directory)"
            ) from None
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()  # one fsync at a time; never held with _lock while fsyncing
        self._checkpoint_lock = threading.Lock()
        self._appended = threading.Condition(self._lock)
        self._closed = False
        self._done: set[int] = set()  # delivered records past _acked
        self._acked = self._read_acked()
        self._persisted: tuple[int, frozenset[int]] = (self._acked, frozenset(self._done))
        self._last_checkpoint = time.monotonic()
        #: Damaged records skipped by readers (each one logged).
        self.corrupt = 0
        self._sync_errors = RateLimit(30)
        self._roll_errors = RateLimit(30)
        self._checkpoint_errors = RateLimit(30)
        last = self._recover()
        self._next_seq = max(last, self._acked) + 1
        self._synced = self._next_seq - 1  # every record up to here was fsync'ed (or was there at open)
        self._fd: int | None = None
        self._segment_size = 0
        self._torn = False  # the current segment ends in a part-written record that must be cut off first
        self._dirty = False
        self._open_segment()
        self._flusher: threading.Thread | None = None
        if fsync == "interval":
            self._flusher = threading.Thread(
                target=self._flush_loop, args=(fsync_interval,), name="hivewire-spool-fsync", daemon=True
            )
            self._flusher.start()

    # -- state --------------------------------------------------------------------------------------------
    @property
    def acked(self) -> int:
        """Every record up to this sequence number was delivered."""
        return self._acked

    @property
    def done_beyond(self) -> frozenset[int]:
        """Records past :attr:`acked` that were delivered (or set aside) already."""
        with self._lock:
            return frozenset(seq for seq in self._done if seq > self._acked)

    def is_done(self, seq: int) -> bool:
        """Whether record ``seq`` was delivered (or set aside) already: a resend would be a duplicate."""
        return seq <= self._acked or seq in self._done

    @property
    def last_seq(self) -> int:
        """The sequence number of the last record appended (0: none ever)."""
        return self._next_seq - 1

    @property
    def pending(self) -> int:
        """Records appended but not acknowledged."""
        return self._next_seq - 1 - self._acked

    @property
    def size_bytes(self) -> int:
        """Bytes the segments take on disk (acknowledged records linger until their segment is deleted)."""
        total = 0
        for path in self.segments():
            with contextlib.suppress(FileNotFoundError):
                total += path.stat().st_size
        return total

    def segments(self) -> list[Path]:
        return sorted(self.directory.glob(f"*{_SUFFIX}"))

    # -- opening ------------------------------------------------------------------------------------------
    def _read_acked(self) -> int:
        try:
            lines = (self.directory / "acked").read_text().splitlines()
        except FileNotFoundError:
            return 0
        try:
            acked = int(lines[0].strip() or 0) if lines else 0
        except ValueError:
            log.warning("spool %s: unreadable acked marker; replaying everything spooled", self.directory)
            return 0
        for line in lines[1:]:
            if line.startswith("done "):
                try:
                    self._done = {seq for seq in _parse_ranges(line[5:]) if seq > acked}
                except ValueError:
                    log.warning(
                        "spool %s: unreadable list of records delivered past #%d; they are sent again (duplicates)",
                        self.directory,
                        acked,
                    )
        return acked

    def _recover(self) -> int:
        """Cut what follows the last valid record off the last segment (a torn tail); keep every valid
        record, also after a damaged line. Return the last sequence number on disk (0 if none)."""
        segments = self.segments()
        if not segments:
            return 0
        last_path = segments[-1]
        last_seq = _first_seq(last_path) - 1
        good_to = offset = damaged = unconfirmed = 0
        with open(last_path, "rb") as f:
            for line in f:
                offset += len(line)
                if not line.endswith(b"\n"):
                    break
                record = _decode(line) or _salvage(line, last_seq)
                if record is None:
                    unconfirmed += 1  # damaged, and kept only if a valid record follows
                    continue
                good_to, last_seq = offset, max(last_seq, record.seq)
                damaged, unconfirmed = damaged + unconfirmed, 0
        size = last_path.stat().st_size
        if good_to < size:
            log.warning(
                "spool %s: cutting %d bytes of a torn record off %s", self.directory, size - good_to, last_path.name
            )
            with open(last_path, "r+b") as f:
                f.truncate(good_to)
                os.fsync(f.fileno())
        if damaged:
            log.error(
                "spool %s: %s holds damaged line(s) between valid records; they are skipped when sending "
                "(the events on them are lost; check the disk)",
                self.directory,
                last_path.name,
            )
        return last_seq

    def _open_segment(self) -> None:
        segments = self.segments()
        if segments and segments[-1].stat().st_size < self.segment_bytes:
            path = segments[-1]
        else:
            path = self.directory / _segment_name(self._next_seq)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        self._segment_size = os.fstat(self._fd).st_size
        # What a killed shim left in the page cache counts as synced from here on: make it so.
        os.fsync(self._fd)
        self._sync_directory()

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- writing ------------------------------------------------------------------------------------------
    def append(self, key: str, payload: bytes, timestamp_ms: int | None = None) -> int:
        """Write one record; return its sequence number. ``payload`` must not contain a newline.

        Raises :class:`OSError` when the record could not be written (nothing of it stays in the spool).
        """
        if b"\n" in payload:
            raise ValueError("a spool payload cannot contain a newline")
        ts = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
        with self._lock:
            if self._closed or self._fd is None:
                raise HivewireError(f"the spool {self.directory} is closed")
            if self._segment_size >= self.segment_bytes:
                try:
                    self._roll()
                except OSError as e:  # keep writing the current segment; the next append tries again
                    if self._roll_errors.due():
                        log.warning(
                            "spool %s: could not start a new segment (%s); the current one grows", self.directory, e
                        )
            seq = self._next_seq
            line = _encode(SpoolRecord(seq, ts, key, payload))
            self._write(line)
            self._segment_size += len(line)
            self._next_seq = seq + 1
            self._dirty = True
            self._appended.notify_all()
        if self.fsync == "always":
            self._sync_through(seq)
        return seq

    def _write(self, line: bytes) -> None:
        """One record to the current segment, or nothing: a write that fails part-way is cut off again."""
        fd = self._fd
        assert fd is not None
        size = self._segment_size
        if self._torn:
            os.ftruncate(fd, size)  # raises (nothing written) if it still cannot be cut off
            self._torn = False
        try:
            write_all(fd, line)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError as e:
                # Nothing may be appended after a torn record: the next append cuts it off first.
                self._torn = True
                log.error(
                    "spool %s: could not cut off a part-written record (%s); retrying on the next write",
                    self.directory,
                    e,
                )
            raise

    def _roll(self) -> None:
        assert self._fd is not None
        path = self.directory / _segment_name(self._next_seq)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        # The old segment is complete: make it durable before anything lands in the new one.
        try:
            os.fsync(self._fd)
        except OSError as e:
            log.error(
                "spool %s: fsync of a full segment failed (%s); a machine crash may lose its last events",
                self.directory,
                e,
            )
        os.close(self._fd)
        self._fd = fd
        self._segment_size = 0
        self._torn = False
        with contextlib.suppress(OSError):
            self._sync_directory()

    def _sync_through(self, seq: int) -> None:
        """fsync so that every record up to ``seq`` is on disk, without holding the append lock.

        Appends made while one fsync runs are covered by the next: callers waiting here share it.
        """
        with self._sync_lock:
            if self._synced >= seq:
                return
            with self._lock:
                if self._fd is None:
                    return  # closed: close() fsync'ed
                target = self._next_seq - 1
                self._dirty = False
                try:
                    fd = os.dup(self._fd)
                except OSError:
                    fd = -1
                if fd < 0:  # out of descriptors: fsync here rather than not at all
                    self._fsync(self._fd, target)
                    return
            try:
                self._fsync(fd, target)
            finally:
                os.close(fd)

    def _fsync(self, fd: int, target: int) -> None:
        try:
            os.fsync(fd)
        except OSError as e:
            self._dirty = True
            if self._sync_errors.due():
                log.error(
                    "spool %s: fsync failed (%s); the events are written but a machine crash could lose "
                    "them: check the disk",
                    self.directory,
                    e,
                )
            return
        # A roll in between fsync'ed the segment before this one, so everything up to target is on disk.
        self._synced = max(self._synced, target)

    def _flush_loop(self, interval: float) -> None:
        while True:
            time.sleep(interval)
            with self._lock:
                if self._closed:
                    return
                if not self._dirty:
                    continue
                seq = self._next_seq - 1
            self._sync_through(seq)

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
            done = self._done
            if done:
                while self._acked + 1 in done:  # delivered earlier, out of order
                    self._acked += 1
                    done.discard(self._acked)
                # Entries the marker passed over stay until checkpoint() prunes them: rebuilding the set here,
                # on every acknowledgement and under the lock append() needs, would cost O(in flight) each time.

    def mark_done(self, seq: int) -> None:
        """Record ``seq`` was delivered (or set aside), records before it perhaps not yet. Persisted by
        :meth:`checkpoint`; :meth:`is_done` tells a sender that starts over to skip it."""
        with self._lock:
            if seq > self._acked:
                self._done.add(seq)

    def checkpoint(self, force: bool = False) -> None:
        """Persist the acknowledged marker (at most every ``checkpoint_interval`` unless ``force``) and
        delete the segments it covers. A marker that cannot be written (a full disk) is retried later:
        meanwhile a crash replays more (duplicates), never less."""
        now = time.monotonic()
        if not force and now - self._last_checkpoint < self.checkpoint_interval:
            return
        with self._checkpoint_lock:
            self._last_checkpoint = now
            with self._lock:
                self._done = {seq for seq in self._done if seq > self._acked}
                state = (self._acked, frozenset(self._done))
            if state == self._persisted:
                return
            acked, done = state
            tmp = self.directory / "acked.tmp"
            try:
                with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE), "w") as f:
                    f.write(f"{acked}\n" + (f"done {_format_ranges(done)}\n" if done else ""))
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.directory / "acked")
            except OSError as e:
                if self._checkpoint_errors.due():
                    log.warning(
                        "spool %s: could not write the acknowledged marker (%s); retrying (after a crash "
                        "more events would be sent twice)",
                        self.directory,
                        e,
                    )
                return
            deleted = acked > self._persisted[0]
            self._persisted = state
            if deleted:
                self._delete_acked_segments(acked)

    def _delete_acked_segments(self, acked: int) -> None:
        segments = self.segments()
        # A segment holds records [its first seq, the next segment's first seq); the last is being written.
        for path, after in itertools.pairwise(segments):
            if _first_seq(after) - 1 <= acked:
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
                with contextlib.suppress(OSError):
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
    """Reads a spool's records in sequence order, following new appends and segment changes.

    Reads with ``pread`` into its own buffer and forgets an incomplete last line, so bytes the writer
    cuts off again (a failed append) are never joined to what it writes next.
    """

    def __init__(self, spool: Spool, after_seq: int) -> None:
        self._spool = spool
        self.position = after_seq  # the last sequence number returned
        self._fd: int | None = None
        self._first_of_open = 0
        self._path: Path | None = None
        self._offset = 0  # file offset of _buf[0]
        self._buf = bytearray()
        self._pos = 0  # next unread byte in _buf

    def _open_next(self) -> bool:
        """Open the segment holding ``position + 1`` (or, once the open one is finished, the one after it);
        False if there is none yet."""
        segments = self._spool.segments()
        if self._fd is None:
            want = self.position + 1
            candidates = [p for p in segments if _first_seq(p) <= want]
            later = [p for p in segments if _first_seq(p) > want]
            path = candidates[-1] if candidates else (later[0] if later else None)
        else:
            # Not by sequence number: a damaged record skipped at the end of the open one leaves a gap.
            path = next((p for p in segments if _first_seq(p) > self._first_of_open), None)
        if path is None:
            return False
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False  # deleted under us (acknowledged meanwhile): look again next time
        self._close_file()
        self._fd, self._path, self._first_of_open = fd, path, _first_seq(path)
        self._offset, self._buf, self._pos = 0, bytearray(), 0
        return True

    def read(self, max_records: int = 1000) -> list[SpoolRecord]:
        """The next records available now (possibly none), at most ``max_records``."""
        out: list[SpoolRecord] = []
        if self._fd is None and not self._open_next():
            return out
        while len(out) < max_records:
            line = self._readline()
            if line is None:
                if not self._later_segment_exists():
                    break
                # The writer has moved to a later segment, so this one is complete: finish it first.
                line = self._readline()
                if line is None:
                    if not self._open_next():
                        break
                    continue
            record = _decode(line) or _salvage(line, self.position)
            if record is None:
                self._skip_damaged(line)
                continue
            if record.seq <= self.position:
                continue
            out.append(record)
            self.position = record.seq
        return out

    def _skip_damaged(self, line: bytes) -> None:
        self._spool.corrupt += 1
        log.error(
            "spool %s: skipping a damaged record of %d bytes in %s after #%d (its event is lost; the disk "
            "may be failing): %r",
            self._spool.directory,
            len(line),
            self._path.name if self._path else "?",
            self.position,
            line[:200],
        )

    def _readline(self) -> bytes | None:
        """The next complete line of the open segment, or None (its end, or a record still being written)."""
        assert self._fd is not None
        while True:
            end = self._buf.find(b"\n", self._pos)
            if end >= 0:
                line = bytes(self._buf[self._pos : end + 1])
                self._pos = end + 1
                return line
            # Keep only the unread part, then read on from where it ends.
            del self._buf[: self._pos]
            self._offset += self._pos
            self._pos = 0
            chunk = os.pread(self._fd, _READ_CHUNK, self._offset + len(self._buf))
            if not chunk:
                # An incomplete line: forget it. The writer either completes it or cuts it off.
                self._buf.clear()
                return None
            self._buf += chunk

    def _later_segment_exists(self) -> bool:
        return any(_first_seq(p) > self._first_of_open for p in self._spool.segments())

    def __iter__(self) -> Iterator[SpoolRecord]:
        while batch := self.read():
            yield from batch

    def _close_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        self._close_file()
