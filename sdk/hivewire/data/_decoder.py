"""The columnar decoder every reader uses: raw Apiary messages to record batches of :data:`SCHEMA`.

Two implementations give the same batches:

* the native one (``hivewire.data._native``, Rust, built from ``native/`` by ``pip install`` when cargo is
  there): it parses each message against the description made here from the Python decoder's msgspec models
  (:func:`description`: which JSON each field accepts, which field fills which column) and builds the columns
  itself, no Python per message; :data:`ACCELERATED` is True when it is in use;
* the Python one (:mod:`hivewire.data._columnar`), the fallback and the tests' oracle.

Invariant: **a batch is the one the per-event path gives, row for row.** The native decoder accepts a subset of
what the msgspec models accept (they accept a subset of what the per-event path accepts) and refuses whatever
Python might read differently (duplicate keys, numbers beyond 64 bits, lower-casing beyond ASCII, an unusual
Iceberg snapshot summary); each refused message's row is made by :func:`hivewire.data._columnar.message_row`
during the same call, in its place, so ``on_error`` keeps its meaning (``"raise"`` raises there).
``HIVEWIRE_NATIVE=0`` in the environment turns the native decoder off (the fallback's tests use it).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec.inspect as mi

from hivewire.data._columnar import _DECODER, BATCH_ROWS, batch, message_row
from hivewire.data._rows import (
    CURRENT_SNAPSHOT_ID,
    CURRENT_SNAPSHOT_SUMMARY,
    CURRENT_SNAPSHOT_TIMESTAMP,
    KEY_ROLES,
    SUMMARY_COUNTS,
    Message,
)
from hivewire.data._schema import SCHEMA
from hivewire.events._apiary import MAX_MESSAGE_BYTES
from hivewire.events._changes import VOLATILE_PARAMETERS
from hivewire.events._event import Origin
from hivewire.events._iceberg import METADATA_LOCATION, PREVIOUS_METADATA_LOCATION, TABLE_TYPE
from hivewire.events._types import TYPES

try:
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - depends on the environment
    from hivewire.errors import PrerequisiteError

    raise PrerequisiteError(
        "hivewire.arrow needs pyarrow, which is not installed: pip install 'hivewire[arrow]'"
    ) from e

__all__ = ["ACCELERATED", "BATCH_ROWS", "columns_of", "decode", "decode_messages", "description"]

# -- The description the native decoder reads -----------------------------------------------------------------


class _Models:
    """msgspec's view of the Python decoder's models, as the JSON the native decoder reads."""

    def __init__(self) -> None:
        self.models: list[dict[str, Any]] = []
        self._index: dict[type, int] = {}

    def type_(self, t: Any) -> dict[str, Any]:
        if isinstance(t, mi.NoneType):
            return {"k": "none"}
        if isinstance(t, mi.BoolType):
            return {"k": "bool"}
        if isinstance(t, mi.IntType):
            if t.gt is not None or t.lt is not None or t.multiple_of is not None:
                raise TypeError(f"unsupported int constraint: {t}")
            return {"k": "int", "ge": t.ge, "le": t.le}
        if isinstance(t, mi.StrType):
            if t.min_length is not None or t.max_length is not None or t.pattern is not None:
                raise TypeError(f"unsupported str constraint: {t}")
            return {"k": "str"}
        if isinstance(t, mi.LiteralType):
            return {"k": "lit", "values": list(t.values)}
        if isinstance(t, mi.ListType):
            return {"k": "list", "item": self.type_(t.item_type)}
        if isinstance(t, mi.DictType):
            if not isinstance(t.key_type, mi.StrType):
                raise TypeError(f"unsupported dict key: {t}")
            return {"k": "dict", "value": self.type_(t.value_type)}
        if isinstance(t, mi.StructType):
            return {"k": "struct", "model": self.model(t)}
        if isinstance(t, mi.UnionType):
            return {"k": "union", "types": [self.type_(u) for u in t.types]}
        raise TypeError(f"the native decoder has no reading of {t}")

    def model(self, t: mi.StructType, *, envelope: bool = False) -> int:
        if t.cls in self._index:
            return self._index[t.cls]
        index = self._index[t.cls] = len(self.models)
        entry: dict[str, Any] = {"name": t.cls.__name__.lstrip("_"), "envelope": envelope}
        self.models.append(entry)
        entry["fields"] = [{"key": f.encode_name, "type": self.type_(f.type), "required": f.required} for f in t.fields]
        return index


def description() -> str:
    """The JSON the native decoder is made from: the models of :mod:`hivewire.data._columnar` as msgspec sees
    them, each wire type's envelope model and roles, and the names the columns read."""
    from hivewire.data._columnar import _PLANS

    models = _Models()
    union = mi.type_info(_DECODER.type)
    assert isinstance(union, mi.UnionType)
    events = []
    for info in union.types:
        assert isinstance(info, mi.StructType)
        plan = _PLANS[info.cls]
        spec = TYPES[plan.event_type]
        events.append(
            {
                "tag": info.tag,
                "model": models.model(info, envelope=True),
                "event_type": plan.event_type.value,
                "database_event": spec.database_event,
                "log_only": spec.log_only,
                "required": list(plan.required),
                "roles": {k: v for k, v in KEY_ROLES[plan.event_type]._asdict().items() if v is not None},
            }
        )
    constants = {
        "max_message_bytes": MAX_MESSAGE_BYTES,
        "table_type": TABLE_TYPE,
        "metadata_location": METADATA_LOCATION,
        "previous_metadata_location": PREVIOUS_METADATA_LOCATION,
        "snapshot_id": CURRENT_SNAPSHOT_ID,
        "snapshot_timestamp": CURRENT_SNAPSHOT_TIMESTAMP,
        "snapshot_summary": CURRENT_SNAPSHOT_SUMMARY,
        "summary_counts": list(SUMMARY_COUNTS),
        "volatile": sorted(VOLATILE_PARAMETERS),
        "hive_version": "hive.version",
    }
    return json.dumps({"models": models.models, "events": events, "constants": constants})


