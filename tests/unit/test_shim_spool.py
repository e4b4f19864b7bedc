"""The Kafka sink's spool: order, acknowledgement, replay after restart, torn tails, segments, one owner."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from hivewire.errors import ConfigError, HivewireError
from hivewire_shim.spool import Spool


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
    segment.write_bytes(good + b"4\tdeadbeef\t123\t\"db.t\"\t{\"half")
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
