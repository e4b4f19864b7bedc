"""Many instances as one: the four coordination interfaces of Kafka's KIP-30 (membership, election, a
key-value store with compare-and-set, watches), a ZooKeeper backend and an in-memory one, and the state of
apps kept in them (live instances, listener switches, sidelines).

The ZooKeeper backend needs kazoo; it is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hivewire.coordination._interfaces import (
    Cancellable,
    Candidacy,
    Coordinator,
    Election,
    KeyValueStore,
    Membership,
    Versioned,
    Watches,
)
from hivewire.coordination._member import AppMember
from hivewire.coordination._memory import InMemoryCoordinator
from hivewire.coordination._settings import CoordinationSettings
from hivewire.coordination._state import AppState, Instance, Sideline, Switch
from hivewire.coordination._status import AppStatus, ListenerStatus, app_status

if TYPE_CHECKING:
    from hivewire.coordination._zookeeper import ZooKeeperCoordinator

__all__ = [
    "AppMember",
    "AppState",
    "AppStatus",
    "Cancellable",
    "Candidacy",
    "CoordinationSettings",
    "Coordinator",
    "Election",
    "InMemoryCoordinator",
    "Instance",
    "KeyValueStore",
    "ListenerStatus",
    "Membership",
    "Sideline",
    "Switch",
    "Versioned",
    "Watches",
    "ZooKeeperCoordinator",
    "app_status",
]

_LAZY = {"ZooKeeperCoordinator": "_zookeeper"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hivewire.coordination' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"hivewire.coordination.{module}"), name)
    globals()[name] = value
    return value
