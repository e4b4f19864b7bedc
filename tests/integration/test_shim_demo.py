"""``hivewire demo`` (the README's command) runs the local metastore, the shim and an App, and succeeds."""

from __future__ import annotations

import subprocess
import sys


def test_hivewire_demo_succeeds() -> None:
    done = subprocess.run([sys.executable, "-m", "hivewire", "demo"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    received = [line.split()[2] for line in lines if "listener <-" in line]
    assert received == [
        "CREATE_DATABASE",
        "CREATE_TABLE",
        "ADD_PARTITION",
        "ALTER_TABLE",
        "DROP_PARTITION",
        "DROP_TABLE",
        "DROP_DATABASE",
    ]
    assert "added column(s) note string" in done.stdout
    assert lines[-1] == "done: 7 changes, 7 events, in order"
    assert len(lines) < 25  # short and readable
