"""The event model as a type checker sees it: mypy (strict) on listener code written as a user writes it.

A listener's ``event.table`` is the Thrift ``Table``, ``event.partitions`` a ``list[Partition]``, and so on; the
decorators and ``on_*`` methods are typed per event class, so a listener registered for the wrong type fails.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from mypy import api

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
TTYPES = "hivewire_thrift.hive_metastore.ttypes"

LISTENERS = """
from __future__ import annotations

import hivewire as hw

app = hw.App("typed")


@app.on_create_table
def created(event: hw.CreateTableEvent) -> None:
    reveal_type(event.table)
    reveal_type(event.environment_context)
    sd = event.table.sd
    print(sd.location if sd is not None else None, event.db_name, event.qualified_name)


@app.on_add_partition(db="sales", table="orders_*")
def added(event: hw.AddPartitionEvent) -> None:
    reveal_type(event.partitions)
    reveal_type(event.to_dict())


class Audit(hw.MetaStoreEventListener):
    def on_drop_table(self, event: hw.DropTableEvent) -> None:
        reveal_type(event.delete_data)

    def on_alter_partition(self, event: hw.AlterPartitionEvent) -> None:
        reveal_type(event.new_partition)

    def on_insert(self, event: hw.InsertEvent) -> None:
        reveal_type(event.files)
        reveal_type(event.partition_key_values)
        reveal_type(event.table)

    def on_alter_database(self, event: hw.AlterDatabaseEvent) -> None:
        reveal_type(event.old_database)


app.add_listener(Audit)
event = hw.testing.create_table_event("sales", "orders", columns={"id": "bigint"})
reveal_type(event)
reveal_type(event.copy())
reveal_type(hw.testing.make_event(hw.AlterTableEvent, "sales", "orders"))
reveal_type(hw.AlterTableEvent(db_name="sales", table_name="orders").is_rename)
app.dispatch(hw.CreateTableEvent(table=hw.testing.make_table("sales", "orders"), status=False))
"""

MISTAKES = """
from __future__ import annotations

import hivewire as hw

app = hw.App("typed")


@app.on_create_table
def wrong_type(event: hw.DropTableEvent) -> None: ...


def no_such_field(event: hw.CreateTableEvent) -> None:
    print(event.partitions)


class Wrong(hw.MetaStoreEventListener):
    def on_drop_table(self, event: hw.CreateTableEvent) -> None: ...


hw.CreateTableEvent(table="orders")
hw.testing.create_table_event("sales", "orders", colums={"id": "bigint"})
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the module's runs: hivewire is analysed once."""
    return tmp_path_factory.mktemp("mypy-cache")


def mypy(tmp_path: Path, cache: Path, source: str) -> tuple[int, list[str]]:
    path = tmp_path / "listeners.py"
    path.write_text(textwrap.dedent(source))
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(cache),
            str(path),
        ]
    )
    assert not err, err
    return status, out.splitlines()


def test_listener_code_type_checks_with_the_thrift_types(tmp_path: Path, cache: Path) -> None:
    status, lines = mypy(tmp_path, cache, LISTENERS)
    errors = [line for line in lines if ": error:" in line]
    assert errors == [] and status == 0
    revealed = [re.sub(r"^.*Revealed type is ", "", line).strip('"') for line in lines if "Revealed type" in line]
    assert revealed == [
        f"{TTYPES}.Table",
        f"{TTYPES}.EnvironmentContext | None",
        f"list[{TTYPES}.Partition]",
        "dict[str, str | int | float | bool | list[...] | dict[str, ...] | None]",
        "bool",
        f"{TTYPES}.Partition",
        "list[str]",
        "dict[str, str]",
        f"{TTYPES}.Table",
        f"{TTYPES}.Database",
        "hivewire.events._model.CreateTableEvent",
        "hivewire.events._model.CreateTableEvent",
        "hivewire.events._model.AlterTableEvent",
        "bool",
    ]


def test_listeners_for_the_wrong_type_do_not_type_check(tmp_path: Path, cache: Path) -> None:
    status, lines = mypy(tmp_path, cache, MISTAKES)
    errors = "\n".join(line for line in lines if ": error:" in line)
    assert status == 1
    assert re.search(r':9: error: Argument 1 to "__call__" of "BoundOn" has incompatible type', errors), errors
    assert ':14: error: "CreateTableEvent" has no attribute "partitions"' in errors
    assert re.search(r':18: error: Argument 1 of "on_drop_table" is incompatible with supertype', errors), errors
    assert re.search(r':21: error: Argument "table" to "CreateTableEvent" has incompatible type "str"', errors)
    assert re.search(r':22: error: Unexpected keyword argument "colums" for "create_table_event"', errors), errors
