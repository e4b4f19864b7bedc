"""The notebook's pictures and progress: events over time by type; no TqdmWarning without ipywidgets."""

from __future__ import annotations

import importlib.util
import warnings

import pytest

import hivewire as hw
from hivewire.data._notebook import EventList, progress_bar
from hivewire.data._svg import timeline_svg
from hivewire.testing import make_event


def _stamped(kind: type[hw.ListenerEvent], offset: int, ms: int) -> hw.ListenerEvent:
    return make_event(kind).copy(origin=hw.Origin("apiary", 0, offset, ms))


def test_events_over_time_by_type_is_an_inline_picture() -> None:
    events = EventList(
        [_stamped(hw.CreateTableEvent, i, 1_700_000_000_000 + i * 1000) for i in range(30)]
        + [_stamped(hw.DropTableEvent, 30 + i, 1_700_000_030_000 + i * 1000) for i in range(10)]
    )
    page = events._repr_html_()
    assert page.count("<svg") == 1 and "events over time by type" in page
    svg = timeline_svg(events)
    assert svg.count("<rect") == 40  # one bar per bucket here: one event each, 40 buckets over 39 s
    assert "CREATE_TABLE: 1" in svg and "DROP_TABLE: 1" in svg
    assert "2023-11-14 22:13:20.000" in svg  # the first event's time as the axis' start
    legend = svg[svg.index("<p>") :]  # the most frequent type leads the legend, in the first colour
    assert legend.index("CREATE_TABLE") < legend.index("DROP_TABLE") and "#0072B2" in legend.split("CREATE")[0]
    assert timeline_svg(EventList([make_event(hw.CreateTableEvent)])) == ""  # nothing to draw


def test_no_tqdm_warning_without_ipywidgets(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    bar_class = progress_bar()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a TqdmWarning would raise
        with bar_class(total=3, disable=False) as bar:
            bar.update(3)
    assert bar_class.__module__ == "tqdm.std"
