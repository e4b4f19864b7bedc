#!/usr/bin/env python3
"""Generate the per-event-type code of hivewire from ``idl/events.toml``, the one description of the event types.

Usage::

    python idl/generate_events.py            # rewrite the generated modules in place
    python idl/generate_events.py --check    # exit 1 (naming the stale files) if the committed ones differ

It writes (standard library only; every file formatted as ``ruff format`` leaves it):

* ``sdk/hivewire/events/_event_type.py``: the ``EventType`` enum, which ``_description``'s ``EventSpec`` names;
* ``sdk/hivewire/events/_types.py``: the description as data (``TYPES``), which the Apiary codec's envelopes,
  the testing factories, the notebook summaries and the Arrow columns read at import;
* ``sdk/hivewire/events/_model.py``: one class per event type, with typed fields, a typed constructor (for
  type checkers) and the properties the description names;
* ``sdk/hivewire/events/__init__.py``: the event floor's public face, which exports every event class;
* ``sdk/hivewire/runtime/_handlers.py``: ``MetaStoreEventListener``'s ``on_*`` methods and ``App``'s ``on_*``
  decorators, typed per event class.

The description is checked first: unknown keys, duplicate names, Thrift structs that ``idl/hive_metastore.thrift``
does not define, ``names_from`` naming a field that is not a Table or Database, and so on fail with a message
naming the event type.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DESCRIPTION = ROOT / "idl" / "events.toml"
THRIFT_IDL = ROOT / "idl" / "hive_metastore.thrift"
EVENT_TYPE_MODULE = ROOT / "sdk" / "hivewire" / "events" / "_event_type.py"
TYPES_MODULE = ROOT / "sdk" / "hivewire" / "events" / "_types.py"
MODEL_MODULE = ROOT / "sdk" / "hivewire" / "events" / "_model.py"
HANDLERS_MODULE = ROOT / "sdk" / "hivewire" / "runtime" / "_handlers.py"
EVENTS_FACE = ROOT / "sdk" / "hivewire" / "events" / "__init__.py"
BEHAVIOUR_MODULE = "sdk/hivewire/events/_behaviour.py"
WIDTH = 120  # ruff's line length (pyproject.toml)
NOTICE = (
    "Generated from idl/events.toml by idl/generate_events.py. Do not edit: change the description and run\n"
    "`make generate`."
)


class DescriptionError(ValueError):
    """The description is not valid."""


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # as written: Table, list<Partition>, bool, string, i64, list<string>, list<i64>, map<string,string>
    key: str
    required: bool
    doc: str | None

    @property
    def kind(self) -> str:
        """The ``Kind`` member (hivewire.events._description)."""
        if self.type == "bool":
            return "FLAG"
        if self.type == "string":
            return "STRING"
        if self.type == "i64":
            return "INT"
        if self.type == "list<i64>":
            return "INT_LIST"
        if self.type == "list<string>":
            return "STRING_LIST"
        if self.type == "map<string,string>":
            return "STRING_MAP"
        if self.type.startswith("list<"):
            return "STRUCT_LIST"
        return "STRUCT"

    @property
    def struct(self) -> str | None:
        """The Thrift struct the field holds (alone or in a list), if any."""
        if self.kind == "STRUCT":
            return self.type
        if self.kind == "STRUCT_LIST":
            return self.type[len("list<") : -1]
        return None

    @property
    def python(self) -> str:
        """The Python type of the value read."""
        return {
            "FLAG": "bool",
            "STRING": "str | None",
            "INT": "int | None",
            "INT_LIST": "list[int]",
            "STRING_LIST": "list[str]",
            "STRING_MAP": "dict[str, str]",
            "STRUCT_LIST": f"list[{self.struct}]",
            "STRUCT": self.type if self.required else f"{self.type} | None",
        }[self.kind]

    @property
    def descriptor(self) -> str:
        """The descriptor class of hivewire.events._event that reads the field, with its type argument."""
        return {
            "FLAG": "FlagField",
            "STRING": "Field[str | None]",
            "INT": "Field[int | None]",
            "INT_LIST": "ListField[int]",
            "STRING_LIST": "ListField[str]",
            "STRING_MAP": "MapField",
            "STRUCT_LIST": f"ListField[{self.struct}]",
            "STRUCT": f"Field[{self.python}]",
        }[self.kind]

    @property
    def constructor_type(self) -> str:
        """The type of the constructor's keyword (every field may be left out of an event built in Python)."""
        return {
            "FLAG": "bool | None",
            "STRING": "str | None",
            "INT": "int | None",
            "INT_LIST": "list[int] | None",
            "STRING_LIST": "list[str] | None",
            "STRING_MAP": "Mapping[str, str] | None",
            "STRUCT_LIST": f"list[{self.struct}] | None",
            "STRUCT": f"{self.type} | None",
        }[self.kind]


