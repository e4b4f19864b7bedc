"""How a run ends: the lanes finish the calls they are in (:func:`wind_down`), and one line says what the run
did (:func:`summary`).

Invariants: each listener finishes the call it is in, up to ``hivewire.shutdown.timeout.ms`` (the log names
each listener and event waited for); queued events are left. A forced stop (a second signal) ends the wait at
once: the events in hand are then not committed, and are read again on restart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from hivewire.runtime._lane import Lane
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._source import TopicPartition

log = logging.getLogger("hivewire.runtime.runner")


def wind_down(lanes: Sequence[Lane], timeout: float, forced: threading.Event) -> tuple[float, list[str]]:
    """Wake ``lanes`` and wait up to ``timeout`` seconds for the calls they are in, or until ``forced``: the
    deadline of the wait, and the calls a forced stop left unfinished (``name (event)``)."""
    for lane in lanes:
        lane.wake()
    deadline = time.monotonic() + timeout
    for lane in lanes:
        busy, current = lane.busy_since, lane.current
        if busy is not None:
            log.info(
                "waiting for listener %s to finish %s (busy for %.0f s; up to %.0f s, "
                "hivewire.shutdown.timeout.ms); stop again to stop at once: that event is then delivered "
                "again on restart",
                lane.name,
                current or "its current event",
                time.monotonic() - busy,
                timeout,
            )
    joined = threading.Event()

    def join_lanes() -> None:
        for lane in lanes:
            if not lane.join(max(0.0, deadline - time.monotonic())) and not forced.is_set():
                log.warning(
                    "listener %s is still busy after %.0f s; its current event will be read again on restart",
                    lane.name,
                    timeout,
                )
        joined.set()

    threading.Thread(target=join_lanes, name="hivewire-shutdown", daemon=True).start()
    abandoned: list[str] = []
    while not joined.wait(0.2):
        if forced.is_set():
            abandoned = [f"{lane.name} ({lane.current})" for lane in lanes if lane.current]
            log.warning(
                "stopping now: %s not finished; %s delivered again on restart",
                ", ".join(abandoned) or "listener calls",
                "those events are not committed and are" if abandoned else "what they handle is",
            )
            break
    return deadline, abandoned


def summary(metrics: Metrics, lanes: Sequence[Lane], committed: dict[TopicPartition, int]) -> str:
    """One line: what this run did, per listener, and the offsets it committed last."""
    value = metrics.registry.get_sample_value
    parts = []
    for lane in lanes:
        labels = {"listener": lane.name}
        counts = [
            (value(f"hivewire_listener_{name}_total", labels) or 0, word)
            for name, word in (
                ("events_handled", "handled"),
                ("attempts_failed", "failed attempt(s)"),
                ("events_dead_lettered", "dead-lettered"),
            )
        ]
        parts.append(f"{lane.name}: " + ", ".join(f"{n:.0f} {word}" for n, word in counts))
    offsets = ", ".join(f"{t}/{p}@{o}" for (t, p), o in sorted(committed.items())) or "none"
    return f"stopped; {'; '.join(parts)}; committed offsets {offsets}"
