"""The four coordination interfaces of Kafka's KIP-30: membership, election, a key-value store, and watches.

Keys and group or election names are slash-separated paths (``apps/orders/listeners/audit``). A backend keeps
them under its own root; a path is a tree, as in ZooKeeper: ``children("apps/orders")`` lists the keys one level
below. Callbacks run on the backend's own thread (ZooKeeper's event thread, or the thread that made the change
in memory): they must return quickly and not block on the coordinator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Versioned:
    """A value and its version: 0 when created, one more on every write (ZooKeeper's ``stat.version``)."""

    value: bytes
    version: int


class Cancellable(Protocol):
    """What a watch or a candidacy returns: call :meth:`cancel` to stop it."""

    def cancel(self) -> None: ...


class Candidacy(Cancellable, Protocol):
    """A candidate in an election. :meth:`cancel` withdraws it (and gives up leadership if it holds it)."""

    @property
    def is_leader(self) -> bool: ...


class Membership(Protocol):
    """Group membership: live members and what each says about itself. A member lasts as long as the session
    that made it; when the session is lost the member leaves, and it joins again after the reconnection."""

    def join(self, group: str, member: str, data: bytes) -> None:
        """Join ``group`` as ``member`` with ``data``; joining again replaces the data."""

    def leave(self, group: str, member: str) -> None:
        """Leave ``group`` (nothing happens when ``member`` is not in it)."""

    def members(self, group: str) -> dict[str, bytes]:
        """The live members of ``group`` and their data."""

    def watch_members(self, group: str, callback: Callable[[Mapping[str, bytes]], None]) -> Cancellable:
        """Call ``callback`` with the members now, and again after each change."""


class Election(Protocol):
    """Leader election: of the candidates for one name, exactly one live one leads at a time."""

    def campaign(
        self, name: str, candidate: str, on_elected: Callable[[], None], on_lost: Callable[[], None]
    ) -> Candidacy:
        """Stand for ``name``. ``on_elected`` is called on gaining leadership, ``on_lost`` on losing it (the
        session was lost or suspended, or the candidacy was cancelled); after a loss the candidate stands again
        on its own once the session is back."""

    def leader(self, name: str) -> str | None:
        """The candidate that leads ``name`` now, or None."""


class KeyValueStore(Protocol):
    """A store of small values with compare-and-set by version. Writes that lose a race raise
    :class:`~hivewire.errors.VersionConflictError`."""

    def get(self, key: str) -> Versioned | None:
        """The value of ``key`` and its version, or None."""

    def put(self, key: str, value: bytes) -> int:
        """Write ``value`` whatever is there (creating ``key`` and its parents); the new version."""

    def create(self, key: str, value: bytes) -> int:
        """Write ``value`` only if ``key`` does not exist yet (its version is then 0)."""

    def compare_and_set(self, key: str, value: bytes, version: int) -> int:
        """Write ``value`` only if ``key`` is still at ``version``; the new version."""

    def delete(self, key: str, version: int | None = None) -> None:
        """Delete ``key`` (only at ``version`` when given). A key with keys under it cannot be deleted."""

    def children(self, prefix: str) -> dict[str, Versioned]:
        """The keys one level under ``prefix`` (full keys) and their values; parents made by :meth:`put` hold
        an empty value."""


class Watches(Protocol):
    """Change notifications on keys of the :class:`KeyValueStore`."""

    def watch_key(self, key: str, callback: Callable[[Versioned | None], None]) -> Cancellable:
        """Call ``callback`` with the key's value now (None: absent), and again after each change."""

    def watch_prefix(self, prefix: str, callback: Callable[[Mapping[str, Versioned]], None]) -> Cancellable:
        """Call ``callback`` with :meth:`KeyValueStore.children` of ``prefix`` now, and again after each change
        of a key one level under it."""


class Coordinator(Membership, Election, KeyValueStore, Watches, Protocol):
    """One connection to a coordination backend, offering all four interfaces; :meth:`close` ends its session
    (its members leave, its candidacies end)."""

    def close(self) -> None: ...

    def __enter__(self) -> Coordinator: ...

    def __exit__(self, *exc: object) -> None: ...
