"""From modeled calls to events: :meth:`Capture.plan` turns a call into a :class:`Plan`, which the
connection carries out.

A call the shim does not model has no plan: the connection relays it as it is. For a modeled one (see
:mod:`hivewire_shim.methods`) the connection, on its own thread,

1. holds the plan's locks (``with plan.locked():``): the lock of every table the change touches
   (exclusively) and of their databases (shared), or of the database it changes (exclusively), so
   changes to one table made through this shim run one at a time and their events are published in the
   order the metastore applied them, changes to other tables of the database run side by side, and a
   drop_database runs alone in its database;
2. reads what the event needs from *before* the change (:meth:`Plan.read_before`: the old table of an
   alter, the table of a drop), having given the request's objects what the upstream's release fills in
   (:meth:`~hivewire_shim.change.Change.prepare`);
3. forwards the call and reads the whole reply, decoded as :attr:`Plan.result_class`, *without*
   relaying it yet;
4. publishes the events (:meth:`Plan.publish`), still under the locks, reading back what the metastore
   stored. Failed calls publish nothing, or ``status=false`` events when ``publish_failures`` (as Apiary
   does); a successful ``fire_listener_event`` publishes its INSERT whatever its status (as Apiary does); a
   call whose outcome is unknown (the upstream failed after it was sent) publishes nothing;
5. releases the locks and relays the reply: a client only sees its change succeed once the event is in
   the sinks (the Kafka sink's spool is on disk), and a slow client holds no lock.

Nothing here may fail a client's call: errors in modeling are logged and the call goes through unmodeled.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hivewire.events._model import ListenerEvent
from hivewire_shim.changes import OUTCOME, Change, DropDatabase
from hivewire_shim.intents import Intents
from hivewire_shim.locks import Locks
from hivewire_shim.lookup import Lookup
from hivewire_shim.methods import MODELED_METHODS, change_for
from hivewire_shim.reply import Reply
from hivewire_shim.wire import Header, parse_header
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as _service

__all__ = ["Capture", "EventOptions", "Plan"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EventOptions:
    """How events are made: the ``hive.version`` parameter, status=false events, database events."""

    hive_version: str = "2.3.10"
    publish_failures: bool = False
    database_events: bool = True


class Capture:
    """Plans the modeled calls of every connection (it holds the locks they share) and hands their events to
    ``publish``; ``lookup`` makes the shim's own reads of the upstream."""

    def __init__(
        self,
        lookup: Lookup,
        publish: Callable[[ListenerEvent], None],
        options: EventOptions = EventOptions(),
        intents: Intents | None = None,
    ) -> None:
        self.lookup = lookup
        self.publish = publish
        self.options = options
        self.intents = intents
        self.params = {"hive.version": options.hive_version}
        self.locks = Locks()

    def plan(self, header: Header, body: bytes) -> Plan | None:
        """How to run a call, or None when its method is not modeled (or its arguments make no change)."""
        name = header.name
        if name not in MODELED_METHODS:
            return None
        try:
            parsed = parse_header(body)
            assert parsed is not None
            change = change_for(name, body, parsed[1])
            if change is not None and change.database_event and not self.options.database_events:
                if isinstance(change, DropDatabase) and change.cascade:
                    change.database_events = False  # its tables' drop events are table events: keep them
                else:
                    return None
            return None if change is None else Plan(self, header, change)
        except Exception:  # a request we cannot model still goes through, unmodeled
            log.warning("could not model %s; forwarding it without an event", header, exc_info=True)
            return None

    def reconcile(self) -> int:
        """Publish the events of the changes the last run forwarded without publishing their events (the
        intents it left), marked ``hivewire.shim.outcome=unknown``; returns how many there were."""
        if self.intents is None:
            return 0
        pending = self.intents.pending()
        for intent_id, (method, body) in sorted(pending.items()):
            parsed = parse_header(body)
            plan = self.plan(parsed[0], body) if parsed is not None else None
            if plan is not None:
                with plan.locked():
                    plan.publish_outcome_unknown(f"the shim stopped before publishing the event of {method}")
            self.intents.end(intent_id)
        if pending:
            log.warning(
                "%d change(s) were forwarded by the last run without their events being published (it was killed "
                "or crashed); published what the metastore shows now, marked %s=unknown",
                len(pending),
                OUTCOME,
            )
        return len(pending)


