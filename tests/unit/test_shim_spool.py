"""The Kafka sink's spool: order, acknowledgement, replay after restart, torn tails, segments, one owner, a full
disk, damaged lines, and fsync off the append path."""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from hivewire.errors import ConfigError, HivewireError
from hivewire_shim.spool import Spool, SpoolRecord
from hivewire_shim.spool_format import _encode


def payload(i: int) -> bytes:
    return b'{"eventType":"ON_ADD_PARTITION","n":%d,"text":"t\\u00e4b\\tle"}' % i


def test_records_come_back_in_order_with_their_key_and_timestamp(tmp_path: Path) -> None:
    with Spool(tmp_path, fsync="always") as spool:
        seqs = [spool.append(f"db.t{i % 3}", payload(i), timestamp_ms=1000 + i) for i in range(10)]
        assert seqs == list(range(1, 11))
        assert spool.pending == 10
        records = spool.cursor().read()
        assert [r.seq for r in records] == seqs
        assert [r.payload for r in records] == [payload(i) for i in range(10)]
        assert records[4].key == "db.t1" and records[4].timestamp_ms == 1004
        with pytest.raises(ValueError, match="newline"):
            spool.append("db.t", b"a\nb")


def test_only_unacknowledged_records_are_replayed_after_a_restart(tmp_path: Path) -> None:
    with Spool(tmp_path) as spool:
        for i in range(20):
            spool.append("db.t", payload(i))
        spool.ack(12)
        spool.checkpoint(force=True)
    with Spool(tmp_path) as again:
        assert again.acked == 12 and again.pending == 8
        assert [r.seq for r in again.cursor().read()] == list(range(13, 21))
        assert again.append("db.t", payload(99)) == 21  # numbering continues


def test_records_delivered_past_the_marker_are_remembered_across_a_restart(tmp_path: Path) -> None:
    with Spool(tmp_path) as spool:
        for i in range(10):
            spool.append("db.t", payload(i))
        spool.ack(3)
        for seq in (5, 6, 7, 9, 2):  # Kafka acknowledged other partitions' records before #4
            spool.mark_done(seq)
        spool.checkpoint(force=True)
    assert (tmp_path / "acked").read_text() == "3\ndone 5-7,9\n"
    with Spool(tmp_path) as again:
        assert again.acked == 3 and again.done_beyond == {5, 6, 7, 9} and again.pending == 7
        assert [s for s in range(1, 11) if not again.is_done(s)] == [4, 8, 10]
        again.ack(4)  # #4 delivered at last: the marker moves past what was delivered after it
        assert again.acked == 7 and again.done_beyond == {9}
        again.checkpoint(force=True)
    assert (tmp_path / "acked").read_text() == "7\ndone 9\n"


