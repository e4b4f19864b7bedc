"""Every block of README.md and docs/*.md is run: by tests/integration/test_docs_examples.py, or by the test
it names (see tests/docs_examples.py); ``text`` blocks are output. Any other block fails here, by file:line."""

from __future__ import annotations

import re
import shlex

import click
from docs_examples import OUTPUT, PAGES, ROOT, RUN, blocks

from hivewire.tools._cli import main


def test_every_block_is_run() -> None:
    found = list(blocks())
    assert len(found) >= 60, len(found)
    not_run = [
        f"{block.name}: ```{block.language} {block.comment or ''}".strip()
        for block in found
        if block.language not in (*RUN, OUTPUT) or (block.comment is not None and block.runner is None)
    ]
    assert not not_run, "blocks no test runs (give the fence a language and make the block run):\n" + "\n".join(not_run)
    for block in found:
        if block.language == "python":
            compile(block.code, block.name, "exec")  # a syntax error fails here, before the services start


def test_a_block_left_to_a_test_is_run_by_that_test() -> None:
    named = [block for block in blocks() if block.runner is not None]
    assert named, "docs/data.md's spark-batch example is run by test_spark_source.py"
    for block in named:
        runner = ROOT / str(block.runner)
        assert runner.is_file(), f"{block.name}: {block.runner} does not exist"
        assert f'"{block.example}"' in runner.read_text() or f" {block.example} " in runner.read_text(), (
            f"{block.name}: {block.runner} does not run {block.example}"
        )


_FENCED = re.compile(r"^```(?P<info>\S*)\n(?P<code>.*?)^```\s*$", re.S | re.M)


def _fenced(info: str) -> list[tuple[str, str]]:
    out = []
    for path in PAGES:
        for match in _FENCED.finditer(path.read_text()):
            if match.group("info") == info:
                out.append(
                    (
                        f"{path.relative_to(ROOT)}:{path.read_text().count(chr(10), 0, match.start())}",
                        match.group("code"),
                    )
                )
    return out


def test_no_block_holds_a_stray_fence() -> None:
    # Issue 40: docs/cli.md had "```sh" twice, which renders the second as a line of the command.
    stray = [
        name for info in ("sh", "python", "text") for name, code in _fenced(info) if re.search(r"^```", code, re.M)
    ]
    assert not stray, stray


def _options(command: click.Command) -> set[str]:
    return {
        opt for param in command.params for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
    }


def test_every_hivewire_command_line_in_the_docs_names_a_command_and_flags_that_exist() -> None:
    """Each ``hivewire ...`` line of a shell block: its subcommand exists, and so does each ``--flag`` it uses."""
    checked = 0
    for name, code in _fenced("sh"):
        for line in code.replace("\\\n", " ").splitlines():
            words = shlex.split(line.split(" # ")[0], comments=True)
            if not words or words[0] != "hivewire":
                continue
            command: click.Command = main
            rest = words[1:]
            while isinstance(command, click.Group) and rest and rest[0] in command.commands:
                command, rest = command.commands[rest[0]], rest[1:]
            assert command is not main, f"{name}: {line}: no such command"
            known = _options(command) | _options(main)
            unknown = [w.split("=")[0] for w in rest if w.startswith("--") and w.split("=")[0] not in known]
            assert not unknown, f"{name}: {line}: {unknown} are not options of hivewire {command.name}"
            checked += 1
    assert checked >= 20, checked
