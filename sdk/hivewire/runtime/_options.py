"""How a listener is registered, besides its event types: :class:`ListenerOptions` (the keywords of ``@app.on``
and the per-type decorators) and :class:`RetryPolicy`.

They sit below the listeners and the decorators (``_listener.py``, ``_decorators.py``), which both name them, so
that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from hivewire.errors import ConfigError


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: attempt ``n`` (1-based) is followed by ``initial_delay * multiplier**(n-1)`` seconds,
    capped at ``max_delay``, for at most ``max_attempts`` attempts in all; then the event is dead-lettered."""

    max_attempts: int = 5
    initial_delay: float = 1.0
    multiplier: float = 2.0
    max_delay: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError("max_attempts", "must be at least 1")
        if self.initial_delay < 0 or self.max_delay < 0 or self.multiplier < 1:
            raise ConfigError("retry", "delays must be >= 0 and the multiplier >= 1")

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt``."""
        return float(min(self.max_delay, self.initial_delay * self.multiplier ** (attempt - 1)))


class ListenerOptions(TypedDict, total=False):
    """How a listener is registered, besides its event types: the keywords of :meth:`hivewire.App.on`,
    :meth:`~hivewire.App.add_listener` and the per-type decorators, declared once here.

    ``db``/``table``: glob patterns (or lists of them); ``status``: deliver successful changes (True, the
    default), failed ones (False) or both (None); ``name``: the listener's name (default: the function's or
    class's); ``timeout``/``retry``: override the app's; ``concurrency``: events in flight at once (never two
    of one table; default ``hivewire.listener.concurrency``); ``singleton``: run on exactly one live instance
    of the app, over every partition, resuming from its own progress when another instance takes over (needs
    ``hivewire.coordination.zookeeper``; default: the class's ``singleton`` attribute, else False);
    ``operation``: for an ``ICEBERG_COMMIT`` listener, the Iceberg snapshot operations it wants (``"append"``,
    or a list of ``append``, ``overwrite``, ``delete``, ``replace``; default all).
    """

    db: str | Iterable[str] | None
    table: str | Iterable[str] | None
    status: bool | None
    name: str | None
    timeout: float | None
    retry: RetryPolicy | None
    concurrency: int | None
    singleton: bool | None
    operation: str | Iterable[str] | None
