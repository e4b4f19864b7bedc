"""What every lane of an app shares (:class:`LaneServices`): the tracker, the source, the metrics, the app's
defaults for retries, timeouts and bounds, the stop flag and the call that stops the app.

One object per runner, made by it before its lanes; every lane, its intake, its executor and its delivery
read it and never replace what it holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from hivewire.metastore import MetastoreClient
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._options import RetryPolicy
from hivewire.runtime._source import Source
from hivewire.runtime._tracker import CommitTracker


@dataclass
class LaneServices:
    """What every lane of an app shares."""

    tracker: CommitTracker
    source: Source
    metrics: Metrics
    retry: RetryPolicy
    timeout: float
    queue_events: int
    queue_bytes: int
    app_name: str
    stopping: threading.Event
    metastore: Callable[[], MetastoreClient | None]
    fatal: Callable[[BaseException], None]
    max_abandoned: int = 8
    failing_bound: int = 500  # events a failing listener holds in memory: the runner's poll size
    pace_bound: int = 2000  # below this many queued events a listener needs more (Runner._pace)
    room: threading.Event = field(default_factory=threading.Event)  # set when one does
    # The first failures given up on, (listener, exception): hivewire.testing.run_app raises the first.
    failures: list[tuple[str, BaseException]] = field(default_factory=list)
