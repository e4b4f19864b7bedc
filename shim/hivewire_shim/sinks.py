"""Where the shim's events go: Kafka in the Apiary format (through a durable spool), or an in-process App.

A sink's :meth:`~Sink.publish` is called on the client's connection thread, under the lock of the table
the event is about, so it must be quick and must not raise: the Kafka sink only appends to its spool,
the App sink only enqueues. The slow parts (the producer, the listeners) run on the sink's own thread.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from hivewire import apiary
from hivewire.events import AlterTableEvent, ListenerEvent
from hivewire_shim.spool import FsyncPolicy, Record, Spool

__all__ = ["AppSink", "Dispatcher", "KafkaSink", "Sink", "fan_out", "partition_key"]

log = logging.getLogger(__name__)


class Sink(Protocol):
    def publish(self, event: ListenerEvent) -> None:
        """Take an event (quickly, without raising)."""
        ...

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is pending (up to ``timeout`` seconds) and stop."""
        ...


class Dispatcher(Protocol):
    """What the App sink needs of a ``hivewire.app.App``."""

    def dispatch(self, event: ListenerEvent) -> Any: ...


def fan_out(sinks: Sequence[Sink]) -> Callable[[ListenerEvent], None]:
    """One publish function over several sinks; a sink that raises is logged, never propagated."""
    def publish(event: ListenerEvent) -> None:
        for sink in sinks:
            try:
                sink.publish(event)
            except Exception:
                log.exception("sink %s failed to take %r; the event is lost for that sink", sink, event)
    return publish


def partition_key(event: ListenerEvent, *, alter_by_old_name: bool = False) -> str:
    """The ``db.table`` the Apiary producer hashes to pick the partition (``db`` for database events).

    For a table rename, Apiary 8.1.15 hashed the old name and apiary-extensions#145 went back to the new
    one; the new name is the default here, ``alter_by_old_name`` picks the old.
    """
    if alter_by_old_name and isinstance(event, AlterTableEvent) and event.old_table is not None:
        old = event.old_table
        return f"{old.dbName}.{old.tableName}"
    return event.qualified_name


class AppSink:
    """Delivers events to ``app.dispatch`` on a background thread, in the order they were published.

    Each event is encoded to Apiary JSON and decoded again before dispatch, so listeners get exactly what
    they would get from Kafka (the same field set for the Hive version, ``raw`` set). A listener error
    (``hivewire.ListenerError`` from ``dispatch``) is logged; it never reaches the metastore client.
    """

    def __init__(self, app: Dispatcher, *, name: str = "app") -> None:
        self.app = app
        self.name = name
        self._queue: queue.Queue[ListenerEvent | None] = queue.Queue()
        self._idle = threading.Condition()
        self._outstanding = 0
        self.dispatched = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._run, name=f"hivewire-shim-sink-{name}", daemon=True)
        self._thread.start()

    def publish(self, event: ListenerEvent) -> None:
        with self._idle:
            self._outstanding += 1
        self._queue.put(event)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            try:
                self.app.dispatch(apiary.decode(apiary.encode(event)))
                self.dispatched += 1
            except Exception as e:  # ListenerError after every listener ran, or anything else: log only
                self.failed += 1
                log.error("sink %s: dispatching %r failed: %s", self.name, event, e,
                          exc_info=type(e).__name__ != "ListenerError")
            finally:
                with self._idle:
                    self._outstanding -= 1
                    self._idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every published event was dispatched; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._outstanding == 0, timeout)

    def close(self, timeout: float | None = None) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def __repr__(self) -> str:
        return f"AppSink({self.name!r})"


#: Producer settings the sink insists on unless overridden: Apiary's acks=all, and what keeps order and
#: avoids loss while Kafka is away (idempotence, no message timeout: librdkafka retries until it works).
PRODUCER_DEFAULTS: Mapping[str, Any] = {
    "acks": "all",
    "enable.idempotence": True,
    "message.timeout.ms": 0,
    "compression.type": "lz4",
    "linger.ms": 5,
    "socket.keepalive.enable": True,
}


