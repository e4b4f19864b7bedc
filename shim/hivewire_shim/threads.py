"""Why the shim could not start a thread: the limits on threads that apply to this process, in one line.

A thread fails to start (``RuntimeError: can't start new thread``) when the process, its user or its
cgroup reached a limit on tasks (``RLIMIT_NPROC``, the cgroup's ``pids.max``, the kernel's
``threads-max``), or when the address space left (``RLIMIT_AS``) cannot hold another thread's stack.
:func:`thread_limits` names those that are set, so the line an operator reads says which one to raise.
"""

from __future__ import annotations

import resource
import threading
from pathlib import Path

__all__ = ["thread_limits"]

_RLIMITS = (("RLIMIT_NPROC", resource.RLIMIT_NPROC), ("RLIMIT_AS", resource.RLIMIT_AS))
_FILES = (
    ("kernel.threads-max", Path("/proc/sys/kernel/threads-max")),
    ("cgroup pids.max", Path("/sys/fs/cgroup/pids.max")),  # cgroup v2
    ("cgroup pids.max", Path("/sys/fs/cgroup/pids/pids.max")),  # cgroup v1
)


def thread_limits() -> str:
    """``"N threads run; limits: RLIMIT_NPROC 4096, ..."``: the set limits on this process's threads."""
    found = []
    for name, which in _RLIMITS:
        soft, _hard = resource.getrlimit(which)
        if soft != resource.RLIM_INFINITY:
            found.append(f"{name} {soft}")
    named: set[str] = set()
    for name, path in _FILES:
        try:
            value = path.read_text().strip()
        except OSError:
            continue
        if value != "max" and name not in named:
            named.add(name)
            found.append(f"{name} {value}")
    limits = ", ".join(found) if found else "none set"
    return f"{threading.active_count()} threads run in the shim; limits: {limits}"
