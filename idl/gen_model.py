"""The Thrift IDL as data: what ``thrift --gen json`` says about idl/*.thrift, read into small classes.

idl/generate.py uses it to write the typed stubs (:mod:`gen_stubs`) and the JSON loaders
(:mod:`gen_loaders`). The JSON generator carries what the Python generator's output does not show
plainly: each field's requiredness (``required``, ``optional``, or the default ``req_out``), container
element types, defaults, and each method's arguments, return type and exceptions.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ModelError(RuntimeError):
    """The JSON description is not what this reader expects (a new compiler version?)."""


@dataclass(frozen=True)
class Type:
    """A Thrift type: ``id`` is the JSON generator's typeId (``string``, ``list``, ``struct``, ...)."""

    id: str
    cls: str | None = None  # struct, union and exception: the class name (``module.Name`` if included)
    elem: Type | None = None  # list and set
    key: Type | None = None  # map
    value: Type | None = None  # map

    def walk(self) -> list[Type]:
        """This type and every type nested in it."""
        out = [self]
        for inner in (self.elem, self.key, self.value):
            if inner is not None:
                out += inner.walk()
        return out


@dataclass(frozen=True)
class Field:
    key: int
    name: str
    type: Type
    required: str  # "required", "optional" or "req_out" (Thrift's default requiredness)
    default: object = None  # the IDL's default value (None: no default)


@dataclass
class Struct:
    name: str
    kind: str  # "struct", "union" or "exception"
    fields: list[Field]
    doc: str | None = None


@dataclass
class Enum:
    name: str
    members: list[tuple[str, int]]
    doc: str | None = None


@dataclass
class Function:
    name: str
    returns: Type  # id "void" for none
    oneway: bool
    arguments: list[Field]
    exceptions: list[Field]
    doc: str | None = None


@dataclass
class Service:
    name: str
    extends: str | None  # "module.Service"
    functions: list[Function]
    doc: str | None = None


@dataclass
class Program:
    """One .thrift file: ``name`` is the file's stem (``hive_metastore``), ``package`` its Python namespace."""

    name: str
    package: str
    includes: list[str]
    enums: list[Enum]
    structs: list[Struct]
    constants: list[tuple[str, Type, object]]
    services: list[Service]
    doc: str | None = None
    by_name: dict[str, Struct] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name = {s.name: s for s in self.structs}


_PRIMITIVES = {"string", "binary", "bool", "i8", "i16", "i32", "i64", "double", "void"}


def _type(type_id: str, detail: dict[str, Any] | None) -> Type:
    if type_id in _PRIMITIVES:
        return Type(type_id)
    if detail is None:
        raise ModelError(f"type {type_id!r} without its description")
    if type_id in ("struct", "union", "exception"):
        return Type(type_id, cls=detail["class"])
    if type_id in ("list", "set"):
        return Type(type_id, elem=_type(detail["elemTypeId"], detail.get("elemType")))
    if type_id == "map":
        return Type(
            "map",
            key=_type(detail["keyTypeId"], detail.get("keyType")),
            value=_type(detail["valueTypeId"], detail.get("valueType")),
        )
    raise ModelError(f"unknown Thrift type {type_id!r}")


def _field(f: dict[str, Any]) -> Field:
    if f["required"] not in ("required", "optional", "req_out"):
        raise ModelError(f"field {f['name']!r}: unknown requiredness {f['required']!r}")
    return Field(f["key"], f["name"], _type(f["typeId"], f.get("type")), f["required"], f.get("default"))


def _program(data: dict[str, Any]) -> Program:
    structs = []
    for s in data["structs"]:
        kind = "exception" if s["isException"] else "union" if s["isUnion"] else "struct"
        structs.append(Struct(s["name"], kind, [_field(f) for f in s["fields"]], s.get("doc")))
    services = [
        Service(
            svc["name"],
            svc.get("extends"),
            [
                Function(
                    fn["name"],
                    _type(fn["returnTypeId"], fn.get("returnType")),
                    fn["oneway"],
                    [_field(a) for a in fn["arguments"]],
                    [_field(e) for e in fn["exceptions"]],
                    fn.get("doc"),
                )
                for fn in svc["functions"]
            ],
            svc.get("doc"),
        )
        for svc in data["services"]
    ]
    if data["typedefs"]:
        raise ModelError("typedefs are not supported by idl/gen_*.py yet")
    return Program(
        name=data["name"],
        package=data["namespaces"]["py"],
        includes=list(data["includes"]),
        enums=[Enum(e["name"], [(m["name"], m["value"]) for m in e["members"]], e.get("doc")) for e in data["enums"]],
        structs=structs,
        constants=[(c["name"], _type(c["typeId"], c.get("type")), c["value"]) for c in data["constants"]],
        services=services,
        doc=data.get("doc"),
    )


def read_idl(compiler: str, main_idl: Path, work: Path) -> dict[str, Program]:
    """Run ``thrift -r --gen json`` on ``main_idl`` (and what it includes); programs by file stem."""
    work.mkdir(parents=True, exist_ok=True)
    cmd = [compiler, "-r", "--gen", "json", "-out", str(work), str(main_idl)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ModelError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    programs = {}
    for path in sorted(work.glob("*.json")):
        program = _program(json.loads(path.read_text(encoding="utf-8")))
        programs[program.name] = program
    return programs