class KafkaSink:
    """Apiary JSON to a Kafka ``topic``, partitioned like Apiary's producer, through a :class:`Spool`.

    :meth:`publish` encodes the event and appends it to the spool in ``spool_dir``; a sender thread reads
    the spool in order, produces each record to ``partition_for(key, partition count)`` with no key, and
    acknowledges it in the spool on its delivery report. While Kafka is unreachable the spool grows and
    the sender keeps trying; on start, whatever the spool holds past its acknowledged marker is sent
    first. ``producer_config`` adds to or overrides :data:`PRODUCER_DEFAULTS` (librdkafka keys).
    """

    def __init__(self, bootstrap_servers: str, topic: str, spool_dir: str | os.PathLike[str], *,
                 producer_config: Mapping[str, Any] | None = None, alter_by_old_name: bool = False,
                 fsync: FsyncPolicy = "interval", max_in_flight: int = 10_000,
                 metadata_timeout: float = 5.0) -> None:
        from confluent_kafka import Producer  # imported here: only the Kafka sink needs librdkafka

        self.topic = topic
        self.alter_by_old_name = alter_by_old_name
        self.max_in_flight = max_in_flight
        self.metadata_timeout = metadata_timeout
        self.spool = Spool(spool_dir, fsync=fsync)
        self._config: dict[str, Any] = {**PRODUCER_DEFAULTS, **dict(producer_config or {}),
                                        "bootstrap.servers": bootstrap_servers}
        self._config.setdefault("logger", logging.getLogger("hivewire_shim.kafka"))
        self._producer_class = Producer
        self._stop = threading.Event()
        #: close() stops waiting for delivery after this long without progress.
        self.stall_timeout = 3.0
        self.partitions: int | None = None
        self.delivered = 0
        self.dropped = 0
        self._delivered_lock = threading.Condition()
        if self.spool.pending:
            log.info("spool %s holds %d undelivered event(s); sending them first", self.spool.directory,
                     self.spool.pending)
        self._thread = threading.Thread(target=self._run, name=f"hivewire-shim-kafka-{topic}", daemon=True)
        self._thread.start()

    # -- publishing (client threads) ----------------------------------------------------------------------
    def publish(self, event: ListenerEvent) -> None:
        try:
            payload = apiary.encode(event)
        except Exception:
            log.exception("could not encode %r as Apiary JSON; not published", event)
            return
        self.spool.append(partition_key(event, alter_by_old_name=self.alter_by_old_name), payload)

    @property
    def pending(self) -> int:
        """Events spooled and not yet acknowledged by Kafka."""
        return self.spool.pending

    def wait_delivered(self, timeout: float | None = None) -> bool:
        """Block until everything spooled so far was delivered; False on timeout."""
        target = self.spool.last_seq
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._delivered_lock:
            while self.spool.acked < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._delivered_lock.wait(0.1 if remaining is None else min(remaining, 0.1))
        return True

    # -- sending (the sink's thread) ------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            producer = self._producer_class(self._config)
            try:
                self._send(producer)
                return
            except _Restart as e:
                log.warning("Kafka producer for %s failed (%s); starting a new one and resending from the last "
                            "acknowledged event", self.topic, e)
            except Exception:
                log.exception("Kafka sender for %s failed; restarting it", self.topic)
                self._stop.wait(1.0)
            finally:
                producer.flush(0)

    def _learn_partitions(self, producer: Any) -> bool:
        try:
            metadata = producer.list_topics(self.topic, timeout=self.metadata_timeout)
            topic = metadata.topics.get(self.topic)
            if topic is not None and topic.error is None and topic.partitions:
                self.partitions = len(topic.partitions)
                log.info("Kafka topic %s has %d partition(s)", self.topic, self.partitions)
                return True
            reason = topic.error if topic is not None else "not in the metadata"
        except Exception as e:  # KafkaException while the cluster is unreachable
            reason = str(e)
        log.debug("Kafka topic %s: no metadata yet (%s); retrying", self.topic, reason)
        return False

    def _send(self, producer: Any) -> None:
        cursor = self.spool.cursor()
        in_flight: collections.OrderedDict[int, bool] = collections.OrderedDict()  # seq -> delivered
        failure: list[str] = []
        held: list[Record] = []

        def on_delivery(seq: int) -> Any:
            def report(err: Any, _msg: Any) -> None:
                if err is None:
                    in_flight[seq] = True
                elif err.fatal() or err.retriable():
                    failure.append(str(err))
                else:  # the broker refuses this record for good (too large, ...): say so, move on
                    log.error("Kafka refused event #%d for %s: %s; it is dropped", seq, self.topic, err)
                    self.dropped += 1
                    in_flight[seq] = True
            return report

        try:
            while True:
                if self._stop.is_set():
                    # close() already waited for delivery; what is still in flight stays in the spool.
                    producer.poll(0)
                    with contextlib.suppress(Exception):
                        producer.purge()
                    return
                if self.partitions is None and not self._learn_partitions(producer):
                    self._stop.wait(0.5)
                    continue
                if failure:
                    raise _Restart(failure[0])
                # Produce what fits in the window, in spool order.
                room = self.max_in_flight - len(in_flight)
                batch = held + (cursor.read(room - len(held)) if room > len(held) else [])
                held = []
                for i, record in enumerate(batch):
                    assert self.partitions is not None
                    try:
                        producer.produce(self.topic, record.payload, partition=apiary.partition_for(
                            record.key, self.partitions), timestamp=record.timestamp_ms,
                            on_delivery=on_delivery(record.seq))
                    except BufferError:  # librdkafka's queue is full: wait for room, keep order
                        held = batch[i:]
                        break
                    in_flight[record.seq] = False
                producer.poll(0.05 if in_flight else 0)
                self._advance(in_flight)
                if not in_flight and not held:
                    self.spool.wait(cursor.position, 0.2)
        finally:
            self._advance(in_flight)
            self.spool.checkpoint(force=True)
            cursor.close()

    def _advance(self, in_flight: collections.OrderedDict[int, bool]) -> None:
        """Acknowledge the delivered prefix of what is in flight (reports may come out of order)."""
        acked = None
        while in_flight:
            seq, done = next(iter(in_flight.items()))
            if not done:
                break
            in_flight.popitem(last=False)
            acked = seq
            self.delivered += 1
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
        deadline = time.monotonic() + (timeout or 0)
        last, last_change = self.spool.acked, time.monotonic()
        while not self.wait_delivered(0.2) and time.monotonic() < deadline:
            if self.spool.acked != last:
                last, last_change = self.spool.acked, time.monotonic()
            elif time.monotonic() - last_change > self.stall_timeout:
                break
        self._stop.set()
        self._thread.join(max(timeout or 0, 5.0))
        self.spool.close()
        if self.spool.pending:
            log.warning("%d event(s) for %s stay in the spool %s; they are sent when the shim starts again",
                        self.spool.pending, self.topic, self.spool.directory)

    def __repr__(self) -> str:
        return f"KafkaSink({self.topic!r})"


class _Restart(Exception):
    """The producer hit an error it cannot recover from in place."""
