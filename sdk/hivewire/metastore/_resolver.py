"""Where a client's metastore URIs come from: the :class:`UriResolver` protocol and a fixed list."""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable


@runtime_checkable
@runtime_checkable
class UriResolver(Protocol):
    """Where a :class:`MetastoreClient` gets its URIs from (a fixed list, or ZooKeeper discovery)."""

    def uris(self) -> list[str]:
        """The URIs to try, in order."""
        ...

    def refresh(self) -> list[str]:
        """Called when every URI from :meth:`uris` failed: re-read the source and return new URIs."""
        ...


class FixedUris:
    """A fixed list of URIs, tried in order, or shuffled each time (Hive's random selection)."""

    def __init__(self, uris: list[str], shuffle: bool = False) -> None:
        self._uris = uris
        self._shuffle = shuffle

    def uris(self) -> list[str]:
        uris = list(self._uris)
        if self._shuffle:
            random.shuffle(uris)
        return uris

    def refresh(self) -> list[str]:
        return []
