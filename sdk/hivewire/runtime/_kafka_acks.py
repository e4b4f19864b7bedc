"""What a librdkafka delivery report proves: a record is written only when the broker gave it an offset.

librdkafka's idempotent producer reports a record delivered, with no offset, when the broker answers that its
sequence number is a duplicate. It gives that same report, wrongly, after it restarted a partition's sequence
once the topic's metadata changed (librdkafka issue 3712): the record was acknowledged and never written.
Seen here with the dead-letter producer, about one round in thirty on a topic the broker created on first use.

Invariant: every producer of hivewire (dead letters, the shim's sink, the notification-log bridge) treats a
report without an error as delivered only when :func:`written` holds; otherwise the record is sent again, so
the exposure is a duplicate at worst, never a loss.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["UNWRITTEN", "written"]

#: The reason given for a record acknowledged without an offset, in logs and errors.
UNWRITTEN = "acknowledged without an offset (librdkafka issue 3712: a duplicate sequence, or a lost record)"


class _Report(Protocol):
    def offset(self) -> int | None: ...


def written(message: _Report) -> bool:
    """Whether a delivery report without an error carries the offset the broker wrote the record at."""
    offset = message.offset()
    return offset is not None and offset >= 0
