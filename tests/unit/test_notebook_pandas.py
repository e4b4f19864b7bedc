"""EventList.to_pandas: a DataFrame when pandas is there, a PrerequisiteError naming the extra when it is not."""

from __future__ import annotations

import sys

import pytest

import hivewire as hw
from hivewire.data._notebook import EventList
from hivewire.tools import _testing as testing


def events() -> EventList:
    return EventList(
        [testing.create_table_event("sales", "orders", parameters={"k": "v"}), testing.drop_database_event("tmp")]
    )


def test_to_pandas_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = events()
    monkeypatch.setitem(sys.modules, "pandas", None)  # what `import pandas` sees when it is not installed
    with pytest.raises(hw.PrerequisiteError) as exc:
        listed.to_pandas()
    assert "pip install 'hivewire[arrow]'" in str(exc.value) and "pandas" in str(exc.value)
    assert isinstance(exc.value.__cause__, ImportError)


def test_to_pandas_with_pandas() -> None:
    frame = events().to_pandas()
    assert list(frame["qualified_name"]) == ["sales.orders", "tmp"]
    assert isinstance(frame["parameters"][0], dict) and frame["parameters"][0]["k"] == "v"  # maps become dicts
