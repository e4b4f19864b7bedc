"""The archive checks its seeks: the first message of a partition after an assignment or a seek must be where
the table says the partition resumes, or the partition is re-sought and nothing of it is archived meanwhile.

A stub consumer stands in for Kafka (it records seeks and can fail them); the Delta table is real, on local
disk. Without the check, a seek that did not take effect let the archive accept messages after the old
position and skip the range between forever.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import deltalake
import pytest
from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from hivewire.data._archive import Archiver
from hivewire.data._archive_table import txn_app_id
from hivewire.events import _apiary as apiary
from hivewire.runtime._kafka import KafkaSource
from hivewire.tools import _testing as testing

TOPIC = "apiary"
VALUE = apiary.encode(testing.create_table_event("db", "t"))


class Message:
    def __init__(self, partition: int, offset: int) -> None:
        self._partition, self._offset = partition, offset

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return 1, 1_700_000_000_000 + self._offset

    def value(self) -> bytes:
        return VALUE

    def error(self) -> None:
        return None


@dataclass
class StubConsumer:
    low: int = 0
    seek_fails: bool = False
    seeks: list[tuple[int, int]] = field(default_factory=list)
    assigned: list[tuple[int, int]] = field(default_factory=list)

    def assign(self, partitions: list[Any]) -> None:
        self.assigned = [(tp.partition, tp.offset) for tp in partitions]

    def seek(self, tp: Any) -> None:
        self.seeks.append((tp.partition, tp.offset))
        if self.seek_fails:
            raise KafkaException(KafkaError(KafkaError._STATE, "Erroneous state"))

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        assert cached is False  # the broker's value now, not the last fetch's
        return self.low, self.low + 1000

    def commit(self, **kwargs: Any) -> None:
        pass


def batch(partition: int, *offsets: int) -> list[Message]:
    return [Message(partition, o) for o in offsets]


def archived(uri: str) -> list[tuple[int, int]]:
    rows = deltalake.DeltaTable(uri).to_pyarrow_table(columns=["kafka_partition", "kafka_offset"])
    return sorted(zip(rows["kafka_partition"].to_pylist(), rows["kafka_offset"].to_pylist(), strict=True))


def buffered(archiver: Archiver, partition: int) -> list[int]:
    return [item.origin.offset for item in archiver._buffers.get(partition, []) if item.origin is not None]


def assigned(archiver: Archiver, consumer: StubConsumer, *partitions: int) -> None:
    archiver._consumer = consumer
    archiver._on_assign(consumer, [TopicPartition(TOPIC, p) for p in partitions])


@pytest.fixture
def uri(tmp_path: Path) -> str:
    """A table that holds offsets 0..9 of partition 0 and nothing of partition 1."""
    table = str(tmp_path / "events")
    first = Archiver(KafkaSource("localhost:1", TOPIC), table)
    assigned(first, StubConsumer(), 0)
    first._take_all(batch(0, *range(10)))
    first.flush()
    assert deltalake.DeltaTable(table).transaction_version(txn_app_id(TOPIC, 0)) == 9
    return table


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_resuming_at_the_tables_position_is_accepted(uri: str, caplog: pytest.LogCaptureFixture) -> None:
    archiver, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer()
    assigned(archiver, consumer, 0)
    assert consumer.assigned == [(0, 10)]
    archiver._take_all(batch(0, 10, 11, 12))
    assert buffered(archiver, 0) == [10, 11, 12]
    assert consumer.seeks == [] and archiver.stats.refused == 0 and warnings(caplog) == []


def test_a_seek_that_did_not_take_effect_is_refused_and_sought_again(
    uri: str, caplog: pytest.LogCaptureFixture
) -> None:
    archiver, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer()
    assigned(archiver, consumer, 0)
    # The consumer kept an old position (25): accepting it would skip 10..24 for good.
    with caplog.at_level(logging.WARNING, logger="hivewire.archive"):
        archiver._take_all(batch(0, 25, 26, 27))
    assert buffered(archiver, 0) == [] and archiver.stats.refused == 1
    assert consumer.seeks == [(0, 10)]  # once, not once per message of the stale batch
    [warning] = warnings(caplog)
    assert "apiary/0" in warning and "offset 10" in warning and "offset 25" in warning
    archiver._take_all(batch(0, 10, 11))
    assert buffered(archiver, 0) == [10, 11]
    archiver.flush()
    assert archived(uri) == [(0, o) for o in range(12)]  # contiguous: nothing skipped


def test_without_a_stored_offset_the_first_message_must_be_the_low_watermark(uri: str) -> None:
    archiver, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer(low=40)
    assigned(archiver, consumer, 1)
    assert consumer.assigned == [(1, OFFSET_BEGINNING)]
    archiver._take_all(batch(1, 40, 41))
    assert buffered(archiver, 1) == [40, 41] and archiver.stats.refused == 0

    other, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer(low=40)
    assigned(other, consumer, 1)
    other._take_all(batch(1, 57))
    assert buffered(other, 1) == [] and consumer.seeks == [(1, OFFSET_BEGINNING)]


@pytest.mark.parametrize("low", [0, 12])
def test_a_gap_is_accepted_only_when_a_successful_reseek_delivers_it_again(
    uri: str, caplog: pytest.LogCaptureFixture, low: int
) -> None:
    # Offsets 10 and 11 hold no message: transaction markers or compaction (the broker holds the partition
    # from 0), or retention deleted them (it holds it from 12).
    archiver, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer(low=low)
    assigned(archiver, consumer, 0)
    archiver._take_all(batch(0, 12, 13))
    assert buffered(archiver, 0) == [] and consumer.seeks == [(0, 10)]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hivewire.archive"):
        archiver._take_all(batch(0, 12, 13))
    assert buffered(archiver, 0) == [12, 13] and consumer.seeks == [(0, 10)]
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    if low == 0:  # no record lies between: nothing lost, nothing said
        assert said == []
    else:
        [line] = said
        assert "records lost to retention: apiary/0 offsets 10-11 (2 records)" in line, line
    # Confirmed: later messages of the partition are not checked again.
    archiver._take_all(batch(0, 14))
    assert buffered(archiver, 0) == [12, 13, 14] and archiver.stats.refused == 1


def test_a_failing_seek_keeps_the_partition_refused(uri: str, caplog: pytest.LogCaptureFixture) -> None:
    archiver, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer(seek_fails=True)
    assigned(archiver, consumer, 0)
    archiver._take_all(batch(0, *range(10, 41)))
    assert buffered(archiver, 0) == list(range(10, 41))
    # Commits kept losing races: the buffers go and the partition is read again from the table (offset 10).
    # The seek back fails, so the consumer would go on at 41 and 10..40 would never be archived.
    with caplog.at_level(logging.WARNING, logger="hivewire.archive"):
        archiver._reseek(0)
    assert any("seeking apiary/0 to 10 failed" in w for w in warnings(caplog))
    archiver._clear()
    archiver._take_all(batch(0, 41))
    archiver._take_all(batch(0, 42))
    assert buffered(archiver, 0) == [] and archiver.stats.refused == 2
    assert consumer.seeks == [(0, 10)] * 3
    # A failed re-seek proves nothing, so a first offset seen before is still refused ...
    archiver._take_all(batch(0, 42))
    assert buffered(archiver, 0) == [] and archiver.stats.refused == 3
    consumer.seek_fails = False
    archiver._take_all(batch(0, 43))  # ... and once a re-seek works, the sought offset comes
    archiver._take_all(batch(0, 10, 11))
    assert buffered(archiver, 0) == [10, 11]
    archiver.flush()
    assert archived(uri) == [(0, o) for o in range(12)]


def test_a_failed_seek_forward_only_costs_reading(uri: str) -> None:
    # Another writer archived up to 30: continue after it. If that seek fails, what the consumer delivers
    # below 31 is stale and dropped, and 31 is where the table says the partition resumes.
    archiver, consumer = Archiver(KafkaSource("localhost:1", TOPIC), uri), StubConsumer(seek_fails=True)
    assigned(archiver, consumer, 0)
    archiver._take_all(batch(0, 10, 11))
    archiver._positions.seek(0, 31)
    archiver._clear()
    archiver._take_all(batch(0, *range(12, 33)))
    assert buffered(archiver, 0) == [31, 32] and archiver.stats.refused == 0


def test_the_default_group_is_per_topic_and_table(tmp_path: Path, uri: str) -> None:
    source = KafkaSource("localhost:1", TOPIC)
    one = Archiver(source, uri)
    table_id = deltalake.DeltaTable(uri).metadata().id
    assert one.group_id == f"hivewire-archive-{TOPIC}-{table_id}"
    # The same job restarted, even with another spelling of the table's location: the same group.
    assert Archiver(source, Path(uri).as_uri()).group_id == one.group_id
    assert Archiver(source, uri + "/").group_id == one.group_id
    # Another table fed from the same topic: another group, so the two jobs do not split the partitions.
    other = Archiver(source, str(tmp_path / "other"))
    assert other.group_id != one.group_id and other.group_id.startswith(f"hivewire-archive-{TOPIC}-")
    # The app id (the offsets' key inside a table) stays the topic: existing archives resume where they were.
    assert one.app_id == other.app_id == TOPIC
    assert Archiver(source, uri, group_id="mine").group_id == "mine"
    assert Archiver(source, uri, app_id="job").group_id == f"hivewire-archive-job-{table_id}"
