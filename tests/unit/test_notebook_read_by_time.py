"""read_events by time: asking the broker (offsets_for_times) versus searching message timestamps.

The integration tests run against librdkafka's mock cluster, which cannot look offsets up by time, so they
only exercise the search. Here a stub consumer plays each kind of broker: a real one (Kafka's time index
semantics: the first offset whose timestamp is at or after the time, -1 when there is none), the mock (-1 for
every time), one whose request fails, and one that reports a per-partition error. Whatever the broker, the
offsets must be the same; what differs is how they are found, which the stub records.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Literal

import pytest
from confluent_kafka import KafkaError, KafkaException

from hivewire.data._notebook import _Reader
from hivewire.errors import HivewireError

TOPIC = "events"
Broker = Literal["kafka", "mock", "raises", "partition_error"]


class Message:
    def __init__(self, partition: int, offset: int, timestamp: int | None, error: KafkaError | None = None) -> None:
        self._partition, self._offset, self._timestamp, self._error = partition, offset, timestamp, error

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, self._timestamp) if self._timestamp is not None else (0, -1)

    def error(self) -> KafkaError | None:
        return self._error


@dataclass
class StubConsumer:
    """One partition's messages as {offset: timestamp} (gaps allowed: compaction, transaction markers)."""

    broker: Broker
    messages: dict[int, int]
    partition: int = 0
    lookups: list[int] = field(default_factory=list)  # times asked with offsets_for_times
    reads: int = 0  # messages fetched (the timestamp search)
    _position: int = 0

    def offsets_for_times(self, partitions: list[Any], timeout: float) -> list[Any]:
        (tp,) = partitions
        assert (tp.topic, tp.partition) == (TOPIC, self.partition) and timeout > 0
        self.lookups.append(tp.offset)
        if self.broker == "raises":
            raise KafkaException(KafkaError(KafkaError._UNSUPPORTED_FEATURE))
        if self.broker == "partition_error":
            return [SimpleNamespace(offset=-1, error=KafkaError(KafkaError.UNSUPPORTED_VERSION))]
        if self.broker == "mock":
            return [SimpleNamespace(offset=-1, error=None)]
        found = [o for o, ts in sorted(self.messages.items()) if ts >= tp.offset]
        return [SimpleNamespace(offset=found[0] if found else -1, error=None)]

    def assign(self, partitions: list[Any]) -> None:
        (tp,) = partitions
        self._position = tp.offset

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        later = [o for o in sorted(self.messages) if o >= self._position]
        if not later:
            return [Message(self.partition, self._position, None, KafkaError(KafkaError._PARTITION_EOF))]
        self.reads += 1
        self._position = later[0] + 1
        return [Message(self.partition, later[0], self.messages[later[0]])]


def expected(messages: dict[int, int], ms: int, low: int, high: int) -> int:
    """The first message in [low, high) at or after ``ms`` (else ``high``), by brute force."""
    return next((o for o in sorted(messages) if low <= o < high and messages[o] >= ms), high)


def reads_from(messages: dict[int, int], position: int, high: int) -> int:
    """The message that reading from ``position`` starts at: an offset in a gap is as good as the next one."""
    return next((o for o in sorted(messages) if position <= o < high), high)


def check(reader: _Reader, messages: dict[int, int], ms: int, low: int, high: int) -> None:
    got = reader.offset_for_time(0, ms, low, high)
    assert low <= got <= high
    assert reads_from(messages, got, high) == expected(messages, ms, low, high), (reader.by_time, ms, low, got)


def sample(seed: int) -> tuple[dict[int, int], int, int]:
    """Messages at offsets [low, high) with a few gaps and non-decreasing timestamps (ties included)."""
    rng = random.Random(seed)
    low = rng.randrange(0, 50)
    offsets = [o for o in range(low, low + rng.randrange(1, 200)) if rng.random() > 0.1] or [low]
    ts, messages = 1_700_000_000_000, {}
    for o in offsets:
        ts += rng.choice([0, 0, 5, 100, 3000])
        messages[o] = ts
    return messages, offsets[0], offsets[-1] + 1


def times_to_ask(messages: dict[int, int]) -> list[int]:
    stamps = sorted(set(messages.values()))
    return [
        0,
        stamps[0] - 1,
        *stamps[:3],
        *(t + 1 for t in stamps[-3:]),
        stamps[len(stamps) // 2],
        stamps[-1],
        stamps[-1] + 10_000,
    ]


@pytest.mark.parametrize("broker", ["kafka", "mock", "raises", "partition_error"])
@pytest.mark.parametrize("seed", range(6))
def test_every_broker_gives_the_offsets_of_the_time_index(broker: Broker, seed: int) -> None:
    messages, low, high = sample(seed)
    consumer = StubConsumer(broker, messages)
    reader = _Reader(consumer, TOPIC, timeout=5.0)
    for ms in times_to_ask(messages):
        check(reader, messages, ms, low, high)
        check(reader, messages, ms, (low + high) // 2, high)  # a sub-range, as for `until` after `since`


def test_a_broker_with_a_time_index_is_asked_and_no_message_is_read() -> None:
    messages, low, high = sample(1)
    consumer = StubConsumer("kafka", messages)
    reader = _Reader(consumer, TOPIC, timeout=5.0)
    asked = times_to_ask(messages)
    for ms in asked:
        reader.offset_for_time(0, ms, low, high)
    assert reader.by_time is True
    assert consumer.reads == 0
    assert consumer.lookups == [0, *asked]  # one probe (time 0) for the whole read, then one lookup per time


@pytest.mark.parametrize("broker", ["mock", "raises", "partition_error"])
def test_a_broker_without_one_is_probed_once_then_searched(broker: Broker, caplog: pytest.LogCaptureFixture) -> None:
    messages, low, high = sample(2)
    consumer = StubConsumer(broker, messages)
    reader = _Reader(consumer, TOPIC, timeout=5.0)
    with caplog.at_level(logging.WARNING, logger="hivewire.notebook"):
        for ms in times_to_ask(messages):
            reader.offset_for_time(0, ms, low, high)
    assert reader.by_time is False
    assert consumer.lookups == [0]  # the probe only: never asked again, even for other times
    assert consumer.reads > 0
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "cannot look offsets up by time" in warning and "searching message timestamps" in warning


def test_an_empty_range_needs_no_broker() -> None:
    consumer = StubConsumer("kafka", {5: 100})
    reader = _Reader(consumer, TOPIC, timeout=5.0)
    assert reader.offset_for_time(0, 50, 7, 7) == 7
    assert consumer.lookups == [] and consumer.reads == 0 and reader.by_time is None


def test_a_failed_lookup_after_a_good_probe_is_a_hivewire_error() -> None:
    consumer = StubConsumer("kafka", {0: 100, 1: 200})
    reader = _Reader(consumer, TOPIC, timeout=5.0)
    assert reader.offset_for_time(0, 150, 0, 2) == 1
    consumer.broker = "raises"  # the cluster became unreachable between two lookups
    with pytest.raises(HivewireError) as exc:
        reader.offset_for_time(0, 150, 0, 2)
    assert "events/0" in str(exc.value) and "timeout=" in str(exc.value)
    assert isinstance(exc.value.__cause__, KafkaException)
