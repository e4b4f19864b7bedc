"""The user's frames of a traceback: what a listener failure or an import error shows at INFO and above.

A listener that raises is called through hivewire's lanes and ``concurrent.futures``; a listener
module is imported through ``importlib`` and click. Those frames say nothing to the user, so the messages
show only the frames of the user's own files (:func:`user_traceback`), the innermost last as Python does,
and the whole traceback goes to DEBUG. Invariants: a frame is the user's unless its file belongs to hivewire,
to the standard library or to a library the runtime calls through (click); when no frame is the
user's (the failure is inside a library the user called), the innermost frame is kept, so a message always
names a place; formatting never reads more than the lines of the frames it shows.
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import sysconfig
from pathlib import Path


def _package_dir(name: str) -> str | None:
    """Where package ``name`` is installed, without importing it (the runtime never imports click)."""
    spec = importlib.util.find_spec(name)
    return str(Path(spec.origin).parent) if spec is not None and spec.origin else None


_INTERNAL = tuple(
    str(Path(p).resolve()) + os.sep
    for p in (
        str(Path(__file__).parent.parent),  # hivewire
        _package_dir("click"),
        sysconfig.get_paths()["stdlib"],
    )
    if p
)


def is_users(filename: str) -> bool:
    """Whether ``filename`` is the user's code (not hivewire's, the standard library's or click's)."""
    if filename.startswith(("<frozen", "<string")):
        return False
    try:
        resolved = str(Path(filename).resolve())
    except OSError:
        return True
    return not resolved.startswith(_INTERNAL)


def user_frames(error: BaseException) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of the user's frames in ``error``'s traceback, outermost first (the
    innermost frame when none is the user's)."""
    frames: list[tuple[str, int, str]] = []
    last: tuple[str, int, str] | None = None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        last = (code.co_filename, tb.tb_lineno, code.co_name)
        if is_users(code.co_filename):
            frames.append(last)
        tb = tb.tb_next
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        frames.append((error.filename, error.lineno, "<module>"))  # where the parser stopped
    if not frames and last is not None:
        frames.append(last)
    return frames


def user_traceback(error: BaseException, *, header: bool = True) -> str:
    """``error`` as Python prints it, with only the user's frames (and their source lines); ``header``: with
    Python's ``Traceback (most recent call last):`` line first."""
    lines = ["Traceback (most recent call last):"] if header else []
    for filename, lineno, function in user_frames(error):
        lines.append(f'  File "{filename}", line {lineno}, in {function}')
        source = linecache.getline(filename, lineno).strip()
        if source:
            lines.append(f"    {source}")
    text = f"{type(error).__qualname__}: {error}"
    if isinstance(error, SyntaxError):
        text = f"{type(error).__qualname__}: {error.msg}"
    return "\n".join([*lines, text])


def user_place(error: BaseException) -> str:
    """``file:line`` of the innermost of the user's frames in ``error`` (``"?"`` when it has no traceback)."""
    frames = user_frames(error)
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else "?"
