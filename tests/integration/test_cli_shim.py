"""Issue 33, item 6: ``hivewire shim`` says at start what it found upstream, and its hint names its own flags."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import wait_for

from hivewire.tools._local import LocalMetastore, free_port


def start_shim(tmp_path: Path, upstream: str) -> tuple[subprocess.Popen[bytes], Path]:
    log = tmp_path / f"shim-{free_port()}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hivewire", "shim", "--upstream", upstream, "--port", "0", "--bind", "127.0.0.1",
             "--health-port", "0"],
            cwd=tmp_path, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    return proc, log


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(60)


def test_the_shim_says_at_start_that_its_upstream_does_not_answer_naming_its_own_flags(tmp_path: Path) -> None:
    dead = f"thrift://127.0.0.1:{free_port()}"
    proc, log = start_shim(tmp_path, dead)
    try:
        wait_for(lambda: "serving on" in log.read_text() or proc.poll() is not None, "the shim to start", 120)
        lines = log.read_text().splitlines()
        assert proc.poll() is None, lines
        unreachable = [line for line in lines if "upstream metastore is unreachable" in line]
        assert len(unreachable) == 1, lines
        assert (
            "--upstream (hivewire.shim.upstream.uris), --upstream-zookeeper or --upstream-hive-site" in (unreachable[0])
        )
        assert "--metastore-uris" not in log.read_text()
        (at_start,) = [line for line in lines if "at start:" in line]
        # the WARNING above says what to check; this line only adds what it means, at INFO
        assert f"INFO hivewire_shim: at start: upstream metastore unavailable: {dead}:" in at_start
        assert at_start.endswith("serving anyway, clients' calls fail until it answers (--upstream)"), at_start
    finally:
        assert stop(proc) == 0, log.read_text()


def test_the_shim_says_at_start_that_its_upstream_answers(tmp_path: Path, metastore: LocalMetastore) -> None:
    proc, log = start_shim(tmp_path, metastore.uri)
    try:
        wait_for(lambda: "serving on" in log.read_text() or proc.poll() is not None, "the shim to start", 120)
        lines = log.read_text().splitlines()
        (at_start,) = [line for line in lines if "at start:" in line]
        assert at_start.endswith(
            f"INFO hivewire_shim: at start: the upstream metastore {metastore.uri} accepts connections"
        )
        assert not any("unreachable" in line for line in lines), lines
    finally:
        assert stop(proc) == 0, log.read_text()
