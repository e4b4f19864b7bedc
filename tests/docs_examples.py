"""The Python blocks of README.md and docs/*.md: each runs as written against local services, or is marked
not runnable, with the reason, by an HTML comment on the line before its fence::

    <!-- not runnable: needs a ZooKeeper ensemble with TLS and client certificates -->
    ```python
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_BLOCK = re.compile(r"(?:<!-- not runnable: (?P<reason>[^\n]*?) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    reason: str | None

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> Iterator[Block]:
    for path in PAGES:
        text = path.read_text()
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            yield Block(str(path.relative_to(ROOT)), line, match.group("code"), match.group("reason"))
