"""The Kafka sink's producer: the settings it insists on (:data:`PRODUCER_DEFAULTS`), what Kafka refuses
for good, and one librdkafka producer with what its callbacks told (:class:`_Producer`).

Invariants: unless the user turns idempotence off, a producer keeps each partition's records in order and
acknowledges none past one that failed (the gapless guarantee): a failure makes the sender start a new
producer and resend. A refusal (credentials, certificates) is said once, not on every retry. A producer
reports each statistics interval whether a broker is up, sending or not.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from hivewire.runtime._kafka_log import LibrdkafkaLog, broker_states

__all__ = ["PRODUCER_DEFAULTS"]

# The Kafka sink's logger, one name as before this module was split from it.
log = logging.getLogger("hivewire_shim.kafka_sink")

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
#: librdkafka's metadata refresh interval (``topic.metadata.refresh.interval.ms``) when not configured;
#: the sink re-reads the topic's partition count as often.
_METADATA_REFRESH_MS = 300_000
#: librdkafka's statistics interval for the sink's producer (unless configured): a broker coming back is seen
#: in the next report, and an idle sink says Kafka is reachable again without waiting for an event.
STATISTICS_INTERVAL_MS = 5_000


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
    # librdkafka logs a refusal (credentials, certificates) and a failed connection on every retry: at DEBUG;
    # the sink says a refusal once, and an outage once a minute (its reachability)
    config.setdefault("logger", LibrdkafkaLog(logging.getLogger("hivewire_shim.kafka")))
    return config


def _quiet_gapless_notice(record: logging.LogRecord) -> bool:
    # librdkafka flags enable.gapless.guarantee as experimental on every producer start; we set it on purpose.
    return "enable.gapless.guarantee is experimental" not in record.getMessage()


logging.getLogger("hivewire_shim.kafka").addFilter(_quiet_gapless_notice)


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
        on_error: Callable[[Any], None] = lambda _error: None,
        on_broker_up: Callable[[], None] = lambda: None,
    ) -> None:
        self.failure: list[str] = []
        self._on_refusal = on_refusal
        self._on_other = on_error
        self._on_broker_up = on_broker_up
        #: The partitions where a delivery failed, and how ("failed", or acknowledged without being written).
        self.failed_partitions: dict[int, str] = {}
        self.purging = False
        self.open = True
        self._user_error_cb = config.get("error_cb")
        statistics: dict[str, Any] = {}
        if "stats_cb" not in config and "statistics.interval.ms" not in config:
            # librdkafka's only news of a broker coming back while nothing is sent (an idle shim after an outage)
            statistics = {"statistics.interval.ms": STATISTICS_INTERVAL_MS, "stats_cb": self._on_statistics}
        self.producer = factory({**config, **statistics, "error_cb": self._on_error})

    def _on_statistics(self, text: str) -> None:
        if "UP" in broker_states(text):
            self._on_broker_up()

    def _on_error(self, error: Any) -> None:
        if callable(self._user_error_cb):
            with contextlib.suppress(Exception):
                self._user_error_cb(error)
        with contextlib.suppress(Exception):
            self._on_refusal(error)
        with contextlib.suppress(Exception):
            self._on_other(error)
        fatal = getattr(error, "fatal", None)
        if callable(fatal) and fatal():
            self.failure.append(f"fatal error: {error}")
        else:
            log.debug("Kafka producer: %s", error)

    def close(self) -> None:
        self.open = False
        with contextlib.suppress(Exception):
            self.producer.flush(0)