@dataclass(frozen=True)
class Property:
    name: str
    type: str
    doc: str


@dataclass(frozen=True)
class Event:
    type: str
    cls: str
    doc: str
    wire: str | None
    log_only: bool
    database_event: bool
    names_from: str | None
    summary: str | None
    fields: tuple[Field, ...]
    properties: tuple[Property, ...]
    derived: bool = False
    base: str | None = None  # `module:Class` of the events floor

    @property
    def base_class(self) -> str:
        return self.base.partition(":")[2] if self.base else "ListenerEvent"

    @property
    def handler(self) -> str:
        return f"on_{self.type.lower()}"


# The plain Python types a computed property may return (``dict[str, object]``: decoded JSON).
_PROPERTY_TYPES = {"bool", "str", "int", "dict[str, object]"}
_EVENT_KEYS = {
    "type",
    "class",
    "doc",
    "wire",
    "log_only",
    "database_event",
    "names_from",
    "summary",
    "fields",
    "properties",
    "derived",
    "base",
}
_FIELD_KEYS = {"name", "type", "key", "required", "doc"}
_PROPERTY_KEYS = {"type", "doc"}
_PLAIN_TYPES = {"bool", "string", "i64", "list<string>", "list<i64>", "map<string,string>"}
_COMMON = {"db_name", "table_name", "status", "parameters", "environment_context", "raw", "origin", "handler"}


def thrift_structs(idl: Path = THRIFT_IDL) -> set[str]:
    """The struct names ``idl/hive_metastore.thrift`` defines."""
    return set(re.findall(r"^\s*struct\s+(\w+)\s*\{", idl.read_text(encoding="utf-8"), re.MULTILINE))


def _text(entry: dict[str, object], key: str, where: str, *, required: bool = True) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise DescriptionError(f"{where}: {key!r} must be a non-empty string")
    if "\n" in value or '"' in value or "\\" in value:
        raise DescriptionError(f"{where}: {key!r} must be one line without quotes or backslashes")
    return value


def _identifier(name: str, where: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name) or name != name.lower():
        raise DescriptionError(f"{where}: {name!r} is not a snake-case Python name")
    return name


