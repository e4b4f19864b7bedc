"""App's registration API and synchronous dispatch (no broker)."""

from __future__ import annotations

import pytest

import hivewire as hw
from hivewire.runtime._listener import EventFilter, RetryPolicy, load_object
from hivewire.tools._testing import make_database, make_partition, make_table


def create(db: str = "sales", table: str = "orders", status: bool = True) -> hw.CreateTableEvent:
    return hw.CreateTableEvent(table=make_table(db, table), status=status)


def add(db: str = "sales", table: str = "orders") -> hw.AddPartitionEvent:
    t = make_table(db, table, partition_keys={"dt": "string"})
    return hw.AddPartitionEvent(table=t, partitions=[make_partition(t, ["2024-01-01"])])


def test_per_type_decorators_bare_and_with_options() -> None:
    app = hw.App("t")
    seen: list[str] = []

    @app.on_create_table
    def created(event: hw.CreateTableEvent) -> None:
        seen.append(f"created {event.table.tableName}")

    @app.on_add_partition(db="sales", table="orders_*")
    def added(event: hw.AddPartitionEvent) -> None:
        seen.append(f"added {event.partitions[0].values}")

    assert created.__name__ == "created"  # decorators return the function itself
    assert app.dispatch(create()) == ["test_per_type_decorators_bare_and_with_options.created"]
    assert app.dispatch(add(table="orders_eu")) == ["test_per_type_decorators_bare_and_with_options.added"]
    assert app.dispatch(add(table="customers")) == []
    assert seen == ["created orders", "added ['2024-01-01']"]


def test_on_with_several_types_globs_and_status() -> None:
    app = hw.App("t")
    seen: list[tuple[str, str, bool]] = []

    @app.on(hw.EventType.CREATE_TABLE, "DROP_TABLE", db=["sales", "fin*"], status=None, name="audit")
    def audit(event: hw.ListenerEvent) -> None:
        seen.append((event.event_type.value, event.qualified_name, event.status))

    app.dispatch(create("sales", "a"))
    app.dispatch(create("finance", "b", status=False))
    app.dispatch(hw.DropTableEvent(table=make_table("Sales", "c")))  # Hive names are case-insensitive
    app.dispatch(create("hr", "d"))
    app.dispatch(add("sales", "e"))
    assert seen == [
        ("CREATE_TABLE", "sales.a", True),
        ("CREATE_TABLE", "finance.b", False),
        ("DROP_TABLE", "Sales.c", True),
    ]
    assert app.listeners[0].name == "audit"


def test_status_defaults_to_successful_changes_only() -> None:
    app = hw.App("t")
    seen: list[bool] = []
    app.add_listener(lambda e: seen.append(e.status), types=[hw.EventType.CREATE_TABLE], name="ok")
    app.dispatch(create(status=False))
    app.dispatch(create(status=True))
    assert seen == [True]


def test_table_pattern_never_matches_database_events() -> None:
    f = EventFilter(table="*")
    assert not f.matches(hw.CreateDatabaseEvent(database=make_database("d")))
    assert EventFilter(db="d").matches(hw.CreateDatabaseEvent(database=make_database("d")))


class Audit(hw.MetaStoreEventListener):
    def __init__(self, config: hw.Config) -> None:
        super().__init__(config)
        self.prefix = config.get("audit.prefix", "?")
        self.seen: list[str] = []
        self.closed = False

    def on_drop_table(self, event: hw.DropTableEvent) -> None:
        self.seen.append(f"{self.prefix}{event.table_name} delete={event.delete_data}")

    def on_create_database(self, event: hw.CreateDatabaseEvent) -> None:
        self.seen.append(f"{self.prefix}db {event.db_name}")

    def close(self) -> None:
        self.closed = True


def test_class_listener_is_constructed_with_the_config_and_gets_only_its_types() -> None:
    app = hw.App("t", config={"audit.prefix": ">"})
    listener = app.add_listener(Audit)
    assert listener.types == {hw.EventType.DROP_TABLE, hw.EventType.CREATE_DATABASE}
    assert app.dispatch(create()) == []
    app.dispatch(hw.DropTableEvent(table=make_table("s", "t"), delete_data=True))
    app.dispatch(hw.CreateDatabaseEvent(database=make_database("analytics")))
    instance = listener.instance
    assert instance.seen == [">t delete=True", ">db analytics"]
    listener.close()
    assert instance.closed
    assert listener.instance is None and not listener.bound  # the next bind constructs a fresh one


