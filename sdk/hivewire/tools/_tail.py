"""Reading the Apiary topic as it grows, for ``hivewire tail``: a ``kcat`` that knows the events.

The reader assigns every partition of the topic itself: it joins no consumer group and commits nothing, so
it never moves a listener's offsets or takes part in a rebalance. It says once, at INFO, when it has read every
partition up to where it ended at the start (kcat's "reached end of topic").
"""

from __future__ import annotations

import fnmatch
import logging
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hivewire.config._kafka import KafkaValue, consumer_settings
from hivewire.errors import ConfigError, DecodeError, HivewireError
from hivewire.events import _apiary as apiary
from hivewire.events._model import EventType, ListenerEvent, Origin
from hivewire.runtime._kafka import no_such_topic

if TYPE_CHECKING:
    from confluent_kafka import Consumer

log = logging.getLogger("hivewire.tail")

#: Seconds to wait for the topic's metadata before saying Kafka cannot be reached.
METADATA_TIMEOUT = 15.0


class NoSuchTopic(HivewireError):
    """The topic does not exist (for a dead-letter topic: nothing was ever dead-lettered)."""


@dataclass(frozen=True)
class Filter:
    """Which events to show: any of ``types`` (all when empty), databases and tables matching any of the
    shell-style patterns (``sales_*``; all when empty). Tables match by name or ``db.table``."""

    types: frozenset[EventType] = frozenset()
    databases: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()

    @classmethod
    def of(cls, types: Iterable[str] = (), databases: Iterable[str] = (), tables: Iterable[str] = ()) -> Filter:
        """From the names a user types: ``ALTER_TABLE``, ``alter_table`` or ``alter-table``."""
        chosen = set()
        for name in types:
            key = name.strip().upper().replace("-", "_")
            try:
                chosen.add(EventType[key])
            except KeyError:
                known = ", ".join(t.name for t in EventType)
                raise ConfigError("--type", f"no event type {name!r}; one of {known}") from None
        return cls(frozenset(chosen), tuple(databases), tuple(tables))

    def __call__(self, event: ListenerEvent) -> bool:
        if self.types and event.event_type not in self.types:
            return False
        db = (event.db_name or "").lower()
        if self.databases and not any(fnmatch.fnmatchcase(db, p.lower()) for p in self.databases):
            return False
        if self.tables:
            table = (event.table_name or "").lower()
            names = (table, f"{db}.{table}")
            return event.table_name is not None and any(
                fnmatch.fnmatchcase(n, p.lower()) for p in self.tables for n in names
            )
        return True


@dataclass(frozen=True)
class Record:
    """One message of the topic: where it was, its bytes, and its event (or why it did not decode), and its
    headers (decoded as UTF-8, as the dead-letter headers are written)."""

    origin: Origin
    value: bytes
    event: ListenerEvent | None
    error: DecodeError | None
    headers: Mapping[str, str] = field(default_factory=dict)


