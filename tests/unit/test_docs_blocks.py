"""Every Python block of the docs is run by tests/integration/test_docs_examples.py or marked not runnable
with a reason; marked ones still compile."""

from __future__ import annotations

from docs_examples import blocks


def test_every_block_runs_or_says_why_not() -> None:
    found = list(blocks())
    assert len(found) >= 20
    for block in found:
        compile(block.code, block.name, "exec")  # a syntax error fails here, marked or not
        assert block.reason is None or len(block.reason.strip()) > 10, block.name
    assert sum(block.reason is None for block in found) > len(found) / 2  # most examples run
