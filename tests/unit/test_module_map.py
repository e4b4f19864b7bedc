"""tests/README.md maps every module to the tests that exercise it, and is up to date (``tests/module_map.py``
writes it)."""

from __future__ import annotations

from pathlib import Path

import module_map

POOL = ".".join(("hivewire", "runtime", "_pool"))  # never named whole here: that would count as exercising it


def test_every_module_has_a_test() -> None:
    assert module_map.untested() == []


def test_the_readme_is_up_to_date() -> None:
    assert module_map.README.read_text() == module_map.render(), "run: python tests/module_map.py"


def test_every_module_is_in_the_readme() -> None:
    text = module_map.README.read_text()
    assert all(f"| `{module_map.shown(name)}` |" in text for name in module_map.modules())


def test_a_module_is_exercised_by_what_imports_it(tmp_path: Path) -> None:
    test = tmp_path / "test_x.py"
    test.write_text(
        "import hivewire.runtime._lane\n"
        "def f():\n    from hivewire.runtime import _tracker\n"
        'NAMED = "hivewire.runtime._pool"\n'
        'ARGS = ["python", "-m", "hivewire"]\n'
    )
    known = module_map.modules()
    found = module_map.imported(test, known, by_name=True)
    assert found == {
        "hivewire.runtime._lane",
        "hivewire.runtime",
        "hivewire.runtime._tracker",
        POOL,
        "hivewire.__main__",
        "hivewire",  # the string "hivewire" of the command line names the package too
    }
    assert module_map.imported(test, known) == {
        "hivewire.runtime._lane",
        "hivewire.runtime",
        "hivewire.runtime._tracker",
    }


def test_a_module_no_test_imports_is_exercised_through_its_importer() -> None:
    exercised = module_map.exercised()
    tests, via = exercised[POOL]
    assert tests and via is not None and via.startswith("hivewire.runtime.")
    assert exercised["hivewire.runtime._lane"][1] is None  # imported by tests itself
