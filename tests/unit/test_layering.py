"""The layering rules of docs/architecture.md, checked on the source (every import statement, anywhere)."""

from __future__ import annotations

import ast
import subprocess
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
    "hivewire.thriftjson": 3,
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
    "hivewire.source": 4,
    "hivewire.arrow": 5,
    "hivewire.spark": 5,
    "hivewire.notebook": 5,
    "hivewire.archive": 5,
    "hivewire.local": 6,
    "hivewire.testing": 6,
    "hivewire.demo": 6,
    "hivewire.cli": 6,
    "hivewire.__main__": 6,
    "hivewire_shim": 7,
}
# Upward imports allowed inside a function only, each a documented convenience (docs/architecture.md).
ALLOWED_LAZY_UPWARD = {
    ("hivewire.metastore", "hivewire.discovery"),  # MetastoreClient.from_zookeeper / from_hive_conf
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


def imports_of(path: Path, module: str) -> list[tuple[str, bool]]:
    """Every module imported by ``path``, with whether the import sits inside a function."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                names.extend((alias.name, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                # "from hivewire import discovery" imports the submodule when it is one.
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    names.append((sub if sub in MODULE_NAMES else target, in_function))
            visit(child, inner)

    visit(tree, False)
    return names


MODULES = our_modules()
MODULE_NAMES = {name for name, _ in MODULES}


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_module_respects_layers(module: str, path: Path) -> None:
    mine = layer_of(module)
    assert mine is not None, f"{module} has no layer: add it to docs/architecture.md and LAYERS in this test"
    problems = []
    for imported, in_function in imports_of(path, module):
        top = imported.split(".")[0]
        if top in ("hivewire", "hivewire_shim", "hivewire_thrift"):
            theirs = layer_of(imported)
            if in_function and (module, imported) in ALLOWED_LAZY_UPWARD:
                continue
            if theirs is None:
                problems.append(f"imports {imported}, which has no layer")
            elif mine == 7 and top == "hivewire" and theirs > 4:
                problems.append(f"the shim imports {imported} (layer {theirs}); it may use hivewire layers 1-4")
            elif mine == 6 and theirs == 7 and in_function:
                continue  # the CLI and the demo start the shim, importing it only when asked to
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


def test_importing_the_core_model_loads_no_service_library() -> None:
    # The package's own __init__ must not drag layer 4 in eagerly: a codec user pays for the codec only.
    code = (
        "import sys, hivewire.apiary, hivewire.events, hivewire.metastore, hivewire.errors; "
        f"print(sorted(m for m in {sorted(SERVICE_LIBS | OPTIONAL)!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
