"""ruff (lint and format) and mypy (strict) are part of the test suite, so CI keeps the code clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    result = run("ruff", "check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run("ruff", "format", "--check", ".")
    assert result.returncode == 0, "run `make format`:\n" + result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run("mypy", "--no-error-summary")
    assert result.returncode == 0, result.stdout + result.stderr