def load(path: Path = DESCRIPTION, structs: set[str] | None = None) -> list[Event]:
    """The description in ``path``, checked."""
    structs = thrift_structs() if structs is None else structs
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if set(data) != {"event"}:
        raise DescriptionError(f"{path.name}: expected only [[event]] tables, found {sorted(data)}")
    events: list[Event] = []
    for entry in data["event"]:
        type_name = entry.get("type")
        where = f"{path.name}: event {type_name!r}"
        if not isinstance(type_name, str) or not re.fullmatch(r"[A-Z][A-Z0-9_]*", type_name):
            raise DescriptionError(f"{where}: 'type' must be an upper-case name such as CREATE_TABLE")
        unknown = set(entry) - _EVENT_KEYS
        if unknown:
            raise DescriptionError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(_EVENT_KEYS)})")
        cls = _text(entry, "class", where, required=False) or "".join(w.title() for w in type_name.split("_")) + "Event"
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*Event", cls):
            raise DescriptionError(f"{where}: class {cls!r} must be a CamelCase name ending in 'Event'")
        fields = []
        for i, raw in enumerate(entry.get("fields", [])):
            fwhere = f"{where}, field {i + 1}"
            unknown = set(raw) - _FIELD_KEYS
            if unknown:
                raise DescriptionError(f"{fwhere}: unknown keys {sorted(unknown)} (known: {sorted(_FIELD_KEYS)})")
            name = _identifier(str(raw.get("name")), fwhere)
            ftype = str(raw.get("type", "")).replace(" ", "")
            inner = ftype[len("list<") : -1] if ftype.startswith("list<") and ftype.endswith(">") else ftype
            if ftype not in _PLAIN_TYPES and inner not in structs:
                raise DescriptionError(
                    f"{fwhere} ({name}): type {ftype!r} is neither a struct of {THRIFT_IDL.name}, list<Struct>, "
                    f"nor one of {sorted(_PLAIN_TYPES)}"
                )
            required = raw.get("required", False)
            if not isinstance(required, bool) or (required and (ftype in _PLAIN_TYPES or ftype != inner)):
                raise DescriptionError(f"{fwhere} ({name}): only a single struct can be required (true/false)")
            key = _text(raw, "key", fwhere)
            assert key is not None
            fields.append(Field(name, ftype, key, required, _text(raw, "doc", fwhere, required=False)))
        names = [f.name for f in fields]
        clash = sorted({n for n in names if names.count(n) > 1} | (set(names) & _COMMON))
        if clash:
            raise DescriptionError(f"{where}: field names {clash} are repeated or taken by ListenerEvent")
        properties = []
        for name, raw in (entry.get("properties") or {}).items():
            pwhere = f"{where}, property {name!r}"
            unknown = set(raw) - _PROPERTY_KEYS
            if unknown:
                raise DescriptionError(f"{pwhere}: unknown keys {sorted(unknown)} (known: {sorted(_PROPERTY_KEYS)})")
            ptype = _text(raw, "type", pwhere)
            assert ptype is not None
            if ptype not in _PROPERTY_TYPES and ptype not in structs:
                raise DescriptionError(
                    f"{pwhere}: type {ptype!r} is not one of {sorted(_PROPERTY_TYPES)} or a Thrift struct"
                )
            doc = _text(raw, "doc", pwhere)
            assert doc is not None
            if _identifier(name, pwhere) in names or name in _COMMON:
                raise DescriptionError(f"{pwhere}: the name is taken by a field")
            properties.append(Property(name, ptype, doc))
        database_event = entry.get("database_event", False)
        log_only = entry.get("log_only", False)
        derived = entry.get("derived", False)
        for flag, value in (("database_event", database_event), ("log_only", log_only), ("derived", derived)):
            if not isinstance(value, bool):
                raise DescriptionError(f"{where}: {flag!r} must be true or false")
        names_from = _text(entry, "names_from", where, required=False)
        if names_from is not None:
            source = next((f for f in fields if f.name == names_from), None)
            wanted = "Database" if database_event else "Table"
            if source is None or source.type != wanted:
                raise DescriptionError(f"{where}: names_from must name a field of type {wanted}, not {names_from!r}")
        summary = _text(entry, "summary", where, required=False)
        if summary is not None:
            _identifier(summary, f"{where}, summary")
        wire = _text(entry, "wire", where, required=False)
        if wire is not None and not re.fullmatch(r"[A-Z][A-Z0-9_]*", wire):
            raise DescriptionError(f"{where}: wire {wire!r} must be an upper-case name such as ON_CREATE_TABLE")
        if log_only and wire is None:
            raise DescriptionError(f"{where}: a log_only type needs the wire name its records carry")
        if derived and (log_only or wire is None):
            raise DescriptionError(f"{where}: a derived type needs a wire name of hivewire's own and is not log_only")
        base = _text(entry, "base", where, required=False)
        if base is not None and not re.fullmatch(r"_[a-z][a-z0-9_]*:[A-Z][A-Za-z0-9]*", base):
            raise DescriptionError(f"{where}: base {base!r} must be `_module:Class` (a module of the events floor)")
        doc = _text(entry, "doc", where)
        assert doc is not None
        events.append(
            Event(
                type_name,
                cls,
                doc,
                wire,
                log_only,
                database_event,
                names_from,
                summary,
                tuple(fields),
                tuple(properties),
                derived,
                base,
            )
        )
    for attr in ("type", "cls", "wire"):
        seen = [getattr(e, attr) for e in events if getattr(e, attr) is not None]
        repeated = sorted({v for v in seen if seen.count(v) > 1})
        if repeated:
            raise DescriptionError(f"{path.name}: {attr} {repeated} used by more than one event type")
    return events


