"""``hivewire demo`` (the README's command) runs the whole chain: shim -> Kafka -> KafkaSource -> listener,
the metastore found through ZooKeeper, the events as a DataFrame at the end, then the next steps."""

from __future__ import annotations

import re
import subprocess
import sys


def test_hivewire_demo_runs_the_whole_chain() -> None:
    done = subprocess.run([sys.executable, "-m", "hivewire", "demo"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("found in ZooKeeper") and "(the shim)" in line for line in lines)
    received = [line.split()[2] for line in lines if "listener <-" in line]
    expected = ["CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION", "ALTER_TABLE", "DROP_PARTITION", "DROP_TABLE",
                "DROP_DATABASE"]  # fmt: skip
    assert received == expected
    assert "added column(s) note string" in done.stdout
    assert "done: 7 changes, 7 events through Kafka, in order" in lines
    # the DataFrame read back from the topic: one row per event (Spark is installed in the test environment)
    assert "the topic as a Spark DataFrame: hw.read_events(...).to_spark(spark)" in lines
    rows = [line.split("|")[1].strip() for line in lines if line.startswith("|") and "event_type" not in line]
    assert sorted(rows) == sorted(expected)
    assert lines[-6] == "next steps:" and lines[-1].strip().startswith("deploy/")
    assert len(lines) < 50  # short and readable
    # Issue 40: a healthy run logs nothing at WARNING (librdkafka's GETPID coordinator-load retries are DEBUG).
    # Spark's JVM prints its own start-up lines ("WARNING: Using incubator modules", log4j's "WARN"): not logs.
    logged = re.compile(r"^\d{4}-\d\d-\d\d [\d:,.]+ WARNING ")
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if logged.search(line)]
    assert not warnings, warnings
