"""Metastore events as a ``pyarrow.Table``: :func:`to_arrow` and its one stable :data:`SCHEMA`.

Every event type maps onto the same columns (:mod:`hivewire.data._schema` declares them; ``docs/data.md``
lists them), so a table can hold any mix of events and a Delta archive never needs a schema change. Columns
that do not apply to an event's type are null; an empty list means "applies, and is empty".

:func:`to_arrow` takes decoded events, raw Kafka messages (:class:`Message`, or plain ``bytes``) and
:class:`Undecodable` messages, in any mix. Raw messages go through the columnar decoder
(:mod:`hivewire.data._decoder`: native, or :mod:`hivewire.data._columnar` where the native part is absent, as
:data:`ACCELERATED` tells): no event and no Thrift object is made for them, and the table is the one the events
of the same messages would give. The columns are built ``batch_size`` rows at a time.

``pyarrow`` is an optional dependency (``pip install 'hivewire[arrow]'``); importing this module without it
raises :class:`~hivewire.errors.PrerequisiteError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Literal

from hivewire.data._columnar import BATCH_ROWS, batch, message_row
from hivewire.data._decoder import ACCELERATED, decode
from hivewire.data._rows import Message, Undecodable, event_row, paused_gc, undecodable_row
from hivewire.data._schema import COLUMNS, SCHEMA, schema_markdown
from hivewire.errors import PrerequisiteError
from hivewire.events._event import ListenerEvent, Origin

try:
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - depends on the environment
    raise PrerequisiteError(
        "hivewire.arrow needs pyarrow, which is not installed: pip install 'hivewire[arrow]'"
    ) from e

__all__ = [
    "ACCELERATED",
    "COLUMNS",
    "SCHEMA",
    "Message",
    "Undecodable",
    "batch",
    "paused_gc",
    "schema_markdown",
    "to_arrow",
]

#: What :func:`to_arrow` converts: events, raw messages (with or without where they came from), and messages
#: already known not to decode.
Convertible = ListenerEvent | Message | Undecodable | bytes


def to_arrow(
    events: Iterable[Convertible],
    *,
    on_error: Literal["raise", "record"] = "raise",
    batch_size: int = BATCH_ROWS,
) -> pa.Table:
    """A ``pyarrow.Table`` with :data:`SCHEMA`, one row per item, in order.

    Items are events, raw Apiary messages (a :class:`Message` with its Kafka origin, or the value's ``bytes``),
    or :class:`Undecodable` messages (their rows hold the Kafka columns, ``raw`` and ``decode_error``, and
    null everything else). Raw messages are decoded in batches straight into columns; the table is the same
    as that of their events. A message that does not decode, or an object that does not convert (events
    convert their objects here: the decoder is lazy), raises :class:`~hivewire.errors.DecodeError`; with
    ``on_error="record"`` the row keeps what did decode (the Kafka columns and ``raw``, and the envelope's
    type, names, status and parameters when only an object failed) and the reason in ``decode_error``.
    Rows are built ``batch_size`` at a time, which bounds the memory of the intermediate Python values; the
    result has one chunk per batch.
    """
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', not {on_error!r}")
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    batches = []
    items = iter(events)
    with paused_gc():
        while chunk := list(islice(items, batch_size)):
            batches.append(_batch(chunk, on_error))
    return pa.Table.from_batches(batches, schema=SCHEMA)


_CONVERTIBLE = (ListenerEvent, Message, Undecodable, bytes)


def _batch(items: list[Convertible], on_error: str) -> pa.RecordBatch:
    """The batch of ``items``: raw messages through the columnar decoder, the others' rows made here."""
    values: list[bytes | None]
    origins: list[Origin | None]
    if all(type(item) is Message for item in items):  # the common case: two list comprehensions
        values = [item.value for item in items]  # type: ignore[union-attr]
        origins = [item.origin for item in items]  # type: ignore[union-attr]
    else:
        values, origins = [], []
        for item in items:
            if not isinstance(item, _CONVERTIBLE):
                raise TypeError(
                    "to_arrow() takes events, messages (bytes or hivewire.arrow.Message) or Undecodable "
                    f"messages, not {type(item).__name__}"
                )
            if isinstance(item, Message):
                values.append(item.value)
                origins.append(item.origin)
            else:
                values.append(item if isinstance(item, bytes) else None)
                origins.append(None)

    def row(i: int) -> tuple[object, ...]:
        item = items[i]
        if isinstance(item, ListenerEvent):
            return event_row(item, on_error)
        if isinstance(item, Message):
            return message_row(item, on_error)
        if isinstance(item, Undecodable):
            return undecodable_row(item)
        return message_row(Message(None, item), on_error)

    return decode(values, origins, row)
