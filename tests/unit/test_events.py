"""hivewire.events: immutability, value semantics, repr, to_dict, copies, handler binding, HTML rendering."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.events._model import (
    EVENT_CLASSES,
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropPartitionEvent,
    DropTableEvent,
    EventType,
    InsertEvent,
    ListenerEvent,
    Origin,
)
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

sys.path.insert(0, str(Path(__file__).parent))
from apiary_messages import GOLDEN, messages


def raw(message: Any) -> bytes:
    return json.dumps(message).encode()


def table(name: str = "orders") -> Any:
    return make_table("sales", name, partition_keys={"dt": "string"}, parameters={"k": "v"})


def decoded(event_type: str = "ON_ADD_PARTITION") -> ListenerEvent:
    return apiary.decode(raw(messages("2.3")[event_type]), origin=Origin("apiary", 2, 77, 1717171717000))


def test_every_event_type_has_a_class() -> None:
    assert set(EVENT_CLASSES) == set(EventType)
    for event_type, cls in EVENT_CLASSES.items():
        assert cls.event_type is event_type
        # CamelCase of Hive's name, with Hive's own word breaks where it writes none (ADD_PRIMARYKEY)
        assert cls.__name__.lower() == "".join(event_type.value.split("_")).lower() + "event"
    assert str(EventType.ADD_PARTITION) == "ADD_PARTITION" and EventType("INSERT") is EventType.INSERT
    assert str(Origin("apiary", 2, 77)) == "apiary/2@77"


def test_events_are_immutable() -> None:
    for event in (decoded(), CreateTableEvent(table=table())):
        with pytest.raises(AttributeError, match="immutable"):
            event.db_name = "other"  # type: ignore[misc]
        with pytest.raises(AttributeError, match="immutable"):
            event._db_name = "other"  # type: ignore[misc]
        with pytest.raises(AttributeError, match="immutable"):
            del event._table_name
        with pytest.raises(TypeError):
            event.parameters["x"] = "y"  # type: ignore[index]
        with pytest.raises(AttributeError):
            event.anything = 1  # type: ignore[attr-defined]
        assert event.db_name == "sales"


def test_constructor_derives_names_and_rejects_unknown_fields() -> None:
    event = AddPartitionEvent(table=table(), partitions=[make_partition(table(), ["2024-05-01"])])
    assert (event.db_name, event.table_name, event.qualified_name) == ("sales", "orders", "sales.orders")
    assert (event.status, event.parameters, event.environment_context, event.hive_version) == (True, {}, None, None)
    assert (event.raw, event.origin, event.handler) == (None, None, None)
    assert AddPartitionEvent(db_name="x", table_name="y", table=table()).qualified_name == "x.y"
    database = CreateDatabaseEvent(database=make_database("sales"))
    assert (database.db_name, database.table_name, database.qualified_name) == ("sales", None, "sales")
    with pytest.raises(TypeError, match="has no field"):
        CreateTableEvent(table=table(), partitions=[])
    assert DropPartitionEvent(table=table()).partitions == [] and DropTableEvent(table=table()).delete_data is False
    renamed = AlterTableEvent(old_table=table("a"), new_table=table("b"))
    assert renamed.is_rename and renamed.table_name == "b"
    assert not AlterTableEvent(old_table=table(), new_table=table()).is_rename


def test_equality_and_hash_ignore_raw_origin_and_handler() -> None:
    for _name, message, expected in GOLDEN:
        event = apiary.decode(raw(message), origin=Origin("t", 0, 1))
        assert event == expected and expected == event
        assert hash(event) == hash(expected)
        assert event == event.copy(handler=hw.MetastoreClient("thrift://127.0.0.1:1"), origin=None)
    a, b = CreateTableEvent(table=table()), CreateTableEvent(table=table())
    assert a == b and len({a, b, decoded("ON_CREATE_TABLE")}) == 2
    assert a != CreateTableEvent(table=table(), status=False)
    assert a != CreateTableEvent(table=table(), parameters={"hive.version": "2.3.9"})
    assert a != CreateTableEvent(table=table("other"))
    assert a != CreateTableEvent(table=table(), environment_context=hms.EnvironmentContext(properties={}))
    assert a != DropTableEvent(table=table())  # same content, other type
    assert a != "CreateTableEvent(sales.orders)"


def test_repr() -> None:
    assert repr(CreateTableEvent(table=table())) == "CreateTableEvent(sales.orders)"
    assert repr(DropTableEvent(table=table(), status=False)) == "DropTableEvent(sales.orders, status=False)"
    assert repr(decoded()) == "AddPartitionEvent(sales.orders at apiary/2@77)"
    assert repr(CreateDatabaseEvent(database=make_database("sales"))) == "CreateDatabaseEvent(sales)"
    assert "partitions" not in decoded()._values  # repr and names read nothing lazily


def test_to_dict_is_the_apiary_message_and_a_private_copy() -> None:
    for _name, message, _expected in GOLDEN:
        lazy = apiary.decode(raw(message))
        data = lazy.to_dict()
        assert data == message
        data["parameters"]["x"] = "y"
        for value in data.values():
            if isinstance(value, dict):
                value.clear()
        assert lazy.to_dict() == message  # the payload was not touched
        full = apiary.decode(raw(message))
        for field in full.fields:
            getattr(full, field)
        assert full.to_dict() == message
    built = InsertEvent(db_name="d", table_name="t", files=["a"])
    assert built.to_dict()["files"] == ["a"] and built.to_dict()["partitionKeyValues"] is None


def mutate(event: AddPartitionEvent) -> None:
    """What a careless listener does to the objects it is given."""
    event.table.tableName = "mutated"
    event.table.sd.cols.append(hms.FieldSchema(name="x", type="int"))
    event.table.parameters["k"] = "changed"
    event.partitions[0].values[0] = "mutated"
    event.partitions.append(event.partitions[0])


@pytest.mark.parametrize("source", ["decoded", "decoded-then-read", "python"])
def test_copies_do_not_share_objects(source: str) -> None:
    if source == "python":
        t = table()
        original: Any = AddPartitionEvent(table=t, partitions=[make_partition(t, ["2024-05-01"])])
    else:
        original = decoded()
    if source == "decoded-then-read":
        original.table  # noqa: B018 - converted before the copies are made
    before = original.to_dict()
    partitions_before = len(original.partitions)
    assert partitions_before >= 1  # mutate() appends one to the first copy
    first, second = original.copy(), original.copy()
    assert first == original == second
    mutate(first)
    assert first.table.tableName == "mutated" and first != original
    assert second == original and second.table.tableName == "orders"
    assert original.to_dict() == before and original.table.tableName == "orders"
    assert len(original.partitions) == len(second.partitions) == partitions_before == len(first.partitions) - 1
    assert second.partitions[0].values[0] != "mutated" and original.partitions[0].values[0] != "mutated"
    if source != "python":
        assert first.raw is original.raw and first.origin == original.origin  # the payload is shared


def test_copies_of_insert_events_do_not_share_lists() -> None:
    for original in (
        decoded("ON_INSERT"),
        InsertEvent(db_name="d", table_name="t", files=["a"], partition_key_values={"dt": "1"}),
    ):
        copy = original.copy()
        copy.files.append("b")  # type: ignore[attr-defined]
        copy.partition_key_values["dt"] = "2"  # type: ignore[attr-defined]
        assert "b" not in original.files  # type: ignore[attr-defined]
        assert original.partition_key_values["dt"] != "2"  # type: ignore[attr-defined]


def test_copy_binds_a_handler_and_sets_the_origin() -> None:
    event = decoded()
    client = hw.MetastoreClient("thrift://127.0.0.1:1")  # never connected: it opens on the first call
    bound = event.copy(handler=client)
    assert bound.handler is client and event.handler is None
    assert bound.copy().handler is client and bound.copy(handler=None).handler is None
    moved = event.copy(origin=Origin("other", 1, 2))
    assert moved.origin == Origin("other", 1, 2) and event.origin == Origin("apiary", 2, 77, 1717171717000)
    assert event.copy(origin=None).origin is None
    assert type(bound) is AddPartitionEvent and bound == event


def test_insert_event_table_needs_a_handler() -> None:
    event = decoded("ON_INSERT")
    with pytest.raises(
        hw.HivewireError,
        match=r"InsertEvent.table for sales.orders needs a metastore connection: "
        r"run the app with metastore URIs configured",
    ):
        event.table  # type: ignore[attr-defined]  # noqa: B018
    assert event.db_name == "sales" and event.table_name == "orders"


def test_repr_html_escapes() -> None:
    evil = make_table("<b>db</b>", "<script>alert('x')</script>")
    event = CreateTableEvent(table=evil, status=False).copy(origin=Origin("t&<>", 0, 1))
    html = event._repr_html_()
    assert "<script>" not in html and "<b>db</b>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html and "&lt;b&gt;db&lt;/b&gt;" in html
    assert "t&amp;&lt;&gt;/0@1" in html and "CREATE_TABLE" in html and "False" in html
    assert html.startswith("<table") and html.endswith("</table>")


def test_summaries_show_the_key_facts_of_each_type() -> None:
    base = "s3://lake/sales.db/orders"
    assert decoded("ON_CREATE_TABLE")._summary() == {"table type": "EXTERNAL_TABLE", "location": base}
    assert decoded("ON_DROP_TABLE")._summary() == {
        "table type": "EXTERNAL_TABLE",
        "location": base,
        "delete data": "True",
    }
    assert decoded("ON_ALTER_TABLE")._summary() == {
        "renamed from": "sales.orders_staging",
        "table type": "EXTERNAL_TABLE",
        "location": base,
    }
    partitions = [f"dt=2024-05-0{day} at {base}/dt=2024-05-0{day}" for day in (1, 2)]
    assert decoded()._summary() == {"table type": "EXTERNAL_TABLE", "location": base, "partitions": partitions}
    assert decoded("ON_DROP_PARTITION")._summary() == {
        "table type": "EXTERNAL_TABLE",
        "location": base,
        "partitions": partitions[1:],
        "delete data": "False",
    }
    assert decoded("ON_ALTER_PARTITION")._summary() == {
        "table type": "EXTERNAL_TABLE",
        "partition": partitions[0],
        "parameters": ["numRows: 100 -> 250"],  # the partition's statistics, updated by the ALTER
    }
    assert decoded("ON_INSERT")._summary() == {
        "partition": "dt=2024-05-01",
        "files": [f"{base}/dt=2024-05-01/part-0000{i}.parquet" for i in (0, 1)],
    }
    for database in ("ON_CREATE_DATABASE", "ON_ALTER_DATABASE", "ON_DROP_DATABASE"):
        assert decoded(database)._summary() == {"location": "s3://lake/sales.db"}
    assert "dt=2024-05-02 at s3://lake/sales.db/orders/dt=2024-05-02" in decoded()._repr_html_()

    t = table()
    many = AddPartitionEvent(table=t, partitions=[make_partition(t, [str(i)]) for i in range(12)])._summary()
    assert many["partitions"][0] == f"dt=0 at {t.sd.location}/dt=0" and many["partitions"][-1] == "... and 2 more"
    altered = AlterPartitionEvent(
        table=t,
        old_partition=make_partition(t, ["1"]),
        new_partition=make_partition(t, ["1"], location="s3://elsewhere"),
    )._summary()
    assert altered == {
        "table type": "MANAGED_TABLE",
        "partition": "dt=1 at s3://elsewhere",
        "previous location": f"{t.sd.location}/dt=1",
    }
    moved = AlterDatabaseEvent(
        old_database=make_database("s", location="s3://a"), new_database=make_database("s", location="s3://b")
    )._summary()
    assert moved == {"location": "s3://b", "previous location": "s3://a"}
    assert AlterTableEvent(old_table=table(), new_table=table())._summary() == {
        "table type": "MANAGED_TABLE",
        "location": t.sd.location,
    }
    # partial objects (events built in Python) and malformed ones (decoded) still render
    assert CreateTableEvent(table=hms.Table(tableName="t", dbName="d"))._summary() == {}
    assert AddPartitionEvent(
        table=hms.Table(dbName="d", tableName="t", partitionKeys=[None]), partitions=[hms.Partition(values=[None])]
    )._summary() == {"partitions": ["None=None"]}
    assert InsertEvent(db_name="d", table_name="t")._summary() == {"files": []}
    bad = {**messages("2.3")["ON_CREATE_TABLE"], "table": {"tableName": "orders", "dbName": "sales", "sd": []}}
    html = apiary.decode(raw(bad))._repr_html_()
    assert "<th style='text-align:left'>error</th><td>table.sd: expected an object, got []</td>" in html


def test_lazy_fields_convert_once_and_hand_out_the_same_object() -> None:
    event = decoded()
    assert "table" not in event._values
    first = event.table  # type: ignore[attr-defined]
    assert event.table is first and "table" in event._values  # type: ignore[attr-defined]


def test_the_examples_in_docs_events_md_run() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()
    blocks = text.split("```python\n")[1:]
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block.split("```")[0], "docs/events.md", "exec"), {})