def test_an_unreadable_list_of_delivered_records_means_duplicates_not_loss(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Spool(tmp_path) as spool:
        for i in range(5):
            spool.append("db.t", payload(i))
    (tmp_path / "acked").write_text("2\ndone 4-x\n")
    with caplog.at_level(logging.WARNING), Spool(tmp_path) as again:
        assert again.acked == 2 and again.done_beyond == frozenset()
        assert [r.seq for r in again.cursor().read()] == [3, 4, 5]
    assert "sent again" in caplog.text


def test_an_acknowledgement_not_yet_checkpointed_means_duplicates_not_loss(tmp_path: Path) -> None:
    spool = Spool(tmp_path, checkpoint_interval=3600)
    for i in range(5):
        spool.append("db.t", payload(i))
    spool.checkpoint(force=True)
    spool.ack(5)
    spool.checkpoint()  # throttled: not written
    spool._lock_file.close()  # a crash: no close(), the lock goes with the process
    with Spool(tmp_path) as again:
        assert [r.seq for r in again.cursor().read()] == [1, 2, 3, 4, 5]


def test_a_torn_last_record_is_cut_off(tmp_path: Path) -> None:
    spool = Spool(tmp_path, fsync="never")
    for i in range(3):
        spool.append("db.t", payload(i))
    spool.close()
    segment = spool.segments()[-1]
    good = segment.read_bytes()
    segment.write_bytes(good + b'4\tdeadbeef\t123\t"db.t"\t{"half')
    with Spool(tmp_path) as again:
        assert segment.read_bytes() == good
        assert [r.seq for r in again.cursor().read()] == [1, 2, 3]
        assert again.append("db.t", payload(3)) == 4


def test_segments_roll_and_acknowledged_ones_are_deleted(tmp_path: Path) -> None:
    with Spool(tmp_path, segment_bytes=500) as spool:
        for i in range(40):
            spool.append("db.t", payload(i))
        assert len(spool.segments()) > 3
        cursor = spool.cursor()
        assert [r.seq for r in cursor.read(1000)] == list(range(1, 41))  # read across every segment
        spool.ack(30)
        spool.checkpoint(force=True)
        first_left = int(spool.segments()[0].name.split(".")[0])
        assert 1 < first_left <= 31  # older segments are gone, the one holding #31 is kept
        assert [r.seq for r in spool.cursor().read(1000)] == list(range(31, 41))


def test_a_reader_follows_appends_from_another_thread(tmp_path: Path) -> None:
    with Spool(tmp_path, segment_bytes=2000) as spool:
        cursor = spool.cursor()
        seen: list[int] = []

        def write() -> None:
            for i in range(300):
                spool.append(f"db.t{i % 7}", payload(i))

        writer = threading.Thread(target=write)
        writer.start()
        while len(seen) < 300:
            batch = cursor.read(50)
            if not batch:
                assert spool.wait(cursor.position, 5)
            seen += [r.seq for r in batch]
        writer.join()
        assert seen == list(range(1, 301))


def test_one_spool_per_directory(tmp_path: Path) -> None:
    with Spool(tmp_path), pytest.raises(HivewireError, match="in use by another process"):
        Spool(tmp_path)
    with pytest.raises(ConfigError):
        Spool(tmp_path / "other", fsync="sometimes")  # type: ignore[arg-type]


# -- a full disk, damaged lines, fsync ---------------------------------------------------------------------


def full_disk(monkeypatch: pytest.MonkeyPatch, spool: Spool, *, also_truncate: bool = False) -> list[int]:
    """Make writes to the spool's segment write half the record and fail with ENOSPC (as a full disk does).

    With ``also_truncate``, cutting the file back fails too, once. Returns the list of failed writes' fds.
    """
    real_write, real_truncate = os.write, os.ftruncate
    failed: list[int] = []
    truncate_failures = [also_truncate]

    def write(fd: int, data: Any) -> int:
        if fd != spool._fd:
            return real_write(fd, data)
        failed.append(fd)
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    def ftruncate(fd: int, length: int) -> None:
        if fd == spool._fd and truncate_failures[0]:
            truncate_failures[0] = False
            raise OSError(errno.EIO, "Input/output error")
        real_truncate(fd, length)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "ftruncate", ftruncate)
    return failed


def test_a_write_that_fails_part_way_leaves_no_torn_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spool = Spool(tmp_path, fsync="never")
    for i in range(3):
        spool.append("db.t", payload(i))
    segment = spool.segments()[-1]
    before = segment.read_bytes()
    cursor = spool.cursor()
    failed = full_disk(monkeypatch, spool)
    with pytest.raises(OSError) as raised:
        spool.append("db.t", payload(3))
    assert raised.value.errno == errno.ENOSPC and failed
    assert segment.read_bytes() == before  # the half-written record was cut off again
    assert spool.last_seq == 3 and [r.seq for r in cursor.read()] == [1, 2, 3]
    monkeypatch.undo()  # space again
    assert spool.append("db.t", payload(3)) == 4
    assert [r.seq for r in cursor.read()] == [4]
    spool.close()
    with Spool(tmp_path) as again:
        assert [r.payload for r in again.cursor().read()] == [payload(i) for i in range(4)]


def test_a_torn_record_that_cannot_be_cut_off_is_cut_before_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = Spool(tmp_path, fsync="never")
    spool.append("db.t", payload(0))
    cursor = spool.cursor()
    full_disk(monkeypatch, spool, also_truncate=True)
    with pytest.raises(OSError):
        spool.append("db.t", payload(1))
    assert not spool.segments()[-1].read_bytes().endswith(b"\n")  # torn, for now
    assert [r.seq for r in cursor.read()] == [1]  # the reader does not take the torn bytes for a record
    monkeypatch.undo()
    assert spool.append("db.t", payload(1)) == 2
    assert [(r.seq, r.payload) for r in cursor.read()] == [(2, payload(1))]
    spool.close()
    with Spool(tmp_path) as again:
        assert [r.payload for r in again.cursor().read()] == [payload(0), payload(1)]


