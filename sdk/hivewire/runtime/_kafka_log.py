"""librdkafka's log lines, as hivewire's clients pass them to Python logging (:class:`LibrdkafkaLog`).

Invariant: lines about a connection failure, about what librdkafka retries while a broker takes over, and about
a refusal are logged at DEBUG only: something else speaks for each of them once (a
:class:`~hivewire._reachability.Reachability` for outages, the client's error callback for refusals), where
librdkafka would log every retry, hundreds of lines a minute against a dead broker. Every other line keeps its
level.
"""

from __future__ import annotations

import logging

from hivewire.runtime._kafka_refusal import RefusalLog

# librdkafka log facilities of connection failures: its errors reach Reachability, the lines go to DEBUG.
_CONNECTION_FACILITIES = {"FAIL", "ERROR", "REQTMOUT", "BROKERFAIL", "CONNECT", "DISCONNECT", "SSL"}
# ... and of what librdkafka retries while a broker takes over (an idempotent producer's id while the
# coordinator loads after a broker died): a failure for good reaches the error callback.
_RETRIED_FACILITIES = {"GETPID"}


class LibrdkafkaLog:
    """librdkafka's ``logger``: its lines to ``logger``, connection failures and refusals at DEBUG."""

    def __init__(self, logger: logging.Logger) -> None:
        self._out = RefusalLog(logger)

    def log(self, level: int, fmt: str, *args: object) -> None:
        facility = args[0] if args else ""
        quiet = facility in _CONNECTION_FACILITIES or facility in _RETRIED_FACILITIES
        self._out.log(logging.DEBUG if quiet else level, fmt, *args)
