"""Dead letters sent back through the listener that gave up on them: ``hivewire dlq replay``.

A dead letter is the original Apiary message with headers saying which listener gave up and why
(``docs/runtime.md``, "Dead letters"). Replaying calls that listener again (only that one: the app's other
listeners handled the message already) with the event, once, and reports what happened. Nothing is removed
from the dead-letter topic (Kafka cannot): a replay reads the topic from its start, so filter by offset,
listener or event to replay a part of it again.
"""

from __future__ import annotations

import fnmatch
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from hivewire.config._config import Config
from hivewire.runtime._app import App
from hivewire.tools._tail import Filter, Record

_EVERYTHING = Filter()

#: The listener name of messages the decoder dead-lettered (nothing can handle them until they change).
DECODER = "hivewire.decoder"


@dataclass(frozen=True)
class Selection:
    """Which dead letters to replay: listeners and error texts (shell-style patterns; all when empty), the
    event filter of ``hivewire tail``, and the offsets of the dead-letter topic from ``min_offset``."""

    listeners: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    events: Filter = _EVERYTHING
    min_offset: int = 0

    def __call__(self, record: Record) -> bool:
        if record.origin.offset < self.min_offset or record.event is None:
            return False
        listener = record.headers.get("hivewire.listener", "")
        if self.listeners and not any(fnmatch.fnmatchcase(listener, p) for p in self.listeners):
            return False
        error = record.headers.get("hivewire.error", "")
        if self.errors and not any(fnmatch.fnmatchcase(error, f"*{p}*") for p in self.errors):
            return False
        return self.events(record.event)


@dataclass(frozen=True)
class Outcome:
    """What replaying one dead letter did: ``replayed``, ``failed`` (with the error and its traceback),
    ``skipped`` (why), or ``selected`` (a dry run)."""

    record: Record
    listener: str
    result: str
    detail: str = ""
    traceback: str = ""


def replay(
    app: App, records: Iterable[Record], selection: Selection, *, config: Config | None = None, dry_run: bool = False
) -> Iterator[Outcome]:
    """Call, for each selected dead letter, the app's listener named in its ``hivewire.listener`` header with
    its event, once. Yields an :class:`Outcome` per selected letter; a listener that raises again is reported
    (``failed``), not retried, and the next letter goes on."""
    by_name = {listener.name: listener for listener in app.listeners}
    settings = config if config is not None else app.config
    for record in records:
        if not selection(record):
            continue
        name = record.headers.get("hivewire.listener", "")
        event = record.event
        assert event is not None  # the selection takes only decoded letters
        listener = by_name.get(name)
        if listener is None:
            reason = (
                "the decoder dead-lettered it: it did not decode then"
                if name == DECODER
                else f"the app has no listener {name!r} (it has {', '.join(sorted(by_name)) or 'none'})"
            )
            yield Outcome(record, name, "skipped", reason)
            continue
        if not listener.accepts(event):
            yield Outcome(record, name, "skipped", f"listener {name} no longer takes {event.event_type.value} events")
            continue
        if dry_run:
            yield Outcome(record, name, "selected", record.headers.get("hivewire.error", ""))
            continue
        listener.bind(settings)
        try:
            listener.handlers[event.event_type](event.copy())
        except Exception as e:
            yield Outcome(record, name, "failed", f"{type(e).__name__}: {e}", traceback.format_exc())
        else:
            yield Outcome(record, name, "replayed")