def test_opening_keeps_the_valid_records_after_a_damaged_line(tmp_path: Path) -> None:
    # What the spool looked like after a partial write followed by more appends (before rollback existed):
    # record 3 torn, then written again in full, then 4; and record 5 damaged on disk, with 6 after it.
    records = [SpoolRecord(i, 1000 + i, "db.t", payload(i)) for i in range(1, 7)]
    lines = [_encode(r) for r in records]
    damaged = lines[4].replace(b"ON_ADD_PARTITION", b"ON_ADD_PARTITIOM")
    segment = tmp_path / "00000000000000000001.spool"
    segment.write_bytes(lines[0] + lines[1] + lines[2][:30] + lines[2] + lines[3] + damaged + lines[5] + b"7\t1")
    with Spool(tmp_path) as spool:
        assert spool.last_seq == 6  # only the torn tail ("7\t1") was cut
        kept = [(r.seq, r.payload) for r in records if r.seq != 5]
        assert [(r.seq, r.payload) for r in spool.cursor().read()] == kept
        assert spool.corrupt == 1
        assert spool.append("db.t", payload(7)) == 7


def test_a_damaged_record_is_logged_and_skipped_not_a_dead_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Spool(tmp_path, fsync="never") as spool:
        for i in range(3):
            spool.append("db.t", payload(i))
        segment = spool.segments()[-1]
        data = segment.read_bytes()
        first_end = data.index(b"\n") + 1
        damaged = data[:first_end] + data[first_end:].replace(b'"n":1', b'"n":9', 1)
        with open(segment, "r+b") as f:  # in place: the writer's descriptor stays valid
            f.write(damaged)
        cursor = spool.cursor()
        with caplog.at_level(logging.ERROR, logger="hivewire_shim.spool"):
            assert [r.seq for r in cursor.read()] == [1, 3]
        assert "skipping a damaged record" in caplog.text and spool.corrupt == 1
        spool.append("db.t", payload(3))
        assert [r.seq for r in cursor.read()] == [4]


def test_fsync_does_not_hold_up_appends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spool = Spool(tmp_path, fsync="interval", fsync_interval=0.01)
    real_fsync = os.fsync
    inside, release = threading.Event(), threading.Event()
    lock_held_during_fsync: list[bool] = []

    def slow_fsync(fd: int) -> None:
        if not inside.is_set():
            lock_held_during_fsync.append(spool._lock.locked())
            inside.set()
            release.wait(30)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    try:
        spool.append("db.t", payload(0))
        assert inside.wait(30), "the flusher never fsync'ed"
        appended = threading.Event()
        threading.Thread(target=lambda: (spool.append("db.t", payload(1)), appended.set()), daemon=True).start()
        assert appended.wait(30), "an append waited for the flusher's fsync"
        assert lock_held_during_fsync == [False]
    finally:
        release.set()
        spool.close()


def test_always_fsyncs_each_record_before_append_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spool = Spool(tmp_path, fsync="always")
    real_fsync = os.fsync
    synced: list[tuple[int, int]] = []  # (inode, size): other threads of the test process fsync files too

    def fsync(fd: int) -> None:
        stat = os.fstat(fd)
        synced.append((stat.st_ino, stat.st_size))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    spool.append("db.t", payload(0))
    segment = spool.segments()[-1].stat()
    sizes = [size for inode, size in synced if inode == segment.st_ino]
    assert sizes and sizes[-1] == segment.st_size  # fsync'ed with the record in it, before returning
    monkeypatch.undo()
    spool.close()


def test_the_spool_is_private_to_the_shims_user(tmp_path: Path) -> None:
    """Events hold whole tables: spool files are 0600 in a 0700 directory, whatever the umask, and an existing
    spool's are made so."""
    old = os.umask(0o022)
    try:
        directory = tmp_path / "spool"
        spool = Spool(directory, fsync="never", segment_bytes=1024)
        for i in range(20):
            spool.append("db.t", b"x" * 100, i)
        spool.close()
        os.chmod(directory, 0o755)
        for f in directory.iterdir():
            os.chmod(f, 0o644)
        Spool(directory, fsync="never").close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = list(directory.iterdir())
    assert len(files) > 3 and {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}