def described_structs(path: Path = DESCRIPTION) -> set[str]:
    """The Thrift structs the event types' fields hold: the roots whose JSON converters the codec needs."""
    return {f.struct for e in load(path) for f in e.fields if f.struct}


# -- writing -----------------------------------------------------------------------------------------------------


def _docstring(text: str, indent: str) -> list[str]:
    """A docstring, wrapped to the line length."""
    lines = textwrap.wrap(text, WIDTH - len(indent) - 6, break_long_words=False, break_on_hyphens=False)
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *(f"{indent}{line}" for line in lines[1:]), f'{indent}"""']


def _string(text: str, indent: str, prefix: str = "", suffix: str = ",") -> list[str]:
    """``prefix"text"suffix``, split into parenthesised parts when too long."""
    line = f'{indent}{prefix}"{text}"{suffix}'
    if len(line) <= WIDTH:
        return [line]
    parts = textwrap.wrap(text, WIDTH - len(indent) - 6, drop_whitespace=False, break_long_words=False)
    return [f"{indent}{prefix}(", *(f'{indent}    "{p}"' for p in parts), f"{indent}){suffix}"]


def _imports(names: set[str], module: str) -> list[str]:
    """``from module import a, b`` (one name a line when too long, as ruff formats it)."""
    ordered = sorted(names, key=_isort_key)
    line = f"from {module} import {', '.join(ordered)}"
    if len(line) <= WIDTH:
        return [line]
    return [f"from {module} import (", *(f"    {n}," for n in ordered), ")"]


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's isort order within one import: constants, classes, then functions (force-sort-within-sections off)."""
    if name.isupper():
        return 0, name.lower()
    if name[:1].isupper():
        return 1, name.lower()
    return 2, name.lower()


def _header(doc: list[str]) -> list[str]:
    return ['"""' + doc[0], *doc[1:], "", *NOTICE.splitlines(), '"""', "", "from __future__ import annotations", ""]


def _structs(events: list[Event]) -> set[str]:
    found = {f.struct for e in events for f in e.fields if f.struct}
    found |= {p.type for e in events for p in e.properties if p.type[:1].isupper()}
    return {s for s in found if s is not None}


def event_type_module(events: list[Event]) -> str:
    out = _header(["The metastore event types: :class:`EventType`, one member per type of idl/events.toml."])
    out += ["import enum", "", '__all__ = ["EventType"]', "", ""]
    out += [
        "class EventType(str, enum.Enum):",
        '    """The metastore change an event reports (the names of Hive\'s ``EventMessage.EventType``)."""',
        "",
    ]
    for e in events:
        out += [f'    {e.type} = "{e.type}"', *_docstring(e.doc, "    ")]
    out += ["", "    def __str__(self) -> str:", "        return self.value", ""]
    return "\n".join(out)


