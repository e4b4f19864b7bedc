"""librdkafka's log lines, as hivewire's clients pass them to Python logging (:class:`LibrdkafkaLog`).

Also :func:`broker_states`, the brokers' connection states in one of librdkafka's statistics reports, which
hivewire's consumer and the shim's producer read to say a broker answers again.

Invariant: lines about a connection failure, about what librdkafka retries while a broker takes over, and about
a refusal are logged at DEBUG only: something else speaks for each of them once (a
:class:`~hivewire._reachability.Reachability` for outages, the client's error callback for refusals), where
librdkafka would log every retry, hundreds of lines a minute against a dead broker. Every other line keeps its
level.
"""

from __future__ import annotations

import json
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


def broker_states(statistics: str) -> list[str]:
    """The connection state of each broker (``"UP"``, ``"DOWN"``, ``"CONNECT"``, ...) in one librdkafka statistics
    report (its ``stats_cb`` JSON); none for a report that is not the JSON object librdkafka writes."""
    try:
        report = json.loads(statistics)
    except ValueError:
        return []
    brokers = report.get("brokers") if isinstance(report, dict) else None
    if not isinstance(brokers, dict):
        return []
    return [str(b.get("state")) for b in brokers.values() if isinstance(b, dict)]
