"""The shared state of an app, kept in a coordinator: its live instances, its listeners' switches, its sidelines.

Where each lives (keys of the :class:`~hivewire.coordination.KeyValueStore`, group of the
:class:`~hivewire.coordination.Membership`), as JSON::

    apps/<app>/instances/<member>     an Instance      (membership: it lasts as long as the instance's session)
    apps/<app>/listeners/<listener>   a Switch         (running or paused; absent: running)
    apps/<app>/sidelines/<id>         a Sideline       (ids s1, s2, ... in order of creation)
    apps/<app>/progress/<listener>    a singleton listener's progress: per ``topic:partition``, the next offset
                                      (everything before it was handled or dead-lettered)

Every change is a compare-and-set on the value read, retried when another writer won, so concurrent commands and
instances never lose each other's changes.

A sideline follows storm-dynamic-spout's: **started**, the listener skips matching events from now on and each
instance records, per partition, the first offset it skipped (``starts``); **resumed**, the skipped events are
replayed from ``starts`` alongside the live stream, which still skips them; **resolved**, the live stream stops
skipping at ``ends`` (recorded per partition), and the sideline is finished once the replay reaches them.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeVar

import msgspec

from hivewire.coordination._interfaces import Coordinator, Versioned
from hivewire.coordination._paths import normalize
from hivewire.errors import CoordinationError, VersionConflictError

ListenerState = Literal["running", "paused"]
SidelineState = Literal["started", "resumed", "resolved"]


class Instance(msgspec.Struct, frozen=True, kw_only=True):
    """One live ``hivewire run`` of the app: where it runs, what it runs, what it holds."""

    host: str
    pid: int
    version: str
    started_at: float
    #: The listeners it runs.
    listeners: tuple[str, ...] = ()
    #: The partitions it holds, as ``topic:partition``.
    partitions: tuple[str, ...] = ()
    #: The singleton listeners that run here (it leads their election).
    leading: tuple[str, ...] = ()
    #: Events each listener is behind, over the partitions held here.
    lag: dict[str, int] = {}


class Switch(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a listener runs: ``running`` or ``paused``, since when and by whom."""

    state: ListenerState
    changed_at: float
    by: str = ""


class Sideline(msgspec.Struct, frozen=True, kw_only=True):
    """A subset of one listener's events parked for later: those of databases matching ``db`` (and tables
    matching ``table``, and of ``types`` when given; patterns as in ``@app.on``, ``*`` and ``?``)."""

    id: str
    listener: str
    db: str
    table: str = "*"
    types: tuple[str, ...] = ()
    state: SidelineState = "started"
    created_at: float
    changed_at: float
    #: Per partition (``topic:partition``), the first offset the live stream skipped.
    starts: dict[str, int] = {}
    #: Per partition, the offset from which the live stream no longer skips (set on resolving).
    ends: dict[str, int] = {}
    #: Per partition, the offset the replay has reached (the next one it will read).
    replayed: dict[str, int] = {}

    def matches(self, db: str, table: str | None, event_type: str) -> bool:
        """Whether an event of ``db``.``table`` of type ``event_type`` (its Apiary name) is in this sideline."""
        if self.types and event_type.upper() not in self.types:
            return False
        if not fnmatch.fnmatchcase(db.lower(), self.db.lower()):
            return False
        return self.table == "*" or (table is not None and fnmatch.fnmatchcase(table.lower(), self.table.lower()))

    @property
    def finished(self) -> bool:
        """Resolved, every partition that skipped has its end, and the replay has reached each end."""
        if self.state != "resolved" or not set(self.starts) <= set(self.ends):
            return False
        return all(self.replayed.get(p, self.starts.get(p, end)) >= end for p, end in self.ends.items())

    def describe(self) -> str:
        """``db=tenant_a table=* types=*``: the filter, for listings."""
        return f"db={self.db} table={self.table} types={','.join(self.types) or '*'}"


_S = TypeVar("_S", Instance, Switch, Sideline)

_NEXT_STATES: dict[SidelineState, tuple[SidelineState, ...]] = {
    "started": ("resumed", "resolved"),
    "resumed": ("resolved",),
    "resolved": (),
}


def encode(value: Instance | Switch | Sideline) -> bytes:
    return msgspec.json.encode(value)


