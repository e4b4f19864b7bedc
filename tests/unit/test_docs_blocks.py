"""Every Python block of the docs is run by tests/integration/test_docs_examples.py, by a test it names, or
marked not runnable with a reason; marked ones still compile."""

from __future__ import annotations

from docs_examples import ROOT, blocks


def test_every_block_runs_or_says_why_not() -> None:
    found = list(blocks())
    assert len(found) >= 20
    for block in found:
        compile(block.code, block.name, "exec")  # a syntax error fails here, marked or not
        assert block.reason is None or len(block.reason.strip()) > 10, block.name
    assert sum(block.reason is None for block in found) > len(found) / 2  # most examples run


def test_a_block_left_to_a_test_is_run_by_that_test() -> None:
    named = [block for block in blocks() if block.runner is not None]
    assert named, "docs/data.md's spark-batch example is run by test_spark_source.py"
    for block in named:
        runner = ROOT / str(block.runner)
        assert runner.is_file(), f"{block.name}: {block.runner} does not exist"
        assert f'_docs_example("{block.example}")' in runner.read_text(), f"{block.runner} does not run {block.example}"
