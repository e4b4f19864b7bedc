"""The rate limit of repeating log lines: due at most once a period, counting what it held back."""

from __future__ import annotations

import threading

from hivewire._ratelimit import RateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_due_at_once_then_once_a_period_counting_what_was_held_back() -> None:
    clock = Clock()
    limit = RateLimit(10.0, clock)
    assert limit.due() == 1  # the first occurrence is logged at once
    clock.now += 9
    assert [limit.due() for _ in range(3)] == [0, 0, 0]
    clock.now += 1
    assert limit.due() == 4  # this one and the three held back
    assert limit.due() == 0
    clock.now += 60
    assert limit.due() == 2


def test_every_occurrence_is_counted_once_across_threads() -> None:
    limit = RateLimit(3600.0)
    counts: list[int] = []
    lock = threading.Lock()

    def occur() -> None:
        for _ in range(1000):
            count = limit.due()
            with lock:
                counts.append(count)

    threads = [threading.Thread(target=occur) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts)[-1] == 1 and sum(counts) == 1  # one line for the first, the rest held back
    limit.seconds = 0.0
    assert limit.due() == 4000  # the next line speaks for every occurrence held back, and itself
