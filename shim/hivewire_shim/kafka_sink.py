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
from typing import TYPE_CHECKING, Any

from hivewire._ratelimit import RateLimit
from hivewire._reachability import Reachability
from hivewire.config._kafka import KafkaValue
from hivewire.errors import ConfigError
from hivewire.events import _apiary as apiary
from hivewire.events._model import ListenerEvent
from hivewire.runtime._kafka_acks import UNWRITTEN, written
from hivewire.runtime._kafka_refusal import refusal
from hivewire_shim.sinks import partition_key
from hivewire_shim.spool import FsyncPolicy, Spool, SpoolRecord
from hivewire_shim.topic_partitions import TopicPartitions

if TYPE_CHECKING:
    from confluent_kafka import Producer
from hivewire_shim.producer import (
    _METADATA_REFRESH_MS,
    PRODUCER_DEFAULTS,
    _Producer,
    _producer_config,
    _refused_for_good,
    _Restart,
)
from hivewire_shim.rejected import REJECTED_FILE, _append_line, replay_rejected

__all__ = ["PRODUCER_DEFAULTS", "REJECTED_FILE", "KafkaSink", "replay_rejected"]

log = logging.getLogger(__name__)

# How an earlier event of a partition went wrong, when a later one overtook it (:meth:`KafkaSink._overtook`).
_FAILED = "failed"
_UNWRITTEN = "was acknowledged without being written (librdkafka issue 3712)"
_PREVENTION = (
    "; the shim's producer defaults (enable.idempotence with enable.gapless.guarantee) prevent this: do not "
    "override them"
)

#: The record key Apiary's listener writes: the event time in ms, as Kafka's LongSerializer (big-endian).
_APIARY_KEY = struct.Struct(">q")
_PENDING, _DELIVERED, _REJECTED, _DONE_BEFORE = 0, 1, 2, 3


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
        self.max_overflow_bytes = max_overflow_bytes
        #: A WARNING every minute while at least this many events wait for Kafka.
        self.pending_warning = pending_warning
        self._config = _producer_config(producer_config or {}, bootstrap_servers)
        if metadata_refresh is None:
            refresh_ms = float(self._config.get("topic.metadata.refresh.interval.ms", _METADATA_REFRESH_MS))
            metadata_refresh = refresh_ms / 1000 if refresh_ms > 0 else float("inf")
        self._producer_factory: Callable[[dict[str, Any]], Any] = producer_factory or Producer
        #: Whether the brokers answer: one line when none does (librdkafka's ``_ALL_BROKERS_DOWN``; one broker
        #: failing is not an outage), a reminder at most once a minute, one line at the next delivery or the
        #: next statistics report with a broker up, whichever comes first.
        self.reachability = Reachability(
            f"Kafka at {bootstrap_servers}",
            "check apiary.bootstrap.servers (--bootstrap-servers), the network, and that the brokers run; "
            "the shim's clients are not affected: their events wait in the spool",
            log,
        )
        self._last_error = ""  # the last broker's connection error, said with the outage
        try:  # a bad setting is an error now, not a sender thread that dies later
            first = self._new_producer()
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
        self._partitions = TopicPartitions(
            topic,
            bootstrap_servers,
            timeout=metadata_timeout,
            refresh=metadata_refresh,
            on_refusal=self._refusal,
            said=lambda: self.refused is not None or self.reachability.out,
            pending=lambda: self.pending,
        )
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
                    session = self._new_producer()
                    break
                except Exception:
                    log.exception("could not create a Kafka producer for %s; retrying", self.topic)

    @property
    def partitions(self) -> int | None:
        """The topic's partition count the events are spread over (None: not read yet)."""
        return self._partitions.count

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
            def report(err: Any, msg: Any) -> None:
                if not session.open:
                    return  # a producer given up on: its record is sent again (a duplicate at worst)
                if err is None and not written(msg):  # kept in the spool: the restart sends it again
                    session.failed_partitions.setdefault(partition, _UNWRITTEN)
                    session.failure.append(f"event #{record.seq}: {UNWRITTEN}")
                elif err is None:
                    self.reachability.up()
                    if self.refused is not None:
                        self.refused = None
                        log.warning("Kafka takes the shim's events for %s again", self.topic)
                    if partition in session.failed_partitions:
                        self._overtook(record, partition, session.failed_partitions[partition])
                    in_flight[record.seq] = _DELIVERED
                    self.delivered += 1
                    self.spool.mark_done(record.seq)
                elif err.code() in self._refused_codes:
                    refused.append((record, str(err)))
                elif err.code() in purged and session.purging:
                    pass  # we purged it (restarting, or stopping): it is still in the spool
                else:  # including a purge we did not ask for: librdkafka's after a fatal error
                    self._refusal(err)
                    session.failed_partitions.setdefault(partition, _FAILED)
                    session.failure.append(f"event #{record.seq}: {err}")

            return report

        try:
            while True:
                self._retry_overflow()
                self._warn_if_pending()
                if self._stop.is_set():
                    # close() already waited for delivery; what is still in flight stays in the spool.
                    return
                if not self._partitions.learn(producer):
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
                switching = self._partitions.switch(len(in_flight))
                batch = [] if switching else held + (cursor.read(room - len(held)) if room > len(held) else [])
                if not switching:
                    held = []
                for i, record in enumerate(batch):
                    if self.spool.is_done(record.seq):  # delivered (or set aside) before the producer restarted
                        in_flight[record.seq] = _DONE_BEFORE
                        self.skipped += 1
                        continue
                    assert self._partitions.count is not None
                    partition = apiary.partition_for(record.key, self._partitions.count)
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

    def _new_producer(self) -> _Producer:
        return _Producer(self._producer_factory, self._config, self._refusal, self._error, self._broker_up)

    def _broker_up(self) -> None:
        """A statistics report with a broker up: Kafka is reachable again, unless it refuses the shim (said
        once, and cleared by the next delivery)."""
        if self.refused is None:
            self.reachability.up()

    def _error(self, err: Any) -> None:
        """librdkafka's errors other than refusals: every broker down is an outage (said by
        :attr:`reachability`); the rest is at DEBUG (the producer retries on its own)."""
        from confluent_kafka import KafkaError

        if err.code() == KafkaError._ALL_BROKERS_DOWN:
            if self.refused is None:
                self.reachability.down(f"{err.str()}; last: {self._last_error}" if self._last_error else err.str())
        elif err.code() in (KafkaError._TRANSPORT, KafkaError._RESOLVE, KafkaError._TIMED_OUT):
            self._last_error = err.str()

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

    def _overtook(self, record: SpoolRecord, partition: int, why: str) -> None:
        self.overtaken += 1
        if self._overtaken_errors.due():
            log.error(
                "Kafka topic %s: event #%d was delivered to partition %d after an earlier event of that "
                "partition %s, so consumers see them out of order (%d so far)%s",
                self.topic,
                record.seq,
                partition,
                why,
                self.overtaken,
                _PREVENTION if why == _FAILED else "; the earlier event was sent again",
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
