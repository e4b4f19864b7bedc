"""``/health`` of a runner (:func:`hivewire.runtime._health.health`): readiness through a rebalance. A member
that had partitions stays ready while the group takes them back and hands them out again, for
:data:`~hivewire.runtime._health.REJOIN_GRACE` seconds; one that never had any, has had none for longer, or
lost them (the group dropped it), is not."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from runtime_settings import runtime_settings

import hivewire as hw
from hivewire.runtime._health import REJOIN_GRACE, health
from hivewire.runtime._lane import Watchdog
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._source import MemorySource
from hivewire.runtime._tracker import CommitTracker


def answer(assigned: set[tuple[str, int]], unassigned_for: float | None, *, polling: bool = True) -> dict[str, Any]:
    return health(
        polling=polling,
        paused=False,
        source=MemorySource(partitions=1),
        lanes=[],
        watchdog=Watchdog([], threading.Event()),
        tracker=CommitTracker(),
        assigned=assigned,
        unassigned_for=unassigned_for,
        now=0.0,
    )


@pytest.mark.parametrize(
    ("assigned", "unassigned_for", "status", "rebalancing"),
    [
        ({("t", 0)}, None, "UP", None),  # assigned
        (set(), None, "DOWN", None),  # never assigned: joining, or more members than partitions
        (set(), 0.0, "UP", 0.0),  # a rebalance took them a moment ago
        (set(), REJOIN_GRACE, "UP", REJOIN_GRACE),
        (set(), REJOIN_GRACE + 0.1, "DOWN", REJOIN_GRACE + 0.1),  # none given back for too long
    ],
)
def test_readiness_through_a_rebalance(
    assigned: set[tuple[str, int]], unassigned_for: float | None, status: str, rebalancing: float | None
) -> None:
    body = answer(assigned, unassigned_for)
    assert (body["status"], body["rebalancing_s"]) == (status, rebalancing)


def test_a_stopped_loop_is_down_even_inside_the_grace() -> None:
    body = answer(set(), 1.0, polling=False)
    assert (body["status"], body["alive"]) == ("DOWN", False)


class LosingSource(MemorySource):
    """A memory source that can say its partitions are being lost, as KafkaSource does after a session timeout."""

    losing = False  # the SupportsLoss protocol, as a plain attribute


@pytest.mark.parametrize(("lost", "rebalancing"), [(False, True), (True, False)], ids=["revoked", "lost"])
def test_only_a_rebalance_starts_the_grace_not_a_lost_assignment(lost: bool, rebalancing: bool) -> None:
    app = hw.App("grace")
    app.add_listener(lambda event: None, name="noop")
    source = LosingSource(partitions=2)
    runner = Runner("grace", app.listeners, source, runtime_settings(tune_gc=False), Metrics(), lambda: None)
    partitions = [("events", 0), ("events", 1)]
    runner._on_assign(partitions)
    runner._on_revoke(partitions[:1])  # one of two: still assigned
    assert runner.unassigned_since is None
    source.losing = lost
    runner._on_revoke(partitions[1:])
    assert (runner.unassigned_since is not None) == rebalancing
    assert (runner.health()["rebalancing_s"] is not None) == rebalancing
    runner._on_assign(partitions)
    assert runner.unassigned_since is None and runner.health()["rebalancing_s"] is None
