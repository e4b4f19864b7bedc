"""The Spark sources and records the broker deleted (retention), on the real broker (fixture ``kafka``).

Records are deleted with the admin client's ``delete_records``, as retention deletes them: the first offset the
broker holds moves up. Offsets to read below it (a batch's starting offsets, a stream's checkpointed ones) are
reported when the query is planned; records deleted between planning and an executor's read are reported by
that executor. Either way the report is the exact range per partition, ``[first, last]`` and the count: the
error with ``failOnDataLoss=true``, one WARNING line with ``false``.

The planning and the executor's read are also called in this process (the readers Spark's Python workers call,
unchanged), so that the log line and a deletion exactly between planning and reading can be observed; one read
goes through Spark to show the error reaching the user.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from hivewire.data._spark_options import SourceOptions
from hivewire.data._spark_records import read_range, read_raw_range
from hivewire.data._spark_source import BatchReader, StreamReader
from hivewire.errors import HivewireError

PER_PARTITION = 50


def _topic(kafka: str) -> str:
    """A topic of 2 partitions with PER_PARTITION records each."""
    from hivewire.tools._kafka_broker import create_topic

    name = f"retention_{uuid.uuid4().hex[:8]}"
    create_topic(kafka, name, 2)
    producer = Producer({"bootstrap.servers": kafka})
    for i in range(2 * PER_PARTITION):
        producer.produce(name, b'{"eventType": "ON_NOTHING"}', partition=i % 2)
    assert producer.flush(60) == 0
    return name


def _delete(kafka: str, topic: str, before: dict[int, int]) -> None:
    """Delete the records of ``topic`` before ``{partition: offset}``, as retention would."""
    admin = AdminClient({"bootstrap.servers": kafka})
    futures = admin.delete_records([TopicPartition(topic, p, offset) for p, offset in before.items()])
    for tp, future in futures.items():
        assert future.result(60).low_watermark == before[tp.partition]


def _options(kafka: str, topic: str, **more: str) -> SourceOptions:
    return SourceOptions.parse({"kafka.bootstrap.servers": kafka, "topic": topic, **more})


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hivewire.spark" and r.levelno == logging.WARNING]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    import hivewire.spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.Builder()
        .master("local[1]")
        .appName("hivewire-retention-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.python.authenticate.socketTimeout", "300s")
        .getOrCreate()
    )
    yield hivewire.spark.register(session)
    session.stop()


def test_offsets_deleted_before_planning_fail_the_query_with_the_exact_ranges(spark: Any, kafka: str) -> None:
    topic = _topic(kafka)
    _delete(kafka, topic, {0: 30, 1: 10})
    start = '{"0": 5, "1": 0}'
    for fmt in ("hivewire", "hivewire_raw"):
        reader = spark.read.format(fmt).option("kafka.bootstrap.servers", kafka).option("topic", topic)
        with pytest.raises(Exception, match="retention") as caught:
            reader.option("startingOffsets", start).load().count()
        text = str(caught.value)
        assert f"{topic}/0 offsets 5-29 (25 records)" in text, text
        assert f"{topic}/1 offsets 0-9 (10 records)" in text, text
    # the same offsets from a stream's checkpoint
    stream = StreamReader(_options(kafka, topic))
    with pytest.raises(HivewireError, match=rf"{topic}/0 offsets 5-29 \(25 records\)"):
        stream.partitions({"0": 5, "1": 10}, {"0": PER_PARTITION, "1": PER_PARTITION})


def test_offsets_deleted_before_planning_are_one_warning_without_fail_on_data_loss(
    spark: Any, kafka: str, caplog: pytest.LogCaptureFixture
) -> None:
    topic = _topic(kafka)
    _delete(kafka, topic, {0: 30, 1: 10})
    options = {"startingOffsets": '{"0": 5, "1": 0}', "failOnDataLoss": "false"}
    caplog.set_level(logging.WARNING, logger="hivewire.spark")
    parts = BatchReader(_options(kafka, topic, **options)).partitions()
    assert sorted((p.partition, p.start, p.end) for p in parts) == [(0, 30, PER_PARTITION), (1, 10, PER_PARTITION)]
    lines = _warnings(caplog)
    assert len(lines) == 1, lines
    assert f"{topic}/0 offsets 5-29 (25 records)" in lines[0] and f"{topic}/1 offsets 0-9 (10 records)" in lines[0]

    caplog.clear()
    stream = StreamReader(_options(kafka, topic, failOnDataLoss="false"))
    parts = stream.partitions({"0": 5, "1": 10}, {"0": PER_PARTITION, "1": PER_PARTITION})
    assert sorted((p.partition, p.start) for p in parts) == [(0, 30), (1, 10)]
    assert len(lines := _warnings(caplog)) == 1 and f"{topic}/0 offsets 5-29 (25 records)" in lines[0], lines

    # through Spark: what remains, nothing else
    df = hivewire_read(spark, kafka, topic, **options)
    assert df.count() == (PER_PARTITION - 30) + (PER_PARTITION - 10)


def hivewire_read(spark: Any, kafka: str, topic: str, **options: str) -> Any:
    reader = spark.read.format("hivewire").option("kafka.bootstrap.servers", kafka).option("topic", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def _offsets(batches: Any) -> list[int]:
    out: list[int] = []
    for batch in batches:
        name = "kafka_offset" if "kafka_offset" in batch.schema.names else "offset"
        out.extend(batch.column(name).to_pylist())
    return out


def test_records_deleted_between_planning_and_reading_are_reported_by_the_executor(
    kafka: str, caplog: pytest.LogCaptureFixture
) -> None:
    topic = _topic(kafka)
    strict = _options(kafka, topic)
    lenient = _options(kafka, topic, failOnDataLoss="false")
    parts = {p.partition: p for p in BatchReader(strict).partitions()}  # planned: [0, 50) of each partition
    assert {p: (r.start, r.end) for p, r in parts.items()} == {0: (0, PER_PARTITION), 1: (0, PER_PARTITION)}
    _delete(kafka, topic, {0: 20, 1: PER_PARTITION})  # partition 1: every record of its range

    for read in (read_range, read_raw_range):
        with pytest.raises(HivewireError, match=rf"after this query was planned: {topic}/0 offsets 0-19 \(20 rec"):
            list(read(strict, parts[0]))
        with pytest.raises(HivewireError, match=rf"{topic}/1 offsets 0-49 \(50 records\)"):
            list(read(strict, parts[1]))

        caplog.clear()
        caplog.set_level(logging.WARNING, logger="hivewire.spark")
        assert _offsets(read(lenient, parts[0])) == list(range(20, PER_PARTITION))
        assert _offsets(read(lenient, parts[1])) == []
        lines = _warnings(caplog)
        assert len(lines) == 2, lines
        assert f"{topic}/0 offsets 0-19 (20 records)" in lines[0] and f"{topic}/1 offsets 0-49 (50 records)" in lines[1]
