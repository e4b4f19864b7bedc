"""``wait_for``: poll a condition until it holds, for tests that wait on threads, processes and services."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    predicate: Callable[[], Any],
    what: str,
    timeout: float = 60.0,
    interval: float = 0.05,
    ignoring: tuple[type[Exception], ...] = (),
) -> Any:
    """Call ``predicate`` every ``interval`` seconds until it returns something true, and return that; an
    exception of ``ignoring`` counts as "not yet". The one wait of the tests.

    Raises AssertionError naming ``what`` after ``timeout`` seconds (a bound against hanging, not a timing
    check: generous on purpose, since these machines are shared).
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except ignoring:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
