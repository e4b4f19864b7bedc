"""A :class:`~hivewire.runtime._kafka.KafkaSource`'s dead letters: the producer that sends them
(:class:`DeadLetterProducer`), one :class:`Letter` each, and the key they go under (:func:`letter_key`).

Invariants: a dead letter counts as done only when the broker acknowledged it with its offset; one that fails
(or is acknowledged without one) is sent again until it succeeds (its batch, and so the commit, waits meanwhile:
nothing is lost); sending one never blocks the caller. The producer is created once (under a lock: the polling
thread and listener workers dead-letter concurrently) and served by one thread, ``hivewire-dlq``, which also
sends again, from one queue, whatever failed or found librdkafka's queue full. A letter larger than
``message.max.bytes``, or refused by the broker as too large, is sent again smaller: the start of the original,
else only its reference (its ``hivewire.source.*`` headers), as the ``hivewire.original.*`` headers say. A
refusal of the producer itself (credentials, an ACL) is the source's to report (:class:`LetterOwner`): the
letter is then left unsent, and its record uncommitted.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from hivewire._ratelimit import RateLimit
from hivewire.runtime._kafka_acks import written
from hivewire.runtime._kafka_refusal import Refusal
from hivewire.runtime._source import Delivered, Record

if TYPE_CHECKING:
    from hivewire.runtime._metrics import Metrics

log = logging.getLogger("hivewire.kafka")

DEFAULT_MAX_MESSAGE = 1_000_000
# Bytes a record costs on top of its value, key and headers (batch and record framing), when sizing letters.
_RECORD_OVERHEAD = 512
_TOO_LARGE = {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE}


class LetterOwner(Protocol):
    """What the producer asks of its source: whether Kafka refused the client, and to judge an error."""

    @property
    def refused(self) -> Refusal | None: ...

    def refuse_write(self, err: KafkaError) -> bool:
        """Keep ``err`` if it is a refusal to write to the dead-letter topic; whether it is one."""


class Letter:
    """One dead letter, kept until the broker acknowledges it (it may be sent several times, smaller each time
    the broker refuses it as too large)."""

    __slots__ = ("headers", "key", "on_delivered", "sender", "stored", "value")

    def __init__(
        self,
        sender: DeadLetterProducer,
        value: bytes | None,
        key: bytes | None,
        headers: list[tuple[str, bytes]],
        on_delivered: Delivered,
    ) -> None:
        self.sender = sender
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

    def delivered(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            self.sender.delivery_failed(self, err)
        elif not written(msg):
            self.sender.acknowledged_without_offset(self)
        else:
            self.on_delivered()


class DeadLetterProducer:
    """Sends dead letters to ``topic`` with a producer configured by ``configure()`` (on first use)."""

    def __init__(
        self, topic: str, configure: Callable[[], dict[str, Any]], max_message: int, owner: LetterOwner
    ) -> None:
        self.topic = topic
        self.max_message = max_message
        self.metrics: Metrics | None = None  # failures are counted here once the runtime attaches its metrics
        self._configure = configure
        self._owner = owner
        self._producer: Producer | None = None
        self._producer_lock = threading.Lock()
        self._producer_thread: threading.Thread | None = None
        # Dead letters to send again (librdkafka failed them, or its queue was full): (due, seq, letter),
        # served by the dead-letter thread. One queue, however many fail: no thread or timer per letter.
        self.resend: list[tuple[float, int, Letter]] = []
        self._resend_lock = threading.Lock()
        self._resend_seq = 0
        # Letters the broker refused as too large since the dead-letter thread last looked: one wave, as the
        # broker refuses a whole batch (shrink_too_large decides which of them to shrink).
        self._too_large: list[Letter] = []
        self._failure_log = RateLimit(10.0)
        self._closing = threading.Event()

    def ensure_producer(self) -> Producer:
        """The producer, made (and its thread started) on first use."""
        # The polling thread (undecodable records) and listener workers dead-letter concurrently: exactly one
        # producer, served by exactly one thread, or a second one would never be polled nor flushed.
        producer = self._producer
        if producer is not None:
            return producer
        with self._producer_lock:
            if self._producer is None:
                self._producer = Producer(self._configure())
                self._producer_thread = threading.Thread(
                    target=self._serve_producer, args=(self._producer,), name="hivewire-dlq", daemon=True
                )
                self._producer_thread.start()
            return self._producer

    def _serve_producer(self, producer: Producer) -> None:
        """The dead-letter thread: serves delivery reports and (re)sends what waits in the resend queue."""
        while not self._closing.is_set():
            with self._resend_lock:
                wait = self.resend[0][0] - time.monotonic() if self.resend else 0.2
            try:
                producer.poll(min(0.2, max(0.0, wait)))
            except KafkaException as e:  # a fatal producer error: a refusal (an ACL) stops the app, see poll()
                error = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                if error is None or not self._owner.refuse_write(error):
                    raise
                return
            self.shrink_too_large()
            self._resend_due(producer)

    def shrink_too_large(self) -> None:
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
                self.topic,
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
                if not self.resend or self.resend[0][0] > now:
                    return
                _due, _seq, letter = heapq.heappop(self.resend)
            if not self._produce(producer, letter):
                return  # the local queue is full again: the rest waits for deliveries to make room

    def _produce(self, producer: Producer, letter: Letter) -> bool:
        """Hand ``letter`` to librdkafka; if its queue is full, queue it for the dead-letter thread instead.

        Never raises: a letter too large is shrunk first (and again if librdkafka still refuses it), any
        other refusal is sent again later; the record's commits wait meanwhile, the process goes on."""
        if letter.stored == "whole" and letter.size() > self.max_message:
            letter.fit(self.max_message)
        while True:
            try:
                producer.produce(
                    self.topic,
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
                # A refusal librdkafka already knows (the topic's metadata said: not authorised) is raised here,
                # at once, rather than reported to a delivery callback: it stops the app the same way.
                if self._owner.refused is not None or (error is not None and self._owner.refuse_write(error)):
                    return True  # Kafka refused the producer: poll() stops the app, the record stays uncommitted
                if error is not None and error.code() in _TOO_LARGE and letter.fit(self._limit_below(letter)):
                    continue
                self._count_failure(error, str(e))
                self._queue_resend(letter, 5.0)
                return True  # queued: the caller's other letters may go on

    def _limit_below(self, letter: Letter) -> int:
        """The size to shrink ``letter`` to after a refusal as too large: the limit, or half what was refused."""
        return min(self.max_message, letter.size() // 2)

    def _queue_resend(self, letter: Letter, delay: float) -> None:
        with self._resend_lock:
            self._resend_seq += 1
            heapq.heappush(self.resend, (time.monotonic() + delay, self._resend_seq, letter))

    def delivery_failed(self, letter: Letter, err: KafkaError) -> None:
        """librdkafka gave up on a dead letter (on the thread serving the producer): send it again later
        (smaller at once, if the broker refused it as too large)."""
        if self._closing.is_set():
            if self.metrics is not None:
                self.metrics.dead_letter_failures.inc()
            return
        if self._owner.refuse_write(err):
            return  # poll() stops the app; the record is not committed, so it is read again after the fix
        if err.code() in _TOO_LARGE:
            with self._resend_lock:
                self._too_large.append(letter)  # decided with the rest of its batch, after this poll
            return
        self._count_failure(err, str(err))
        # Keep trying: the record's batch (and its commit) waits for this acknowledgement.
        self._queue_resend(letter, 1.0)

    def acknowledged_without_offset(self, letter: Letter) -> None:
        """librdkafka reported ``letter`` delivered without an offset (:mod:`hivewire.runtime._kafka_acks`):
        send it again, a duplicate letter at worst, never a lost one."""
        self._count_failure(None, "a dead letter was acknowledged without an offset")
        self._queue_resend(letter, 0.0)

    def _count_failure(self, err: KafkaError | None, text: str) -> None:
        if self.metrics is not None:
            self.metrics.dead_letter_failures.inc()
        count = self._failure_log.due()
        if count:
            log.error(
                "%d dead letter(s) to %s failed (last: %s); sending again until they are acknowledged "
                "(their records are not committed meanwhile)",
                count,
                self.topic,
                err.str() if err is not None else text,
            )

    def send(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        """Publish ``record`` to the dead-letter topic; never blocks: a full local queue defers the send."""
        producer = self.ensure_producer()
        letter = Letter(
            self,
            record.value(),
            letter_key(record, headers),
            [(k, v.encode()) for k, v in headers.items()],
            on_delivered,
        )
        self._produce(producer, letter)

    def drain(self, timeout: float) -> None:
        """Wait for dead letters in flight (or waiting to be sent again) to be acknowledged."""
        producer = self._producer
        if producer is None:
            return
        deadline = time.monotonic() if self._owner.refused is not None else time.monotonic() + timeout
        while True:
            with self._resend_lock:
                waiting = len(self.resend)
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
        """Stop the dead-letter thread (letters not acknowledged by now stay uncommitted)."""
        self._closing.set()
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
