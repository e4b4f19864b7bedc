"""Every long-running command against services that are down says so in a few lines (issue 39, acceptance 2).

``run``, ``shim``, ``bridge``, ``archive`` and ``register`` start at once (one shared window of
:data:`WINDOW` seconds, so the module costs about that) against a Kafka broker, a metastore and a ZooKeeper that
are down: ports nothing listens on, as a dead service's are. (``bridge`` reads a metastore that is down and
writes to the real broker, which it needs before it reads at all.) In the window each command writes at most
:data:`MOST` lines, and each of its warnings and errors names what is down and the flag or key to check.
``local`` runs its own services: its Kafka broker is killed -9 and the window starts then.
Against a dead broker librdkafka retries every few milliseconds and logs each failure: 590 lines in 27 s from
the shim before this was fixed. Later lines are at most one a minute: the same
:class:`~hivewire._ratelimit.RateLimit` speaks for every outage (tests/unit/test_outages_and_secrets.py checks
its minutes on a clock it is given).
"""

from __future__ import annotations

import datetime
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_for

from hivewire.tools._kafka_broker import create_topic
from hivewire.tools._local import free_port

pytestmark = pytest.mark.integration

HIVEWIRE = str(Path(sys.executable).with_name("hivewire"))
#: Seconds each command runs against the dead services.
WINDOW = 33.0
#: The most lines a command may write in the window.
MOST = 10
#: A log line: its level is the third field.
LINE = re.compile(r"^\S+ \S+ (?P<level>[A-Z]+) (?P<logger>\S+): (?P<message>.*)$")
TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
#: What a warning must name to say what to check: a flag or a configuration key.
CHECK = re.compile(r"--[a-z][a-z-]+|\b(apiary|hivewire|metastore|hive)\.[a-z.]+[a-z]")

LISTENERS = textwrap.dedent("""
    import hivewire as hw

    app = hw.App("outage")

    @app.on_create_table
    def created(event):
        pass
""")


@pytest.fixture(scope="module")
def outputs(kafka: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Each command's output over the window (all of them run at once); the services' ports are dead."""
    work = tmp_path_factory.mktemp("outage")
    (work / "outagelisteners.py").write_text(LISTENERS)
    broker, metastore, zookeeper = (f"127.0.0.1:{free_port()}" for _ in range(3))
    topic = "outage-apiary"
    create_topic(kafka, topic, 1, 1)
    commands = {
        "run": ["run", "outagelisteners:app", "--bootstrap-servers", broker, "--topic", topic,
                "--endpoint-port", "0"],
        "shim": ["shim", "--upstream", f"thrift://{metastore}", "--bootstrap-servers", broker, "--topic", topic,
                 "--spool-dir", str(work / "spool"), "--port", "0", "--zookeeper", zookeeper],
        "bridge": ["bridge", "--metastore-uris", f"thrift://{metastore}", "--to-kafka", "--bootstrap-servers", kafka,
                   "--topic", topic, "--checkpoint", str(work / "bridge.checkpoint")],
        "archive": ["archive", "--bootstrap-servers", broker, "--topic", topic, "--table", str(work / "table")],
        "register": ["register", "--metastore", metastore, "--zookeeper", zookeeper, "--interval", "1"],
    }  # fmt: skip
    procs = {}
    for name, args in commands.items():
        with (work / f"{name}.log").open("wb") as out:
            procs[name] = subprocess.Popen(
                [HIVEWIRE, "--log-level", "INFO", *args], cwd=work, stdout=out, stderr=subprocess.STDOUT
            )
    # The window opens at each command's first line: starting Python is slow on a loaded machine.
    logs = {name: work / f"{name}.log" for name in commands}
    wait_for(lambda: all(logs[n].stat().st_size or procs[n].poll() is not None for n in commands), "first lines", 300)
    time.sleep(WINDOW)
    ended = {name: proc.poll() for name, proc in procs.items()}
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    # Only what was written before the stop counts (the lines saying it stops are not about the outage).
    texts = {}
    for name in commands:
        text = logs[name].read_text(errors="replace")
        print(f"--- {name} (exit status in the window: {ended[name]}):\n{text}")
        texts[name] = "".join(in_window(text.splitlines(keepends=True)))
    yield texts


def in_window(lines: list[str]) -> Iterator[str]:
    """The lines written within :data:`WINDOW` seconds of the first, up to the stop (the lines saying it stops
    are not about the outage); a line without a time (a print, a traceback's) counts as in it."""
    first = None
    for line in lines:
        if "SIGTERM" in line:
            return
        found = TIME.match(line)
        if found is not None:
            at = datetime.datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S,%f")
            first = first or at
            if (at - first).total_seconds() > WINDOW:
                return
        yield line


@pytest.mark.parametrize("command", ["run", "shim", "bridge", "archive", "register"])
def test_a_command_against_dead_services_says_what_is_down_in_a_few_lines(
    outputs: dict[str, str], command: str
) -> None:
    lines = outputs[command].splitlines()
    assert lines, f"{command} said nothing about the services it cannot reach"
    assert len(lines) <= MOST, f"{command} wrote {len(lines)} lines in {WINDOW:g} s:\n" + "\n".join(lines)
    warnings = []
    for line in lines:
        found = LINE.match(line)
        if (found is None and line.startswith("Error")) or (found and found["level"] in ("WARNING", "ERROR")):
            warnings.append(line)
            text = found["message"] if found else line  # the logger's name (hivewire.kafka) is no key
            assert CHECK.search(text), f"{command}: this line names no flag or key to check:\n{line}"
    assert warnings, f"{command} did not say that anything is down:\n" + "\n".join(lines)


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs."""
    try:
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return [p for c in children for p in (c, *descendants(c))]


def test_local_says_in_a_few_lines_that_its_kafka_died(tmp_path: Path) -> None:
    """``hivewire local`` (a metastore, ZooKeeper, a Kafka broker and the shim) whose broker is killed -9:
    from the kill on, the same limits as the other commands (its shim's Kafka sink speaks for the outage)."""
    out = tmp_path / "local.log"
    with out.open("wb") as log:
        proc = subprocess.Popen(
            [HIVEWIRE, "--log-level", "INFO", "local", "--kafka", "broker"],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: "hivewire local: up" in out.read_text() or proc.poll() is not None, "local to be up", 600)
        assert proc.poll() is None, out.read_text()[-3000:]
        (broker,) = [p for p in descendants(proc.pid) if b"kafka.Kafka" in Path(f"/proc/{p}/cmdline").read_bytes()]
        before = out.read_text()
        os.kill(broker, signal.SIGKILL)
        time.sleep(WINDOW)
        after = out.read_text()[len(before) :]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(180)
    print(f"--- local after its broker was killed:\n{after}")
    lines = list(in_window(after.splitlines(keepends=True)))
    assert len(lines) <= MOST, "".join(lines)
    warnings = [line for line in lines if (found := LINE.match(line)) and found["level"] in ("WARNING", "ERROR")]
    assert warnings, f"local did not say that its Kafka is down:\n{after}"
    for line in warnings:
        found = LINE.match(line)
        assert found is not None and CHECK.search(found["message"]), line
