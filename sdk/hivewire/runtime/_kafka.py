"""``KafkaSource``: the runtime's source of Apiary records, on confluent-kafka (librdkafka).

The consumer never auto-commits: the runtime commits an offset only after every listener handled or
dead-lettered everything before it. Dead letters go to ``<topic>.dlq`` (by default) through an idempotent
producer with ``acks=all``; a dead letter counts as done only when the broker acknowledged it, and one that
fails is sent again until it succeeds (its batch, and so the commit, waits meanwhile: nothing is lost). The
producer is created once (under a lock: the polling thread and listener workers dead-letter concurrently)
and served by one thread, which also sends again, from one queue, whatever failed or found librdkafka's
queue full; sending a dead letter never blocks the caller.

``apiary.messaging.consumer.*`` may be Drone Fly's Java consumer properties: they are translated for
librdkafka (:func:`hivewire.config._kafka.consumer_settings`), Java-only ones ignored with one warning, and a
setting librdkafka refuses is a :class:`~hivewire.errors.ConfigError` naming the key.

Pausing (backpressure) applies to the whole current assignment, which with the cooperative-sticky strategy
grows and shrinks by increments: partitions assigned while paused are paused before they are fetched, and
partitions assigned while not paused are resumed (librdkafka keeps a partition's pause flag across a
revocation, so one paused, revoked and assigned back later would otherwise never be read again).

Outages: librdkafka retries on its own and logs every failed connection; its log lines go to
``hivewire.kafka.librdkafka`` (connection failures at DEBUG) and its errors to :attr:`KafkaSource.reachability`,
which says once that Kafka is unreachable, reminds at most once a minute, and says when it is back (known
from librdkafka's statistics: a broker in state ``UP``). :meth:`KafkaSource.poll` raises a
:class:`~hivewire.errors.SourceError` when Kafka was never reached within ``startup_timeout``.

Refusals are not outages (wrong credentials, a certificate either side does not trust, a missing ACL, for the
consumer or the dead-letter producer: :mod:`hivewire.runtime._kafka_refusal`): retrying cannot help, so the
first is kept in :attr:`KafkaSource.refused` and :meth:`KafkaSource.poll` raises it as a
:class:`~hivewire.errors.SourceError` whose one line says what to fix. A record whose dead letter was refused
is never committed, so the run after the fix handles it again.

Dead letters larger than the producer's ``message.max.bytes`` (librdkafka's default, 1000000, is also a
broker's usual limit) keep the start of the original: the headers ``hivewire.original.stored``
(``truncated``, or ``reference`` when not even the start fits), ``hivewire.original.size`` and
``hivewire.original.sha256`` say so, and ``hivewire.source.*`` say where the whole record is. A dead letter
the broker refuses as too large is sent again smaller the same way; any other failure is sent again later.
Neither ever stops the process: only the commits of that record's partition wait. A letter's key is its
record's, else its table's (:func:`letter_key`): one table's letters share a partition and keep their order.

Joining the group: until the group coordinator assigns partitions, :meth:`KafkaSource.poll` says so at INFO
every :data:`ASSIGNMENT_REMINDER` seconds, with the seconds waited and the usual cause (a member that stopped
without leaving holds its partitions until its ``session.timeout.ms`` ends); :attr:`KafkaSource.waiting_for`
is what ``/health`` shows. :meth:`KafkaSource.close` closes the consumer, which leaves the group at once, so a
restart is not held up by the member it replaces. (Static membership, ``group.instance.id``, is the user's
choice, not a default: docs/runtime.md says why.)
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from confluent_kafka import (
    OFFSET_INVALID,
    OFFSET_STORED,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

from hivewire._ratelimit import RateLimit
from hivewire._reachability import Reachability
from hivewire.config._kafka import CONSUMER_PREFIX, KafkaValue, consumer_settings
from hivewire.errors import ConfigError, HivewireError, RecordsGoneError, SourceError
from hivewire.runtime._kafka_refusal import Refusal, refusal
from hivewire.runtime._retention import RetentionWatch
from hivewire.runtime._source import Assigned, Delivered, Record
from hivewire.runtime._source import TopicPartition as TP

if TYPE_CHECKING:
    from hivewire.runtime._metrics import Metrics


log = logging.getLogger("hivewire.kafka")

#: Drone Fly's consumer group is this prefix + ``instance.name``; hivewire uses the same by default so it can
#: take over a Drone Fly deployment's committed offsets.
DRONE_FLY_GROUP_PREFIX = "apiary-kafka-metastore-receiver-"

# Settings the runtime depends on; user consumer settings may not change them.
_FIXED_CONSUMER = {"enable.auto.commit": False, "enable.auto.offset.store": False}
# Connection settings shared by the dead-letter producer (security applies to both clients).
_SHARED_PREFIXES = ("security.", "sasl.", "ssl.", "client.dns.", "socket.", "broker.address.family")
# librdkafka's default message.max.bytes (a broker's default limit is about the same).
_DEFAULT_MAX_MESSAGE = 1_000_000
# Room for a record's framing and protocol overhead beyond its key, value and headers.
_RECORD_OVERHEAD = 512
# librdkafka errors about reaching brokers (those that are a refusal, _kafka_refusal.refusal, stop the client).
_CONNECTION_ERRORS = {
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._AUTHENTICATION,
    KafkaError._SSL,
    KafkaError._TRANSPORT,
    KafkaError._RESOLVE,
    KafkaError._TIMED_OUT,
}
# librdkafka log facilities of connection failures: its errors reach Reachability, the lines go to DEBUG.
_CONNECTION_FACILITIES = {"FAIL", "ERROR", "REQTMOUT", "BROKERFAIL", "CONNECT", "DISCONNECT", "SSL"}
_TOO_LARGE = {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE}
#: Seconds between the lines saying the consumer still waits for its partitions.
ASSIGNMENT_REMINDER = 10.0


class _Letter:
    """One dead letter, kept until the broker acknowledges it (it may be sent several times, smaller each time
    the broker refuses it as too large)."""

    __slots__ = ("headers", "key", "on_delivered", "source", "stored", "value")

    def __init__(
        self,
        source: KafkaSource,
        value: bytes | None,
        key: bytes | None,
        headers: list[tuple[str, bytes]],
        on_delivered: Delivered,
    ) -> None:
        self.source = source
        self.value = value
        self.key = key
        self.headers = headers
        self.on_delivered = on_delivered
        self.stored = "whole"

    def size(self) -> int:
        return (
            len(self.value or b"")
            + len(self.key or b"")
            + sum(len(k) + len(v) for k, v in self.headers)
            + _RECORD_OVERHEAD
        )

    def fit(self, limit: int) -> bool:
        """Shrink to at most ``limit`` bytes: keep the start of the value, or only the reference (its
        ``hivewire.source.*`` headers) if not even that fits; False if it cannot shrink further."""
        if self.stored == "reference":
            return False
        value = self.value or b""
        if self.stored == "whole":
            self.headers = [
                *self.headers,
                ("hivewire.original.size", str(len(value)).encode()),
                ("hivewire.original.sha256", hashlib.sha256(value).hexdigest().encode()),
            ]
        room = limit - (self.size() - len(value)) - 64  # 64: the stored header below
        self.headers = [(k, v) for k, v in self.headers if k != "hivewire.original.stored"]
        if room >= 1024 and room < len(value):
            self.value, self.stored = value[:room], "truncated"
        else:
            self.value, self.stored = None, "reference"
        self.headers.append(("hivewire.original.stored", self.stored.encode()))
        return True

    def delivered(self, err: KafkaError | None, _msg: Any) -> None:
        if err is None:
            self.on_delivered()
        else:
            self.source._delivery_failed(self, err)


class KafkaSource:
    """An Apiary topic in Kafka.

    ``group_id`` defaults to Drone Fly's ``apiary-kafka-metastore-receiver-<instance name>``.
    ``consumer_config`` holds extra librdkafka consumer settings (security, ``auto.offset.reset`` — default
    ``latest``, as Drone Fly's Kafka default — ...); ``producer_config`` extra dead-letter producer settings.
    ``dead_letter_topic`` defaults to ``<topic>.dlq``. :meth:`poll` raises a :class:`~hivewire.errors.SourceError`
    if no broker was reached within ``startup_timeout`` seconds of :meth:`open` (0: wait for ever).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        *,
        group_id: str | None = None,
        consumer_config: Mapping[str, KafkaValue] | None = None,
        dead_letter_topic: str | None = None,
        producer_config: Mapping[str, KafkaValue] | None = None,
        instance_name: str = "drone-fly",
        startup_timeout: float = 60.0,
    ) -> None:
        if not bootstrap_servers:
            raise ConfigError("apiary.bootstrap.servers", "is required (host:port,host:port)")
        if not topic:
            raise ConfigError("apiary.kafka.topic.name", "is required")
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        # Drone Fly's Java consumer properties, translated for librdkafka (max.poll.records is the runtime's
        # batch size, which Settings derives from it).
        translated = consumer_settings(consumer_config or {})
        if translated.ignored:
            log.warning(
                "ignoring Kafka consumer settings that only Java's client has (librdkafka has no equivalent): %s",
                ", ".join(translated.ignored),
            )
        self.consumer_config = translated.config
        self._origins = translated.origins
        self.group_id = (
            group_id or str(self.consumer_config.pop("group.id", "")) or DRONE_FLY_GROUP_PREFIX + instance_name
        )
        self.dead_letter_topic = dead_letter_topic or f"{topic}.dlq"
        self.producer_config = dict(producer_config or {})
        for key in _FIXED_CONSUMER:
            if key in self.consumer_config:
                log.warning("ignoring consumer setting %s: hivewire commits offsets itself", key)
                del self.consumer_config[key]
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._producer_lock = threading.Lock()
        self._producer_thread: threading.Thread | None = None
        # Dead letters to send again (librdkafka failed them, or its queue was full): (due, seq, letter),
        # served by the dead-letter thread. One queue, however many fail: no thread or timer per letter.
        self._resend: list[tuple[float, int, _Letter]] = []
        self._resend_lock = threading.Lock()
        self._resend_seq = 0
        # Letters the broker refused as too large since the dead-letter thread last looked: one wave, as the
        # broker refuses a whole batch (runtime/_kafka.py's _shrink_too_large decides which of them to shrink).
        self._too_large: list[_Letter] = []
        self._failure_log = RateLimit(10.0)
        self._closing = threading.Event()
        self._paused = False
        self._metrics: Metrics | None = None
        self.startup_timeout = startup_timeout
        self._opened_at = 0.0
        #: Whether a broker answers (readiness reads it; it logs outages and recoveries).
        self.reachability = Reachability(
            f"Kafka at {bootstrap_servers}",
            "check apiary.bootstrap.servers (--bootstrap-servers), the network, and that the brokers run",
            log,
        )
        self._error_log = RateLimit(60.0)
        self._last_error = ""
        #: Kafka refused this client for good (credentials, certificate, an ACL): poll() raises it.
        self.refused: Refusal | None = None
        self._max_message = int(str(self.producer_config.get("message.max.bytes", _DEFAULT_MAX_MESSAGE)))
        #: Records the broker deleted before the group read them (runtime/_retention.py).
        self.retention = RetentionWatch(self._records_missing)
        # Joining the group: when the wait for an assignment began (None: assigned), and when it was last said.
        self._waiting_since: float | None = None
        self._waiting_said = 0.0

    def __repr__(self) -> str:
        return f"KafkaSource({self.bootstrap_servers!r}, {self.topic!r}, group_id={self.group_id!r})"

    def attach_metrics(self, metrics: Metrics) -> None:
        """Count failed commits and dead-letter sends in ``metrics`` (the runtime calls this before :meth:`open`)."""
        self._metrics = metrics

    # -- consuming ------------------------------------------------------------------------------------
    def _consumer_conf(self) -> dict[str, Any]:
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id,
            "auto.offset.reset": "latest",
            # librdkafka postpones the next fetch by this much whenever its prefetch queue is over its limits,
            # which a Python consumer (slower than the fetcher) hits on every refill: with the default 1000 ms
            # the queue runs dry and consume() waits (bench/README.md records what this setting gained).
            "fetch.queue.backoff.ms": 20,
            **self.client_callbacks("consumer"),
            **self.consumer_config,
            **_FIXED_CONSUMER,
        }

    def client_callbacks(self, client: str) -> dict[str, object]:
        """librdkafka settings that turn its logging, errors and statistics into :attr:`reachability`, for a
        client named ``client`` (the archive's consumer uses them too)."""
        out: dict[str, object] = {
            "logger": LibrdkafkaLog(logging.getLogger(f"hivewire.kafka.librdkafka.{client}")),
            "error_cb": self._producer_error if client == "producer" else self._client_error,
        }
        if "statistics.interval.ms" not in self.consumer_config and "stats_cb" not in self.consumer_config:
            # The only news librdkafka gives of a broker coming back; also how the first contact is known.
            out["statistics.interval.ms"] = 5000
            out["stats_cb"] = self._statistics
        return out

    def _client_error(self, err: KafkaError) -> None:
        """librdkafka's error callback (served by the consumer's poll and the dead-letter thread)."""
        code = err.code()
        if self._refuse(err, "READ", self.topic) or self.refused is not None:
            return  # a refusal explains what follows ("all brokers are down"): poll() says it, once
        if code in _CONNECTION_ERRORS:
            self._last_error = err.str()
            if not self.reachability.connected_once:
                self.reachability.down(err.str())
            else:
                # Errors are served late (a poll may deliver one from before a recovery): once connected, the
                # statistics decide, which describe the brokers as they are now.
                log.debug("Kafka: %s", err.str())
        elif err.fatal():
            log.error("fatal Kafka client error: %s", err.str())
        elif self._error_log.due():
            log.warning("Kafka client error: %s", err.str())

    def _statistics(self, text: str) -> None:
        try:
            brokers = json.loads(text).get("brokers", {})
        except ValueError:
            return
        if any(b.get("state") == "UP" for b in brokers.values()):
            self.reachability.up()
        elif brokers and self.reachability.connected_once:
            self.reachability.down(self._last_error or "no broker connection is up")

    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        conf = {**self._consumer_conf(), "on_commit": self._committed}

        def assigned(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            # Called before librdkafka adds the partitions (all of them, or the increment under
            # cooperative-sticky) to the assignment, so nothing is fetched in the wrong state.
            if partitions:
                if self._paused:
                    consumer.pause(partitions)
                else:
                    consumer.resume(partitions)
            self.reachability.up()
            self._waiting_since = None
            self.retention.assigned(consumer, partitions)
            on_assign([(p.topic, p.partition) for p in partitions])

        def revoked(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            self.retention.revoked(partitions)
            on_revoke([(p.topic, p.partition) for p in partitions])

        try:
            self._consumer = Consumer(conf)
        except KafkaException as e:
            raise _consumer_config_error(e, conf, self.consumer_config, self._origins) from e
        self.start_clock()
        try:  # a dead-letter producer setting librdkafka refuses is a configuration error, found at start
            self._ensure_producer()
        except KafkaException as e:
            self._consumer.close()
            self._consumer = None
            raise ConfigError(
                "hivewire.dead.letter.producer.*", f"librdkafka refuses the dead-letter producer settings: {_reason(e)}"
            ) from e
        # A lost partition (session timed out) is revoked without a chance to commit; same bookkeeping.
        self._consumer.subscribe([self.topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)
        self._waiting_since = self._waiting_said = time.monotonic()
        log.info(
            "joining consumer group %s; waiting for partition assignment from the group coordinator", self.group_id
        )

    @property
    def waiting_for(self) -> float | None:
        """Seconds this consumer has waited for its first assignment since :meth:`open` (None once assigned)."""
        since = self._waiting_since
        return None if since is None else time.monotonic() - since

    def _say_waiting(self) -> None:
        since = self._waiting_since
        if since is None or not self.reachability.connected_once:
            return  # assigned, or Kafka not reached yet (reachability says that)
        now = time.monotonic()
        if now - self._waiting_said < ASSIGNMENT_REMINDER:
            return
        self._waiting_said = now
        timeout = self.consumer_config.get("session.timeout.ms", 45000)
        log.info(
            "waiting for partition assignment from the group coordinator (%.0f s, group %s); a member that "
            "stopped without leaving the group (kill -9, a crash) holds its partitions until its "
            "session.timeout.ms (%s ms) ends",
            now - since,
            self.group_id,
            timeout,
        )

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        assert self._consumer is not None, "open() first"
        self.raise_if_refused()
        messages: list[Any] = self._consumer.consume(max_records, timeout)
        if self._waiting_since is not None:
            self._say_waiting()
        if not messages:
            self.check_started()
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
                self._client_error(err)
        if good:
            self.reachability.up()
            self.retention.check(self._consumer, good)
        else:
            self.check_started()
        return good

    def _records_missing(self, partition: TP, first: int, last: int) -> None:
        if self._metrics is not None:
            self._metrics.records_missing.labels(partition[0], str(partition[1])).inc(last - first + 1)

    # -- refusals (issue 28: credentials, certificates, ACLs) -------------------------------------------------
    def _producer_error(self, err: KafkaError) -> None:
        """The dead-letter producer's error callback: as the consumer's, but it writes to the dead-letter topic."""
        if not self._refuse(err, "WRITE", self.dead_letter_topic):
            self._client_error(err)

    def _refuse(self, err: KafkaError, operation: str, topic: str) -> bool:
        """Keep the first refusal (:attr:`refused`, raised by :meth:`poll`); True if ``err`` is one
        (``operation`` on ``topic`` is what the client was doing)."""
        found = refusal(
            err,
            servers=self.bootstrap_servers,
            settings={**self.consumer_config, "group.id": self.group_id},
            option=CONSUMER_PREFIX,
            operation=operation,
            resource=topic,
        )
        if found is None:
            return False
        if self.refused is None:
            self.refused = found
        log.debug("Kafka refused the client: %s", err.str())
        return True

    def report_error(self, err: KafkaError) -> None:
        """An error another consumer of this source met (the archive's): a refusal is kept, others logged."""
        self._client_error(err)

    def raise_if_refused(self) -> None:
        """Raise :class:`~hivewire.errors.SourceError` with the refusal's one line if Kafka refused the client."""
        if self.refused is not None:
            raise SourceError(self.refused.message)

    # -- (end of refusals) ----------------------------------------------------------------------------------
    def start_clock(self) -> None:
        """Start counting ``startup_timeout`` (:meth:`open` does)."""
        self._opened_at = time.monotonic()

    def check_started(self) -> None:
        """Raise :class:`~hivewire.errors.SourceError` once ``startup_timeout`` passed since :meth:`start_clock`
        without ever reaching a broker, or at once when Kafka refused the client (:attr:`refused`)."""
        self.raise_if_refused()
        if (
            self.startup_timeout > 0
            and not self.reachability.connected_once
            and time.monotonic() - self._opened_at > self.startup_timeout
        ):
            raise SourceError(
                f"could not reach Kafka at {self.bootstrap_servers} within {self.startup_timeout:g} s: check "
                "apiary.bootstrap.servers (--bootstrap-servers), the network, the security settings "
                "(apiary.messaging.consumer.security.protocol, sasl.*, ssl.*) and that the brokers run; "
                "hivewire.startup.timeout.ms sets how long to wait (0: for ever)"
            )

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
        log.warning(
            "offset commit failed (%s); the offsets go with the next commit, and records after the last "
            "successful one are read again after a restart",
            err or detail,
        )

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

    def next_offset(self, tp: TP) -> int | None:
        """The consumer's position in ``tp``, or, before it has read anything there, the group's committed
        offset (asked of the broker); None when neither is known."""
        consumer = self._consumer
        if consumer is None:
            return None
        partition = TopicPartition(tp[0], tp[1])
        try:
            found = consumer.position([partition])
            if not found or found[0].offset < 0:
                found = consumer.committed([partition], timeout=10)
        except KafkaException as e:
            log.info("could not read the position of %s:%d: %s", tp[0], tp[1], _reason(e))
            return None
        return found[0].offset if found and found[0].error is None and found[0].offset >= 0 else None

    def reader(self) -> _Reader:
        """A consumer of its own (no group membership, no commits) that reads ranges of the topic again."""
        return _Reader(self._consumer_conf())

    def tail(self) -> _Tail:
        """A consumer of its own (no group membership, no commits) that reads every partition from given
        offsets: a singleton listener's."""
        return _Tail(self._consumer_conf(), self.topic, self._client_error)

    # -- dead letters ---------------------------------------------------------------------------------
    def _ensure_producer(self) -> Producer:
        # The polling thread (undecodable records) and listener workers dead-letter concurrently: exactly one
        # producer, served by exactly one thread, or a second one would never be polled nor flushed.
        producer = self._producer
        if producer is not None:
            return producer
        with self._producer_lock:
            if self._producer is None:
                shared = {k: v for k, v in self.consumer_config.items() if k.startswith(_SHARED_PREFIXES)}
                self._producer = Producer(
                    {
                        "bootstrap.servers": self.bootstrap_servers,
                        "enable.idempotence": True,
                        "acks": "all",
                        "linger.ms": 5,
                        "compression.type": "zstd",
                        **self.client_callbacks("producer"),
                        **shared,
                        **self.producer_config,
                    }
                )
                self._producer_thread = threading.Thread(
                    target=self._serve_producer, args=(self._producer,), name="hivewire-dlq", daemon=True
                )
                self._producer_thread.start()
            return self._producer

    def _serve_producer(self, producer: Producer) -> None:
        """The dead-letter thread: serves delivery reports and (re)sends what waits in the resend queue."""
        while not self._closing.is_set():
            with self._resend_lock:
                wait = self._resend[0][0] - time.monotonic() if self._resend else 0.2
            try:
                producer.poll(min(0.2, max(0.0, wait)))
            except KafkaException as e:  # a fatal producer error: a refusal (an ACL) stops the app, see poll()
                error = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                if error is None or not self._refuse(error, "WRITE", self.dead_letter_topic):
                    raise
                return
            self._shrink_too_large()
            self._resend_due(producer)

    def _shrink_too_large(self) -> None:
        """Send again the letters the broker refused as too large, shrinking only the big ones among them.

        The broker refuses a whole batch when it exceeds the topic's ``max.message.bytes``, so a small letter
        batched with a large one is refused too: only the letters at least half the size of the largest refused
        together are shrunk (halved, then cut to the reference); the others go again whole."""
        with self._resend_lock:
            wave, self._too_large = self._too_large, []
        if not wave:
            return
        largest = max(letter.size() for letter in wave)
        shrunk = [letter for letter in wave if letter.size() * 2 >= largest and letter.fit(self._limit_below(letter))]
        if shrunk:
            log.warning(
                "the broker refused %d dead letter(s) to %s as too large; sending them again as %s (see the "
                "hivewire.original.* headers; hivewire.dead.letter.producer.message.max.bytes sets the size)",
                len(shrunk),
                self.dead_letter_topic,
                "/".join(sorted({letter.stored for letter in shrunk})),
            )
        for letter in wave:
            if letter in shrunk or letter.stored != "reference" or letter.size() * 2 < largest:
                self._queue_resend(letter, 0.0)
            else:  # cut to the reference and still refused: nothing smaller exists; keep trying, counted
                self._count_failure(None, "a dead letter reduced to its reference was refused as too large")
                self._queue_resend(letter, 1.0)

    def _resend_due(self, producer: Producer) -> None:
        now = time.monotonic()
        while True:
            with self._resend_lock:
                if not self._resend or self._resend[0][0] > now:
                    return
                _due, _seq, letter = heapq.heappop(self._resend)
            if not self._produce(producer, letter):
                return  # the local queue is full again: the rest waits for deliveries to make room

    def _produce(self, producer: Producer, letter: _Letter) -> bool:
        """Hand ``letter`` to librdkafka; if its queue is full, queue it for the dead-letter thread instead.

        Never raises: a letter too large is shrunk first (and again if librdkafka still refuses it), any
        other refusal is sent again later; the record's commits wait meanwhile, the process goes on."""
        if letter.stored == "whole" and letter.size() > self._max_message:
            letter.fit(self._max_message)
        while True:
            try:
                producer.produce(
                    self.dead_letter_topic,
                    value=letter.value,
                    key=letter.key,
                    headers=letter.headers,
                    on_delivery=letter.delivered,
                )
                return True
            except BufferError:
                self._queue_resend(letter, 0.05)
                return False
            except KafkaException as e:
                error = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                if self.refused is not None:
                    return True  # Kafka refused the producer: poll() stops the app, the record stays uncommitted
                if error is not None and error.code() in _TOO_LARGE and letter.fit(self._limit_below(letter)):
                    continue
                self._count_failure(error, str(e))
                self._queue_resend(letter, 5.0)
                return True  # queued: the caller's other letters may go on

    def _limit_below(self, letter: _Letter) -> int:
        """The size to shrink ``letter`` to after a refusal as too large: the limit, or half what was refused."""
        return min(self._max_message, letter.size() // 2)

    def _queue_resend(self, letter: _Letter, delay: float) -> None:
        with self._resend_lock:
            self._resend_seq += 1
            heapq.heappush(self._resend, (time.monotonic() + delay, self._resend_seq, letter))

    def _delivery_failed(self, letter: _Letter, err: KafkaError) -> None:
        """librdkafka gave up on a dead letter (on the thread serving the producer): send it again later
        (smaller at once, if the broker refused it as too large)."""
        if self._closing.is_set():
            if self._metrics is not None:
                self._metrics.dead_letter_failures.inc()
            return
        if self._refuse(err, "WRITE", self.dead_letter_topic):
            return  # poll() stops the app; the record is not committed, so it is read again after the fix
        if err.code() in _TOO_LARGE:
            with self._resend_lock:
                self._too_large.append(letter)  # decided with the rest of its batch, after this poll
            return
        self._count_failure(err, str(err))
        # Keep trying: the record's batch (and its commit) waits for this acknowledgement.
        self._queue_resend(letter, 1.0)

    def _count_failure(self, err: KafkaError | None, text: str) -> None:
        if self._metrics is not None:
            self._metrics.dead_letter_failures.inc()
        count = self._failure_log.due()
        if count:
            log.error(
                "%d dead letter(s) to %s failed (last: %s); sending again until they are acknowledged "
                "(their records are not committed meanwhile)",
                count,
                self.dead_letter_topic,
                err.str() if err is not None else text,
            )

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        """Publish ``record`` to the dead-letter topic; never blocks: a full local queue defers the send."""
        producer = self._ensure_producer()
        letter = _Letter(
            self,
            record.value(),
            letter_key(record, headers),
            [(k, v.encode()) for k, v in headers.items()],
            on_delivered,
        )
        self._produce(producer, letter)

    # -- closing --------------------------------------------------------------------------------------
    def drain(self, timeout: float) -> None:
        """Wait for dead letters in flight (or waiting to be sent again) to be acknowledged."""
        producer = self._producer
        if producer is None:
            return
        deadline = time.monotonic() if self.refused is not None else time.monotonic() + timeout
        while True:
            with self._resend_lock:
                waiting = len(self._resend)
            remaining = deadline - time.monotonic()
            if (not waiting and len(producer) == 0) or remaining <= 0:
                break
            producer.flush(min(0.2, remaining))  # the dead-letter thread keeps resending meanwhile
        left = len(producer) + waiting
        if left:
            log.error(
                "%d dead letter(s) not acknowledged at shutdown; their records are not committed and "
                "will be read again",
                left,
            )

    def close(self) -> None:
        """Close the consumer, which leaves the group (its partitions go to the others, or to the next
        start, at once), and stop the dead-letter thread."""
        self._closing.set()
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
            log.info("left consumer group %s", self.group_id)
        thread = self._producer_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(5)  # it polls at most 0.2 s at a time


def letter_key(record: Record, headers: Mapping[str, str]) -> bytes:
    """The key of ``record``'s dead letter: the record's own key; else (Apiary's producer partitions by table
    and sets none) its ``db.table``, so each table's letters stay in one partition, in order; else (it did not
    decode) its source partition, so those letters keep their order too."""
    key = record.key()
    if key:
        return key
    table = headers.get("hivewire.source.table")
    return (table or f"{record.topic()}/{record.partition()}").encode()


class LibrdkafkaLog:
    """librdkafka's ``logger``: its lines under ``hivewire.kafka.librdkafka``, connection failures at DEBUG
    (:attr:`KafkaSource.reachability` speaks for them, once)."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger

    def log(self, level: int, fmt: str, *args: object) -> None:
        facility = args[0] if args else ""
        if facility in _CONNECTION_FACILITIES:
            level = logging.DEBUG
        if self._logger.isEnabledFor(level):
            self._logger.log(level, fmt, *args)


class _Reader:
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


class _Tail:
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
            log.info("could not list the partitions of %s (%s); trying again later", self._topic, _reason(e))
            return []
        if metadata is None or metadata.error is not None:
            return []
        return [(self._topic, p) for p in sorted(metadata.partitions)]

    def add(self, positions: Mapping[TP, int | None]) -> dict[TP, int | None]:
        starts = dict(positions)
        unknown = [TopicPartition(t, p) for (t, p), o in positions.items() if o is None]
        if unknown:  # the group's committed offsets, asked now so that the caller knows where reading starts
            try:
                for found in self._consumer.committed(unknown, timeout=10):
                    if found.error is None and found.offset >= 0:
                        starts[(found.topic, found.partition)] = found.offset
            except KafkaException as e:
                log.info("could not read the committed offsets of %s (%s); reading from them", self._topic, _reason(e))
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


def _consumer_config_error(
    error: KafkaException, conf: Mapping[str, Any], settings: Mapping[str, Any], origins: Mapping[str, str]
) -> ConfigError:
    """librdkafka refused ``conf``: a :class:`ConfigError` naming the user's setting at fault, as they wrote it
    (``settings`` are the user's after translation, ``origins`` the keys they were translated from)."""
    reason = _reason(error)
    named = [name for name in re.findall(r'["`]([A-Za-z0-9_.]+)["`]', reason) if name in settings]
    if not named:  # librdkafka's message does not name it (Java JAAS lines, trust stores, ...): find the
        # setting without which librdkafka stops giving this reason.
        named = [key for key in settings if _refusal({k: v for k, v in conf.items() if k != key}) != reason]
    key = f"{CONSUMER_PREFIX}{origins.get(named[0], named[0])}" if named else f"{CONSUMER_PREFIX}*"
    return ConfigError(key, f"librdkafka refuses this Kafka consumer setting: {reason}")


def _refusal(conf: Mapping[str, Any]) -> str | None:
    """librdkafka's reason for refusing ``conf`` (None if it takes it)."""
    try:
        Consumer(dict(conf)).close()
        return None
    except KafkaException as e:
        return _reason(e)


def _reason(error: KafkaException) -> str:
    return str(error.args[0].str()) if error.args and isinstance(error.args[0], KafkaError) else str(error)
