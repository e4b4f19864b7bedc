"""The notification log published to the Apiary topic: :class:`Bridge`, behind ``hivewire bridge --to-kafka``.

Each log entry whose event Apiary carries (tables, partitions, inserts; and databases, as hivewire writes
them) becomes one Apiary JSON record, placed as the Apiary listener places it: partition
``partition_for(qualified table name)``, key the event time in milliseconds as an 8-byte big-endian long.
Other entries (functions, constraints, transactions, write ids, statistics, compactions, ...: the types
only the notification log carries) are not Apiary's and are skipped, counted; gaps are reported as
:class:`~hivewire.runtime.NotificationLogSource` reports them.

Exactly once per event id: every record carries its event id in the header :data:`EVENT_ID_HEADER`. After
each batch is acknowledged by the brokers, the checkpoint file saves the last event id and each partition's
end offset. On a restart the records written after the checkpoint are read back from the topic, and the
entries they already hold are not published again.

Security settings (``security.*``, ``sasl.*``, ``ssl.*``) are taken by both its clients, as the runtime's
consumer and dead-letter producer share them: from ``apiary.messaging.consumer.*`` (``-X``) and
``hivewire.bridge.producer.*`` (``-P``, which wins for the producer). Kafka refusing them (credentials, a
certificate, an ACL) stops the bridge with one line saying what to fix.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, Message, Producer
from confluent_kafka import TopicPartition as KafkaPartition

from hivewire._ratelimit import RateLimit
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._kafka import consumer_settings
from hivewire.errors import DecodeError, MetastoreError, SourceError
from hivewire.events import _apiary as apiary
from hivewire.events._notification import from_notification
from hivewire.events._types import TYPES
from hivewire.metastore import MetastoreClient
from hivewire.runtime._kafka_acks import UNWRITTEN, written
from hivewire.runtime._kafka_log import LibrdkafkaLog
from hivewire.runtime._kafka_refusal import refusal
from hivewire.runtime._notification_log import NotificationLogSettings, fetch
from hivewire_thrift.hive_metastore.ttypes import NotificationEvent

__all__ = ["EVENT_ID_HEADER", "Bridge", "BridgeStats"]

log = logging.getLogger("hivewire.bridge")

#: The header holding the notification-log event id of each record the bridge writes.
EVENT_ID_HEADER = "hivewire.notification.event.id"
#: The parameter DbNotificationListener adds to the listener event, which the Apiary listener serialises.
EVENT_ID_PARAMETER = "DB_NOTIFICATION_EVENT_ID_KEY_NAME"
_KEY = struct.Struct(">q")


@dataclass
class BridgeStats:
    """What one run of the bridge did."""

    published: int = 0
    skipped: int = 0  #: entries Apiary does not carry
    already_published: int = 0  #: entries found in the topic after a restart
    undecodable: int = 0
    missing: int = 0  #: event ids gone from the log before they were read
    last_event_id: int = 0
    gaps: list[tuple[int, int]] = field(default_factory=list)


class Bridge:
    """Publishes the notification log read through ``client`` to ``topic`` as the Apiary listener would.

    ``checkpoint`` is the file that keeps the position (default ``hivewire.notification.position.file``).
    ``database_events=False`` leaves hivewire's database events out (``hivewire.bridge.database.events``).
    """

    def __init__(
        self,
        client: MetastoreClient,
        bootstrap_servers: str,
        topic: str,
        *,
        checkpoint: str | os.PathLike[str],
        producer_config: Mapping[str, str] | None = None,
        settings: NotificationLogSettings | None = None,
        consumer_config: Mapping[str, str] | None = None,
        database_events: bool = True,
    ) -> None:
        self.client = client
        self.database_events = database_events
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self.checkpoint = Path(checkpoint)
        self.settings = settings or NotificationLogSettings.from_config(Config({}))
        # Security settings go to both clients: -X's (the consumer's) under -P's for the producer, and the
        # other way round for the consumer that reads the bridge's records back.
        consumer = consumer_settings(consumer_config or {}).config
        producer = dict(producer_config or {})
        self._producer_config = {**_security(consumer), **producer}
        self._consumer_config = {**_security(producer), **_security(consumer)}
        self._refused: str | None = None
        self._producer: Producer | None = None
        self._offsets: dict[int, int] = {}
        self._errors: list[str] = []
        self._unreachable = RateLimit(60)

    @classmethod
    def from_config(cls, config: Config) -> Bridge:
        """The bridge the configuration describes: Kafka, the metastore client keys and the notification keys."""
        settings = NotificationLogSettings.from_config(config)
        return cls(
            MetastoreClient.from_hive_conf(config),
            config.read(keys.BOOTSTRAP_SERVERS),
            config.read(keys.TOPIC),
            checkpoint=settings.position_file,
            producer_config=config.with_prefix(keys.BRIDGE_PRODUCER_PREFIX.name),
            settings=settings,
            consumer_config=config.with_prefix(keys.CONSUMER_PREFIX.name),
            database_events=config.read(keys.BRIDGE_DATABASE_EVENTS),
        )

    # -- checkpoint -----------------------------------------------------------------------------------
    def _load(self) -> tuple[int | None, dict[int, int]]:
        try:
            data = json.loads(self.checkpoint.read_text(encoding="utf-8"))
            return int(data["eventId"]), {int(p): int(o) for p, o in data["offsets"].items()}
        except FileNotFoundError:
            return None, {}
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise SourceError(
                f"the bridge's checkpoint {self.checkpoint} is not valid ({e}): fix or remove it (removing it "
                "publishes again from hivewire.notification.start)"
            ) from None

    def _save(self, event_id: int) -> None:
        self.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.checkpoint.with_name(self.checkpoint.name + ".tmp")
        text = json.dumps({"eventId": event_id, "offsets": {str(p): o for p, o in sorted(self._offsets.items())}})
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.checkpoint)

    # -- Kafka ----------------------------------------------------------------------------------------
    def _refusal(self, error: KafkaError) -> None:
        """The clients' error callback: keep the first refusal (credentials, a certificate, an ACL)."""
        if error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED:
            return  # librdkafka looks up the read-back consumer's group, which is never used: no ACL needed
        found = refusal(
            error,
            servers=self.bootstrap_servers,
            settings=self._producer_config,
            option="apiary.messaging.consumer.",  # -X, which both clients take (-P: the producer alone)
            operation="WRITE",
            resource=self.topic,
        )
        if found is not None and self._refused is None:
            self._refused = found.message
        log.debug("Kafka: %s", error.str())

    def _check_refused(self) -> None:
        if self._refused is not None:
            raise SourceError(self._refused)

    def _partitions(self, producer: Producer) -> int:
        for _ in range(30):  # a second at a time, so that a refusal (served by poll) stops it at once
            try:
                metadata = producer.list_topics(self.topic, timeout=1)
                break
            except Exception as e:  # KafkaException: not reached (yet)
                producer.poll(0)
                self._check_refused()
                failure = e
        else:
            raise SourceError(
                f"cannot reach Kafka at {self.bootstrap_servers} ({failure}): check --bootstrap-servers, the "
                "network and the security settings (-X security.protocol=...)"
            )
        topic = metadata.topics.get(self.topic)
        if topic is not None and topic.error is not None:
            self._refusal(topic.error)
            self._check_refused()
        if topic is None or topic.error is not None or not topic.partitions:
            raise SourceError(f"Kafka topic {self.topic!r} is not available ({topic.error if topic else 'absent'})")
        return len(topic.partitions)

    def _published_since(self, offsets: Mapping[int, int], partitions: int) -> tuple[set[int], dict[int, int]]:
        """Event ids of the bridge's records at or after ``offsets`` in each partition, and each partition's end."""
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "group.id": f"hivewire-bridge-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "logger": LibrdkafkaLog(logging.getLogger("hivewire.bridge.consumer")),
                "error_cb": self._refusal,
                **self._consumer_config,
            }
        )
        found: set[int] = set()
        ends: dict[int, int] = {}
        try:
            todo: dict[int, int] = {}  # partition -> its end, for those with records to read back
            starts: dict[int, int] = {}
            for p in range(partitions):
                low, high = consumer.get_watermark_offsets(KafkaPartition(self.topic, p), timeout=30)
                ends[p] = high
                starts[p] = max(offsets.get(p, low), low)
                if starts[p] < high:
                    todo[p] = high
            if todo:
                consumer.assign([KafkaPartition(self.topic, p, starts[p]) for p in todo])
            while todo:
                message = consumer.poll(30)
                if message is None:
                    raise SourceError(f"could not read topic {self.topic!r} back within 30 s")
                error = message.error()
                if error is not None and error.code() != KafkaError.GROUP_AUTHORIZATION_FAILED:
                    self._refusal(error)
                    self._check_refused()
                    raise SourceError(f"reading topic {self.topic!r} back: {error}")
                if error is not None:  # librdkafka looks up the unused group's coordinator: no ACL is needed
                    continue
                event_id = _event_id(message)
                if event_id is not None:
                    found.add(event_id)
                p, offset = message.partition() or 0, message.offset() or 0
                if offset + 1 >= todo.get(p, 0):
                    todo.pop(p, None)
        finally:
            consumer.close()
        return found, ends

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self._refusal(error)
            self._errors.append(self._refused or str(error))
        elif not written(message):  # sent again by the restart the error causes (the checkpoint stays)
            self._errors.append(UNWRITTEN)
        else:
            p, offset = message.partition() or 0, message.offset() or 0
            self._offsets[p] = max(self._offsets.get(p, 0), offset + 1)

    # -- running --------------------------------------------------------------------------------------
    def run(self, stop: threading.Event, *, until_end: bool = False) -> BridgeStats:
        """Publish until ``stop`` is set (or, with ``until_end``, until the log is read to its end)."""
        stats = BridgeStats()
        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "logger": LibrdkafkaLog(logging.getLogger("hivewire.bridge.producer")),
                "error_cb": self._refusal,
                **self._producer_config,
            }
        )
        partitions = self._partitions(producer)
        position, offsets = self._load()
        checked = position is not None
        if position is None and self.settings.start == "latest":
            position = int(getattr(self.client.call("get_current_notificationEventId"), "eventId", 0) or 0)
            checked = True
        position = position or 0
        already, ends = self._published_since(offsets, partitions)
        self._offsets = {p: max(offsets.get(p, 0), ends.get(p, 0)) for p in range(partitions)}
        already = {i for i in already if i > position}
        log.info("bridging the notification log after event %d to %s (%d partitions)", position, self.topic, partitions)
        try:
            while not stop.is_set():
                try:
                    entries = fetch(self.client, position, self.settings.batch_size)
                except MetastoreError as e:  # the client already failed over and reconnected; ask again later
                    count = self._unreachable.due()
                    if count:
                        log.warning(
                            "cannot read the notification log (%d time(s) since the last warning): %s; retrying; "
                            "check --metastore-uris (metastore.thrift.uris) and that the metastore runs",
                            count,
                            e,
                        )
                    stop.wait(self.settings.poll_interval)
                    continue
                if not entries:
                    if until_end:
                        break
                    stop.wait(self.settings.poll_interval)
                    continue
                for entry in entries:
                    if entry.eventId <= position:
                        continue
                    if entry.eventId > position + 1 and checked:
                        self._gap(position + 1, entry.eventId - 1, stats)
                    checked = True
                    if entry.eventId in already:
                        stats.already_published += 1
                    else:
                        self._publish(producer, entry, partitions, stats)
                    position = entry.eventId
                remaining = producer.flush(60)
                self._check_refused()
                if remaining or self._errors:
                    raise SourceError(
                        f"Kafka did not acknowledge {remaining or len(self._errors)} record(s) "
                        f"({'; '.join(self._errors[:3]) or 'timed out'}); the bridge stops without moving its "
                        "checkpoint, and a restart publishes them again"
                    )
                self._save(position)
                stats.last_event_id = position
        finally:
            producer.flush(10)
        return stats

    def _gap(self, first: int, last: int, stats: BridgeStats) -> None:
        reason = (
            f"{last - first + 1} event(s) {first}..{last} are no longer in the notification log: they were cleaned "
            "up before the bridge published them (raise hive.metastore.event.db.listener.timetolive)"
        )
        log.error("notification log gap: %s", reason)
        stats.missing += last - first + 1
        stats.gaps.append((first, last))
        if self.settings.on_gap == "stop":
            raise SourceError(f"stopping ({keys.NOTIFICATION_ON_GAP.name}=stop): {reason}")

    def _publish(self, producer: Producer, entry: NotificationEvent, partitions: int, stats: BridgeStats) -> None:
        try:
            event = from_notification(entry, {EVENT_ID_PARAMETER: str(entry.eventId)})
        except DecodeError as e:
            log.warning("notification %d (%s) does not decode, not published: %s", entry.eventId, entry.eventType, e)
            stats.undecodable += 1
            return
        spec = TYPES[event.event_type]
        if spec.log_only or spec.wire is None:  # not Apiary's: Drone Fly and Apiary consumers know none of these
            stats.skipped += 1
            return
        if spec.database_event and not self.database_events:  # hivewire's, which Apiary's receiver refuses
            stats.skipped += 1
            return
        value = apiary.encode(event)
        producer.produce(
            self.topic,
            value,
            key=_KEY.pack(entry.eventTime * 1000),
            partition=apiary.partition_for(event.qualified_name, partitions),
            headers=[(EVENT_ID_HEADER, str(entry.eventId).encode("ascii"))],
            on_delivery=self._delivered,
        )
        producer.poll(0)
        stats.published += 1


def _event_id(message: Message) -> int | None:
    for name, value in message.headers() or []:
        if name == EVENT_ID_HEADER and value is not None:
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _security(settings: Mapping[str, object]) -> dict[str, str]:
    """The connection and security settings of a client's ``settings`` (text only), to share with another."""
    return {
        k: str(v)
        for k, v in settings.items()
        if k.startswith(("security.", "sasl.", "ssl.", "client.dns.", "socket.", "broker.address.family"))
    }
