"""The event types' one description (idl/events.toml): the committed code is what it generates, everything per
type agrees with it, a malformed description is refused, and a new type needs only a new entry."""

from __future__ import annotations

import importlib.util
import inspect
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import hivewire as hw
from hivewire.events._envelope import ENVELOPES
from hivewire.events._event_type import EventType
from hivewire.events._model import EVENT_CLASSES
from hivewire.events._types import TYPES
from hivewire.runtime._listener import HANDLER_NAMES, MetaStoreEventListener
from hivewire.tools import _testing as testing
from hivewire_thrift.hive_metastore import ttypes as hms

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
GENERATE = ROOT / "idl" / "generate_events.py"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_events", GENERATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_events"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_generated_modules_are_up_to_date_with_the_description() -> None:
    proc = subprocess.run([sys.executable, str(GENERATE), "--check"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_everything_per_type_follows_the_description() -> None:
    described = generator().load()
    assert [e.type for e in described] == [t.value for t in EventType] == [t.value for t in TYPES]
    for entry in described:
        event_type = EventType(entry.type)
        cls, spec = EVENT_CLASSES[event_type], TYPES[event_type]
        assert (cls.__name__, cls.event_type, cls.__doc__) == (entry.cls, event_type, entry.doc)
        assert getattr(hw, entry.cls) is cls
        assert cls.fields == tuple(f.name for f in entry.fields) == tuple(f.name for f in spec.fields)
        assert [(f.key, f.required) for f in spec.fields] == [(f.key, f.required) for f in entry.fields]
        assert spec.wire == entry.wire and spec.database_event == entry.database_event
        if entry.wire is not None:
            assert ENVELOPES[event_type].__struct_config__.tag == entry.wire
        method = getattr(MetaStoreEventListener, HANDLER_NAMES[event_type])
        assert method.__name__ == entry.handler and method.__doc__ == entry.doc
        assert inspect.get_annotations(method)["event"] == entry.cls
        decorator = getattr(hw.App("t"), entry.handler)
        assert decorator._type is event_type
        for prop in entry.properties:
            assert isinstance(inspect.getattr_static(cls, prop.name), property)


@pytest.mark.parametrize("event_type", list(EventType), ids=str)
def test_the_generic_factory_makes_every_type(event_type: EventType) -> None:
    event = testing.make_event(event_type, "sales", "orders", status=False, parameters={"k": "v"})
    assert type(event) is EVENT_CLASSES[event_type] and not event.status
    assert event.db_name == "sales" and event.parameters == {"hive.version": "2.3.10", "k": "v"}
    assert event.table_name == (None if TYPES[event_type].database_event else "orders")
    for field in TYPES[event_type].fields:
        if field.required:
            assert getattr(event, field.name) is not None, field.name
    assert hw.apiary.decode(hw.apiary.encode(event)) == event


def test_the_generic_factory_takes_fields_and_classes() -> None:
    event = testing.make_event(hw.DropPartitionEvent, "s", "t", delete_data=True, environment_context={"a": "b"})
    assert isinstance(event, hw.DropPartitionEvent) and event.delete_data is True
    assert [p.values for p in event.partitions] == [["2024-01-01"]]
    assert event.environment_context == hms.EnvironmentContext(properties={"a": "b"})
    insert = testing.make_event("INSERT", files=["f"])
    assert isinstance(insert, hw.InsertEvent) and insert.files == ["f"] and insert.qualified_name == "db.t"
    with pytest.raises(TypeError, match=r"DropTableEvent has no field\(s\) \['partitions'\]"):
        testing.make_event(hw.DropTableEvent, partitions=[])
    with pytest.raises(ValueError):
        testing.make_event("NO_SUCH_TYPE")


GOOD = """
[[event]]
type = "CREATE_TABLE"
class = "CreateTableEvent"
doc = "A table was created."
wire = "ON_CREATE_TABLE"
names_from = "table"
fields = [{ name = "table", type = "Table", key = "table", required = true }]
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('type = "Table"', 'type = "Tabel"'), "type 'Tabel' is neither a struct of hive_metastore.thrift"),
        (('names_from = "table"', 'names_from = "tables"'), "names_from must name a field of type Table"),
        (("required = true", "required = 1"), "only a single struct can be required"),
        (('doc = "A table was created."', 'doc = "A table\\nwas created."'), "'doc' must be one line"),
        (('class = "CreateTableEvent"', 'class = "CreateTable"'), "must be a CamelCase name ending in 'Event'"),
        (('wire = "ON_CREATE_TABLE"', 'wire = "ON_CREATE_TABLE"\ncolour = "red"'), "unknown keys ['colour']"),
        (('name = "table"', 'name = "status"'), "field names ['status'] are repeated or taken by ListenerEvent"),
        (("[[event]]", "[[events]]"), "expected only [[event]] tables"),
    ],
)
def test_a_malformed_description_is_refused(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    gen = generator()
    good = tmp_path / "events.toml"
    good.write_text(GOOD)
    assert [e.cls for e in gen.load(good)] == ["CreateTableEvent"]
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace(*change))
    with pytest.raises(gen.DescriptionError, match=__import__("re").escape(message)):
        gen.load(bad)
    twice = tmp_path / "twice.toml"
    twice.write_text(GOOD + GOOD.replace('"CREATE_TABLE"', '"OTHER"').replace("CreateTableEvent", "OtherEvent"))
    with pytest.raises(gen.DescriptionError, match=r"wire \['ON_CREATE_TABLE'\] used by more than one"):
        gen.load(twice)


NEW_TYPES = """
[[event]]
type = "UPDATE_TABLE_STATS"
doc = "A table's column statistics were updated."
wire = "ON_UPDATE_TABLE_STATS"
names_from = "table"
fields = [
    { name = "table", type = "Table", key = "table", required = true },
    { name = "column_statistics", type = "ColumnStatistics", key = "colStats", required = true },
    { name = "valid_write_ids", type = "list<string>", key = "validWriteIds" },
]

[[event]]
type = "CREATE_DATACONNECTOR"
doc = "A data connector was created (not an Apiary message)."
database_event = true
fields = [{ name = "connector_names", type = "list<string>", key = "connectorNames" }]
"""

USES_THE_NEW_TYPES = """
import json
import hivewire as hw
from hivewire.arrow import to_arrow
from hivewire_thrift.hive_metastore.ttypes import ColumnStatistics, ColumnStatisticsDesc

seen = []
app = hw.App("statistics")

@app.on_update_table_stats(db="sales")
def updated(event: hw.events.UpdateTableStatsEvent) -> None:
    seen.append((event.qualified_name, event.column_statistics.statsDesc.tableName, event.valid_write_ids))

class Audit(hw.MetaStoreEventListener):
    def on_update_table_stats(self, event):
        seen.append(("audit", event.table.tableName))

app.add_listener(Audit)
described = ColumnStatisticsDesc(isTblLevel=True, dbName="sales", tableName="orders")
stats = ColumnStatistics(statsDesc=described, statsObj=[])
event = hw.testing.make_event(
    hw.EventType.UPDATE_TABLE_STATS, "sales", "orders", column_statistics=stats, valid_write_ids=["7"]
)
data = hw.apiary.encode(event)
message = json.loads(data)
assert message["eventType"] == "ON_UPDATE_TABLE_STATS"
assert message["colStats"]["statsDesc"]["tableName"] == "orders"
decoded = hw.apiary.decode(data)
assert decoded == event and type(decoded).__name__ == "UpdateTableStatsEvent"
assert (decoded.db_name, decoded.table_name) == ("sales", "orders")
assert app.dispatch(decoded) == ["updated", "Audit"]
assert seen == [("sales.orders", "orders", ["7"]), ("audit", "orders")]
assert "<th style='text-align:left'>valid write ids</th><td>7</td>" in decoded._repr_html_()
row = to_arrow([decoded]).to_pylist()[0]
assert (row["event_type"], row["qualified_name"]) == ("UPDATE_TABLE_STATS", "sales.orders")
assert row["location"] == event.table.sd.location and row["columns"] == [{"name": "id", "type": "int", "comment": None}]

opened = hw.testing.make_event("CREATE_DATACONNECTOR", connector_names=["7"])
assert type(opened).__name__ == "CreateDataconnectorEvent" and opened.connector_names == ["7"]
assert callable(app.on_create_dataconnector)
try:
    hw.apiary.encode(opened)
except hw.HivewireError as e:
    assert "CREATE_DATACONNECTOR events have no Apiary message form" in str(e)
else:
    raise AssertionError("encoded")
try:
    hw.apiary.decode(b'{"eventType": "ON_CREATE_DATACONNECTOR", "databaseName": "db"}')
except hw.DecodeError as e:
    assert "unknown eventType 'ON_CREATE_DATACONNECTOR'" in str(e), e
else:
    raise AssertionError("decoded")
print("ok")
"""


def test_new_event_types_need_only_their_description(tmp_path: Path) -> None:
    # A copy of the SDK, regenerated from the description plus one entry: nothing else is edited.
    shutil.copytree(ROOT / "sdk", tmp_path / "sdk", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "idl", tmp_path / "idl", ignore=shutil.ignore_patterns("__pycache__"))
    description = tmp_path / "idl" / "events.toml"
    description.write_text(description.read_text() + NEW_TYPES)
    generate = [sys.executable, str(GENERATE), "--description", str(description), "--root", str(tmp_path)]
    proc = subprocess.run(generate, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "class UpdateTableStatsEvent(ListenerEvent):" in (tmp_path / "sdk/hivewire/events/_model.py").read_text()
    env = {"PYTHONPATH": f"{tmp_path / 'sdk'}:{ROOT / 'thrift'}", "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(USES_THE_NEW_TYPES)], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