# -- The decoder ------------------------------------------------------------------------------------------------


def _native() -> Any:
    """The native decoder, or None when it is not built (or turned off with ``HIVEWIRE_NATIVE=0``)."""
    if os.environ.get("HIVEWIRE_NATIVE", "1") == "0":
        return None
    try:
        native: Any = importlib.import_module("hivewire.data._native")
    except ImportError:
        return None
    try:
        return native.Decoder(description(), SCHEMA.__arrow_c_schema__())
    except (ValueError, TypeError) as e:  # a native module built from another source tree than this one
        logging.getLogger("hivewire.arrow").warning(
            "hivewire's native decoder does not fit this hivewire (%s): the Python decoder decodes; reinstall "
            "hivewire (make install) to rebuild it",
            e,
        )
        return None


_NATIVE = _native()

#: Whether the native (Rust) decoder is in use; when False the Python one decodes (same tables, slower).
ACCELERATED: bool = _NATIVE is not None

_INDEX = {name: i for i, name in enumerate(SCHEMA.names)}


def columns_of(names: Iterable[str]) -> list[str]:
    """``names`` in :data:`SCHEMA`'s order (the order of the columns of every batch :func:`decode` makes)."""
    wanted = set(names)
    unknown = wanted - _INDEX.keys()
    if unknown:
        raise ValueError(f"no such columns in hivewire.arrow.SCHEMA: {sorted(unknown)}")
    return [n for n in SCHEMA.names if n in wanted]


def decode(
    values: list[bytes | None],
    origins: list[Origin | None],
    row: Callable[[int], tuple[object, ...]],
    columns: Sequence[str] | None = None,
) -> pa.RecordBatch:
    """One record batch of :data:`SCHEMA` (only ``columns``, in the schema's order, when given), one row per
    item: ``values[i]``/``origins[i]`` are item ``i``'s raw message and origin (None, None when it has none: an
    event, a message known not to decode) and ``row(i)`` is its row as the per-event path makes it. The native
    decoder calls ``row`` only for the items it does not decode itself; the Python fallback for every item."""
    names = None if columns is None else columns_of(columns)
    if _NATIVE is None:
        made = batch([row(i) for i in range(len(values))])
        return made if names is None else made.select(names)
    picked = None if names is None else [_INDEX[n] for n in names]
    schema, array, _ = _NATIVE.decode(values, origins, picked, row)
    return pa.RecordBatch._import_from_c_capsule(schema, array)


def decode_messages(messages: Sequence[Message], on_error: str, columns: Sequence[str] | None = None) -> pa.RecordBatch:
    """:func:`decode` of raw messages, each message's row being :func:`~hivewire.data._columnar.message_row`'s."""
    return decode(
        [m.value for m in messages],
        [m.origin for m in messages],
        lambda i: message_row(messages[i], on_error),
        columns,
    )
