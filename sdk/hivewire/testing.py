"""Helpers for testing listeners in your own test suite, with no Kafka broker and no JVM (see docs/runtime.md)."""

from hivewire.coordination import InMemoryCoordinator
from hivewire.tools._testing import (
    add_partition_event,
    alter_database_event,
    alter_partition_event,
    alter_table_event,
    create_database_event,
    create_table_event,
    drop_database_event,
    drop_partition_event,
    drop_table_event,
    insert_event,
    make_database,
    make_event,
    make_partition,
    make_table,
    mock_kafka,
    produce,
    run_app,
)

__all__ = [
    "InMemoryCoordinator",
    "add_partition_event",
    "alter_database_event",
    "alter_partition_event",
    "alter_table_event",
    "create_database_event",
    "create_table_event",
    "drop_database_event",
    "drop_partition_event",
    "drop_table_event",
    "insert_event",
    "make_database",
    "make_event",
    "make_partition",
    "make_table",
    "mock_kafka",
    "produce",
    "run_app",
]
