"""Docstrings and docs name only objects that exist: every dotted ``hivewire.x.y`` (and ``hivewire_shim.x``) in
a docstring of sdk/ or shim/ and in docs/*.md resolves to a module, or to an object in one (a class, function,
constant, method or attribute).

Dotted names that are not Python are told apart by what they are, each from its own declaration: the
configuration keys and pass-through prefixes (``hivewire.config._keys``), the dead-letter headers, the
parameters the shim marks its events with, and the loggers' names (every ``logging.getLogger("...")``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from hivewire.config import _keys as keys

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "sdk" / "hivewire", ROOT / "shim" / "hivewire_shim"]
DOTTED = re.compile(r"(?<![\w./-])(hivewire(?:_shim)?(?:\.[A-Za-z_]\w*)+)")
#: A Sphinx cross-reference (``:mod:`hivewire.runtime._lane```): Python whatever else the name might be.
ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):`~?(hivewire(?:_shim)?(?:\.[A-Za-z_]\w*)+)`")
FILE_SUFFIXES = ("toml", "properties", "xml", "json", "yaml", "log")  # hivewire.toml is a file's name
#: Keys under these are passed through to a library (``hivewire.shim.producer.acks``).
PASS_THROUGH = tuple(prefix.name for prefix in keys.PREFIXES)


def docstrings() -> Iterator[tuple[str, str]]:
    """(where, text) of every docstring of our modules, classes and functions."""
    for base in SOURCES:
        for path in sorted(base.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    text = ast.get_docstring(node, clean=False)
                    if text:
                        line = getattr(node, "lineno", 1)
                        yield f"{path.relative_to(ROOT)}:{line}", text


def documents() -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / "docs").glob("*.md")):
        yield str(path.relative_to(ROOT)), path.read_text()


def references() -> dict[str, list[str]]:
    """Each dotted name, with where it appears."""
    found: dict[str, list[str]] = {}
    for where, text in [*docstrings(), *documents()]:
        for name in DOTTED.findall(text):
            found.setdefault(name, []).append(where)
    return found


def cross_references() -> set[str]:
    """The names written as Sphinx cross-references."""
    return {name for _, text in [*docstrings(), *documents()] for name in ROLE.findall(text)}


def not_python() -> set[str]:
    """Dotted names that are not Python: configuration keys and their aliases, and the names the code itself
    uses as strings (dead-letter headers, event parameters, loggers, the decoder's listener name)."""
    names = {key.name for key in keys.KEYS} | {alias for key in keys.KEYS for alias in key.aliases}
    for base in SOURCES:
        for path in base.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
                    names.add(node.value)
    return names


NOT_PYTHON = not_python()


def is_not_python(name: str) -> bool:
    """A key, header, parameter or logger; a family of them (``hivewire.register.*``); a key under a
    pass-through prefix; a file's name."""
    return (
        name in NOT_PYTHON
        or any(other.startswith(name + ".") for other in NOT_PYTHON)
        or (name + ".").startswith(PASS_THROUGH)
        or name.endswith(tuple(f".{suffix}" for suffix in FILE_SUFFIXES))
    )


def resolve(name: str) -> str | None:
    """None if ``name`` is a module or an object of one; else what is missing."""
    parts = name.split(".")
    module: ModuleType | None = None
    index = len(parts)
    while index > 0:
        try:
            module = importlib.import_module(".".join(parts[:index]))
            break
        except ModuleNotFoundError as e:
            if e.name is None or not ".".join(parts[:index]).startswith(e.name):
                raise  # a module that exists but fails to import is not a dangling name
            index -= 1
    if module is None:
        return f"no module {parts[0]}"
    target: object = module
    for part in parts[index:]:
        if hasattr(target, part):
            target = getattr(target, part)
        elif inspect.isclass(target) and _instance_attribute(target, part):
            return None  # set in __init__ or declared as a field: nothing further to follow
        else:
            return f"{getattr(target, '__name__', target)!s} has no {part}"
    return None


def _instance_attribute(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            return True
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        if re.search(rf"self\.{name}\b\s*(:[^=\n]*)?=", source):
            return True
    return False


REFERENCES = references()
CROSS_REFERENCES = cross_references()


def dangling() -> dict[str, str]:
    out = {}
    for name, places in sorted(REFERENCES.items()):
        if is_not_python(name) and name not in CROSS_REFERENCES:
            continue
        problem = resolve(name)
        if problem is not None:
            out[name] = f"{problem} (in {', '.join(sorted(set(places))[:3])})"
    return out


def test_every_dotted_name_in_docstrings_and_docs_exists() -> None:
    assert dangling() == {}


def test_the_checker_finds_names_that_do_not_exist() -> None:
    assert resolve("hivewire.runtime._intake.Spill") is None
    assert resolve("hivewire.runtime._membership.Membership.switched") is None  # set in __init__
    assert resolve("hivewire.runtime.lane") is not None  # a module that is gone
    assert resolve("hivewire.runtime._lane.Nothing") is not None
    assert is_not_python("hivewire.listener.queue.size")  # a configuration key
    assert is_not_python("hivewire.shim.producer.acks")  # under a pass-through prefix
    assert is_not_python("hivewire.register")  # a family of keys (hivewire.register.*)
    assert not is_not_python("hivewire.source.Reader")


def test_the_references_are_read_from_docstrings_and_docs() -> None:
    places = {where.split("/")[0] for found in REFERENCES.values() for where in found}
    assert places == {"docs", "sdk", "shim"}
