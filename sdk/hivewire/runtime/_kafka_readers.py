"""Kafka consumers apart from the group's, which never commit: :class:`KafkaReader` reads ranges of a partition
again (a lane's spills, parked ranges and replays), :class:`KafkaTail` reads every partition of the topic (a
singleton listener's).

Invariants: both are assigned partitions, never subscribed, so neither joins the consumer group nor moves its
offsets; a range the reader was asked for exists (it was polled before) unless retention deleted it, which is
a :class:`~hivewire.errors.RecordsGoneError`, never a silent read of something else.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import OFFSET_INVALID, OFFSET_STORED, Consumer, KafkaError, KafkaException, TopicPartition

from hivewire.errors import HivewireError, RecordsGoneError, SourceError
from hivewire.runtime._source import Record
from hivewire.runtime._source import TopicPartition as TP

log = logging.getLogger("hivewire.kafka")


class KafkaReader:
    """Reads ranges of partitions by assignment: it never joins the group nor commits, so it moves no offsets."""

    def __init__(self, conf: Mapping[str, Any]) -> None:
        self._consumer = Consumer(
            {
                **conf,
                # Its own group name (librdkafka wants one) so that it can never be mistaken for a member.
                "group.id": f"{conf['group.id']}.reread",
                # A range that retention deleted must fail, not silently read something else.
                "auto.offset.reset": "error",
                # It reads one share at a time: no need for librdkafka's 64 MiB prefetch per partition.
                "queued.max.messages.kbytes": 4096,
                # consume() returns at the partition's end instead of waiting out its timeout for more.
                "enable.partition.eof": True,
                # Ranges it reads exist: a fetch long-polling at the partition's end would only delay the next
                # assign() by up to this (the default 500 ms, per share read).
                "fetch.wait.max.ms": 10,
            }
        )

    def read(self, tp: TP, start: int, end: int, timeout: float) -> Sequence[Record]:
        topic, partition = tp
        self._consumer.assign([TopicPartition(topic, partition, start)])
        out: list[Record] = []
        next_offset = start
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SourceError(
                    f"could not read {topic}/{partition} offsets {start}..{end - 1} again within "
                    f"{timeout:g} s (is the broker reachable?)"
                )
            # Ask for no more than the range still holds: consume() waits until it has that many (or times out).
            for m in self._consumer.consume(max(1, min(1000, end - next_offset)), min(remaining, 0.5)):
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._AUTO_OFFSET_RESET:
                        raise RecordsGoneError(
                            f"{topic}/{partition} no longer has offsets {start}..{end - 1} "
                            f"(deleted by retention): {err.str()}"
                        )
                    if err.fatal():
                        raise SourceError(f"fatal Kafka consumer error: {err}")
                    if err.code() != KafkaError._PARTITION_EOF:
                        log.warning("Kafka consumer error while reading %s/%s again: %s", topic, partition, err)
                    continue
                offset = m.offset()
                if offset >= end:
                    return out
                out.append(m)
                next_offset = offset + 1
                if offset == end - 1:
                    return out  # the range's last record (it exists: it was polled before)

    def close(self) -> None:
        self._consumer.close()


class KafkaTail:
    """Reads every partition of ``topic`` by assignment (:class:`~hivewire.runtime._source.Tail`).

    It has the group's ``group.id``, only so that a partition added without an offset starts at the group's
    committed offset (librdkafka's ``OFFSET_STORED``); assigned, not subscribed, it never joins the group, and it
    never commits.
    """

    def __init__(self, conf: Mapping[str, Any], topic: str, on_error: Callable[[KafkaError], None]) -> None:
        self._consumer = Consumer(dict(conf))
        self._topic = topic
        self._on_error = on_error
        self._paused = False

    def partitions(self) -> list[TP]:
        try:
            metadata = self._consumer.list_topics(self._topic, timeout=10).topics.get(self._topic)
        except KafkaException as e:
            log.info("could not list the partitions of %s (%s); trying again later", self._topic, reason(e))
            return []
        if metadata is None or metadata.error is not None:
            return []
        return [(self._topic, p) for p in sorted(metadata.partitions)]

    def add(self, positions: Mapping[TP, int | None]) -> dict[TP, int | None]:
        starts = dict(positions)
        unknown = [TopicPartition(t, p) for (t, p), o in positions.items() if o is None]
        if unknown:  # the group's committed offsets, asked now so that the caller knows where reading starts
            # Not assigned before they are known: librdkafka would look them up later (OFFSET_STORED), when the
            # group's members may have committed past what this reader must still read.
            try:
                committed = self._consumer.committed(unknown, timeout=10)
            except KafkaException as e:
                raise SourceError(f"could not read the committed offsets of {self._topic}: {reason(e)}") from e
            for found in committed:
                if found.error is not None:
                    raise SourceError(
                        f"could not read the committed offset of {found.topic}/{found.partition}: {found.error}"
                    )
                if found.offset >= 0:
                    starts[(found.topic, found.partition)] = found.offset
        tps = [TopicPartition(t, p, OFFSET_STORED if o is None else o) for (t, p), o in starts.items()]
        self._consumer.incremental_assign(tps)
        if self._paused:
            self._consumer.pause(tps)
        return starts

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        good: list[Record] = []
        for m in self._consumer.consume(max_records, timeout):
            err = m.error()
            if err is None:
                good.append(m)
            elif err.fatal():
                raise HivewireError(f"fatal Kafka consumer error: {err}")
            elif err.code() != KafkaError._PARTITION_EOF:
                self._on_error(err)
        return good

    def pause(self) -> None:
        self._paused = True
        self._consumer.pause(self._consumer.assignment())

    def resume(self) -> None:
        self._paused = False
        self._consumer.resume(self._consumer.assignment())

    def lag(self) -> dict[TP, int]:
        out = {}
        assignment = self._consumer.assignment()
        for tp in self._consumer.position(assignment) if assignment else []:
            _low, high = self._consumer.get_watermark_offsets(tp, cached=True)
            if tp.offset != OFFSET_INVALID and high >= 0:
                out[(tp.topic, tp.partition)] = max(0, high - tp.offset)
        return out

    def close(self) -> None:
        self._consumer.close()


def reason(error: KafkaException) -> str:
    """librdkafka's own message of ``error``."""
    return str(error.args[0].str()) if error.args and isinstance(error.args[0], KafkaError) else str(error)
