"""The edit-and-rerun loop (issue 33): seconds from starting ``hivewire run`` again to its first event, after the
last run stopped cleanly (Ctrl-C: the consumer closes and leaves its group) and after it was killed (kill -9:
its member holds the group until ``session.timeout.ms`` ends), on the local stack's Kafka: the Apache Kafka
broker ``hivewire local`` runs now (:class:`~hivewire.tools._kafka_broker.KafkaBroker`, with the local
defaults) and librdkafka's mock cluster it ran before (:class:`~hivewire.tools._stack.MockKafka`, which ignores
a member leaving), side by side in one run.

Each round starts a run, waits for it to handle an event, stops it one way or the other, starts the same app
again in the same group and times it from the start to the first event it handles (an event is published
every 0.5 s until one arrives). Stop modes alternate over the rounds; each round has a group of its own. The
process start (Python, imports) is in the figure: it is part of what a user waits for. The consumer's own
settings are librdkafka's defaults (session.timeout.ms 45 s), as a user's would be.

Usage: python bench/bench_restart.py [--rounds 3] [--kafka broker,mock] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options

import hivewire as hw
from hivewire.tools import _testing as testing
from hivewire.tools._kafka_broker import KafkaBroker
from hivewire.tools._stack import MockKafka

LISTENERS = """
import hivewire as hw
app = hw.App("restart-bench")

@app.on_create_table
def created(event):
    print("EVENT", event.table_name, flush=True)
"""


class Run:
    """``hivewire run listeners:app`` in a process of its own; :attr:`seen` holds the tables it handled."""

    def __init__(self, workdir: Path, bootstrap: str, topic: str, group: str) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hivewire", "run", "listeners:app", "--bootstrap-servers", bootstrap,
             "--topic", topic, "--group", group, "--endpoint-port", "0"],
            cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self.seen: dict[str, float] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("EVENT "):
                self.seen.setdefault(line.split()[1], time.monotonic())

    def first_event(self, bootstrap: str, topic: str, timeout: float = 300) -> float:
        """Publish an event every 0.5 s until one is handled; seconds from the start to that event."""
        deadline = time.monotonic() + timeout
        while not self.seen:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.proc.kill()
                raise SystemExit(f"no event handled within {timeout:.0f} s (exit status {self.proc.poll()})")
            testing.produce(
                bootstrap, topic, [testing.make_event(hw.CreateTableEvent, "bench", f"t{uuid.uuid4().hex}")]
            )
            time.sleep(0.5)
        return min(self.seen.values()) - self.started

    def stop(self, how: str) -> None:
        if how == "kill -9":
            self.proc.kill()
        else:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(120)


MODES = ("Ctrl-C (leaves the group)", "kill -9")


def measure(kafka: KafkaBroker | MockKafka, workdir: Path, rounds: int) -> dict[str, list[float]]:
    """Per stop mode, the seconds from a restart to its first event, ``rounds`` times (the modes alternating)."""
    topic = f"restart-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic)
    bootstrap = kafka.bootstrap_servers
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode in MODES:
            group = f"restart-{uuid.uuid4().hex[:8]}"
            first = Run(workdir, bootstrap, topic, group)
            first.first_event(bootstrap, topic)
            first.stop(mode)
            again = Run(workdir, bootstrap, topic, group)
            seconds[mode].append(again.first_event(bootstrap, topic))
            again.stop("Ctrl-C")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="restarts per stop mode and Kafka")
    parser.add_argument("--kafka", default="broker,mock", help="which Kafkas, in order: broker, mock or both")
    add_output_options(parser)
    args = parser.parse_args()
    kinds = [k.strip() for k in args.kafka.split(",") if k.strip()]
    with Output(__file__, args) as out, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "listeners.py").write_text(LISTENERS)
        results: dict[str, dict[str, list[float]]] = {}
        for kind in kinds:
            if kind == "broker":
                broker = KafkaBroker(workdir=workdir / "kafka")
                broker.start()
                try:
                    results["Apache Kafka broker (hivewire local now)"] = measure(broker, workdir, args.rounds)
                finally:
                    broker.stop()
            elif kind == "mock":
                mock = MockKafka()
                try:
                    results["librdkafka mock cluster (before)"] = measure(mock, workdir, args.rounds)
                finally:
                    mock.close()
            else:
                raise SystemExit(f"--kafka: broker or mock, not {kind!r}")
        print(
            f"\nseconds from `hivewire run` to its first event after a restart ({args.rounds} round(s) each; "
            f"load {os.getloadavg()[0]:.1f} at the end)"
        )
        base = statistics.median(next(iter(results.values()))[MODES[0]])
        for kafka, seconds in results.items():
            print(f"  {kafka}")
            for mode in MODES:
                median = statistics.median(seconds[mode])
                runs = ", ".join(f"{s:.1f}" for s in seconds[mode])
                print(
                    f"    after {mode:<26} median {median:6.1f} s  ({runs})  ratio to the first: {median / base:5.2f}"
                )
                out.figure(f"{kafka}: restart after {mode}", median, "s", better="lower")


if __name__ == "__main__":
    main()