def tail(
    bootstrap_servers: str,
    topic: str,
    *,
    consumer_config: Mapping[str, KafkaValue] | None = None,
    from_beginning: bool = False,
    exit_at_end: bool = False,
    stop: threading.Event | None = None,
    end_level: int = logging.INFO,
) -> Iterator[Record]:
    """Yield the topic's messages as they arrive, from each partition's end (or beginning), until ``stop`` is
    set or, with ``exit_at_end``, every partition is read up to where it ended when the call began (said at
    ``end_level``: DEBUG for a read that is not the command's own, such as ``dlq replay``'s of its record).

    ``consumer_config`` holds ``apiary.messaging.consumer.*`` settings (security, ...): translated as the
    runtime translates them; ``group.id`` and commit settings are overridden, since nothing is committed.
    Raises :class:`~hivewire.errors.HivewireError` when Kafka cannot be reached or the topic does not exist.
    """
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, KafkaException, TopicPartition

    from hivewire.runtime._kafka_log import LibrdkafkaLog

    raw = dict(consumer_config or {})
    start_at_beginning = from_beginning or str(raw.pop("auto.offset.reset", "")).lower() in ("earliest", "smallest")
    settings = consumer_settings(raw).config
    refused = _Refusals(bootstrap_servers, settings, topic)
    conf: dict[str, object] = {
        **settings,
        "bootstrap.servers": bootstrap_servers,
        "group.id": f"hivewire-tail-{uuid.uuid4()}",  # librdkafka needs one; never joined or committed
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        # librdkafka's connection failures at DEBUG: a refusal is said once, by the error below
        "logger": LibrdkafkaLog(logging.getLogger("hivewire.kafka.librdkafka.tail")),
        "error_cb": refused.error,
    }
    try:
        consumer = Consumer(conf)
    except KafkaException as e:
        raise ConfigError("apiary.messaging.consumer.*", str(e.args[0] if e.args else e)) from None
    try:
        partitions = _partitions(consumer, bootstrap_servers, topic, refused)
        # Where each partition ends now: reaching all of them is "the end" (said once, as kcat does).
        ends: dict[int, int] = {}
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=METADATA_TIMEOUT)
            if high > (low if start_at_beginning else high):
                ends[p] = high
        read = 0
        if not ends:
            _at_end(topic, len(partitions), read, exit_at_end, end_level)
            if exit_at_end:
                return
        offset = OFFSET_BEGINNING if start_at_beginning else OFFSET_END
        consumer.assign([TopicPartition(topic, p, offset) for p in partitions])
        while not (stop is not None and stop.is_set()):
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                refused.error(error)
                refused.check()
                if error.code() not in (KafkaError._PARTITION_EOF, KafkaError.GROUP_AUTHORIZATION_FAILED):
                    log.warning("reading %s: %s", topic, error)
                continue
            partition, position = message.partition(), message.offset()
            assert partition is not None and position is not None  # a message without error has both
            value = message.value() or b""
            origin = Origin(topic, partition, position, message.timestamp()[1])
            headers = {k: (v or b"").decode("utf-8", "replace") for k, v in message.headers() or ()}
            read += 1
            try:
                yield Record(origin, value, apiary.decode(value, origin=origin), None, headers)
            except DecodeError as e:
                yield Record(origin, value, None, e, headers)
            if partition in ends and position + 1 >= ends[partition]:
                del ends[partition]
                if not ends:
                    _at_end(topic, len(partitions), read, exit_at_end, end_level)
                    if exit_at_end:
                        return
    except KafkaException as e:
        raise HivewireError(f"reading {topic} from {bootstrap_servers}: {e.args[0] if e.args else e}") from None
    finally:
        consumer.close()


def _at_end(topic: str, partitions: int, read: int, exiting: bool, level: int) -> None:
    then = "stopping (-e)" if exiting else "waiting for new events (Ctrl-C stops)"
    log.log(level, "reached the end of %s (%d partition(s), %d message(s) read); %s", topic, partitions, read, then)


class _Refusals:
    """The reader's librdkafka errors: the first refusal (credentials, certificate, an ACL) is kept and
    :meth:`check` raises it as one line saying what to fix; the rest librdkafka retries on its own."""

    def __init__(self, servers: str, settings: Mapping[str, KafkaValue], topic: str) -> None:
        self.servers, self.settings, self.topic = servers, settings, topic
        self.found: str | None = None

    def error(self, err: Any) -> None:
        from confluent_kafka import KafkaError

        from hivewire.runtime._kafka_refusal import refusal

        if err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED:
            # librdkafka looks up its (throw-away) group's coordinator though the reader never uses the group:
            # reading needs no group ACL
            log.debug("Kafka: %s (not needed: the reader joins no group)", err.str())
            return
        found = refusal(
            err,
            servers=self.servers,
            settings=self.settings,
            option="apiary.messaging.consumer.",
            operation="READ",
            resource=self.topic,
        )
        if found is not None and self.found is None:
            self.found = found.message
        log.debug("Kafka: %s", err.str())

    def check(self) -> None:
        if self.found is not None:
            raise HivewireError(self.found)


def _partitions(consumer: Consumer, bootstrap_servers: str, topic: str, refused: _Refusals) -> list[int]:
    from confluent_kafka import KafkaError, KafkaException

    deadline = time.monotonic() + METADATA_TIMEOUT
    while True:  # a second at a time, so that a refusal (librdkafka's error callback, served by poll) stops it
        try:
            metadata = consumer.list_topics(topic, timeout=1.0)
            break
        except KafkaException:
            consumer.poll(0)
            refused.check()
            if time.monotonic() < deadline:
                continue
        raise HivewireError(
            f"cannot reach Kafka at {bootstrap_servers} (waited {METADATA_TIMEOUT:.0f} s): check "
            "--bootstrap-servers, the network and the security settings (-X security.protocol=...)"
        ) from None
    found = metadata.topics.get(topic)
    if found is not None and found.error is not None and found.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
        refused.error(found.error)
        refused.check()
    if found is None or found.error is not None or not found.partitions:
        raise NoSuchTopic(no_such_topic(topic, bootstrap_servers))
    return sorted(found.partitions)
