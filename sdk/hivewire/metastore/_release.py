"""A metastore's Hive release as its fb303 ``getVersion`` states it, and what tells Hive 4 apart.

Invariant: Hive 4 answers its release (``4.0.1``); 2.3 and 3.1 answer ``3.0`` (fb303's own default), so the
answer separates 4.x from the rest and nothing finer.
"""

from __future__ import annotations

__all__ = ["HIVE_4", "is_hive4", "major"]

#: The first release that fills in new objects (ids, ``createTime``, owners) and no longer answers
#: ``get_table`` (HIVE-26537), which Hive clients before 4.0 read a table with.
HIVE_4 = 4


def major(version: str) -> int | None:
    """4 for ``4.0.1``; None when ``version`` does not start with a number."""
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def is_hive4(version: str) -> bool:
    """Whether ``version`` (a ``getVersion`` answer, or a client release) is Hive 4 or later."""
    found = major(version)
    return found is not None and found >= HIVE_4
