"""``wait_for``: poll a condition until it holds, for tests that wait on threads, processes and services."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 60.0, interval: float = 0.05) -> Any:
    """Call ``predicate`` every ``interval`` seconds until it returns something true, and return that.

    Raises AssertionError naming ``what`` after ``timeout`` seconds (a bound against hanging, not a timing
    check: generous on purpose, since these machines are shared).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
