"""The Thrift IDL as data: what ``thrift --gen xml`` says about idl/*.thrift, read into small classes.

idl/generate.py uses it to write the typed stubs (``gen_stubs.py``) and the JSON loaders
(``gen_loaders.py``). The compiler's XML description carries what the Python generator's output does not
show: each field's requiredness (``required``, ``optional``, or the default, called ``req_out`` here as in
the compiler), which fields are enums (``thrift_spec`` and ``--gen json`` both say only ``i32``), container
element types, defaults, and each method's arguments, return type and exceptions.
"""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


class ModelError(RuntimeError):
    """The JSON description is not what this reader expects (a new compiler version?)."""


@dataclass(frozen=True)
class Type:
    """A Thrift type: ``id`` is the JSON generator's typeId (``string``, ``list``, ``struct``, ...)."""

    id: str  # a primitive (string, binary, bool, i8 ... i64, double, void), list, set, map, or a named type's
    # kind: struct, union, exception or enum, whose name is ``cls`` (``module.Name`` when included)
    cls: str | None = None
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
_KINDS = ("struct", "union", "exception")


class _Reader:
    """Reads the XML of every program, resolving named types (``type="id"``) to enums or structs."""

    def __init__(self, documents: dict[str, ET.Element]) -> None:
        self.documents = documents
        self.kinds: dict[tuple[str, str], str] = {}
        for module, doc in documents.items():
            for node in doc:
                if node.tag in (*_KINDS, "enum"):
                    self.kinds[(module, node.attrib["name"])] = node.tag

    def type(self, node: ET.Element, module: str) -> Type:
        type_id = node.attrib["type"]
        if type_id in _PRIMITIVES:
            return Type(type_id)
        if type_id == "id":
            owner, name = node.attrib["type-module"], node.attrib["type-id"]
            kind = self.kinds.get((owner, name))
            if kind is None:
                raise ModelError(f"unknown type {owner}.{name}")
            return Type(kind, cls=name if owner == module else f"{owner}.{name}")
        if type_id in ("list", "set"):
            return Type(type_id, elem=self.type(self._child(node, "elemType"), module))
        if type_id == "map":
            key, value = self._child(node, "keyType"), self._child(node, "valueType")
            return Type("map", key=self.type(key, module), value=self.type(value, module))
        raise ModelError(f"unknown Thrift type {type_id!r}")

    @staticmethod
    def _child(node: ET.Element, tag: str) -> ET.Element:
        child = node.find(tag)
        if child is None:
            raise ModelError(f"<{node.tag} name={node.get('name')!r}> has no <{tag}>")
        return child

    def field(self, node: ET.Element, module: str) -> Field:
        required = node.get("required", "req_out")
        if required not in ("required", "optional", "req_out"):
            raise ModelError(f"field {node.get('name')!r}: unknown requiredness {required!r}")
        default = node.find("default")
        return Field(
            int(node.attrib["field-id"]),
            node.attrib["name"],
            self.type(node, module),
            required,
            None if default is None else _value(default),
        )

    def program(self, module: str) -> Program:
        doc = self.documents[module]
        structs, enums, constants, services = [], [], [], []
        namespaces = {n.attrib["name"]: n.attrib["value"] for n in doc.findall("namespace")}
        for node in doc:
            if node.tag in _KINDS:
                fields = [self.field(f, module) for f in node.findall("field")]
                structs.append(Struct(node.attrib["name"], node.tag, fields, node.get("doc")))
            elif node.tag == "enum":
                members = [(m.attrib["name"], int(m.attrib["value"])) for m in node.findall("member")]
                enums.append(Enum(node.attrib["name"], members, node.get("doc")))
            elif node.tag == "const":
                constants.append((node.attrib["name"], self.type(node, module), _value(node)))
            elif node.tag == "service":
                parent = node.get("parent-id")
                functions = [
                    Function(
                        m.attrib["name"],
                        self.type(self._child(m, "returns"), module),
                        m.get("oneway") == "true",
                        [self.field(a, module) for a in m.findall("arg")],
                        [self.field(e, module) for e in m.findall("throws")],
                        m.get("doc"),
                    )
                    for m in node.findall("method")
                ]
                extends = f"{node.attrib['parent-module']}.{parent}" if parent else None
                services.append(Service(node.attrib["name"], extends, functions, node.get("doc")))
            elif node.tag == "typedef":
                raise ModelError("typedefs are not supported by idl/gen_*.py yet")
            elif node.tag not in ("include", "namespace"):
                raise ModelError(f"unknown IDL element <{node.tag}>")
        return Program(
            name=module,
            package=namespaces["py"],
            includes=[n.attrib["name"] for n in doc.findall("include")],
            enums=enums,
            structs=structs,
            constants=constants,
            services=services,
            doc=doc.get("doc"),
        )


def _value(node: ET.Element) -> object:
    """A constant or default: ``<int>``, ``<double>`` or ``<string>`` (the IDL uses no others)."""
    children = list(node)
    if len(children) != 1 or children[0].tag not in ("int", "double", "string"):
        raise ModelError(f"unsupported value in <{node.tag} name={node.get('name')!r}>")
    text = children[0].text or ""
    return {"int": int, "double": float, "string": str}[children[0].tag](text)


def read_idl(compiler: str, main_idl: Path, work: Path) -> dict[str, Program]:
    """Run ``thrift -r --gen xml`` on ``main_idl`` (and what it includes); programs by file stem."""
    work.mkdir(parents=True, exist_ok=True)
    cmd = [compiler, "-r", "--gen", "xml:no_namespaces", "-out", str(work), str(main_idl)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ModelError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    documents = {}
    for path in sorted(work.glob("*.xml")):
        doc = ET.parse(path).getroot().find("document")
        if doc is None:
            raise ModelError(f"{path.name}: no <document>")
        documents[doc.attrib["name"]] = doc
    reader = _Reader(documents)
    return {module: reader.program(module) for module in documents}
