"""The garbage collector's tuning while the runtime works, and its undo."""

from __future__ import annotations

import gc

import pytest

from hivewire.runtime._collector import collector_tuned


def test_the_collector_runs_rarely_within_the_block_and_as_before_after_it() -> None:
    before = gc.get_threshold()
    with collector_tuned():
        assert gc.get_threshold()[0] >= 50_000
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_tuning_is_undone_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError, match="boom"), collector_tuned():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_disabled_it_changes_nothing() -> None:
    before = gc.get_threshold()
    with collector_tuned(enabled=False):
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() == 0
