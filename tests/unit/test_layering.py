"""The architecture of docs/architecture.md, checked on the source: floors are folders, imports go down, no cycles.

A module's floor is the folder it sits in (``hivewire/runtime/_lane.py`` is on the ``runtime`` floor); the
order of the floors is :data:`FLOORS`. A module may import its own floor and the floors below, never one
above, whether the import is at the top of the file or inside a function. Third-party libraries have a
lowest floor each (:data:`LIBRARIES`), so that ``import hivewire`` stays light and optional dependencies stay
optional. Imports under ``if TYPE_CHECKING:`` are for annotations only: they do not count for the floors, and
they do count for cycles.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"hivewire": "sdk", "hivewire_shim": "shim", "hivewire_thrift": "thrift"}

#: The floors, bottom to top. A new folder under sdk/hivewire fails the tests until it is placed here (and in
#: docs/architecture.md).
FLOORS = [
    "generated",  # hivewire_thrift: code generated from idl/
    "base",  # hivewire.errors, ._version, ._ratelimit: modules at the top of the package that import nothing of ours
    "config",  # hivewire.config: configuration keys, their typed reader and sources
    "metastore",  # hivewire.metastore: client, addresses, ZooKeeper discovery and registration
    "coordination",  # hivewire.coordination: membership, election, key-value store, watches; apps' shared state
    "events",  # hivewire.events: the event model and its wire formats
    "runtime",  # hivewire.runtime: apps, listeners, sources, workers, metrics
    "data",  # hivewire.data: Arrow, Spark, notebooks, the archive
    "shim",  # hivewire_shim: the HMS Thrift shim
    "tools",  # hivewire.tools: local servers, the demo, the command line, testing helpers
    "face",  # hivewire itself and its public modules (hivewire.apiary, .arrow, .spark, .testing)
]
BASE_MODULES = {
    "hivewire.errors",
    "hivewire._version",
    "hivewire._ratelimit",
    "hivewire._reachability",
}
FACE_MODULES = {"hivewire", "hivewire.__main__", "hivewire.apiary", "hivewire.arrow", "hivewire.iceberg",
                "hivewire.spark", "hivewire.testing"}  # fmt: skip

#: The lowest floor that may import each third-party library. A library missing here fails the tests.
LIBRARIES = {
    "thrift": "generated",
    "javaproperties": "config",
    "tomli": "config",
    "kazoo": "metastore",
    "msgspec": "coordination",
    "pyiceberg": "events",  # optional (hivewire[iceberg]): Iceberg metadata files, imported on first use
    "confluent_kafka": "runtime",
    "prometheus_client": "runtime",
    "tqdm": "data",
    "pyarrow": "data",
    "pyspark": "data",
    "py4j": "data",
    "deltalake": "data",
    "pandas": "data",
    "click": "tools",
}


def floor_of(module: str) -> str:
    top, _, rest = module.partition(".")
    if top == "hivewire_thrift":
        return "generated"
    if top == "hivewire_shim":
        return "shim"
    assert top == "hivewire", module
    if module in BASE_MODULES:
        return "base"
    if module in FACE_MODULES:
        return "face"
    folder = rest.partition(".")[0]
    assert folder in FLOORS and (ROOT / "sdk/hivewire" / folder).is_dir(), (
        f"{module} is on no floor: put it in a folder of tests/unit/test_layering.py's FLOORS (and "
        "docs/architecture.md), or name it in BASE_MODULES/FACE_MODULES"
    )
    return folder


def our_modules() -> dict[str, Path]:
    found = {}
    for package, base in PACKAGES.items():
        for path in sorted((ROOT / base / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT / base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = our_modules()


def _type_checking_block(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: str, path: Path, *, annotations: bool = False) -> Iterator[str]:
    """Every module ``module`` imports at run time (top level or in a function), resolved to our module names
    where the name is one of ours (``from hivewire.metastore import _discovery`` -> that submodule); with
    ``annotations``, those under ``if TYPE_CHECKING:`` too."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child) and not annotations:
                continue
            if isinstance(child, ast.Import):
                yield from (alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    yield sub if sub in MODULES else target
            yield from visit(child)

    yield from visit(ast.parse(path.read_text(), str(path)))


#: Who imports whom, annotations included: a circle of imports is one whether or not Python runs all of it (a
#: ``TYPE_CHECKING`` import still ties the modules together for a reader, mypy and any refactoring).
GRAPH = {module: sorted({i for i in imports_of(module, path, annotations=True) if i in MODULES} - {module})
         for module, path in MODULES.items()}  # fmt: skip


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_imports_only_its_floor_and_below(module: str) -> None:
    mine = FLOORS.index(floor_of(module))
    problems = []
    for imported in imports_of(module, MODULES[module]):
        top = imported.split(".")[0]
        if top in PACKAGES:
            theirs = FLOORS.index(floor_of(imported)) if imported in MODULES else None
            if theirs is None:
                problems.append(f"imports {imported}, which is not a module of ours")
            elif theirs > mine:
                problems.append(f"imports {imported} (floor {FLOORS[theirs]}) from floor {FLOORS[mine]}")
        elif top in LIBRARIES:
            if FLOORS.index(LIBRARIES[top]) > mine:
                problems.append(f"imports {top}, which is not allowed below the {LIBRARIES[top]} floor")
        elif top not in sys.stdlib_module_names and top != "__future__":
            problems.append(f"imports {top}: place it in LIBRARIES (tests/unit/test_layering.py) and say why it "
                            "is a dependency in docs/architecture.md")  # fmt: skip
    assert problems == [], f"{module} ({FLOORS[mine]}): " + "; ".join(problems)


def test_every_folder_is_a_floor() -> None:
    folders = sorted(p.name for p in (ROOT / "sdk/hivewire").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert [f for f in folders if f not in FLOORS] == []
    documented = (ROOT / "docs/architecture.md").read_text()
    assert [f for f in folders if f"hivewire/{f}/" not in documented] == [], "draw every floor in the architecture doc"


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            connect(v)
    return found


#: Circles that only annotations close and that need a change to idl/generate_events.py to break (issue 31
#: reports them). Nothing may join this list, and a circle that is broken must leave it.
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles() -> None:
    assert sorted(_cycles()) == sorted(KNOWN_CYCLES), "modules that import each other (directly or round a loop)"


def test_annotation_imports_count_for_cycles(tmp_path: Path) -> None:
    path = tmp_path / "module.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hivewire.errors import DecodeError\n"
    )
    assert list(imports_of("hivewire.module", path)) == ["typing"]
    assert "hivewire.errors" in imports_of("hivewire.module", path, annotations=True)


def test_the_cycle_finder_finds_cycles() -> None:
    saved = dict(GRAPH)
    try:
        GRAPH["hivewire.errors"] = [*GRAPH["hivewire.errors"], "hivewire._version"]
        GRAPH["hivewire._version"] = [*GRAPH["hivewire._version"], "hivewire.errors"]
        assert ["hivewire._version", "hivewire.errors"] in _cycles()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_no_top_level_generated_packages() -> None:
    for name in ("hive_metastore", "fb303"):
        for base in ("sdk", "shim", "thrift", "."):
            assert not (ROOT / base / name).exists(), f"{base}/{name} would collide with pyiceberg's vendored code"


def test_importing_the_core_loads_no_service_library() -> None:
    # A codec or client user pays for the codec and the client, not for Kafka, ZooKeeper, HTTP or Spark.
    heavy = sorted(lib for lib, floor in LIBRARIES.items() if FLOORS.index(floor) > FLOORS.index("events"))
    heavy += ["kazoo", "pyiceberg"]
    code = (
        "import sys, hivewire, hivewire.apiary, hivewire.events, hivewire.metastore, hivewire.errors, "
        "hivewire.coordination; "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
