"""librdkafka log lines that are news only while debugging: :func:`quiet_transient` lowers them to DEBUG.

Invariant: only lines about a step librdkafka retries on its own and that a healthy start goes through are
lowered (the idempotent producer's ``GETPID ... Coordinator load in progress: retrying`` while a new broker
loads its transaction state); every other line keeps its level. The line is kept, at DEBUG, not dropped.
"""

from __future__ import annotations

import logging
import re

__all__ = ["quiet_transient"]

# "Failed to acquire idempotence PID from broker ...: Broker: Coordinator load in progress: retrying" (and the
# coordinator not being available yet, which a starting broker also answers for a moment).
_TRANSIENT = re.compile(r"(Coordinator load in progress|Coordinator not available|Not coordinator)\b.*retrying")


class _LowerTransient(logging.Filter):
    """Lowers a transient line to DEBUG, and drops it unless ``logger`` is enabled for DEBUG (a handler at the
    default level passes whatever level a record carries, so lowering alone would still print it)."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__()
        self.logger = logger

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.DEBUG and _TRANSIENT.search(record.getMessage()):
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
            return self.logger.isEnabledFor(logging.DEBUG)
        return True


def quiet_transient(logger: logging.Logger) -> logging.Logger:
    """Make ``logger`` (one that librdkafka's lines go to) pass transient retries at DEBUG; returns it."""
    if not any(isinstance(f, _LowerTransient) for f in logger.filters):
        logger.addFilter(_LowerTransient(logger))
    return logger
