"""Derived event types: events the runtime makes from the events that carry them, for the listeners that ask.

``ICEBERG_COMMIT`` is the one derived type: an :class:`~hivewire.events.IcebergCommitEvent` is made from the
CREATE_TABLE, ALTER_TABLE (one that moves ``metadata_location``) or DROP_TABLE of an Iceberg table, whatever
the source (the Apiary topic, the shim, the notification log). A listener of a derived type is routed its
carriers' records, and its handler for a carrier (:func:`with_derived`) does, in this order: the listener's
own handler for the carrier's type, when it asked for that type too; then the derived event's handler, when
the carrier makes a derived event that passes the listener's ``operation`` filter.

Invariants:

* A carrier's record is committed only after every listener routed it has handled it, so a derived event is
  delivered at least once, like any event: a commit made while the app was down is delivered after restart.
* Making the derived event never raises because of Iceberg metadata: a file that cannot be read is the
  event's ``error``, and the event is delivered (an ``operation`` filter cannot be applied to it, so it
  passes).
* A failure of either handler fails the whole call, which the lane retries or dead-letters as one: a retry
  calls both again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hivewire.errors import ConfigError
from hivewire.events._event_type import EventType
from hivewire.events._iceberg import OPERATIONS
from hivewire.events._model import IcebergCommitEvent, ListenerEvent
from hivewire.events._types import TYPES

Handler = Callable[[Any], object]

#: The types each derived type is made from.
CARRIERS: Mapping[EventType, frozenset[EventType]] = {
    EventType.ICEBERG_COMMIT: frozenset({EventType.CREATE_TABLE, EventType.ALTER_TABLE, EventType.DROP_TABLE}),
}

#: The types a listener of every type gets: all but the derived ones, which it must name.
PLAIN_TYPES = frozenset(t for t in EventType if not TYPES[t].derived)


def routed(types: Iterable[EventType]) -> frozenset[EventType]:
    """The types of the records a listener of ``types`` must be routed: its own and their carriers."""
    chosen = frozenset(types)
    return chosen.union(*(CARRIERS.get(t, frozenset()) for t in chosen))


def operations(name: str, value: str | Iterable[str] | None, types: frozenset[EventType]) -> frozenset[str] | None:
    """The ``operation=`` option of listener ``name``, checked: Iceberg snapshot operations, for a listener
    of ``ICEBERG_COMMIT``."""
    if value is None:
        return None
    chosen = frozenset([value] if isinstance(value, str) else value)
    if EventType.ICEBERG_COMMIT not in types:
        raise ConfigError(
            f"{name}: operation",
            "filters Iceberg commits: register the listener with @app.on_iceberg_commit (or an on_iceberg_commit "
            "method), or drop operation=",
        )
    unknown = sorted(chosen - OPERATIONS)
    if unknown or not chosen:
        what = unknown or "nothing"
        raise ConfigError(
            f"{name}: operation", f"{what} is not an Iceberg snapshot operation; use {sorted(OPERATIONS)}"
        )
    return chosen


def with_derived(
    handlers: Mapping[EventType, Handler],
    async_types: frozenset[EventType],
    io_properties: Mapping[str, str],
    wanted: frozenset[str] | None,
    name: str,
) -> dict[EventType, Handler]:
    """``handlers`` (per type, those of ``async_types`` coroutine functions) with the derived types' handlers
    in place: each carrier's runs the listener's own handler for it, then the derived event's (see the
    module docstring). ``io_properties`` are pyiceberg's properties for reading metadata files; ``wanted``
    the Iceberg operations the listener asked for (None: all)."""
    commit = handlers.get(EventType.ICEBERG_COMMIT)
    if commit is None:
        return dict(handlers)
    out = dict(handlers)
    is_async = EventType.ICEBERG_COMMIT in async_types

    def passes(event: IcebergCommitEvent) -> bool:
        return wanted is None or event.error is not None or bool(event.operations & wanted)

    def derive(event: ListenerEvent) -> IcebergCommitEvent | None:
        if isinstance(event, IcebergCommitEvent):  # carried as such (a message of hivewire's own, dispatch())
            made: IcebergCommitEvent | None = event.with_io(io_properties) if io_properties else event
        else:
            made = IcebergCommitEvent.of(event, io_properties)
        return made if made is not None and passes(made) else None

    for carrier in (EventType.ICEBERG_COMMIT, *sorted(CARRIERS[EventType.ICEBERG_COMMIT])):
        plain = handlers.get(carrier) if carrier is not EventType.ICEBERG_COMMIT else None
        if plain is not None and (carrier in async_types) != is_async:
            raise ConfigError(
                name,
                f"on_{carrier.value.lower()} and on_iceberg_commit must both be async or both not: a record is "
                "handled by one call",
            )
        out[carrier] = (_AsyncChain if is_async else _Chain)(plain, commit, derive)
    return out


class _Chain:
    """One call per carrier record: the listener's own handler for it (if any), then the derived event's."""

    def __init__(self, plain: Handler | None, commit: Handler, derive: Callable[[ListenerEvent], object]) -> None:
        self.plain, self.commit, self.derive = plain, commit, derive

    @property
    def __code__(self) -> object:
        # Where a failure is reported (the lane's ``where``): the listener's own code, not this wrapper's.
        return getattr(self.commit, "__code__", None)

    def __call__(self, event: ListenerEvent) -> None:
        if self.plain is not None:
            self.plain(event)
        made = self.derive(event)
        if made is not None:
            self.commit(made)


class _AsyncChain(_Chain):
    """:class:`_Chain` for async handlers; the metadata files are read off the event loop."""

    async def __call__(self, event: ListenerEvent) -> None:  # type: ignore[override]
        if self.plain is not None:
            await self.plain(event)  # type: ignore[misc]
        made = await asyncio.to_thread(self.derive, event)  # reading metadata files blocks
        if made is not None:
            await self.commit(made)  # type: ignore[misc]
