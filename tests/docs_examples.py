"""Every fenced block of README.md and docs/*.md, and who runs it. Nothing is left out: a block is run by
tests/integration/test_docs_examples.py (``python``: in a fresh interpreter; ``sh`` and ``console``: each
command line through bash, a long-running one until its start line, then stopped; ``properties`` and
``xml``: as the files the shell blocks' commands read), or by a test of its own that it names, by an HTML
comment on the line before its fence, when that test has the fixture it needs (a Spark session, a topic of
200,000 events, a Kafka with SASL/TLS)::

    <!-- example: spark-batch (tests/integration/test_spark_source.py runs it) -->
    ```python

``text`` blocks are a command's output, shown beside the command that prints it; they are not programs.
tests/unit/test_docs_blocks.py fails on any other block, naming its ``file:line``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: The languages test_docs_examples.py runs, and the one that is output, not a program.
RUN = ("python", "sh", "console", "properties", "xml")
OUTPUT = "text"

_BLOCK = re.compile(
    r"(?:<!-- (?P<comment>[^\n]*?) -->\n)?^```(?P<language>\S*)\n(?P<code>.*?)^```[ \t]*$",
    re.S | re.M,
)
_EXAMPLE = re.compile(r"example: (?P<example>\S+) \((?P<runner>\S+) runs it\)")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    #: The HTML comment on the line before the fence, if any.
    comment: str | None = None

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def example(self) -> str | None:
        """The example's name, for a block run by a test of its own."""
        match = _EXAMPLE.fullmatch(self.comment or "")
        return match.group("example") if match else None

    @property
    def runner(self) -> str | None:
        """The test file that runs this block itself."""
        match = _EXAMPLE.fullmatch(self.comment or "")
        return match.group("runner") if match else None


def blocks() -> Iterator[Block]:
    for path in PAGES:
        text = path.read_text()
        for match in _BLOCK.finditer(text):
            yield Block(
                str(path.relative_to(ROOT)),
                text.count("\n", 0, match.start("code")),  # the fence's line, 1-based
                match.group("language"),
                match.group("code"),
                match.group("comment"),
            )


def block(page: str, language: str, first_line: str) -> Block:
    """The block of ``page`` in ``language`` whose first line is ``first_line``."""
    found = [b for b in blocks() if b.page == page and b.language == language and b.code.startswith(first_line)]
    assert len(found) == 1, f"{page}: {len(found)} {language} blocks start with {first_line!r}"
    return found[0]
