"""The Kafka sink: the shim's events as Apiary JSON on a topic, partitioned like Apiary's producer.

:meth:`KafkaSink.publish` only appends to a durable :class:`~hivewire_shim.spool.Spool` (or, while the
spool cannot be written, memory); the sink's thread sends from the spool, in order, and marks what Kafka
acknowledged, so nothing is lost while Kafka is away or across a shim restart.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import struct
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hivewire._ratelimit import RateLimit
from hivewire.config._kafka import KafkaValue
from hivewire.errors import ConfigError
from hivewire.events import _apiary as apiary
from hivewire.events._model import ListenerEvent
from hivewire.runtime._kafka_refusal import RefusalLog, refusal
from hivewire_shim.sinks import partition_key
from hivewire_shim.spool import PRIVATE_FILE, FsyncPolicy, Spool, SpoolRecord, write_all

if TYPE_CHECKING:
    from confluent_kafka import Producer

__all__ = ["PRODUCER_DEFAULTS", "REJECTED_FILE", "KafkaSink", "replay_rejected"]

log = logging.getLogger(__name__)


#: Producer settings the sink insists on unless overridden: Apiary's acks=all, and what keeps order and
#: avoids loss while Kafka is away (idempotence, no message timeout: librdkafka retries until it works).
#: Order: with idempotence librdkafka keeps each partition's records in order across its retries, but a
#: record that fails for good (a permanent broker error) lets the records after it go on; the gapless
#: guarantee turns such a failure into a fatal producer error instead, so no record of a partition is
#: acknowledged past one that failed, and the sender starts a new producer and resends from the failed
#: one (skipping what other partitions delivered meanwhile). Records Kafka refuses for good because of
#: the record itself (too large) are set aside on purpose: see REJECTED_FILE.
#: message.max.bytes is librdkafka's check of one *uncompressed* message: its 1 MB default refuses the
#: event of a Spark INSERT that adds ~1,500 partitions, which lz4 shrinks several times over on the wire
#: (where the broker's limit, also 1 MB by default, applies to the compressed batch).
PRODUCER_DEFAULTS: Mapping[str, Any] = {
    "acks": "all",
    "enable.idempotence": True,
    "enable.gapless.guarantee": True,
    "message.timeout.ms": 0,
    "compression.type": "lz4",
    "linger.ms": 5,
    "socket.keepalive.enable": True,
    "message.max.bytes": 64 << 20,
}

#: The record key Apiary's listener writes: the event time in ms, as Kafka's LongSerializer (big-endian).
_APIARY_KEY = struct.Struct(">q")
_PENDING, _DELIVERED, _REJECTED, _DONE_BEFORE = 0, 1, 2, 3

#: librdkafka's metadata refresh interval (``topic.metadata.refresh.interval.ms``) when not configured;
#: the sink re-reads the topic's partition count as often.
_METADATA_REFRESH_MS = 300_000


def _false(value: Any) -> bool:
    return str(value).strip().lower() in ("false", "0", "no", "off")


def _producer_config(user: Mapping[str, Any], bootstrap_servers: str) -> dict[str, Any]:
    """:data:`PRODUCER_DEFAULTS` with the user's settings; without idempotence, one request in flight per
    connection (so librdkafka's retries cannot reorder) and no gapless guarantee (it needs idempotence)."""
    config: dict[str, Any] = {**PRODUCER_DEFAULTS, **dict(user), "bootstrap.servers": bootstrap_servers}
    if _false(config.get("enable.idempotence")):
        if "enable.gapless.guarantee" not in user:
            del config["enable.gapless.guarantee"]
        config.setdefault("max.in.flight.requests.per.connection", 1)
        log.warning(
            "Kafka producer without enable.idempotence: an event that Kafka fails for good (authorisation, "
            "a broker error) can be overtaken by later events of its table, which then reach consumers "
            "first (each case is logged); keep enable.idempotence=true unless the brokers cannot do it"
        )
    # librdkafka logs a refusal (credentials, certificates) on every retry: at DEBUG; the sink says it once
    config.setdefault("logger", RefusalLog(logging.getLogger("hivewire_shim.kafka")))
    return config


def _quiet_gapless_notice(record: logging.LogRecord) -> bool:
    # librdkafka flags enable.gapless.guarantee as experimental on every producer start; we set it on purpose.
    return "enable.gapless.guarantee is experimental" not in record.getMessage()


logging.getLogger("hivewire_shim.kafka").addFilter(_quiet_gapless_notice)

#: The file, in the spool directory, of the records Kafka refused for good (one JSON object a line).
REJECTED_FILE = "rejected"


def _refused_for_good() -> frozenset[int]:
    from confluent_kafka import KafkaError

    # Errors about the record itself: sending it again cannot work, and waiting for it would stop every
    # later event. Anything else (authorisation, an unknown topic, a fatal producer error) is retried.
    return frozenset(
        [
            KafkaError.MSG_SIZE_TOO_LARGE,
            KafkaError.INVALID_MSG_SIZE,
            KafkaError.RECORD_LIST_TOO_LARGE,
            KafkaError.INVALID_RECORD,
            KafkaError.INVALID_TIMESTAMP,
        ]
    )


def _append_line(path: Path, line: bytes) -> None:
    """Append ``line`` to ``path`` durably, or raise OSError with the file as it was (no torn line)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        size = os.fstat(fd).st_size
        try:
            write_all(fd, line)
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def replay_rejected(spool_dir: str | os.PathLike[str]) -> int:
    """Put the records Kafka refused (``<spool_dir>/rejected``) back into the spool; return how many.

    Run it while no shim uses ``spool_dir`` (it takes the spool's lock), after raising the size limits
    that made Kafka refuse them; the next shim start sends them, after what the spool already holds.
    The file is renamed ``rejected.replayed-<time>``. Raises :class:`~hivewire.errors.HivewireError` if a
    shim holds the spool, and :class:`OSError` if the spool cannot be written (re-running it then sends
    the records appended so far twice: duplicates, not loss).
    """
    directory = Path(spool_dir)
    path = directory / REJECTED_FILE
    if not path.exists():
        return 0
    with Spool(directory, fsync="always") as spool:
        count = 0
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            try:
                entry = json.loads(line)
                payload = str(entry["payload"]).encode("utf-8", errors="surrogateescape")  # as _reject wrote it
                spool.append(str(entry["key"]), payload, int(entry["timestamp_ms"]))
            except (ValueError, KeyError, TypeError) as e:
                log.error("%s line %d is not a rejected record (%s); left out", path, number, e)
                continue
            count += 1
        os.replace(path, directory / f"{REJECTED_FILE}.replayed-{time.strftime('%Y%m%dT%H%M%S')}")
    log.info("%d rejected event(s) from %s are back in the spool; the shim sends them when it starts", count, path)
    return count


class KafkaSink:
    """Apiary JSON to a Kafka ``topic``, partitioned like Apiary's producer, through a :class:`Spool`.

    :meth:`publish` encodes the event and appends it to the spool in ``spool_dir``; a sender thread reads
    the spool in order, produces each record to ``partition_for(key, partition count)`` with Apiary's
    record key (the event time in ms as an 8-byte big-endian long; it plays no part in the placement), and
    acknowledges it in the spool on its delivery report. While Kafka is unreachable the spool grows and
    the sender keeps trying; on start, whatever the spool holds past its acknowledged marker is sent
    first. ``producer_config`` adds to or overrides :data:`PRODUCER_DEFAULTS` (librdkafka keys).

    Each spooled record reaches Kafka once, in spool order per partition, as far as the spool can tell:
    records are acknowledged in the spool on their delivery reports (the contiguous prefix by its marker,
    later ones in a set beside it), and when a producer fails and a new one resends from the marker, the
    records delivered already are skipped. With the default producer settings no record is delivered
    past one of its partition that failed (see :data:`PRODUCER_DEFAULTS`); :attr:`overtaken` counts the
    records that were anyway (a producer without idempotence). What was in flight when the shim was
    killed is sent again (duplicates, never loss).

    The topic's partition count is read again every ``metadata_refresh`` seconds (default: the producer's
    ``topic.metadata.refresh.interval.ms``, librdkafka's 5 minutes unless set), so a topic that grew gets
    Apiary's partitioning over all its partitions; the records in flight are delivered first.

    A record Kafka refuses for good (too large) is moved to ``<spool_dir>/rejected`` (see
    :func:`replay_rejected`), logged and counted in :attr:`rejected`; the next ones go on. When the spool
    cannot be written (a full disk), up to ``max_overflow_bytes`` of events wait in memory, in order, and
    are written as soon as it can be; beyond that they are lost (counted in :attr:`lost`, logged).
    ``producer_factory`` makes the producer from its configuration (default: ``confluent_kafka.Producer``).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        spool_dir: str | os.PathLike[str],
        *,
        producer_config: Mapping[str, KafkaValue] | None = None,
        alter_by_old_name: bool = False,
        fsync: FsyncPolicy = "interval",
        max_in_flight: int = 10_000,
        metadata_timeout: float = 5.0,
        metadata_refresh: float | None = None,
        max_overflow_bytes: int = 256 << 20,
        pending_warning: int = 10_000,
        producer_factory: Callable[[dict[str, KafkaValue]], Producer] | None = None,
    ) -> None:
        from confluent_kafka import KafkaException, Producer  # here: only the Kafka sink needs librdkafka

        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self.alter_by_old_name = alter_by_old_name
        self.max_in_flight = max_in_flight
        self.metadata_timeout = metadata_timeout
        self.max_overflow_bytes = max_overflow_bytes
        #: A WARNING every minute while at least this many events wait for Kafka.
        self.pending_warning = pending_warning
        self._config = _producer_config(producer_config or {}, bootstrap_servers)
        if metadata_refresh is None:
            refresh_ms = float(self._config.get("topic.metadata.refresh.interval.ms", _METADATA_REFRESH_MS))
            metadata_refresh = refresh_ms / 1000 if refresh_ms > 0 else float("inf")
        #: Seconds between reads of the topic's partition count.
        self.metadata_refresh = metadata_refresh
        self._producer_factory: Callable[[dict[str, Any]], Any] = producer_factory or Producer
        try:  # a bad setting is an error now, not a sender thread that dies later
            first = _Producer(self._producer_factory, self._config, self._refusal)
        except KafkaException as e:
            raise ConfigError(
                "Kafka producer",
                f"{e.args[0] if e.args else e}; check -X/--kafka-property "
                f"(librdkafka's names, such as compression.type=lz4)",
            ) from e
        self.spool = Spool(spool_dir, fsync=fsync)
        self.rejected_path = self.spool.directory / REJECTED_FILE
        self._refused_codes = _refused_for_good()
        self._stop = threading.Event()
        #: close() stops waiting for delivery after this long without progress.
        self.stall_timeout = 3.0
        self.partitions: int | None = None
        self._new_partitions: int | None = None  # a count learnt, applied once what is in flight is delivered
        self._switch_by = 0.0
        self._next_metadata = 0.0
        self.delivered = 0
        #: Records delivered after an earlier record of their partition had failed (out of order).
        self.overtaken = 0
        #: Records not sent again after a producer restart because they had been delivered already.
        self.skipped = 0
        #: Records Kafka refused for good, moved to :attr:`rejected_path`.
        self.rejected = 0
        #: Events that could not be spooled and did not fit in memory either.
        self.lost = 0
        self._delivered_lock = threading.Condition()
        self._overflow: collections.deque[tuple[str, bytes, int]] = collections.deque()
        self._overflow_bytes = 0
        self._overflow_lock = threading.Lock()
        self._overflow_retry = RateLimit(1.0)
        self._spool_errors = RateLimit(30.0)
        self._metadata_warnings = RateLimit(60.0)
        self._pending_warnings = RateLimit(60.0)
        self._reject_errors = RateLimit(30.0)
        self._overtaken_errors = RateLimit(60.0)
        #: What Kafka refused (credentials, a certificate, an ACL), said once until a delivery succeeds again.
        self.refused: str | None = None
        if self.spool.pending:
            log.info(
                "spool %s holds %d undelivered event(s); sending them first", self.spool.directory, self.spool.pending
            )
        self._thread = threading.Thread(
            target=self._run, args=(first,), name=f"hivewire-shim-kafka-{topic}", daemon=True
        )
        self._thread.start()

    # -- publishing (client threads) ----------------------------------------------------------------------
    def publish(self, event: ListenerEvent) -> None:
        try:
            payload = apiary.encode(event)
        except Exception:
            log.exception("could not encode %r as Apiary JSON; not published", event)
            return
        key = partition_key(event, alter_by_old_name=self.alter_by_old_name)
        timestamp_ms = int(time.time() * 1000)
        # Events already held in memory go first (one table's events are published one at a time, so
        # whoever finds the overflow empty has nothing of its table in it).
        if not self._overflow:
            try:
                self.spool.append(key, payload, timestamp_ms)
                return
            except OSError as e:
                self._spool_failed(e)
        with self._overflow_lock:
            self._hold(key, payload, timestamp_ms)
            self._drain_overflow()

    def _spool_failed(self, error: OSError) -> None:
        if self._spool_errors.due():
            log.error(
                "cannot write events to the spool %s (%s): up to %d MB of them wait in memory and are written "
                "as soon as it works again; free space on its filesystem (or move --spool-dir). Events still "
                "in memory are lost if the shim stops.",
                self.spool.directory,
                error,
                self.max_overflow_bytes >> 20,
            )

    def _hold(self, key: str, payload: bytes, timestamp_ms: int) -> None:
        if self._overflow_bytes + len(payload) > self.max_overflow_bytes:
            self.lost += 1
            log.error(
                "an event for %s is LOST: the spool %s cannot be written and %d event(s) (%d MB) already wait "
                "in memory; free disk space for the spool now",
                key,
                self.spool.directory,
                len(self._overflow),
                self._overflow_bytes >> 20,
            )
            return
        self._overflow.append((key, payload, timestamp_ms))
        self._overflow_bytes += len(payload)

    def _drain_overflow(self) -> None:
        """Write what waits in memory to the spool, in order, until a write fails (call with the lock)."""
        written = 0
        while self._overflow:
            key, payload, timestamp_ms = self._overflow[0]
            try:
                self.spool.append(key, payload, timestamp_ms)
            except OSError as e:
                self._spool_failed(e)
                break
            self._overflow.popleft()  # only once it is in the spool, so later events keep queueing behind
            self._overflow_bytes -= len(payload)
            written += 1
        if written and not self._overflow:
            log.warning(
                "the spool %s is writable again; the events that waited in memory are in it", self.spool.directory
            )

    def _retry_overflow(self) -> None:
        if self._overflow and self._overflow_retry.due():
            with self._overflow_lock:
                self._drain_overflow()

    @property
    def pending(self) -> int:
        """Events published and not yet acknowledged by Kafka (in the spool, or waiting in memory)."""
        return self.spool.pending + len(self._overflow)

    def wait_delivered(self, timeout: float | None = None) -> bool:
        """Block until everything published so far was delivered (or rejected); False on timeout."""
        # Events waiting in memory take the next sequence numbers when they reach the spool.
        target = self.spool.last_seq + len(self._overflow)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._delivered_lock:
            while self.spool.acked < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._delivered_lock.wait(0.1 if remaining is None else min(remaining, 0.1))
        return True

    # -- sending (the sink's thread) ------------------------------------------------------------------------
    def _run(self, session: _Producer) -> None:
        failures = 0
        while True:
            progress = self.delivered + self.rejected
            try:
                self._send(session)
                return
            except _Restart as e:
                (log.debug if self.refused is not None else log.warning)(
                    "Kafka producer for %s failed (%s); starting a new one and resending from the first "
                    "event not delivered",
                    self.topic,
                    e,
                )
            except Exception:
                log.exception("Kafka sender for %s failed; restarting it", self.topic)
            finally:
                session.close()
            # Back off while restarts make no progress, so a persistent error does not spin.
            while True:
                failures = 0 if self.delivered + self.rejected > progress else failures + 1
                progress = self.delivered + self.rejected
                resume = time.monotonic() + (min(30.0, 0.5 * 2**failures) if failures else 0.1)
                while time.monotonic() < resume:
                    if self._stop.wait(min(1.0, max(resume - time.monotonic(), 0))):
                        return
                    self._retry_overflow()
                try:
                    session = _Producer(self._producer_factory, self._config, self._refusal)
                    break
                except Exception:
                    log.exception("could not create a Kafka producer for %s; retrying", self.topic)

    def _partition_count(self, producer: Any, *, warn: bool) -> int | None:
        """The topic's partition count from the cluster's metadata, or None (logged when ``warn``)."""
        missing = False
        try:
            metadata = producer.list_topics(self.topic, timeout=self.metadata_timeout)
            topic = metadata.topics.get(self.topic)
            if topic is not None and topic.error is None and topic.partitions:
                return len(topic.partitions)
            reason = str(topic.error) if topic is not None and topic.error is not None else "not in the metadata"
            missing = True
            if topic is not None and topic.error is not None:
                self._refusal(topic.error)  # no ACL for the topic: it is there, the principal may not see it
        except Exception as e:  # KafkaException while the cluster is unreachable
            reason = str(e)
            with contextlib.suppress(Exception):
                producer.poll(0)  # serves the error callback: a refusal (credentials, certificate) is said once
        if not warn or self.refused is not None:  # a refusal was said: the reason is known
            log.debug(
                "could not read the partitions of Kafka topic %s (%s); keeping %s", self.topic, reason, self.partitions
            )
        elif self._metadata_warnings.due():
            if missing:
                log.warning(
                    "Kafka topic %s does not exist at %s (%s); %d event(s) wait in the spool. Create the "
                    "topic (or enable auto.create.topics.enable on the brokers), or fix --topic.",
                    self.topic,
                    self.bootstrap_servers,
                    reason,
                    self.pending,
                )
            else:
                log.warning(
                    "cannot read the metadata of Kafka topic %s from %s (%s); %d event(s) wait in the spool. "
                    "Check --bootstrap-servers, the network and the security settings "
                    "(-X/--kafka-property).",
                    self.topic,
                    self.bootstrap_servers,
                    reason,
                    self.pending,
                )
        return None

    def _learn_partitions(self, producer: Any) -> bool:
        """Know the partition count: read it first, then every :attr:`metadata_refresh` seconds (a topic
        that grew is picked up); False while it was never read."""
        now = time.monotonic()
        if self.partitions is not None and now < self._next_metadata:
            return True
        count = self._partition_count(producer, warn=self.partitions is None)
        if self.partitions is None:
            if count is None:
                return False
            self.partitions = count
            log.info("Kafka topic %s has %d partition(s)", self.topic, count)
        elif count is not None and count != self.partitions and count != self._new_partitions:
            self._new_partitions = count
            self._switch_by = now + max(self.metadata_timeout, 5.0)
        self._next_metadata = now + self.metadata_refresh
        return True

    def _switch_partitions(self, in_flight: collections.OrderedDict[int, int]) -> bool:
        """Apply a new partition count once nothing is in flight (so every table's earlier events are in
        the log before its later ones go to another partition), or after a few seconds regardless.
        True while the switch waits (produce nothing new meanwhile)."""
        if self._new_partitions is None:
            return False
        if in_flight and time.monotonic() < self._switch_by:
            return True
        if in_flight:
            log.warning(
                "Kafka topic %s: %d event(s) still in flight while switching to %d partitions; events of a "
                "table that moves to another partition may reach consumers out of order around the switch",
                self.topic,
                len(in_flight),
                self._new_partitions,
            )
        log.info(
            "Kafka topic %s now has %d partition(s) (was %s); events are partitioned over all of them",
            self.topic,
            self._new_partitions,
            self.partitions,
        )
        self.partitions, self._new_partitions = self._new_partitions, None
        return False

    def _reject(self, record: SpoolRecord, error: str) -> bool:
        """Move ``record`` to the rejected file; False if that file cannot be written (try again later)."""
        entry = {
            "seq": record.seq,
            "key": record.key,
            "timestamp_ms": record.timestamp_ms,
            "topic": self.topic,
            "error": error,
            "rejected_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "payload": record.payload.decode("utf-8", errors="surrogateescape"),
        }
        try:
            _append_line(self.rejected_path, json.dumps(entry).encode("utf-8", errors="surrogateescape") + b"\n")
        except OSError as e:
            if self._reject_errors.due():
                log.error(
                    "Kafka refused event #%d for %s (%s) and it cannot be moved to %s (%s); later events "
                    "wait until it can: free disk space",
                    record.seq,
                    self.topic,
                    error,
                    self.rejected_path,
                    e,
                )
            return False
        self.rejected += 1
        log.error(
            "Kafka refused event #%d for %s for good (%s; %d bytes of Apiary JSON); it was moved to %s and "
            "later events go on. Raise the topic's max.message.bytes on the brokers and the shim's "
            "message.max.bytes (-X message.max.bytes=N), then, with the shim stopped, "
            "replay it: hivewire replay-rejected --spool-dir %s",
            record.seq,
            self.topic,
            error,
            len(record.payload),
            self.rejected_path,
            self.spool.directory,
        )
        return True

    def _send(self, session: _Producer) -> None:
        from confluent_kafka import KafkaError, KafkaException

        producer = session.producer
        cursor = self.spool.cursor()
        in_flight: collections.OrderedDict[int, int] = collections.OrderedDict()  # seq -> _PENDING, ...
        refused: list[tuple[SpoolRecord, str]] = []  # refused in a delivery report, to move to the rejected file
        held: list[SpoolRecord] = []
        purged = (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)

        def on_delivery(record: SpoolRecord, partition: int) -> Any:
            def report(err: Any, _msg: Any) -> None:
                if not session.open:
                    return  # a producer given up on: its record is sent again (a duplicate at worst)
                if err is None:
                    if self.refused is not None:
                        self.refused = None
                        log.warning("Kafka takes the shim's events for %s again", self.topic)
                    if partition in session.failed_partitions:
                        self._overtook(record, partition)
                    in_flight[record.seq] = _DELIVERED
                    self.delivered += 1
                    self.spool.mark_done(record.seq)
                elif err.code() in self._refused_codes:
                    refused.append((record, str(err)))
                elif err.code() in purged and session.purging:
                    pass  # we purged it (restarting, or stopping): it is still in the spool
                else:  # including a purge we did not ask for: librdkafka's after a fatal error
                    self._refusal(err)
                    session.failed_partitions.add(partition)
                    session.failure.append(f"event #{record.seq}: {err}")

            return report

        try:
            while True:
                self._retry_overflow()
                self._warn_if_pending()
                if self._stop.is_set():
                    # close() already waited for delivery; what is still in flight stays in the spool.
                    return
                if not self._learn_partitions(producer):
                    self._stop.wait(0.5)
                    continue
                while refused and self._reject(*refused[0]):
                    record = refused.pop(0)[0]
                    in_flight[record.seq] = _REJECTED
                    self.spool.mark_done(record.seq)
                if session.failure:
                    raise _Restart(session.failure[0])
                # Produce what fits in the window, in spool order.
                room = self.max_in_flight - len(in_flight)
                switching = self._switch_partitions(in_flight)
                batch = [] if switching else held + (cursor.read(room - len(held)) if room > len(held) else [])
                if not switching:
                    held = []
                for i, record in enumerate(batch):
                    if self.spool.is_done(record.seq):  # delivered (or set aside) before the producer restarted
                        in_flight[record.seq] = _DONE_BEFORE
                        self.skipped += 1
                        continue
                    assert self.partitions is not None
                    partition = apiary.partition_for(record.key, self.partitions)
                    try:
                        producer.produce(
                            self.topic,
                            record.payload,
                            _APIARY_KEY.pack(record.timestamp_ms),
                            partition=partition,
                            timestamp=record.timestamp_ms,
                            on_delivery=on_delivery(record, partition),
                        )
                    except BufferError:  # librdkafka's queue is full: wait for room, keep order
                        held = batch[i:]
                        break
                    except KafkaException as e:
                        error = e.args[0] if e.args else None
                        if error is None or error.code() not in self._refused_codes:  # a fatal error, ...
                            raise _Restart(f"producing event #{record.seq}: {error or e}") from e
                        # refused before it was queued (librdkafka's size check)
                        if not self._reject(record, str(error)):
                            held = batch[i:]
                            break
                        in_flight[record.seq] = _REJECTED
                        self.spool.mark_done(record.seq)
                        continue
                    in_flight[record.seq] = _PENDING
                producer.poll(0.05 if in_flight or held or refused else 0)
                self._advance(in_flight)
                if not in_flight and not held:
                    self.spool.wait(cursor.position, 0.2)
        finally:
            # Take the reports librdkafka has (deliveries that made it are recorded, so a restart skips
            # them) and purge the rest: it stays in the spool, for the next producer or the next start.
            session.purging = True
            with contextlib.suppress(Exception):
                producer.poll(0)
            with contextlib.suppress(Exception):
                producer.purge()
            with contextlib.suppress(Exception):
                producer.poll(0)
            session.open = False
            self._advance(in_flight)
            self.spool.checkpoint(force=True)
            cursor.close()

    def _refusal(self, err: Any) -> None:
        """Say once that Kafka refused the producer for good (credentials, a certificate, an ACL), and that
        events wait in the spool; a delivery that succeeds later resets it."""
        found = refusal(
            err,
            servers=self.bootstrap_servers,
            settings=self._config,
            option="hivewire.shim.producer.",
            operation="WRITE",
            resource=self.topic,
        )
        if found is None or self.refused is not None:
            return
        self.refused = found.message
        log.error(
            "%s. The shim's clients are not affected: their events wait in the spool %s and are sent, in order, "
            "once Kafka takes them",
            found.message,
            self.spool.directory if hasattr(self, "spool") else "(not open yet)",
        )

    def _overtook(self, record: SpoolRecord, partition: int) -> None:
        self.overtaken += 1
        if self._overtaken_errors.due():
            log.error(
                "Kafka topic %s: event #%d was delivered to partition %d after an earlier event of that "
                "partition failed, so consumers see them out of order (%d so far); the shim's producer defaults "
                "(enable.idempotence with enable.gapless.guarantee) prevent this: do not override them",
                self.topic,
                record.seq,
                partition,
                self.overtaken,
            )

    def _warn_if_pending(self) -> None:
        if self.pending >= self.pending_warning and self._pending_warnings.due():
            log.warning(
                "%d event(s) wait for Kafka topic %s in the spool %s (%.1f MB on disk); they are sent in order "
                "once Kafka (%s) takes them",
                self.pending,
                self.topic,
                self.spool.directory,
                self.spool.size_bytes / 1e6,
                self.bootstrap_servers,
            )

    def _advance(self, in_flight: collections.OrderedDict[int, int]) -> None:
        """Acknowledge the delivered (or rejected) prefix of what is in flight (reports come in any order)."""
        acked = None
        while in_flight:
            seq, state = next(iter(in_flight.items()))
            if state == _PENDING:
                break
            in_flight.popitem(last=False)
            acked = seq
        if acked is not None:
            self.spool.ack(acked)
            with self._delivered_lock:
                self._delivered_lock.notify_all()
        self.spool.checkpoint()

    def close(self, timeout: float | None = 30.0) -> None:
        """Send what is spooled for up to ``timeout`` seconds, then stop; the rest stays in the spool.

        Gives up sooner when nothing was delivered for :attr:`stall_timeout` seconds (Kafka is away: waiting
        longer would only delay a restart; the spool keeps the events).
        """
        self._retry_overflow()
        deadline = time.monotonic() + (timeout or 0)
        last, last_change = self.spool.acked, time.monotonic()
        while not self.wait_delivered(0.2) and time.monotonic() < deadline:
            if self.spool.acked != last:
                last, last_change = self.spool.acked, time.monotonic()
            elif time.monotonic() - last_change > self.stall_timeout:
                break
        self._stop.set()
        self._thread.join(max(timeout or 0, 5.0))
        with self._overflow_lock:
            self._drain_overflow()
            if self._overflow:
                self.lost += len(self._overflow)
                log.error(
                    "%d event(s) for %s are LOST: the spool %s could not be written (see the errors above) "
                    "and the shim is stopping",
                    len(self._overflow),
                    self.topic,
                    self.spool.directory,
                )
                self._overflow.clear()
                self._overflow_bytes = 0
        self.spool.close()
        if self.spool.pending:
            log.warning(
                "%d event(s) for %s stay in the spool %s; they are sent when the shim starts again",
                self.spool.pending,
                self.topic,
                self.spool.directory,
            )

    def __repr__(self) -> str:
        return f"KafkaSink({self.topic!r})"


class _Restart(Exception):
    """The producer hit an error it cannot recover from in place."""


class _Producer:
    """One producer and what its callbacks told: a failed delivery or a fatal error (:attr:`failure`, which
    makes the sender start a new producer), the partitions a delivery failed in, whether the sender purged
    it (:attr:`purging`) or gave up on it (:attr:`open` false: later reports are ignored)."""

    def __init__(
        self,
        factory: Callable[[dict[str, Any]], Any],
        config: dict[str, Any],
        on_refusal: Callable[[Any], None] = lambda _error: None,
    ) -> None:
        self.failure: list[str] = []
        self._on_refusal = on_refusal
        self.failed_partitions: set[int] = set()
        self.purging = False
        self.open = True
        self._user_error_cb = config.get("error_cb")
        self.producer = factory({**config, "error_cb": self._on_error})

    def _on_error(self, error: Any) -> None:
        if callable(self._user_error_cb):
            with contextlib.suppress(Exception):
                self._user_error_cb(error)
        with contextlib.suppress(Exception):
            self._on_refusal(error)
        fatal = getattr(error, "fatal", None)
        if callable(fatal) and fatal():
            self.failure.append(f"fatal error: {error}")
        else:
            log.debug("Kafka producer: %s", error)

    def close(self) -> None:
        self.open = False
        with contextlib.suppress(Exception):
            self.producer.flush(0)
