"""Calling users' callbacks from a backend: an exception is logged, never raised into the backend (ZooKeeper's
event thread, or the writer's thread in memory), so one bad callback stops neither the watch nor the writer."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("hivewire.coordination")


def call_safely(callback: Callable[[], None], what: str) -> None:
    try:
        callback()
    except Exception:
        log.exception("coordination callback for %s raised", what)
