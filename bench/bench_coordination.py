"""What coordination costs the data path: hivewire with one no-op listener, without coordination and with it
(``hivewire.coordination.zookeeper`` set: the instance joins its app's group, announces its partitions and lag
from a thread of its own), side by side in one run; and the same listener as a singleton (elected, then reading
every partition with a consumer of its own, its progress written to ZooKeeper at each commit).

Every mode reads the same pre-filled topic (realistic Apiary ON_ADD_PARTITION messages, librdkafka's mock
cluster), each run in its own process with its own consumer group, the modes alternating over the rounds;
ZooKeeper is a local one from pyspark's jars (needs Java 17). A rate is timed from the listener's first event
to its last, so a singleton's election is not counted: in wall-clock time (events/s), and in the CPU time of
the whole process, every thread included (events per CPU-second), which other work on a shared machine
disturbs far less than the wall clock.

Usage: python bench/bench_coordination.py [--messages 100000] [--rounds 9] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options
from bench_runtime import CONSUMER_SETTINGS, fill

from hivewire.testing import mock_kafka
from hivewire.tools._local import LocalZooKeeper

CONSUMER = r"""
import json, logging, sys, time
import hivewire as hw

mode, bootstrap, topic, n, quorum = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
settings = json.loads(sys.argv[6])
logging.disable(logging.CRITICAL)
config = {"endpoint.port": "0"}
if mode != "off":
    config.update({"hivewire.coordination.zookeeper": quorum, "hivewire.coordination.root": f"bench-{time.time_ns()}"})
app = hw.App("bench", config=config)
count, marks = [0], []

def noop(event):
    count[0] += 1
    if count[0] == 1:
        marks.append((time.perf_counter(), time.process_time()))
    if count[0] == n:
        marks.append((time.perf_counter(), time.process_time()))
        app.stop()

app.add_listener(noop, name="noop", status=None, singleton=mode == "singleton")
src = hw.KafkaSource(bootstrap, topic, group_id=f"hw-{time.time()}",
                     consumer_config={"auto.offset.reset": "earliest", **settings})
app.run(src, handle_signals=False)
(wall0, cpu0), (wall1, cpu1) = marks
print(json.dumps({"rate": (n - 1) / (wall1 - wall0), "cpu_rate": (n - 1) / (cpu1 - cpu0)}))
"""

MODES = {
    "off": "hivewire, 1 no-op listener, no coordination",
    "on": "the same, coordination configured",
    "singleton": "the listener as a singleton (coordination)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=9)
    add_output_options(parser)
    args = parser.parse_args()
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    n = args.messages
    began = time.monotonic()
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    cpu_rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    with (
        mock_kafka() as bootstrap,
        tempfile.TemporaryDirectory(prefix="hivewire-bench-") as tmp,
        LocalZooKeeper(workdir=Path(tmp) / f"zk-{uuid.uuid4().hex[:6]}") as zookeeper,
    ):
        fill(bootstrap, n)
        script = Path(tmp) / "coordination_consumer.py"
        script.write_text(CONSUMER)
        print(f"{n} messages in topic 'bench' (4 partitions); {args.rounds} rounds, modes alternating")
        for round_ in range(args.rounds):
            order = list(MODES) if round_ % 2 == 0 else list(reversed(MODES))
            for mode in order:
                proc = subprocess.run(
                    [
                        sys.executable,
                        str(script),
                        mode,
                        bootstrap,
                        "bench",
                        str(n),
                        zookeeper.quorum,
                        json.dumps(CONSUMER_SETTINGS),
                    ],
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                if proc.returncode != 0:
                    sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                rates[mode].append(result["rate"])
                cpu_rates[mode].append(result["cpu_rate"])
    for name, measured, unit in (("events/s", rates, "events/s"), ("events per CPU-second", cpu_rates, "events/cpu-s")):
        best = {mode: max(values) for mode, values in measured.items()}
        print(f"\n{name} over the same topic (best of {args.rounds}; every round in brackets)")
        for mode, label in MODES.items():
            rounds = ", ".join(f"{r:,.0f}" for r in measured[mode])
            print(f"  {label:<46} {best[mode]:>9,.0f}   [{rounds}]")
            out.figure(f"{label} (best, {name})", best[mode], unit)
        print(f"ratios to no coordination ({name}): best against best, and the median of each round's ratio")
        for mode, target in (("on", "   (target >= 0.95)"), ("singleton", "")):
            paired = statistics.median(c / o for c, o in zip(measured[mode], measured["off"], strict=True))
            print(f"  {MODES[mode]:<46} best {best[mode] / best['off']:4.2f}   median of rounds {paired:4.2f}{target}")
            out.figure(f"{MODES[mode]} / no coordination ({name}, median of rounds)", paired, "ratio")
    print(f"\n(took {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
