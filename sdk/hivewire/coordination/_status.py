"""An app's status at a glance: its live instances, each listener's state, its sidelines (``hivewire status``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from hivewire.coordination._state import AppState, Instance, Sideline, Switch


class ListenerStatus(msgspec.Struct, frozen=True, kw_only=True):
    """One listener across the app's instances."""

    #: ``running`` or ``paused`` (its switch).
    state: Literal["running", "paused"]
    #: The instances that run it.
    instances: tuple[str, ...] = ()
    #: For a singleton: the instance it runs on (the leader of its election), else None.
    singleton_on: str | None = None
    #: The sidelines that park some of its events now (not yet resolved).
    sidelined: tuple[str, ...] = ()
    #: Events behind, summed over the instances that report it; None when none does.
    lag: int | None = None
    switch: Switch | None = None


class AppStatus(msgspec.Struct, frozen=True, kw_only=True):
    app: str
    instances: dict[str, Instance]
    listeners: dict[str, ListenerStatus]
    sidelines: list[Sideline]

    def to_builtins(self) -> object:
        """Plain JSON-able values (``--json``)."""
        return msgspec.to_builtins(self)


def app_status(state: AppState) -> AppStatus:
    """Read everything ``hivewire status`` shows, from the coordinator."""
    instances = state.instances()
    switches = state.switches()
    sidelines = state.sidelines()
    names = {name for instance in instances.values() for name in instance.listeners} | set(switches)
    listeners: dict[str, ListenerStatus] = {}
    for name in sorted(names):
        running_on = tuple(member for member, i in instances.items() if name in i.listeners)
        lags = [i.lag[name] for i in instances.values() if name in i.lag]
        switch = switches.get(name)
        listeners[name] = ListenerStatus(
            state=switch.state if switch else "running",
            instances=running_on,
            singleton_on=next((member for member, i in instances.items() if name in i.leading), None),
            sidelined=tuple(s.id for s in sidelines if s.listener == name and s.state != "resolved"),
            lag=sum(lags) if lags else None,
            switch=switch,
        )
    return AppStatus(app=state.app, instances=instances, listeners=listeners, sidelines=sidelines)