def test_instances_functions_and_import_paths() -> None:
    app = hw.App("t")
    instance = Audit(hw.Config({"audit.prefix": "i:"}))
    app.add_listener(instance)
    app.add_listener(f"{__name__}:Audit", name="by-path")
    app.add_listener(f"{__name__}.Audit", name="java-style-path")
    app.dispatch(hw.DropTableEvent(table=make_table("s", "t")))
    assert instance.seen == ["i:t delete=False"]
    assert [listener.name for listener in app.listeners] == ["Audit", "by-path", "java-style-path"]


def test_errors_are_clear() -> None:
    app = hw.App("t")
    app.add_listener(Audit)
    with pytest.raises(hw.ConfigError, match="already registered"):
        app.add_listener(Audit)
    with pytest.raises(hw.ConfigError, match="listens to no event type"):
        app.add_listener(hw.MetaStoreEventListener)
    with pytest.raises(hw.ConfigError, match="cannot import"):
        load_object("no_such_module_xyz:Thing")
    with pytest.raises(hw.ConfigError, match="has no"):
        load_object(f"{__name__}:NoSuchThing")
    with pytest.raises(hw.ConfigError, match="concurrency"):
        app.add_listener(lambda e: None, name="x", concurrency=0)
    with pytest.raises(hw.ConfigError, match="no listeners"):
        hw.App("empty").run(hw.MemorySource())


def test_dispatch_runs_every_listener_and_reports_all_failures() -> None:
    app = hw.App("t")
    calls: list[str] = []

    def boom(event: hw.ListenerEvent) -> None:
        calls.append("boom")
        raise ValueError("nope")

    def fine(event: hw.ListenerEvent) -> None:
        calls.append("fine")

    app.add_listener(boom, name="boom")
    app.add_listener(fine, name="fine")
    with pytest.raises(hw.ListenerError) as exc:
        app.dispatch(create())
    assert calls == ["boom", "fine"]
    assert set(exc.value.errors) == {"boom"}
    assert "ValueError: nope" in str(exc.value)


def test_each_listener_gets_its_own_copy() -> None:
    app = hw.App("t")
    seen: list[str] = []

    def vandal(event: hw.CreateTableEvent) -> None:
        event.table.tableName = "vandalised"

    def reader(event: hw.CreateTableEvent) -> None:
        seen.append(event.table.tableName)

    app.add_listener(vandal, types=[hw.EventType.CREATE_TABLE])
    app.add_listener(reader, types=[hw.EventType.CREATE_TABLE])
    app.dispatch(create())
    assert seen == ["orders"]


def test_retry_policy_backoff() -> None:
    policy = RetryPolicy(max_attempts=6, initial_delay=0.5, multiplier=3, max_delay=10)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.5, 4.5, 10, 10]
    with pytest.raises(hw.ConfigError):
        RetryPolicy(max_attempts=0)


def test_filters_route_a_decoded_message_exactly_as_its_event() -> None:
    # The runtime routes on apiary.read()'s Decoded before any event is made: the same verdict, always.
    from hivewire.events import _apiary as apiary
    from hivewire.tools._testing import add_partition_event, create_table_event

    messages = [
        apiary.encode(create_table_event("sales", "orders")),
        apiary.encode(add_partition_event("ops", "log")),
        apiary.encode(hw.CreateDatabaseEvent(database=make_database("sales"))),
        apiary.encode(create_table_event("sales", "orders_failed", status=False)),
    ]
    filters = [
        EventFilter(),
        EventFilter(db="sales"),
        EventFilter(table="ord*"),
        EventFilter(db="s*", table="*"),
        EventFilter(status=False),
        EventFilter(types=frozenset({hw.EventType.ADD_PARTITION})),
    ]
    verdicts = set()
    assert [apiary.read(data).status for data in messages] == [True, True, True, False]
    for data in messages:
        decoded = apiary.read(data)
        for f in filters:
            assert f.matches(decoded) == f.matches(decoded.event()), (f, decoded)
            verdicts.add(f.matches(decoded))
    assert verdicts == {True, False}