def decode(kind: type[_S], data: bytes, where: str) -> _S:
    """A stored value read back; a value that does not fit is an error naming the key."""
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as e:
        raise CoordinationError(
            f"{where} does not hold a valid {kind.__name__} ({e}); it was not written by this version of hivewire: "
            "delete the key or upgrade"
        ) from e
    except msgspec.DecodeError as e:
        raise CoordinationError(f"{where} is not JSON ({e}): delete the key") from e


class AppState:
    """The shared state of the app ``app`` in ``coordinator``: what ``hivewire status``, ``hivewire listener``
    and ``hivewire sideline`` read and write, and what every instance follows."""

    def __init__(self, coordinator: Coordinator, app: str) -> None:
        self.coordinator = coordinator
        self.app = normalize(app, "app")
        self.prefix = f"apps/{self.app}"

    # -- instances ------------------------------------------------------------------------------------------

    @property
    def instances_group(self) -> str:
        return f"{self.prefix}/instances"

    def join(self, member: str, instance: Instance) -> None:
        """Announce (or update) this instance; it leaves when its session ends."""
        self.coordinator.join(self.instances_group, member, encode(instance))

    def leave(self, member: str) -> None:
        self.coordinator.leave(self.instances_group, member)

    def instances(self) -> dict[str, Instance]:
        """The live instances by member name."""
        members = self.coordinator.members(self.instances_group)
        return {
            name: decode(Instance, data, f"{self.instances_group}/{name}") for name, data in sorted(members.items())
        }

    # -- listener switches ----------------------------------------------------------------------------------

    def _switch_key(self, listener: str) -> str:
        return f"{self.prefix}/listeners/{normalize(listener, 'listener')}"

    def switches(self) -> dict[str, Switch]:
        """Every listener that was ever switched, by name (a listener not here is running)."""
        return {
            key.rpartition("/")[2]: decode(Switch, v.value, key)
            for key, v in sorted(self.coordinator.children(f"{self.prefix}/listeners").items())
            if v.value
        }

    def switch(self, listener: str) -> Switch | None:
        stored = self.coordinator.get(self._switch_key(listener))
        return decode(Switch, stored.value, self._switch_key(listener)) if stored and stored.value else None

    def pause(self, listener: str, *, by: str = "") -> Switch:
        """Switch ``listener`` off on every instance (it resumes where it stopped)."""
        return self._set_switch(listener, "paused", by)

    def resume(self, listener: str, *, by: str = "") -> Switch:
        """Switch ``listener`` back on."""
        return self._set_switch(listener, "running", by)

    def _set_switch(self, listener: str, state: ListenerState, by: str) -> Switch:
        switch = Switch(state=state, changed_at=time.time(), by=by)
        self.coordinator.put(self._switch_key(listener), encode(switch))
        return switch

    # -- sidelines ------------------------------------------------------------------------------------------

    def _sideline_key(self, sideline_id: str) -> str:
        return f"{self.prefix}/sidelines/{normalize(sideline_id, 'sideline id')}"

    def sidelines(self) -> list[Sideline]:
        """Every sideline, oldest first (finished ones too)."""
        found = [
            decode(Sideline, v.value, key)
            for key, v in self.coordinator.children(f"{self.prefix}/sidelines").items()
            if v.value
        ]
        return sorted(found, key=lambda s: _ordinal(s.id))

    def sideline(self, sideline_id: str) -> Sideline:
        key = self._sideline_key(sideline_id)
        stored = self.coordinator.get(key)
        if stored is None or not stored.value:
            known = ", ".join(s.id for s in self.sidelines()) or "none"
            raise CoordinationError(f"app {self.app} has no sideline {sideline_id!r} (its sidelines: {known})")
        return decode(Sideline, stored.value, key)

    def start_sideline(self, listener: str, db: str, table: str = "*", types: Iterable[str] = ()) -> Sideline:
        """Start skipping ``listener``'s events that match, from now on; the new sideline (id ``s<n>``)."""
        normalize(listener, "listener")
        if not db.strip():
            raise CoordinationError("a sideline needs a database pattern, such as tenant_a or tenant_*")
        for active in self.sidelines():
            if active.listener == listener and (active.db, active.table) == (db, table) and not active.finished:
                raise CoordinationError(
                    f"sideline {active.id} already parks {active.describe()} for {listener} ({active.state}); "
                    f"resume or resolve it instead"
                )
        now = time.time()
        while True:
            number = max((_ordinal(s.id) for s in self.sidelines()), default=0) + 1
            sideline = Sideline(
                id=f"s{number}",
                listener=listener,
                db=db.strip(),
                table=(table or "*").strip(),
                types=tuple(sorted({t.strip().upper() for t in types if t.strip()})),
                created_at=now,
                changed_at=now,
            )
            try:
                self.coordinator.create(self._sideline_key(sideline.id), encode(sideline))
                return sideline
            except VersionConflictError:
                continue  # another command took this number

    def resume_sideline(self, sideline_id: str) -> Sideline:
        """Replay the skipped events (the live stream keeps skipping them until the sideline is resolved)."""
        return self._move(sideline_id, "resumed")

    def resolve_sideline(self, sideline_id: str) -> Sideline:
        """Stop skipping; the replay then runs up to where skipping stopped, and the sideline is finished."""
        return self._move(sideline_id, "resolved")

    def _move(self, sideline_id: str, state: SidelineState) -> Sideline:
        def change(current: Sideline) -> Sideline:
            if state not in _NEXT_STATES[current.state]:
                can = " or ".join(_NEXT_STATES[current.state]) or "nothing (it is done)"
                raise CoordinationError(f"sideline {current.id} is {current.state}: it can be {can}, not {state}")
            return msgspec.structs.replace(current, state=state, changed_at=time.time())

        return self.update_sideline(sideline_id, change)

    def record_offsets(
        self,
        sideline_id: str,
        *,
        starts: Mapping[str, int] | None = None,
        ends: Mapping[str, int] | None = None,
        replayed: Mapping[str, int] | None = None,
    ) -> Sideline:
        """Merge an instance's offsets into the sideline: a partition's start and end are set once (the first
        writer wins: a later instance taking over the partition must not move them), the replay only advances."""

        def change(current: Sideline) -> Sideline:
            return msgspec.structs.replace(
                current,
                starts={**(starts or {}), **current.starts},
                ends={**(ends or {}), **current.ends},
                replayed={
                    p: max(o, current.replayed.get(p, o)) for p, o in {**current.replayed, **(replayed or {})}.items()
                },
            )

        return self.update_sideline(sideline_id, change)

    def update_sideline(self, sideline_id: str, change: Callable[[Sideline], Sideline]) -> Sideline:
        """Apply ``change`` to the stored sideline by compare-and-set, again on the new value if another writer
        won; the value written."""
        key = self._sideline_key(sideline_id)
        while True:
            stored: Versioned | None = self.coordinator.get(key)
            if stored is None or not stored.value:
                self.sideline(sideline_id)  # raises, listing the sidelines there are
            assert stored is not None
            new = change(decode(Sideline, stored.value, key))
            try:
                self.coordinator.compare_and_set(key, encode(new), stored.version)
                return new
            except VersionConflictError:
                continue

    # -- singleton listeners' progress ----------------------------------------------------------------------

    def _progress_key(self, listener: str) -> str:
        return f"{self.prefix}/progress/{normalize(listener, 'listener')}"

    def progress(self, listener: str) -> dict[str, int]:
        """A singleton listener's progress: per ``topic:partition``, the next offset it has to handle."""
        key = self._progress_key(listener)
        stored = self.coordinator.get(key)
        return _decode_progress(stored.value, key) if stored and stored.value else {}

    def advance_progress(self, listener: str, offsets: Mapping[str, int]) -> dict[str, int]:
        """Move a singleton listener's progress forward to ``offsets`` (never back: a partition keeps the larger
        of the stored and the given offset, so a former leader's late write loses nothing); the progress now."""
        key = self._progress_key(listener)
        while True:
            stored = self.coordinator.get(key)
            current = _decode_progress(stored.value, key) if stored and stored.value else {}
            new = {**current, **{p: max(o, current.get(p, o)) for p, o in offsets.items()}}
            if new == current and stored is not None:
                return current
            try:
                if stored is None:
                    self.coordinator.create(key, msgspec.json.encode(new))
                else:
                    self.coordinator.compare_and_set(key, msgspec.json.encode(new), stored.version)
                return new
            except VersionConflictError:
                continue


def _decode_progress(data: bytes, where: str) -> dict[str, int]:
    try:
        return msgspec.json.decode(data, type=dict[str, int])
    except msgspec.DecodeError as e:  # ValidationError included
        raise CoordinationError(f"{where} does not hold a listener's progress ({e}): delete the key") from e


def _ordinal(sideline_id: str) -> int:
    return int(sideline_id[1:]) if sideline_id[:1] == "s" and sideline_id[1:].isdigit() else 0
