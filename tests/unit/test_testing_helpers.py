"""hivewire.testing: the factories users build test events with, and run_app (the runtime without a broker)."""

from __future__ import annotations

import pytest

import hivewire as hw
from hivewire.tools import _testing as testing

FACTORIES = [
    (testing.create_table_event, hw.CreateTableEvent),
    (testing.alter_table_event, hw.AlterTableEvent),
    (testing.drop_table_event, hw.DropTableEvent),
    (testing.add_partition_event, hw.AddPartitionEvent),
    (testing.alter_partition_event, hw.AlterPartitionEvent),
    (testing.drop_partition_event, hw.DropPartitionEvent),
    (testing.insert_event, hw.InsertEvent),
    (testing.create_database_event, hw.CreateDatabaseEvent),
    (testing.alter_database_event, hw.AlterDatabaseEvent),
    (testing.drop_database_event, hw.DropDatabaseEvent),
]


@pytest.mark.parametrize(("factory", "cls"), FACTORIES, ids=[c.__name__ for _, c in FACTORIES])
def test_factories_build_events_that_survive_the_wire(factory, cls) -> None:  # type: ignore[no-untyped-def]
    event = factory()
    assert type(event) is cls
    assert event.db_name == "db"
    assert event.hive_version == "2.3.10"
    assert hw.apiary.decode(hw.apiary.encode(event)) == event


def test_factory_options() -> None:
    renamed = testing.alter_table_event("sales", "orders", rename_to="orders_v2", add_columns={"eur": "double"})
    assert renamed.is_rename and renamed.table_name == "orders_v2"
    assert renamed.new_table.sd.cols[-1].name == "eur"
    added = testing.add_partition_event(
        "sales", "orders", [["2024", "01"], ["2024", "02"]], partition_keys={"year": "string", "month": "string"}
    )
    assert [p.values for p in added.partitions] == [["2024", "01"], ["2024", "02"]]
    assert added.partitions[1].sd.location.endswith("/orders/year=2024/month=02")
    failed = testing.drop_table_event(status=False, environment_context={"DO_NOT_UPDATE_STATS": "true"})
    assert not failed.status and failed.environment_context.properties == {"DO_NOT_UPDATE_STATS": "true"}


def test_run_app_goes_through_retries_and_dead_letters() -> None:
    app = hw.App("t")
    attempts: list[str] = []
    seen: list[str] = []

    @app.on_create_table
    def flaky(event: hw.CreateTableEvent) -> None:
        attempts.append(event.table_name or "")
        if event.table_name == "bad" or attempts.count(event.table_name or "") < 2:
            raise ConnectionError("catalog unavailable")
        seen.append(event.table_name or "")

    source = testing.run_app(
        app,
        [testing.create_table_event("s", "ok"), testing.create_table_event("s", "bad"), b"garbage"],
        raise_errors=False,
    )
    assert seen == ["ok"]
    assert attempts.count("bad") == 3
    assert sorted(d.headers["hivewire.listener"] for d in source.dead_letters) == [
        "hivewire.decoder",
        "test_run_app_goes_through_retries_and_dead_letters.flaky",
    ]
    assert sum(source.committed.values()) == 3


def test_run_app_raises_the_listeners_own_exception_by_default() -> None:
    app = hw.App("t")

    @app.on_create_table
    def broken(event: hw.CreateTableEvent) -> None:
        raise LookupError(f"no owner for {event.table_name}")

    with pytest.raises(LookupError, match="no owner for orders"):
        testing.run_app(app, [testing.create_table_event("s", "orders")])


def test_mock_listener_records_the_events_its_filter_lets_through() -> None:
    app = hw.App("t")
    mock = testing.mock_listener(app, hw.EventType.CREATE_TABLE, db="sales")
    testing.run_app(
        app,
        [
            testing.create_table_event("sales", "orders"),
            testing.create_table_event("hr", "people"),
            testing.drop_table_event("sales", "orders"),
        ],
    )
    mock.assert_called_once()
    event = mock.call_args.args[0]
    assert isinstance(event, hw.CreateTableEvent) and event.table_name == "orders"
    assert app.listeners[0].name == "mock"
