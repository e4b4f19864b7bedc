"""The Spark source's options, its plan of offsets and its loss reports, without Spark or Kafka running.

The planning functions take the watermarks as data, so the tables below are the whole of their behaviour; a
stub stands in for the executor's consumer only where the loss check asks the broker its first offset (the
real broker's answers are in tests/integration/test_spark_source_retention.py).
"""

from __future__ import annotations

import logging
import pickle
from typing import Any

import pytest

from hivewire.data._spark_loss import check_planned, check_resumed, ranges_text
from hivewire.data._spark_options import SourceOptions
from hivewire.data._spark_plan import KafkaRange, admit, positions, split
from hivewire.errors import ConfigError, HivewireError

BASE = {"kafka.bootstrap.servers": "broker:9092", "topic": "apiary"}


def options(**more: str) -> SourceOptions:
    return SourceOptions.parse({**BASE, **more})


def test_options_are_case_insensitive_with_their_defaults() -> None:
    parsed = SourceOptions.parse({"KAFKA.Bootstrap.Servers": "b:1", "TOPIC": "t", "kafka.security.protocol": "SSL",
                                  "MaxEventsPerSplit": "7", "failOnDataLoss": "FALSE",
                                  "startingTimestamp": "2026-01-01T00:00:00"})  # fmt: skip
    assert parsed.consumer == {"bootstrap.servers": "b:1", "security.protocol": "SSL"}
    assert (parsed.topic, parsed.max_events_per_split, parsed.fail_on_data_loss) == ("t", 7, False)
    assert parsed.starting_timestamp == 1_767_225_600_000 and parsed.ending_timestamp is None
    assert (parsed.starting_offsets, parsed.ending_offsets, parsed.timeout) == ("earliest", "latest", 60.0)
    assert parsed.max_events_per_trigger is None and options(startingTimestamp="-5").starting_timestamp == -5


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ({"topic": "t"}, "kafka.bootstrap.servers"),
        ({"kafka.bootstrap.servers": "b:1"}, "topic"),
        ({**BASE, "maxEventsPerSplit": "0"}, "maxeventspersplit"),
        ({**BASE, "maxEventsPerTrigger": "many"}, "maxeventspertrigger"),
        ({**BASE, "timeoutSeconds": "-1"}, "timeoutseconds"),
        ({**BASE, "failOnDataLoss": "yes"}, "failondataloss"),
    ],
)
def test_a_bad_option_is_named(given: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as exc:
        SourceOptions.parse(given)
    assert exc.value.key == key


MARKS = {0: (10, 100), 1: (0, 5), 2: (7, 7)}


@pytest.mark.parametrize(
    ("spec", "default", "expected"),
    [
        ("earliest", 0, {0: 10, 1: 0, 2: 7}),
        ("latest", 1, {0: 100, 1: 5, 2: 7}),
        ('{"0": 42}', 0, {0: 42, 1: 0, 2: 7}),  # partitions not named: earliest for a start
        ('{"0": 42}', 1, {0: 42, 1: 5, 2: 7}),  # ... latest for an end
        ('{"0": -1, "1": -2}', 0, {0: 100, 1: 0, 2: 7}),
        ('{"0": 3}', 0, {0: 3, 1: 0, 2: 7}),  # below the low watermark: kept, the loss check reports it
    ],
)
def test_positions(spec: str, default: int, expected: dict[int, int]) -> None:
    assert positions(spec, MARKS, default, "startingOffsets") == expected


@pytest.mark.parametrize("spec", ["first", "[1, 2]", '{"zero": 1}'])
def test_bad_positions_are_named(spec: str) -> None:
    with pytest.raises(ConfigError, match="earliest, latest or JSON") as exc:
        positions(spec, MARKS, 0, "startingOffsets")
    assert exc.value.key == "startingOffsets"


def test_split_covers_each_range_in_pieces_of_at_most_max_events_per_split() -> None:
    timed = options(maxEventsPerSplit="40", startingTimestamp="1000", endingTimestamp="2000")
    parts = split(timed, {1: (0, 100), 0: (5, 45), 2: (7, 7)}, timed=True)
    assert [(p.partition, p.start, p.end) for p in parts] == [(0, 5, 45), (1, 0, 40), (1, 40, 80), (1, 80, 100)]
    assert {(p.topic, p.since_ms, p.until_ms) for p in parts} == {("apiary", 1000, 2000)}
    # a stream's ranges keep no time bounds: its starting time only chose the first offsets
    assert {(p.since_ms, p.until_ms) for p in split(timed, {0: (0, 100)}, timed=False)} == {(None, None)}


@pytest.mark.parametrize(
    ("begin", "latest", "budget", "expected"),
    [
        ({"0": 0, "1": 0}, {"0": 100, "1": 100}, 10, {"0": 5, "1": 5}),
        ({"0": 0, "1": 0}, {"0": 2, "1": 100}, 10, {"0": 2, "1": 8}),  # what one cannot take goes to the other
        ({"0": 0, "1": 0, "2": 0}, {"0": 9, "1": 9, "2": 9}, 2, {"0": 1, "1": 1, "2": 0}),
        ({"0": 4, "1": 9}, {"0": 6, "1": 9}, 100, {"0": 6, "1": 9}),  # less than the budget: all of it
        ({"0": 4}, {"0": 2}, 10, {"0": 4}),  # never backwards
    ],
)
def test_admit_shares_the_budget_fairly(
    begin: dict[str, int], latest: dict[str, int], budget: int, expected: dict[str, int]
) -> None:
    ends = admit(begin, latest, budget)
    assert ends == expected
    assert sum(ends[p] - begin[p] for p in begin) <= budget


def test_the_plan_is_plain_data_spark_can_pickle() -> None:
    part = KafkaRange("apiary", 1, 10, 20, 5, None)
    for value in (part, options()):
        copy = pickle.loads(pickle.dumps(value))
        assert copy == value and type(copy).__module__ == type(value).__module__


def test_offsets_planned_below_the_low_watermark_are_reported_exactly(caplog: pytest.LogCaptureFixture) -> None:
    assert ranges_text("t", {1: (3, 3), 0: (10, 19)}) == "t/0 offsets 10-19 (10 records), t/1 offsets 3-3 (1 records)"
    with pytest.raises(HivewireError, match=r"before this query read them: apiary/0 offsets 3-9 \(7 records\)\."):
        check_planned(options(), {0: 3, 1: 0, 2: 7}, MARKS)
    check_planned(options(), {0: 10, 1: 0}, MARKS)  # nothing below: nothing said
    with caplog.at_level(logging.WARNING, logger="hivewire.spark"):
        check_planned(options(failOnDataLoss="false"), {0: 3}, MARKS)
    [line] = [r.getMessage() for r in caplog.records]
    assert "skipped (failOnDataLoss=false): apiary/0 offsets 3-9 (7 records)" in line


class Broker:
    """The executor consumer's one question here: the partition's watermarks now."""

    def __init__(self, low: int) -> None:
        self.low, self.asked = low, 0

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        assert not cached and (tp.topic, tp.partition) == ("apiary", 0)
        self.asked += 1
        return self.low, 1000


@pytest.mark.parametrize(
    ("low", "resumed", "lost"),
    [
        (0, 25, None),  # the broker still holds the start: transaction markers or a compacted hole
        (20, 25, "apiary/0 offsets 10-19 (10 records)"),  # retention deleted the start of the range
        (25, 25, "apiary/0 offsets 10-24 (15 records)"),
        (60, 50, "apiary/0 offsets 10-49 (40 records)"),  # nothing came: the whole range, no further
    ],
)
def test_a_range_resumed_past_its_start_reports_only_what_the_broker_deleted(
    low: int, resumed: int, lost: str | None
) -> None:
    broker = Broker(low)
    part = KafkaRange("apiary", 0, 10, 50)
    if lost is None:
        check_resumed(options(), broker, part, resumed)
    else:
        with pytest.raises(HivewireError, match="after this query was planned") as exc:
            check_resumed(options(), broker, part, resumed)
        assert lost in str(exc.value)
    assert broker.asked == 1
