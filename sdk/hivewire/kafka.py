"""``KafkaSource``: the runtime's source of Apiary records, on confluent-kafka (librdkafka).

The consumer never auto-commits: the runtime commits an offset only after every listener handled or
dead-lettered everything before it. Dead letters go to ``<topic>.dlq`` (by default) through an idempotent
producer with ``acks=all``; a dead letter counts as done only when the broker acknowledged it, and one that
fails is sent again until it succeeds (its batch, and so the commit, waits meanwhile: nothing is lost).

Pausing (backpressure) applies to the whole current assignment, which with the cooperative-sticky strategy
grows and shrinks by increments: partitions assigned while paused are paused before they are fetched, and
partitions assigned while not paused are resumed (librdkafka keeps a partition's pause flag across a
revocation, so one paused, revoked and assigned back later would otherwise never be read again).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from confluent_kafka import OFFSET_INVALID, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from hivewire.errors import ConfigError, HivewireError
from hivewire.source import Assigned, Delivered, Record
from hivewire.source import TopicPartition as TP

if TYPE_CHECKING:
    from hivewire.metrics import Metrics

__all__ = ["DRONE_FLY_GROUP_PREFIX", "KafkaSource"]

log = logging.getLogger(__name__)

#: Drone Fly's consumer group is this prefix + ``instance.name``; hivewire uses the same by default so it can
#: take over a Drone Fly deployment's committed offsets.
DRONE_FLY_GROUP_PREFIX = "apiary-kafka-metastore-receiver-"

# Settings the runtime depends on; user consumer settings may not change them.
_FIXED_CONSUMER = {"enable.auto.commit": False, "enable.auto.offset.store": False}
# Connection settings shared by the dead-letter producer (security applies to both clients).
_SHARED_PREFIXES = ("security.", "sasl.", "ssl.", "client.dns.", "socket.", "broker.address.family")


class KafkaSource:
    """An Apiary topic in Kafka.

    ``group_id`` defaults to Drone Fly's ``apiary-kafka-metastore-receiver-<instance name>``.
    ``consumer_config`` holds extra librdkafka consumer settings (security, ``auto.offset.reset`` — default
    ``latest``, as Drone Fly's Kafka default — ...); ``producer_config`` extra dead-letter producer settings.
    ``dead_letter_topic`` defaults to ``<topic>.dlq``.
    """

    def __init__(self, bootstrap_servers: str, topic: str, *, group_id: str | None = None,
                 consumer_config: Mapping[str, Any] | None = None, dead_letter_topic: str | None = None,
                 producer_config: Mapping[str, Any] | None = None, instance_name: str = "drone-fly") -> None:
        if not bootstrap_servers:
            raise ConfigError("apiary.bootstrap.servers", "is required (host:port,host:port)")
        if not topic:
            raise ConfigError("apiary.kafka.topic.name", "is required")
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.consumer_config = dict(consumer_config or {})
        self.group_id = group_id or str(self.consumer_config.pop("group.id", "")) or \
            DRONE_FLY_GROUP_PREFIX + instance_name
        self.dead_letter_topic = dead_letter_topic or f"{topic}.dlq"
        self.producer_config = dict(producer_config or {})
        for key in _FIXED_CONSUMER:
            if key in self.consumer_config:
                log.warning("ignoring consumer setting %s: hivewire commits offsets itself", key)
                del self.consumer_config[key]
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._producer_thread: threading.Thread | None = None
        self._closing = threading.Event()
        self._paused = False
        self._metrics: Metrics | None = None

    def __repr__(self) -> str:
        return f"KafkaSource({self.bootstrap_servers!r}, {self.topic!r}, group_id={self.group_id!r})"

    def attach_metrics(self, metrics: Metrics) -> None:
        """Count failed commits and dead-letter sends in ``metrics`` (the runtime calls this before :meth:`open`)."""
        self._metrics = metrics

    # -- consuming ------------------------------------------------------------------------------------
    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id,
            "auto.offset.reset": "latest",
            # librdkafka postpones the next fetch by this much whenever its prefetch queue is over its limits,
            # which a Python consumer (slower than the fetcher) hits on every refill: with the default 1000 ms
            # the queue runs dry and consume() waits. Measured: 2x throughput for a loop that parses each message.
            "fetch.queue.backoff.ms": 20,
            "logger": logging.getLogger("hivewire.kafka.consumer"),
            **self.consumer_config,
            **_FIXED_CONSUMER,
            "on_commit": self._committed,
        }

        def assigned(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            # Called before librdkafka adds the partitions (all of them, or the increment under
            # cooperative-sticky) to the assignment, so nothing is fetched in the wrong state.
            if partitions:
                if self._paused:
                    consumer.pause(partitions)
                else:
                    consumer.resume(partitions)
            on_assign([(p.topic, p.partition) for p in partitions])

        def revoked(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            on_revoke([(p.topic, p.partition) for p in partitions])

        try:
            self._consumer = Consumer(conf)
        except KafkaException as e:
            raise ConfigError("apiary.messaging.consumer.*", f"invalid Kafka consumer setting: {e}") from e
        # A lost partition (session timed out) is revoked without a chance to commit; same bookkeeping.
        self._consumer.subscribe([self.topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        assert self._consumer is not None, "open() first"
        messages: list[Any] = self._consumer.consume(max_records, timeout)
        if not messages:
            return messages
        good: list[Record] = []
        for m in messages:
            err = m.error()
            if err is None:
                good.append(m)
            elif err.code() == KafkaError._PARTITION_EOF:
                continue
            elif err.fatal():
                raise HivewireError(f"fatal Kafka consumer error: {err}")
            else:
                log.warning("Kafka consumer error: %s", err)
        return good

    def commit(self, offsets: Mapping[TP, int], *, wait: bool) -> None:
        if self._consumer is None or not offsets:
            return
        tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        try:
            self._consumer.commit(offsets=tps, asynchronous=not wait)
        except KafkaException as e:
            # Not fatal: the offsets are committed with a later commit, or read again after a restart.
            # (A synchronous commit fails here only; asynchronous ones fail in _committed.)
            if self._metrics is not None:
                self._metrics.commit_failures.inc()
            log.warning("offset commit failed: %s", e)

    def _committed(self, err: KafkaError | None, partitions: list[TopicPartition]) -> None:
        """librdkafka's commit result (asynchronous commits fail only here)."""
        failed = [p for p in partitions or [] if p.error is not None]
        if err is not None and err.code() == KafkaError._NO_OFFSET:
            return  # nothing was pending: not a failure
        if err is None and not failed:
            return
        if self._metrics is not None:
            self._metrics.commit_failures.inc()
        detail = ", ".join(f"{p.topic}/{p.partition}: {p.error}" for p in failed)
        log.warning("offset commit failed (%s); the offsets go with the next commit, and records after the last "
                    "successful one are read again after a restart", err or detail)

    def pause(self) -> None:
        self._paused = True
        if self._consumer is not None:
            self._consumer.pause(self._consumer.assignment())

    def resume(self) -> None:
        self._paused = False
        if self._consumer is not None:
            self._consumer.resume(self._consumer.assignment())

    def lag(self) -> dict[TP, int]:
        if self._consumer is None:
            return {}
        assignment = self._consumer.assignment()
        if not assignment:
            return {}
        out = {}
        for tp in self._consumer.position(assignment):
            _low, high = self._consumer.get_watermark_offsets(tp, cached=True)
            if tp.offset != OFFSET_INVALID and high >= 0:
                out[(tp.topic, tp.partition)] = max(0, high - tp.offset)
        return out

    def finished(self) -> bool:
        return False

    # -- dead letters ---------------------------------------------------------------------------------
    def _ensure_producer(self) -> Producer:
        if self._producer is None:
            shared = {k: v for k, v in self.consumer_config.items() if k.startswith(_SHARED_PREFIXES)}
            self._producer = Producer({
                "bootstrap.servers": self.bootstrap_servers,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "compression.type": "zstd",
                "logger": logging.getLogger("hivewire.kafka.producer"),
                **shared,
                **self.producer_config,
            })
            self._producer_thread = threading.Thread(target=self._serve_producer, name="hivewire-dlq", daemon=True)
            self._producer_thread.start()
        return self._producer

    def _serve_producer(self) -> None:
        producer = self._producer
        assert producer is not None
        while not self._closing.is_set():
            producer.poll(0.2)

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        producer = self._ensure_producer()
        value, key = record.value(), record.key()
        header_list = [(k, v.encode()) for k, v in headers.items()]

        def send() -> None:
            while True:
                try:
                    producer.produce(self.dead_letter_topic, value=value, key=key, headers=header_list,
                                     on_delivery=delivered)
                    return
                except BufferError:  # local queue full: let it drain
                    producer.poll(0.1)

        def delivered(err: KafkaError | None, _msg: Any) -> None:
            if err is None:
                on_delivered()
                return
            if self._metrics is not None:
                self._metrics.dead_letter_failures.inc()
            if not self._closing.is_set():
                # Keep trying: the record's batch (and its commit) waits for this acknowledgement.
                log.error("dead letter to %s failed (%s); retrying", self.dead_letter_topic, err)
                timer = threading.Timer(1.0, send)
                timer.daemon = True
                timer.start()

        send()

    # -- closing --------------------------------------------------------------------------------------
    def drain(self, timeout: float) -> None:
        """Wait for dead letters in flight to be acknowledged (so their records can be committed)."""
        if self._producer is not None:
            remaining = self._producer.flush(timeout)
            if remaining:
                log.error("%d dead letter(s) not acknowledged at shutdown; their records are not committed and "
                          "will be read again", remaining)

    def close(self) -> None:
        self._closing.set()
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

