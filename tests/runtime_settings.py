"""``runtime_settings``: the runtime's settings for tests that build a runner themselves (the defaults, with
the bounds, timeouts and retries a test needs)."""

from __future__ import annotations

import dataclasses
from typing import Any

from hivewire.config import Config
from hivewire.runtime._options import RetryPolicy
from hivewire.runtime._settings import RuntimeSettings


def runtime_settings(retry: RetryPolicy | None = None, **changes: Any) -> RuntimeSettings:
    """The default settings with ``changes`` (field names of :class:`RuntimeSettings`) and ``retry``'s policy."""
    settings = RuntimeSettings.from_config(Config(), need_kafka=False)
    if retry is not None:
        changes |= {
            "retry_max_attempts": retry.max_attempts,
            "retry_initial_delay": retry.initial_delay,
            "retry_multiplier": retry.multiplier,
            "retry_max_delay": retry.max_delay,
        }
    return dataclasses.replace(settings, **changes)