class Plan:
    """How one modeled call runs (see the module docstring): what it locks, what it reads before, what its
    reply decodes as (:attr:`result_class`, a generated ``*_result``) and what it publishes."""

    __slots__ = ("_capture", "_intent", "change", "header", "result_class")

    def __init__(self, capture: Capture, header: Header, change: Change) -> None:
        self._capture = capture
        self.header = header
        self.change = change
        self.result_class: Any = getattr(_service, f"{header.name}_result")
        self._intent: int | None = None

    def intend(self, body: bytes) -> None:
        """Write down, before the call is forwarded, that it is about to be (see :mod:`hivewire_shim.intents`)."""
        intents = self._capture.intents
        if intents is not None:
            try:
                self._intent = intents.begin(self.header.name, body)
            except OSError:
                log.exception("could not write down the intent of %s; forwarding it all the same", self.header)

    def done(self) -> None:
        """Cross out the intent: the call's events are published (or it made no change)."""
        intents, intent = self._capture.intents, self._intent
        if intents is not None and intent is not None:
            self._intent = None
            try:
                intents.end(intent)
            except OSError:
                log.exception("could not cross out the intent of %s", self.header)

    def publish_outcome_unknown(self, why: str) -> None:
        """Publish the events of a change that may or may not have been made, marked as such."""
        capture = self._capture
        try:
            self.change.prepare(capture.lookup)
            events = self.change.outcome_unknown(capture.lookup, {**capture.params, OUTCOME: "unknown"})
        except Exception:
            log.exception("building the events of %s (outcome unknown) failed; none published", self.header)
            return
        log.warning("%s; published %d event(s) marked %s=unknown", why, len(events), OUTCOME)
        for event in events:
            capture.publish(event)

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the keys of what the call changes exclusively, and of what must not change meanwhile shared."""
        return self._capture.locks.holding(self.change.keys, self.change.shared)

    def read_before(self) -> None:
        """Read what the events need from before the change (call it with the locks held)."""
        try:
            self.change.prepare(self._capture.lookup)
            self.change.before(self._capture.lookup)
        except Exception:
            log.exception("reading the state before %s failed; its event may lack the old object", self.header)

    def publish(self, reply: Reply) -> None:
        """Publish the events of the call that got ``reply`` (call it with the locks held)."""
        capture, header, change = self._capture, self.header, self.change
        if not reply.from_upstream:
            if reply.maybe_applied:
                # Neither status would be true: the change may or may not have been made.
                self.publish_outcome_unknown(
                    f"{header}: the upstream failed after the call was sent, so {change} may or may not have "
                    f"been made ({reply.error})"
                )
            return
        if not reply.ok and not reply.answered:
            # A TApplicationException (above all "Invalid method name", which clients probing for newer
            # methods get from Hive 2.3): the metastore ran no handler, so it fired nothing.
            log.debug("%s failed (%s): no event", header, reply.error)
            return
        if reply.ok or capture.options.publish_failures:
            try:
                events = change.events(capture.lookup, reply.ok, reply.result, capture.params)
            except Exception:
                log.exception("building the events of %s failed; none published", header)
                events = []
            for event in events:
                # A call that worked may fire status=false events too (what an ifNotExists add skipped; the
                # INSERT of fire_listener_event(successful=false), which Apiary publishes, so the shim does).
                if event.status or capture.options.publish_failures or (reply.ok and change.publishes_any_status):
                    capture.publish(event)
        elif reply.error:
            log.debug("%s failed (%s): no event", header, reply.error)
