"""The layering rules of docs/architecture.md, checked on the source (every import statement, anywhere)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Longest prefix wins. A module missing here fails the test: place it in docs/architecture.md first.
LAYERS: dict[str, int] = {
    "hivewire_thrift": 1,
    "hivewire.errors": 2,
    "hivewire.events": 3,
    "hivewire.apiary": 3,
    "hivewire.metastore": 3,
    "hivewire": 4,  # the package itself re-exports layers 2-4
    "hivewire.discovery": 4,
    "hivewire.registration": 4,
    "hivewire.config": 4,
    "hivewire.app": 4,
    "hivewire.listener": 4,
    "hivewire.runtime": 4,
    "hivewire.kafka": 4,
    "hivewire.metrics": 4,
    "hivewire.arrow": 5,
    "hivewire.spark": 5,
    "hivewire.notebook": 5,
    "hivewire.archive": 5,
    "hivewire.local": 6,
    "hivewire.testing": 6,
    "hivewire.demo": 6,
    "hivewire.cli": 6,
    "hivewire_shim": 7,
}
OPTIONAL = {"pyarrow", "pyspark", "deltalake", "pandas", "duckdb", "py4j"}
SERVICE_LIBS = {"confluent_kafka", "kazoo", "prometheus_client", "tenacity", "click", "tqdm"}


def layer_of(module: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def our_modules() -> list[tuple[str, Path]]:
    found = []
    for base in ("sdk", "shim", "thrift"):
        for path in sorted((ROOT / base).rglob("*.py")):
            rel = path.relative_to(ROOT / base).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append((".".join(parts), path))
    return found


def imports_of(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                names.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                names.append(node.module)
    return names


MODULES = our_modules()


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_module_respects_layers(module: str, path: Path) -> None:
    mine = layer_of(module)
    assert mine is not None, f"{module} has no layer: add it to docs/architecture.md and LAYERS in this test"
    problems = []
    for imported in imports_of(path, module):
        top = imported.split(".")[0]
        if top in ("hivewire", "hivewire_shim", "hivewire_thrift"):
            theirs = layer_of(imported)
            if theirs is None:
                problems.append(f"imports {imported}, which has no layer")
            elif mine == 7 and top == "hivewire" and theirs > 4:
                problems.append(f"the shim imports {imported} (layer {theirs}); it may use hivewire layers 1-4")
            elif mine != 7 and theirs > mine:
                problems.append(f"imports {imported} (layer {theirs}) from layer {mine}")
        elif top in OPTIONAL and mine < 5:
            problems.append(f"imports optional dependency {top} from layer {mine}")
        elif top in SERVICE_LIBS and mine < 4:
            problems.append(f"imports {top} from core layer {mine}")
        elif mine == 1 and top not in ("thrift", *sys.stdlib_module_names):
            problems.append(f"generated code imports {top}")
    assert problems == [], f"{module}: " + "; ".join(problems)


def test_no_top_level_generated_packages() -> None:
    for name in ("hive_metastore", "fb303"):
        for base in ("sdk", "shim", "thrift", "."):
            assert not (ROOT / base / name).exists(), f"{base}/{name} would collide with pyiceberg's vendored code"
