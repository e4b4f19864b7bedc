"""Where the archive reads each partition, and its check that a partition resumed where the table says: the
decision table of :class:`~hivewire.data._archive_positions.Positions`, message by message.

A stub stands in for the consumer (it records seeks, can fail them, and answers the broker's first retained
offset): the decision only asks it those two things. The archive around it, with a real Delta table, is in
tests/unit/test_archive_seek_check.py and, on the real broker, tests/integration/test_archive.py.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException

from hivewire.data._archive_positions import Positions

TOPIC = "apiary"


@dataclass
class Consumer:
    """The broker holds the partition from ``low``; each seek succeeds or fails as ``fails`` says, in turn."""

    low: int = 0
    fails: list[bool] = field(default_factory=list)
    seeks: list[tuple[int, int]] = field(default_factory=list)

    def seek(self, tp: Any) -> None:
        self.seeks.append((tp.partition, tp.offset))
        if self.fails and self.fails.pop(0):
            raise KafkaException(KafkaError(KafkaError._STATE, "Erroneous state"))

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        assert cached is False and tp.topic == TOPIC  # the broker's value now, not the last fetch's
        return self.low, self.low + 1000


def run(positions: Positions, batches: list[list[int]]) -> list[list[int]]:
    """The offsets taken from each consume() batch of partition 0."""
    taken = []
    for offsets in batches:
        positions.new_batch()
        taken.append([o for o in offsets if positions.takes(0, o)])
    return taken


B = OFFSET_BEGINNING

# (table's offset, broker's low, seeks failing, batches) -> (taken per batch, seeks, refused, ERROR lines' parts)
CASES = {
    "at the table's offset": (10, 0, [], [[10, 11, 12]], [[10, 11, 12]], [], 0, None),
    "a seek that did not take effect": (10, 0, [], [[25, 26], [10, 11]], [[], [10, 11]], [(0, 10)], 1, None),
    "stale, then the sought offset in the same batch": (10, 0, [], [[25, 10], [10]], [[], [10]], [(0, 10)], 1, None),
    "transaction markers: the re-seek delivers the gap again": (
        10, 0, [], [[12, 13], [12, 13], [14]], [[], [12, 13], [14]], [(0, 10)], 1, None,
    ),
    "retention: the re-seek delivers the broker's first offset again": (
        10, 15, [], [[15, 16], [15, 16]], [[], [15, 16]], [(0, 10)], 1, "apiary/0 offsets 10-14 (5 records)",
    ),
    "a failed re-seek proves nothing": (
        10, 0, [True, False], [[25], [25], [25], [26]], [[], [], [25], [26]], [(0, 10)] * 2, 2, None,
    ),
    "no stored offset: the low watermark": (None, 40, [], [[40, 41]], [[40, 41]], [], 0, None),
    "no stored offset, first message past the low watermark": (
        None, 40, [], [[57], [40]], [[], [40]], [(0, B)], 1, None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_the_first_message_after_a_seek_decides(case: str, caplog: pytest.LogCaptureFixture) -> None:
    stored, low, fails, batches, taken, seeks, refused, lost = CASES[case]
    consumer = Consumer(low, list(fails))
    positions = Positions(TOPIC, lambda: consumer)
    positions.assign({0: stored if stored is not None else OFFSET_BEGINNING})
    with caplog.at_level(logging.DEBUG, logger="hivewire.archive"):
        assert run(positions, batches) == taken
    assert consumer.seeks == seeks and positions.refused == refused
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    if lost is None:  # a transaction marker or a compacted hole is no loss: nothing said
        assert errors == []
    else:
        [line] = errors
        assert line.startswith(f"records lost to retention: {lost} were deleted by the broker before") and (
            f"resumes at offset {low}, not at offset {stored}" in line
        ), line
    # each refusal says so, once
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "did not take effect" in r.getMessage()]
    assert len(warnings) == refused


def test_only_assigned_partitions_from_the_next_offset_are_taken() -> None:
    consumer = Consumer()
    positions = Positions(TOPIC, lambda: consumer)
    positions.assign({0: 10})
    positions.new_batch()
    assert [positions.takes(0, o) for o in (10, 11, 11, 9)] == [True, True, False, False]  # older: stale
    assert not positions.takes(1, 0)  # not assigned
    positions.drop([0])
    assert not positions.takes(0, 12) and positions.assigned == set()


def test_another_writer_ahead_moves_the_position_past_it() -> None:
    consumer = Consumer(fails=[True])
    positions = Positions(TOPIC, lambda: consumer)
    positions.assign({0: 10})
    positions.new_batch()
    assert positions.takes(0, 10)
    positions.seek_past(0, 30)  # the table holds up to 30: continue at 31; the seek fails
    positions.seek_past(0, 5)  # behind what was read: nothing to do
    assert consumer.seeks == [(0, 31)]
    positions.new_batch()
    # What the consumer still delivers below 31 is stale; 31 is where the table says the partition resumes.
    assert [o for o in range(11, 33) if positions.takes(0, o)] == [31, 32] and positions.refused == 0


def test_without_a_consumer_nothing_is_sought_or_asked() -> None:
    positions = Positions(TOPIC, lambda: None)
    positions.assign({0: OFFSET_BEGINNING})
    positions.new_batch()
    assert not positions.takes(0, 3) and positions.refused == 1  # the low watermark cannot be asked
