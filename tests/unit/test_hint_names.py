"""Issue 40, item 4: every hint names a flag or a key that exists.

The messages hivewire gives users (the text of the errors it raises and of the lines it logs, in ``sdk/`` and
``shim/``) are scanned for configuration key names and command-line flags; each key must be a declared key,
an alias, or under a pass-through prefix (``hivewire.config._keys``), and each flag an option of some
``hivewire`` command. A hint naming ``metastore.uris`` or a ``--metastore-uris`` that no command has fails
here, naming the file and line.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import click

from hivewire.config._keys import KEYS, PREFIXES, find_key, passed_through
from hivewire.tools._cli import main

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "sdk" / "hivewire", ROOT / "shim" / "hivewire_shim"]

# Calls whose string arguments a user reads: exceptions raised and log lines.
_LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical", "log"}
_FLAG = re.compile(r"(?<![\w/.-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_KEY = re.compile(
    r"(?<![\w.-])(?:apiary|hivewire|endpoint|instance|metastore|hive\.metastore|hive\.zookeeper)"
    r"\.[a-z0-9_]+(?:\.[A-Za-z0-9_]+)*\.?\*?"
)
# Names in messages that are not hivewire's flags or keys.
_NOT_OURS = {
    "hive.metastore.event.message.factory",  # Hive's setting, on the metastore, that the message names as such
    "hivewire.original.*",  # the dead-letter headers (docs/runtime.md), not settings
}


def _is_message_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _LOG_METHODS or name.endswith(("Error", "Exception", "Warning")) or name in {"BadParameter", "fail"}


def _texts(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _messages() -> Iterator[tuple[Path, int, str]]:
    for folder in SOURCES:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _is_message_call(node):
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        for text in _texts(arg):
                            yield path, node.lineno, text


def _all_options(command: click.Command) -> set[str]:
    out = {
        opt for param in command.params for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
    }
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            out |= _all_options(sub)
    return out


def _python_name(name: str) -> bool:
    """``hivewire.spark.session``, ``hivewire.data._spark_sql``: a module of hivewire (or a name in one)."""
    parts = name.split(".")
    return parts[0] == "hivewire" and importlib.util.find_spec(".".join(parts[:2])) is not None


def _known_key(name: str) -> bool:
    if name in _NOT_OURS or _python_name(name):
        return True
    name = name.rstrip("*")
    if name.endswith("."):
        return any(p.name == name for p in PREFIXES) or any(k.name.startswith(name) for k in KEYS)
    return find_key(name) is not None or passed_through(name) is not None


def test_the_scan_sees_messages_and_both_kinds_of_name() -> None:
    found = list(_messages())
    assert len(found) > 500, len(found)
    texts = " ".join(text for _, _, text in found)
    assert _FLAG.search(texts) and _KEY.search(texts)
    # the scan would catch the hint issue 40 found
    assert not _known_key("metastore.uris") and "--metastore-urls" not in _all_options(main)


def test_every_key_and_flag_a_message_names_exists() -> None:
    options = _all_options(main)
    wrong = []
    for path, line, text in _messages():
        where = f"{path.relative_to(ROOT)}:{line}"
        wrong += [f"{where}: flag {flag}" for flag in _FLAG.findall(text) if flag not in options | _NOT_OURS]
        wrong += [f"{where}: key {key}" for key in _KEY.findall(text) if not _known_key(key)]
    assert not wrong, "\n".join(wrong)
