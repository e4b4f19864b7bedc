"""The runtime's hooks per event type: the ``on_*`` methods of
:class:`~hivewire.runtime.MetaStoreEventListener` (:class:`ListenerMethods`) and the ``on_*`` decorators
of :class:`~hivewire.runtime.App` (:class:`AppDecorators`), typed per event class.

Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run
`make generate`.
"""

from __future__ import annotations

from hivewire.events._model import (
    AddPartitionEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CreateDatabaseEvent,
    CreateTableEvent,
    DropDatabaseEvent,
    DropPartitionEvent,
    DropTableEvent,
    InsertEvent,
    NotificationLogEvent,
)
from hivewire.events._types import EventType
from hivewire.runtime._decorators import On


class ListenerMethods:
    """One ``on_*`` method per event type, each doing nothing: a listener overrides those it needs."""

    def on_create_table(self, event: CreateTableEvent) -> None:
        """A table was created. ``table`` is the table as stored."""

    def on_alter_table(self, event: AlterTableEvent) -> None:
        """A table was altered or renamed. ``db_name``/``table_name`` are the new table's."""

    def on_drop_table(self, event: DropTableEvent) -> None:
        """A table was dropped. ``delete_data`` says whether its data was deleted too."""

    def on_add_partition(self, event: AddPartitionEvent) -> None:
        """Partitions were added to ``table``."""

    def on_alter_partition(self, event: AlterPartitionEvent) -> None:
        """A partition of ``table`` was altered."""

    def on_drop_partition(self, event: DropPartitionEvent) -> None:
        """Partitions of ``table`` were dropped (all of them, unlike Drone Fly, which keeps only the first)."""

    def on_insert(self, event: InsertEvent) -> None:
        """Data was inserted into a table or partition (fired by ``fire_listener_event``)."""

    def on_create_database(self, event: CreateDatabaseEvent) -> None:
        """A database was created."""

    def on_alter_database(self, event: AlterDatabaseEvent) -> None:
        """A database was altered."""

    def on_drop_database(self, event: DropDatabaseEvent) -> None:
        """A database was dropped."""

    def on_notification_log(self, event: NotificationLogEvent) -> None:
        """A notification-log entry with no class of its own (transactions, constraints, functions, ...)."""


class AppDecorators:
    """One decorator per event type (``@app.on_create_table``), used bare or with filter options."""

    on_create_table: On[CreateTableEvent] = On(EventType.CREATE_TABLE)
    """Register a function for CREATE_TABLE events: a table was created. ``table`` is the table as stored."""
    on_alter_table: On[AlterTableEvent] = On(EventType.ALTER_TABLE)
    """Register a function for ALTER_TABLE events: a table was altered or renamed. ``db_name``/``table_name`` are the
    new table's.
    """
    on_drop_table: On[DropTableEvent] = On(EventType.DROP_TABLE)
    """Register a function for DROP_TABLE events: a table was dropped. ``delete_data`` says whether its data was
    deleted too.
    """
    on_add_partition: On[AddPartitionEvent] = On(EventType.ADD_PARTITION)
    """Register a function for ADD_PARTITION events: partitions were added to ``table``."""
    on_alter_partition: On[AlterPartitionEvent] = On(EventType.ALTER_PARTITION)
    """Register a function for ALTER_PARTITION events: a partition of ``table`` was altered."""
    on_drop_partition: On[DropPartitionEvent] = On(EventType.DROP_PARTITION)
    """Register a function for DROP_PARTITION events: partitions of ``table`` were dropped (all of them, unlike Drone
    Fly, which keeps only the first).
    """
    on_insert: On[InsertEvent] = On(EventType.INSERT)
    """Register a function for INSERT events: data was inserted into a table or partition (fired by
    ``fire_listener_event``).
    """
    on_create_database: On[CreateDatabaseEvent] = On(EventType.CREATE_DATABASE)
    """Register a function for CREATE_DATABASE events: a database was created."""
    on_alter_database: On[AlterDatabaseEvent] = On(EventType.ALTER_DATABASE)
    """Register a function for ALTER_DATABASE events: a database was altered."""
    on_drop_database: On[DropDatabaseEvent] = On(EventType.DROP_DATABASE)
    """Register a function for DROP_DATABASE events: a database was dropped."""
    on_notification_log: On[NotificationLogEvent] = On(EventType.NOTIFICATION_LOG)
    """Register a function for NOTIFICATION_LOG events: a notification-log entry with no class of its own
    (transactions, constraints, functions, ...).
    """