def types_module(events: list[Event]) -> str:
    out = _header(["The metastore event types' description as data (:data:`TYPES`), by :class:`EventType`."])
    out += ["from collections.abc import Mapping", "from types import MappingProxyType", ""]
    out += _imports({"EventSpec", "FieldSpec", "Kind"}, "hivewire.events._description")
    out += ["from hivewire.events._event_type import EventType"]
    structs = {f.struct for e in events for f in e.fields if f.struct}
    out += _imports({s for s in structs if s}, "hivewire_thrift.hive_metastore.ttypes")
    out += ["", '__all__ = ["TYPES"]', "", ""]
    out += ["#: Every event type's description (idl/events.toml), in its order.", ""]
    out[-1:] = ["TYPES: Mapping[EventType, EventSpec] = MappingProxyType(", "    {"]
    for e in events:
        out += [f"        EventType.{e.type}: EventSpec(", f"            event_type=EventType.{e.type},"]
        out += [f'            class_name="{e.cls}",', *_string(e.doc, "            ", "doc=")]
        out += [f'            wire="{e.wire}",' if e.wire else "            wire=None,"]
        specs = []
        for f in e.fields:
            args = [f'"{f.name}"', f"Kind.{f.kind}", f'"{f.key}"']
            if f.struct:
                args.append(f.struct)
            if f.required:
                args.append("required=True")
            specs.append(f"FieldSpec({', '.join(args)})")
        one_line = f"            fields=({specs[0]},)," if len(specs) == 1 else ""
        if not specs:
            out += ["            fields=(),"]
        elif one_line and len(one_line) <= WIDTH:
            out += [one_line]
        else:
            out += ["            fields=(", *(f"                {s}," for s in specs), "            ),"]
        if e.names_from:
            out += [f'            names_from="{e.names_from}",']
        if e.database_event:
            out += ["            database_event=True,"]
        if e.log_only:
            out += ["            log_only=True,"]
        if e.derived:
            out += ["            derived=True,"]
        out += ["        ),"]
    out += ["    }", ")", ""]
    return "\n".join(out)


_MODEL_DOC = [
    "The event model: one class per metastore event type, with typed fields.",
    "",
    "Names follow Hive's ``MetaStoreEventListener`` API in snake case (``CreateTableEvent.table``,",
    "``AlterTableEvent.old_table``, ...). Table, Partition, Database and EnvironmentContext values are the",
    "generated ``hivewire_thrift`` types. The base class, :class:`ListenerEvent`, is in ``_event.py``; what the",
    "classes compute (notebook facts, ``AlterTableEvent.is_rename``, ``InsertEvent.table``) in ``_behaviour.py``.",
]


def model_module(events: list[Event]) -> str:
    out = _header(_MODEL_DOC)
    out += [
        "from collections.abc import Mapping",
        "from types import MappingProxyType",
        "from typing import TYPE_CHECKING",
    ]
    out += [""]
    descriptors = {"Facts", "ListenerEvent", "Origin"}
    for e in events:
        descriptors |= {f.descriptor.partition("[")[0] for f in e.fields}
    out += ["from hivewire.events import _behaviour"]
    own: dict[str, set[str]] = {"_event": descriptors, "_event_type": {"EventType"}}
    for e in events:
        if e.base:
            own.setdefault(e.base.partition(":")[0], set()).add(e.base_class)
    for module in sorted(own):
        out += _imports(own[module], f"hivewire.events.{module}")
    out += _imports(_structs(events) | {"EnvironmentContext"}, "hivewire_thrift.hive_metastore.ttypes")
    exported = ["EVENT_CLASSES", "EventType", "ListenerEvent", "Origin", *(e.cls for e in events)]
    out += ["", "__all__ = ["] + [f'    "{n}",' for n in sorted(exported, key=_isort_key)] + ["]", "", ""]
    for e in events:
        out += [f"class {e.cls}({e.base_class}):", *_docstring(e.doc, "    "), ""]
        out += ["    __slots__ = ()", f"    event_type = EventType.{e.type}"]
        names = [f'"{f.name}"' for f in e.fields]
        out += [f"    fields = ({names[0]},)" if len(names) == 1 else f"    fields = ({', '.join(names)})"]
        if e.names_from:
            out += [f'    names_from = ("{e.names_from}", "{"database" if e.database_event else "table"}")']
        out += [""]
        for f in e.fields:
            out += [f"    {f.name}: {f.descriptor} = {f.descriptor.partition('[')[0]}()"]
            if f.doc:
                out += _docstring(f.doc, "    ")
        out += ["", "    if TYPE_CHECKING:", "", "        def __init__(", "            self,", "            *,"]
        for f in e.fields:
            out += [f"            {f.name}: {f.constructor_type} = None,"]
        out += ["            db_name: str | None = None,"]
        if not e.database_event:
            out += ["            table_name: str | None = None,"]
        out += [
            "            status: bool = True,",
            "            parameters: Mapping[str, str] | None = None,",
            "            environment_context: EnvironmentContext | None = None,",
            "            raw: bytes | None = None,",
            "            origin: Origin | None = None,",
            "        ) -> None: ...",
            "",
        ]
        for p in e.properties:
            out += ["    @property", f"    def {p.name}(self) -> {p.type}:", *_docstring(p.doc, "        ")]
            out += [f"        return _behaviour.{e.type.lower()}_{p.name}(self)", ""]
        out += ["    def _summary(self) -> Facts:"]
        out += [f"        return _behaviour.{e.summary or 'fields_summary'}(self)", "", ""]
    out += [
        "#: The class of each event type.",
        "EVENT_CLASSES: Mapping[EventType, type[ListenerEvent]] = MappingProxyType(",
    ]
    out += ["    {", *(f"        EventType.{e.type}: {e.cls}," for e in events), "    }", ")", ""]
    return "\n".join(out)


