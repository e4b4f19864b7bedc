"""hivewire.read_events over a real Apache Kafka broker.

One topic per module: 10,000 mixed Apiary events, partitioned as the Apiary listener does, with record
timestamps 100 ms apart, plus three messages that do not decode. Every read is checked against the
(partition, offset, timestamp) the broker acknowledged for each produced message.
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from hivewire.data._arrow import SCHEMA
from hivewire.data._notebook import EventList, read_events, to_millis
from hivewire.events import _apiary as apiary
from hivewire.runtime._kafka import KafkaSource

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_arrow import T0_MS, mixed_messages

N = 10_000
BAD = [b"{not json", b'{"eventType": "ON_SOMETHING_ELSE"}', None]  # None: a tombstone (no value)


class Topic:
    def __init__(self, bootstrap: str, name: str) -> None:
        self.source = KafkaSource(bootstrap, name)
        self.name = name
        self.events: list[tuple[int, int, int]] = []  # (partition, offset, timestamp) of each event
        self.bad: list[tuple[int, int, int]] = []


@pytest.fixture(scope="module")
def topic(kafka: str) -> Topic:
    import uuid

    t = Topic(kafka, f"read_events_{uuid.uuid4().hex[:8]}")
    producer = Producer(
        {"bootstrap.servers": kafka, "compression.type": "zstd", "linger.ms": 20, "enable.idempotence": True}
    )
    acked: dict[int, tuple[int, int, int]] = {}

    def delivered(err: Any, msg: Any, i: int) -> None:
        assert err is None, err
        # The timestamp we set; the mock's delivery reports carry a fake log-append time (1234) instead.
        acked[i] = (msg.partition(), msg.offset(), T0_MS + i * 100)

    messages: list[bytes | None] = [*mixed_messages(N, seed=11)]
    for i, bad in zip((1234, 5678, 9999), BAD, strict=True):
        messages.insert(i, bad)
    for i, data in enumerate(messages):
        name = apiary.decode(data).qualified_name if i not in (1234, 5678, 9999) else "bad"
        producer.produce(
            t.name,
            value=data,
            partition=apiary.partition_for(name, 4),
            timestamp=T0_MS + i * 100,
            on_delivery=lambda err, msg, i=i: delivered(err, msg, i),
        )
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    for i in range(len(messages)):
        (t.bad if i in (1234, 5678, 9999) else t.events).append(acked[i])
    return t


def coordinates(events: EventList) -> list[tuple[int, int, int]]:
    out = []
    for e in events:
        assert e.origin is not None and e.origin.timestamp is not None
        out.append((e.origin.partition, e.origin.offset, e.origin.timestamp))
    return out


def by_time(items: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    return sorted(items, key=lambda c: (c[2], c[0], c[1]))


def test_the_whole_topic(topic: Topic) -> None:
    events = read_events(topic.source, progress=False)
    assert len(events) == N
    assert coordinates(events) == by_time(topic.events)
    assert sorted((f.origin.partition, f.origin.offset) for f in events.failures if f.origin) == sorted(
        (p, o) for p, o, _ in topic.bad
    )
    reasons = sorted(f.error for f in events.failures)
    assert reasons[0].startswith("empty message") and "not JSON" in reasons[1] and "unknown eventType" in reasons[2]
    assert {f.raw for f in events.failures} == set(BAD)


@pytest.mark.parametrize("form", ["datetime", "iso", "millis"])
def test_a_slice_by_time(topic: Topic, form: str) -> None:
    since_ms, until_ms = T0_MS + 2_500 * 100 + 50, T0_MS + 7_000 * 100  # until: exactly a message's time
    since: Any
    until: Any
    if form == "datetime":
        since = datetime.fromtimestamp(since_ms / 1000, tz=timezone.utc)
        until = datetime.fromtimestamp(until_ms / 1000, tz=timezone.utc).replace(tzinfo=None)  # naive = UTC
    elif form == "iso":
        since = datetime.fromtimestamp(since_ms / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")
        until = datetime.fromtimestamp(until_ms / 1000, tz=timezone(timedelta(hours=2))).isoformat()
    else:
        since, until = since_ms, until_ms
    events = read_events(topic.source, since=since, until=until, progress=False)
    expected = [c for c in topic.events if since_ms <= c[2] < until_ms]
    assert len(expected) > 4000
    assert coordinates(events) == by_time(expected)
    assert events.failures == [f for f in events.failures if since_ms <= f.origin.timestamp < until_ms]  # type: ignore


def test_a_slice_by_offsets(topic: Topic) -> None:
    events = read_events(
        bootstrap_servers=topic.source.bootstrap_servers,
        topic=topic.name,
        start_offsets={0: 100, 2: 0},
        end_offsets={0: 350, 2: 40},
        progress=False,
    )
    expected = [c for c in topic.events if (c[0] == 0 and 100 <= c[1] < 350) or (c[0] == 2 and c[1] < 40)]
    assert len(expected) == 290
    assert coordinates(events) == by_time(expected)


def test_offsets_and_time_together(topic: Topic) -> None:
    """start_offsets for one partition, the rest of the partition list by time."""
    until_ms = T0_MS + 5_000 * 100
    events = read_events(topic.source, partitions=[1, 3], start_offsets={1: 500}, until=until_ms, progress=False)
    expected = [c for c in topic.events if c[0] in (1, 3) and c[2] < until_ms and (c[0] != 1 or c[1] >= 500)]
    assert coordinates(events) == by_time(expected)


def test_max_events_reads_a_prefix_of_each_partition(topic: Topic) -> None:
    events = read_events(topic.source, max_events=700, progress=False)
    assert len(events) + len(events.failures) == 700
    for p in range(4):
        offsets = sorted(o for q, o, _ in coordinates(events) if q == p)
        offsets += sorted(f.origin.offset for f in events.failures if f.origin and f.origin.partition == p)
        assert sorted(offsets) == list(range(len(offsets))), p


def test_an_empty_slice(topic: Topic) -> None:
    events = read_events(topic.source, since=datetime(2100, 1, 1), progress=False)
    assert events == [] and events.failures == []
    assert events.to_arrow().num_rows == 0


def test_progress_bar(topic: Topic, capsys: pytest.CaptureFixture[str]) -> None:
    events = read_events(topic.source, start_offsets={0: 0}, end_offsets={0: 200}, progress=True)
    assert len(events) == 200
    err = capsys.readouterr().err
    assert topic.name in err and "200/200" in err


def test_event_list_conversions(topic: Topic) -> None:
    events = read_events(
        topic.source, start_offsets=dict.fromkeys(range(4), 0), end_offsets=dict.fromkeys(range(4), 600), progress=False
    )
    table = events.to_arrow()
    assert table.schema == SCHEMA and table.num_rows == len(events)
    assert table.column("kafka_offset").to_pylist() == [e.origin.offset for e in events]  # type: ignore[union-attr]
    with_failures = events.to_arrow(include_failures=True)
    assert with_failures.num_rows == len(events) + len(events.failures)
    assert with_failures.column("decode_error").null_count == len(events)
    frame = events.to_pandas()
    assert len(frame) == len(events) and isinstance(frame["parameters"].iloc[0], dict)
    assert frame["event_type"].value_counts().to_dict() == events.counts()
    page = events._repr_html_()
    assert f"{len(events):,} events" in page and "CREATE_TABLE" in page and "... and" in page
    assert repr(events).startswith(f"EventList({len(events)} events: ")
    assert isinstance(events[:5], EventList) and len(events[:5].to_arrow()) == 5


def test_time_bounds() -> None:
    assert to_millis(datetime(2024, 5, 31, 16, 8, 37, tzinfo=timezone.utc)) == T0_MS
    assert to_millis("2024-05-31T16:08:37Z") == to_millis("2024-05-31T18:08:37+02:00") == T0_MS
    assert to_millis(datetime(2024, 5, 31, 16, 8, 37)) == T0_MS
    assert to_millis(timedelta(seconds=10), now=T0_MS / 1000 + 10) == T0_MS
    with pytest.raises(TypeError):
        to_millis(True)


def test_a_table_straight_from_the_messages_is_the_table_of_the_events(topic: Topic) -> None:
    """read_events holds the messages raw until the list is used: its table then comes from the columnar
    decoder, and equals the table of the decoded events (failures and all)."""
    for include_failures in (False, True):
        raw = read_events(topic.source, progress=False)
        assert raw._messages is not None and list.__len__(raw) == 0  # nothing decoded yet
        straight = raw.to_arrow(include_failures=include_failures)
        assert raw._messages is not None  # still not decoded
        decoded = read_events(topic.source, progress=False)
        assert len(decoded) == N and decoded._messages is None  # len() decoded it
        assert straight.equals(decoded.to_arrow(include_failures=include_failures))
        assert straight.num_rows == N + (len(BAD) if include_failures else 0)


def test_every_list_operation_decodes_first(topic: Topic) -> None:
    def fresh() -> EventList:
        return read_events(topic.source, start_offsets={1: 0}, end_offsets={1: 50}, progress=False)

    reference = list(fresh())
    assert len(reference) == 50
    assert fresh() == reference and (fresh() != reference) is False and fresh() == fresh()
    assert reference[7] in fresh() and fresh().index(reference[7]) == 7 and fresh().count(reference[7]) == 1
    assert [*fresh()] == reference and list(reversed(fresh())) == reference[::-1] and bool(fresh())
    assert fresh()[3] == reference[3] and fresh()[-5:] == reference[-5:]
    assert fresh() + reference[:1] == [*reference, reference[0]]
    grown = fresh()
    grown.append(reference[0])
    assert len(grown) == 51 and grown[-1] == grown[0]
    assert fresh().failures == [] and fresh().copy() == reference
    emptied = fresh()
    emptied.clear()
    assert emptied == [] and emptied.to_arrow().num_rows == 0


class TestRecordsTheBrokerDeleted:
    """Offsets asked for that retention (here ``delete_records``) removed: named exactly, never skipped silently."""

    @pytest.fixture
    def deleted(self, kafka: str) -> tuple[str, str]:
        import uuid

        from confluent_kafka.admin import AdminClient, NewTopic

        name = f"read_events_deleted_{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": kafka})
        admin.create_topics([NewTopic(name, 2, 1)])[name].result(30)
        producer = Producer({"bootstrap.servers": kafka, "linger.ms": 5})
        messages = mixed_messages(150, seed=5)
        for i, data in enumerate(messages):
            producer.produce(name, value=data, partition=0 if i < 100 else 1)
        assert producer.flush(30) == 0
        return kafka, name

    @staticmethod
    def delete(bootstrap: str, topic: str, before: dict[int, int]) -> None:
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.delete_records([TopicPartition(topic, p, o) for p, o in before.items()]).values():
            future.result(30)

    def test_a_start_below_the_first_retained_offset(
        self, deleted: tuple[str, str], caplog: pytest.LogCaptureFixture
    ) -> None:
        import pickle

        from hivewire.data import MissingRange

        bootstrap, name = deleted
        self.delete(bootstrap, name, {0: 40})
        with caplog.at_level("WARNING", logger="hivewire.notebook"):
            events = read_events(bootstrap_servers=bootstrap, topic=name, start_offsets={0: 10, 1: 0}, progress=False)
        assert events.missing == [MissingRange(name, 0, 10, 39)]
        assert events.missing[0].count == 30
        assert sorted(e.origin.offset for e in events if e.origin and e.origin.partition == 0) == list(range(40, 100))
        assert len(events) == 60 + 50
        lines = [r.getMessage() for r in caplog.records if "records lost to retention" in r.getMessage()]
        assert len(lines) == 1 and f"{name}/0 offsets 10-39 (30 records)" in lines[0], lines
        assert pickle.loads(pickle.dumps(events)).missing == events.missing
        # Nothing asked for below the first retained offset: nothing missing, no line.
        caplog.clear()
        with caplog.at_level("WARNING", logger="hivewire.notebook"):
            whole = read_events(bootstrap_servers=bootstrap, topic=name, progress=False)
        assert whole.missing == [] and len(whole) == 110
        assert not [r for r in caplog.records if "records lost to retention" in r.getMessage()]

    def test_records_deleted_after_the_read_was_planned(self, deleted: tuple[str, str]) -> None:
        """The ranges are fixed first (as read_events does), then the broker deletes inside them."""
        from confluent_kafka import Consumer

        from hivewire.data import MissingRange
        from hivewire.data._notebook import _consume
        from hivewire.data._offsets import _Reader
        from hivewire.data._rows import Message

        bootstrap, name = deleted
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "hivewire-read-events",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
            }
        )
        try:
            reader = _Reader(consumer, name, 30)
            ranges = {p: reader.watermarks(p) for p in (0, 1)}
            assert ranges == {0: (0, 100), 1: (0, 50)}
            self.delete(bootstrap, name, {0: 70, 1: 50})  # partition 1 loses everything
            messages: list[Message] = []
            missing: list[MissingRange] = []

            class Bar:
                def update(self, _n: int) -> None:
                    pass

            _consume(consumer, reader, ranges, 150, None, None, messages, missing, Bar())
        finally:
            consumer.close()
        assert sorted(missing) == [MissingRange(name, 0, 0, 69), MissingRange(name, 1, 0, 49)]
        assert sorted(m.origin.offset for m in messages if m.origin is not None) == list(range(70, 100))
