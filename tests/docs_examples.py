"""The Python blocks of README.md and docs/*.md: each runs as written against local services, or is marked
not runnable, with the reason, by an HTML comment on the line before its fence::

    <!-- not runnable: needs a ZooKeeper ensemble with TLS and client certificates -->
    ```python

A block that a test runs itself, inside a fixture it already has (a Spark session, a topic of 200,000 events),
names that test instead, and the generic harness leaves it to it::

    <!-- example: spark-batch (tests/integration/test_spark_source.py runs it) -->
    ```python
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_BLOCK = re.compile(
    r"(?:<!-- not runnable: (?P<reason>[^\n]*?) -->\n"
    r"|<!-- example: (?P<example>\S+) \((?P<runner>\S+) runs it\) -->\n)?"
    r"```python\n(?P<code>.*?)^```",
    re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    reason: str | None
    #: The example's name and the test file that runs it, for a block run by a test of its own.
    example: str | None = None
    runner: str | None = None

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> Iterator[Block]:
    for path in PAGES:
        text = path.read_text()
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            yield Block(
                str(path.relative_to(ROOT)),
                line,
                match.group("code"),
                match.group("reason"),
                match.group("example"),
                match.group("runner"),
            )