def handlers_module(events: list[Event]) -> str:
    out = _header(
        [
            "The runtime's hooks per event type: the ``on_*`` methods of",
            ":class:`~hivewire.runtime.MetaStoreEventListener` (:class:`ListenerMethods`) and the ``on_*`` decorators",
            "of :class:`~hivewire.runtime.App` (:class:`AppDecorators`), typed per event class.",
        ]
    )
    out += ["from hivewire.events._event_type import EventType"]
    out += _imports({e.cls for e in events}, "hivewire.events._model")
    out += ["from hivewire.runtime._decorators import On", "", ""]
    out += [
        "class ListenerMethods:",
        '    """One ``on_*`` method per event type, each doing nothing: a listener overrides those it needs."""',
        "",
    ]
    for e in events:
        out += [f"    def {e.handler}(self, event: {e.cls}) -> None:", *_docstring(e.doc, "        "), ""]
    out += [
        "",
        "class AppDecorators:",
        '    """One decorator per event type (``@app.on_create_table``), used bare or with filter options."""',
        "",
    ]
    for e in events:
        out += [f"    {e.handler}: On[{e.cls}] = On(EventType.{e.type})"]
        out += _docstring(f"Register a function for {e.type} events: {e.doc[:1].lower()}{e.doc[1:]}", "    ")
    out += [""]
    return "\n".join(out)


def events_face(events: list[Event]) -> str:
    out = _header(
        [
            "The event model: one typed event per metastore change, whatever wire format it arrived in.",
            "",
            "The Apiary Kafka JSON codec is :mod:`hivewire.apiary`.",
        ]
    )
    exported = ["EVENT_CLASSES", "EventType", "ListenerEvent", "Origin", *(e.cls for e in events)]
    out += _imports(set(exported), "hivewire.events._model")
    out += ["", "__all__ = [", *(f'    "{n}",' for n in sorted(exported, key=_isort_key)), "]", ""]
    return "\n".join(out)


def outputs(events: list[Event], root: Path = ROOT) -> dict[Path, str]:
    """The generated modules, by path (under ``root``, a checkout of the repository)."""
    return {
        root / EVENT_TYPE_MODULE.relative_to(ROOT): event_type_module(events),
        root / TYPES_MODULE.relative_to(ROOT): types_module(events),
        root / MODEL_MODULE.relative_to(ROOT): model_module(events),
        root / EVENTS_FACE.relative_to(ROOT): events_face(events),
        root / HANDLERS_MODULE.relative_to(ROOT): handlers_module(events),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the generated modules differ from these")
    parser.add_argument("--description", type=Path, default=DESCRIPTION, help="the description (idl/events.toml)")
    parser.add_argument("--root", type=Path, default=ROOT, help="write under this copy of the repository")
    args = parser.parse_args(argv)
    try:
        events = load(args.description)
    except (DescriptionError, tomllib.TOMLDecodeError) as e:
        print(f"generate_events.py: {e}", file=sys.stderr)
        return 2
    stale = []
    for path, text in outputs(events, args.root.resolve()).items():
        rel = path.relative_to(args.root.resolve())
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(str(rel))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    if stale:
        print(
            f"{', '.join(stale)} not what idl/events.toml generates: run `make generate` and commit the result",
            file=sys.stderr,
        )
        return 1
    if args.check:
        print("the event types' generated modules are up to date with idl/events.toml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
