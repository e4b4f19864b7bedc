"""Docstrings and docs name only objects that exist: every dotted ``hivewire.<name>...`` (and ``hivewire_shim...``) in
a docstring of sdk/, shim/, tests/ and bench/ and in the Markdown of docs/, tests/ and bench/ resolves to a
module, or to an object in one (a class, function, constant, method or attribute).

Dotted names that are not Python are told apart by what they are, each from its own declaration: the
configuration keys and pass-through prefixes (``hivewire.config._keys``), the dead-letter headers and the
parameters the shim marks its events with. A logger's name (every ``logging.getLogger("...")``) is not Python
only where the text says it is a logger (a word of ``log`` within a line's length of it): elsewhere it must be a
module, so a module that is gone cannot hide behind a logger of the same name.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from hivewire.config import _keys as keys

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "sdk" / "hivewire", ROOT / "shim" / "hivewire_shim"]
#: Read for their docstrings and Markdown too, not for the names they declare.
READERS = [ROOT / "tests", ROOT / "bench"]
DOTTED = re.compile(r"(?<![\w./-])(hivewire(?:_shim)?(?:\.[A-Za-z_]\w*)+)")
#: A Sphinx cross-reference (``:mod:`hivewire.runtime._lane```): Python whatever else the name might be.
ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):`~?(hivewire(?:_shim)?(?:\.[A-Za-z_]\w*)+)`")
FILE_SUFFIXES = ("toml", "properties", "xml", "json", "yaml", "log")  # hivewire.toml is a file's name
#: Keys under these are passed through to a library (``hivewire.shim.producer.acks``).
PASS_THROUGH = tuple(prefix.name for prefix in keys.PREFIXES)


def docstrings() -> Iterator[tuple[str, str]]:
    """(where, text) of every docstring of our modules, classes and functions."""
    for base in [*SOURCES, *READERS]:
        for path in sorted(base.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    text = ast.get_docstring(node, clean=False)
                    if text:
                        line = getattr(node, "lineno", 1)
                        yield f"{path.relative_to(ROOT)}:{line}", text


def documents() -> Iterator[tuple[str, str]]:
    paths = [*(ROOT / "docs").glob("*.md"), *(base / "README.md" for base in READERS)]
    for path in sorted(path for path in paths if path.exists()):
        yield str(path.relative_to(ROOT)), path.read_text()


def loggers() -> set[str]:
    """The names given to ``logging.getLogger`` in sdk/ and shim/."""
    names = set()
    for base in SOURCES:
        for path in base.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "attr", getattr(node.func, "id", None)) == "getLogger"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    names.add(str(node.args[0].value))
    return names


LOGGERS = loggers()


def said_to_be_a_logger(text: str, start: int, end: int) -> bool:
    """Whether the text around ``text[start:end]`` (a line's length either side) speaks of logging."""
    around = text[max(0, start - 120) : end + 120]
    return re.search(r"\blog|\b(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\b", around) is not None


def is_logger(name: str) -> bool:
    """A logger's name, or the name of a family of them (``hivewire.kafka.librdkafka``)."""
    return name in LOGGERS or any(logger.startswith(name + ".") for logger in LOGGERS)


def references() -> dict[str, list[str]]:
    """Each dotted name, with where it appears (a logger's name where the text says it is one is left out)."""
    found: dict[str, list[str]] = {}
    for where, text in [*docstrings(), *documents()]:
        for match in DOTTED.finditer(text):
            name = match.group(1)
            if is_logger(name) and said_to_be_a_logger(text, match.start(), match.end()):
                continue
            found.setdefault(name, []).append(where)
    return found


def cross_references() -> set[str]:
    """The names written as Sphinx cross-references."""
    return {name for _, text in [*docstrings(), *documents()] for name in ROLE.findall(text)}


def not_python() -> set[str]:
    """Dotted names that are not Python: configuration keys and their aliases, and the names the code itself
    uses as strings (dead-letter headers, event parameters, the decoder's listener name), loggers' names
    excepted (see :func:`references`)."""
    names = {key.name for key in keys.KEYS} | {alias for key in keys.KEYS for alias in key.aliases}
    for base in SOURCES:
        for path in base.rglob("*.py"):
            tree = ast.parse(path.read_text(), str(path))
            logged = {
                id(node.args[0])
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "getLogger"
                and node.args
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and DOTTED.fullmatch(node.value)
                    and id(node) not in logged
                ):
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
    if parts[-1] == "__main__":  # importing it would run the command line
        return None if importlib.util.find_spec(name) is not None else f"no module {name}"
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
    assert places == {"bench", "docs", "sdk", "shim", "tests"}


def test_a_loggers_name_is_not_python_only_where_it_is_said_to_be_a_logger() -> None:
    assert "hivewire.runtime.lane" in LOGGERS and not is_not_python("hivewire.runtime.lane")
    text = "the hivewire.runtime.lane logger; see hivewire.runtime.lane"
    assert said_to_be_a_logger(text, 4, 25)
    assert not said_to_be_a_logger("x" * 200 + " hivewire.runtime.lane " + "x" * 200, 201, 222)
