"""docs/architecture.md stays readable and true: no table cell longer than 300 characters, and every
``module:function`` the runtime map and glossary name exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
STEP = re.compile(r"`((?:[a-z]+/)?_[a-z_]+):([A-Za-z_][A-Za-z_.]*)`")


def cells(text: str) -> list[tuple[int, str]]:
    """Every cell of every Markdown table: (line number, text)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("|") and not set(line) <= set("|-: "):
            found += [(number, cell.strip()) for cell in line.strip().strip("|").split("|")]
    return found


def test_no_table_cell_is_longer_than_300_characters() -> None:
    long = [(number, len(cell), cell[:60]) for number, cell in cells(DOC.read_text()) if len(cell) > 300]
    assert long == [], "move the detail out of these cells, into text after the table"


def test_the_cell_check_sees_a_long_cell() -> None:
    assert [len(cell) for _, cell in cells("| a | " + "x" * 301 + " |\n|---|---|")] == [1, 301]


def runtime_steps() -> list[tuple[str, str]]:
    text = DOC.read_text()
    section = text[text.index("## The runtime\n") : text.index("The threads, and who owns each:")]
    return STEP.findall(section)


def test_the_runtime_map_has_numbered_steps_from_poll_to_commit() -> None:
    text = DOC.read_text()
    section = text[text.index("## The runtime\n") : text.index("The runtime's words:")]
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", section, re.MULTILINE)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 10
    names = {f"{module}:{name}" for module, name in runtime_steps()}
    assert {"_kafka:KafkaSource.poll", "_share:Share.done", "_kafka:KafkaSource.commit"} <= names


def test_every_step_names_a_function_that_exists() -> None:
    steps = runtime_steps()
    assert len(steps) > 30
    missing = []
    for module, name in steps:
        path = module.replace("/", ".") if "/" in module else f"runtime.{module}"
        target: object = importlib.import_module(f"hivewire.{path}")
        for part in name.split("."):
            target = getattr(target, part, None)
        if target is None:
            missing.append(f"{module}:{name}")
    assert missing == []


def test_the_glossary_has_the_runtimes_words() -> None:
    text = DOC.read_text()
    glossary = text[text.index("The runtime's words:") : text.index("The threads, and who owns each:")]
    words = {cell for _, cell in cells(glossary)[::2]}
    assert {"batch", "share", "item", "spill", "parked", "backlog", "letters"} <= words
