"""``KafkaSource``: the runtime's source of Apiary records, on confluent-kafka (librdkafka).

The consumer never auto-commits: the runtime commits an offset only after every listener handled or
dead-lettered everything before it. Dead letters go to ``<topic>.dlq`` (by default) through an idempotent
producer with ``acks=all`` (:class:`~hivewire.runtime._kafka_letters.DeadLetterProducer`: a dead letter counts
as done only when the broker acknowledged it). What is read apart from the group (a lane's re-reads, a
singleton's tail) is read by the consumers of :mod:`hivewire.runtime._kafka_readers`, which never commit.

``apiary.messaging.consumer.*`` may be Drone Fly's Java consumer properties: they are translated for
librdkafka (:func:`hivewire.config._kafka.consumer_settings`), Java-only ones ignored with one warning, and a
setting librdkafka refuses is a :class:`~hivewire.errors.ConfigError` naming the key
(:mod:`hivewire.runtime._kafka_bad_setting`).

Pausing (backpressure) applies to the whole current assignment, which with the cooperative-sticky strategy
grows and shrinks by increments: partitions assigned while paused are paused before they are fetched, and
partitions assigned while not paused are resumed (librdkafka keeps a partition's pause flag across a
revocation, so one paused, revoked and assigned back later would otherwise never be read again).

Outages: librdkafka retries on its own and logs every failed connection; its log lines go to
``hivewire.kafka.librdkafka`` (connection failures at DEBUG: :mod:`hivewire.runtime._kafka_log`).
:attr:`KafkaSource.reachability` (what readiness reads) says once that Kafka is unreachable, reminds at most
once a minute, and says when it is back. Kafka is
unreachable only when no broker of the cluster answers the *consumer*: librdkafka's ``_ALL_BROKERS_DOWN``
error, or its statistics showing no broker ``UP`` in two reports in a row (:data:`STATISTICS_INTERVAL` apart,
so a consumer moving its connections off a broker that died is not an outage). One broker failing
(``_TRANSPORT``, ``_RESOLVE``, ... for one address: a bootstrap broker down at start, a broker killed) is
not an outage of the cluster, and what the dead-letter producer sees never is: it connects only to the
brokers it writes to, so losing its one connection says nothing about the cluster.
:meth:`KafkaSource.poll` raises a :class:`~hivewire.errors.SourceError` when Kafka was never reached within
``startup_timeout``.

Refusals are not outages (wrong credentials, a certificate either side does not trust, a missing ACL, for the
consumer or the dead-letter producer: :mod:`hivewire.runtime._kafka_refusal`): retrying cannot help, so the
first is kept in :attr:`KafkaSource.refused` and :meth:`KafkaSource.poll` raises it as a
:class:`~hivewire.errors.SourceError` whose one line says what to fix. A record whose dead letter was refused
is never committed, so the run after the fix handles it again.

Dead letters larger than the producer's ``message.max.bytes`` (librdkafka's default, 1000000, is also a
broker's usual limit), or refused by the broker as too large, keep the start of the original, else only its
reference (:mod:`hivewire.runtime._kafka_letters` says how); neither ever stops the process: only the commits
of that record's partition wait. A letter's key is its record's, else its table's
(:func:`~hivewire.runtime._kafka_letters.letter_key`): one table's letters share a partition and keep their
order.

Joining the group: until the group coordinator assigns partitions, :meth:`KafkaSource.poll` says so at INFO
every :data:`ASSIGNMENT_REMINDER` seconds, with the seconds waited and the usual cause (a member that stopped
without leaving holds its partitions until its ``session.timeout.ms`` ends); :attr:`KafkaSource.waiting_for`
is what ``/health`` shows. A subscribed topic that does not exist is said once, as ``hivewire tail`` says it
(:attr:`KafkaSource.waiting_reason`, in ``/health`` too), and :meth:`KafkaSource.poll` raises it as a
:class:`~hivewire.errors.SourceError` once ``startup_timeout`` has passed without the topic appearing.
:meth:`KafkaSource.close` closes the consumer, which leaves the group at once, so a
restart is not held up by the member it replaces. (Static membership, ``group.instance.id``, which ``hivewire
run --group-instance-id`` sets, is the user's choice, not a default: docs/runtime.md says why.)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from confluent_kafka import (
    OFFSET_INVALID,
    Consumer,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from hivewire._ratelimit import RateLimit
from hivewire._reachability import Reachability
from hivewire.config._kafka import CONSUMER_PREFIX, KafkaValue, consumer_settings
from hivewire.errors import ConfigError, HivewireError, SourceError
from hivewire.runtime._kafka_bad_setting import bad_setting
from hivewire.runtime._kafka_letters import DEFAULT_MAX_MESSAGE, DeadLetterProducer
from hivewire.runtime._kafka_log import LibrdkafkaLog, broker_states
from hivewire.runtime._kafka_readers import KafkaReader, KafkaTail, reason
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
# librdkafka errors about reaching brokers (those that are a refusal, _kafka_refusal.refusal, stop the client).
_CONNECTION_ERRORS = {
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._AUTHENTICATION,
    KafkaError._SSL,
    KafkaError._TRANSPORT,
    KafkaError._RESOLVE,
    KafkaError._TIMED_OUT,
}
#: Seconds between the lines saying the consumer still waits for its partitions.
ASSIGNMENT_REMINDER = 10.0
# librdkafka's "Subscribed topic not available" (the topic does not exist, or not yet).
_MISSING_TOPIC = {KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC}
#: Seconds between librdkafka's statistics reports (unless the user sets ``statistics.interval.ms``).
STATISTICS_INTERVAL = 5.0


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
        self._none_up = False  # the last statistics report showed no broker UP
        #: Kafka refused this client for good (credentials, certificate, an ACL): poll() raises it.
        self.refused: Refusal | None = None
        max_message = int(str(self.producer_config.get("message.max.bytes", DEFAULT_MAX_MESSAGE)))
        #: The dead-letter producer (its thread starts with :meth:`open`).
        self.letters = DeadLetterProducer(self.dead_letter_topic, self._producer_conf, max_message, self)
        #: Records the broker deleted before the group read them (runtime/_retention.py).
        self.retention = RetentionWatch(self._records_missing)
        # Joining the group: when the wait for an assignment began (None: assigned), and when it was last said.
        self._waiting_since: float | None = None
        self._losing = False  # partitions being revoked were lost (session timed out), not rebalanced
        self._waiting_said = 0.0
        #: The subscribed topic does not exist (librdkafka said so while this consumer waited for partitions).
        self.missing_topic: str | None = None

    def __repr__(self) -> str:
        return f"KafkaSource({self.bootstrap_servers!r}, {self.topic!r}, group_id={self.group_id!r})"

    def attach_metrics(self, metrics: Metrics) -> None:
        """Count failed commits and dead-letter sends in ``metrics`` (the runtime calls this before :meth:`open`)."""
        self._metrics = metrics
        self.letters.metrics = metrics

    # -- consuming ------------------------------------------------------------------------------------
    def _consumer_conf(self) -> dict[str, Any]:
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id,
            "auto.offset.reset": "latest",
            # librdkafka postpones the next fetch by this much whenever its prefetch queue is over its limits,
            # which a Python consumer (slower than the fetcher) hits on every refill: with the default 1000 ms
            # the queue runs dry and consume() waits.
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
        if client == "producer":
            return out  # the producer's brokers are not the cluster's (module docstring: Outages)
        if "statistics.interval.ms" not in self.consumer_config and "stats_cb" not in self.consumer_config:
            # The only news librdkafka gives of a broker coming back; also how the first contact is known.
            out["statistics.interval.ms"] = int(STATISTICS_INTERVAL * 1000)
            out["stats_cb"] = self._statistics
        return out

    def _client_error(self, err: KafkaError) -> None:
        """librdkafka's error callback for the consumers (the group's, the archive's, a singleton's tail)."""
        if self._refuse(err, "READ", self.topic) or self.refused is not None:
            return  # a refusal explains what follows ("all brokers are down"): poll() says it, once
        self._error(err, cluster=True)

    def _error(self, err: KafkaError, *, cluster: bool) -> None:
        """An error that is no refusal; ``cluster``: the client speaks for the cluster (a consumer does)."""
        code = err.code()
        if code in _MISSING_TOPIC and cluster and self._waiting_since is not None:
            self._topic_missing()
        elif code == KafkaError._ALL_BROKERS_DOWN and cluster:
            # Every broker this consumer knows is down. (Errors are served late, a poll may deliver one from
            # before a recovery: the next statistics report with a broker UP says it is back.)
            self.reachability.down(f"{err.str()}; last: {self._last_error}" if self._last_error else err.str())
        elif code in _CONNECTION_ERRORS:
            # One broker failing is not an outage of the cluster: librdkafka connects to the others.
            if cluster:
                self._last_error = err.str()
            log.debug("Kafka: %s", err.str())
        elif err.fatal():
            log.error("fatal Kafka client error: %s", err.str())
        elif self._error_log.due():
            log.warning("Kafka client error: %s", err.str())

    def _statistics(self, text: str) -> None:
        states = broker_states(text)
        if "UP" in states:
            self._none_up = False
            self.reachability.up()
        elif states and self.reachability.connected_once:
            # No connection up at this report: an outage if the previous report had none either (a consumer
            # whose broker just died connects to another within the interval).
            if self._none_up:
                self.reachability.down(self._last_error or "no broker connection is up")
            self._none_up = True

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
            self.missing_topic = None
            self.retention.assigned(consumer, partitions)
            on_assign([(p.topic, p.partition) for p in partitions])

        def revoked(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            self.retention.revoked(partitions)
            on_revoke([(p.topic, p.partition) for p in partitions])

        def lost(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            self._losing = True
            try:
                revoked(consumer, partitions)
            finally:
                self._losing = False

        try:
            self._consumer = Consumer(conf)
        except KafkaException as e:
            raise bad_setting(e, conf, self.consumer_config, self._origins) from e
        self.start_clock()
        try:  # a dead-letter producer setting librdkafka refuses is a configuration error, found at start
            self.letters.ensure_producer()
        except KafkaException as e:
            self._consumer.close()
            self._consumer = None
            raise ConfigError(
                "hivewire.dead.letter.producer.*", f"librdkafka refuses the dead-letter producer settings: {reason(e)}"
            ) from e
        # A lost partition (session timed out) is revoked without a chance to commit; same bookkeeping, and
        # :attr:`losing` says which it was.
        self._consumer.subscribe([self.topic], on_assign=assigned, on_revoke=revoked, on_lost=lost)
        self._waiting_since = self._waiting_said = time.monotonic()
        log.info(
            "joining consumer group %s; waiting for partition assignment from the group coordinator", self.group_id
        )

    @property
    def losing(self) -> bool:
        """True while the partitions being revoked were lost: the group dropped this consumer (its session
        timed out), rather than a rebalance taking them back."""
        return self._losing

    @property
    def waiting_for(self) -> float | None:
        """Seconds this consumer has waited for its first assignment since :meth:`open` (None once assigned)."""
        since = self._waiting_since
        return None if since is None else time.monotonic() - since

    @property
    def waiting_reason(self) -> str | None:
        """Why the consumer still has no partitions, when known (the topic does not exist); for ``/health``."""
        return self._no_topic_message() if self.missing_topic is not None and self._waiting_since is not None else None

    def _no_topic_message(self) -> str:
        return f"{no_such_topic(self.topic, self.bootstrap_servers)} (apiary.kafka.topic.name)"

    def _topic_missing(self) -> None:
        """librdkafka says the subscribed topic does not exist: say it once, in ``tail``'s words; :meth:`poll`
        fails once ``startup_timeout`` has passed and it still does not (it may be about to be created)."""
        if self.missing_topic is None:
            self.missing_topic = self.topic
            wait = f"waiting up to {self.startup_timeout:g} s for it" if self.startup_timeout > 0 else "waiting for it"
            log.warning("%s; %s (hivewire.startup.timeout.ms)", self._no_topic_message(), wait)

    def _check_topic(self) -> None:
        since = self._waiting_since
        if (
            self.missing_topic is not None
            and since is not None
            and self.startup_timeout > 0
            and time.monotonic() - since > self.startup_timeout
        ):
            raise SourceError(self._no_topic_message())

    def _say_waiting(self) -> None:
        since = self._waiting_since
        if since is None or not self.reachability.connected_once or self.missing_topic is not None:
            return  # assigned, Kafka not reached yet (reachability says that), or no such topic (said once)
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
            self._check_topic()
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
        """The dead-letter producer's error callback: refusals as the consumer's (it writes to the dead-letter
        topic); its lost connections are not the cluster's (module docstring: Outages)."""
        if not self.refuse_write(err) and self.refused is None:
            self._error(err, cluster=False)

    def refuse_write(self, err: KafkaError) -> bool:
        """:meth:`_refuse` for the dead-letter producer, which writes to the dead-letter topic."""
        return self._refuse(err, "WRITE", self.dead_letter_topic)

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
            log.info("could not read the position of %s:%d: %s", tp[0], tp[1], reason(e))
            return None
        return found[0].offset if found and found[0].error is None and found[0].offset >= 0 else None

    def reader(self) -> KafkaReader:
        """A consumer of its own (no group membership, no commits) that reads ranges of the topic again."""
        return KafkaReader(self._consumer_conf())

    def tail(self) -> KafkaTail:
        """A consumer of its own (no group membership, no commits) that reads every partition from given
        offsets: a singleton listener's."""
        return KafkaTail(self._consumer_conf(), self.topic, self._client_error)

    # -- dead letters (the producer: _kafka_letters.py) -------------------------------------------------
    def _producer_conf(self) -> dict[str, Any]:
        shared = {k: v for k, v in self.consumer_config.items() if k.startswith(_SHARED_PREFIXES)}
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "compression.type": "zstd",
            **self.client_callbacks("producer"),
            **shared,
            **self.producer_config,
        }

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        """Publish ``record`` to the dead-letter topic; never blocks: a full local queue defers the send."""
        self.letters.send(record, headers, on_delivered)

    def drain(self, timeout: float) -> None:
        """Wait for dead letters in flight (or waiting to be sent again) to be acknowledged."""
        self.letters.drain(timeout)

    # -- closing --------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the consumer, which leaves the group (its partitions go to the others, or to the next
        start, at once), and stop the dead-letter thread."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
            log.info("left consumer group %s", self.group_id)
        self.letters.close()


def no_such_topic(topic: str, bootstrap_servers: str) -> str:
    """What ``run`` and ``tail`` say of a topic the cluster does not have."""
    return f"topic {topic} does not exist on {bootstrap_servers}: check --topic"
