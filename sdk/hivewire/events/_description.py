"""The shape of the event types' description (``idl/events.toml``), as the generated ``_types.TYPES`` holds it."""

from __future__ import annotations

import enum
from typing import NamedTuple

from hivewire.events._event_type import EventType
from hivewire_thrift.hive_metastore.ttypes import EnvironmentContext


class Kind(enum.Enum):
    """What an event field holds, and so how the Apiary message carries it."""

    STRUCT = "struct"  #: one Thrift object (a JSON object)
    STRUCT_LIST = "struct list"  #: a list of Thrift objects
    FLAG = "flag"  #: true or false (false when missing)
    STRING = "string"  #: a string (None when missing)
    INT = "int"  #: a whole number (None when missing)
    INT_LIST = "int list"  #: a list of whole numbers (empty when missing)
    STRING_LIST = "string list"  #: a list of strings (empty when missing)
    STRING_MAP = "string map"  #: an object of strings (empty when missing)


class FieldSpec(NamedTuple):
    """One of an event type's own values: its attribute, kind, Apiary JSON key, Thrift class, and whether the
    message must carry it."""

    name: str
    kind: Kind
    key: str
    thrift: type | None = None
    required: bool = False


class EventSpec(NamedTuple):
    """One event type: its Hive name, class name, one-line doc, Apiary ``eventType`` (None when Apiary does not
    carry it), fields, the field whose object names the event's database and table, whether it is a
    database event (no table name), whether only the notification log carries it (its wire name is
    hivewire's own, and the bridge does not publish it to the Apiary topic), and whether it is hivewire's own,
    made by the runtime from other events (``derived``: a listener of every type gets it only by naming it)."""

    event_type: EventType
    class_name: str
    doc: str
    wire: str | None
    fields: tuple[FieldSpec, ...]
    names_from: str | None = None
    database_event: bool = False
    log_only: bool = False
    derived: bool = False

    def field(self, name: str) -> FieldSpec:
        """The field called ``name``."""
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(f"{self.class_name} has no field {name!r}")


#: ``environment_context``, which every event has (``ListenerEvent.environment_context``).
ENVIRONMENT = FieldSpec("environment_context", Kind.STRUCT, "environmentContext", EnvironmentContext)
