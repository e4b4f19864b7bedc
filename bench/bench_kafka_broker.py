"""What librdkafka's mock cluster was hiding: the same consumers on the mock and on a real Apache Kafka broker.

One run, both brokers: the same topic contents (``bench_runtime.fill``: realistic Apiary ON_ADD_PARTITION messages,
zstd) on librdkafka's mock cluster and on an Apache Kafka broker (KRaft, one process, the jars of
``make jvm``), and the same consumers over each, each in its own process with its own group, alternating over
the rounds: the raw confluent-kafka consume loop, and hivewire with 1 and with 5 no-op listeners. Printed:
each one's events/s on each broker and the ratio real / mock, and hivewire's ratio to the raw loop on each.

Usage: python bench/bench_kafka_broker.py [--messages 100000] [--rounds 3] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options
from bench_runtime import CONSUMER, CONSUMER_SETTINGS, fill

from hivewire.testing import mock_kafka
from hivewire.tools._jvm import version
from hivewire.tools._kafka_broker import KafkaBroker

MODES = {
    "raw": "raw confluent-kafka consume loop",
    "hivewire:1": "hivewire, 1 no-op listener",
    "hivewire:5": "hivewire, 5 no-op listeners",
}


def consume(script: Path, mode: str, bootstrap: str, n: int) -> float:
    proc = subprocess.run(
        [sys.executable, str(script), mode, bootstrap, "bench", str(n), json.dumps(CONSUMER_SETTINGS)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["rate"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    add_output_options(parser)
    args = parser.parse_args()
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    began = time.monotonic()
    n = args.messages
    rates: dict[tuple[str, str], list[float]] = {}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hivewire-bench-")))
        broker = stack.enter_context(KafkaBroker(workdir=tmp / "kafka"))
        brokers = {"mock": stack.enter_context(mock_kafka()), "kafka": broker.bootstrap_servers}
        for bootstrap in brokers.values():
            fill(bootstrap, n)
        script = tmp / "runtime_consumer.py"
        script.write_text(CONSUMER)
        print(
            f"{n} messages in topic 'bench' (4 partitions) on librdkafka's mock cluster and on Apache Kafka "
            f"{version('kafka')} (KRaft, one broker); {args.rounds} rounds, brokers and modes alternating"
        )
        for _ in range(args.rounds):
            for mode in MODES:
                for name, bootstrap in brokers.items():
                    rates.setdefault((name, mode), []).append(consume(script, mode, bootstrap, n))
    best = {key: max(values) for key, values in rates.items()}
    print(f"\nevents/s, best of {args.rounds} (every round in brackets)")
    print(f"  {'':<36} {'mock':>9} {'Kafka':>9}   Kafka / mock (median of rounds)")
    for mode, label in MODES.items():
        ratio = statistics.median(k / m for m, k in zip(rates[("mock", mode)], rates[("kafka", mode)], strict=True))
        rounds = ", ".join(
            f"{m:,.0f}/{k:,.0f}" for m, k in zip(rates[("mock", mode)], rates[("kafka", mode)], strict=True)
        )
        print(f"  {label:<36} {best[('mock', mode)]:>9,.0f} {best[('kafka', mode)]:>9,.0f}   {ratio:4.2f}   [{rounds}]")
        out.figure(f"{label}: Kafka / mock (median of rounds)", ratio, "ratio")
        out.figure(f"{label} on Apache Kafka (best)", best[("kafka", mode)], "events/s")
    print("\nhivewire's ratio to the raw loop on each broker (best against best)")
    for listeners in (1, 5):
        mode = f"hivewire:{listeners}"
        on_mock = best[("mock", mode)] / best[("mock", "raw")]
        on_kafka = best[("kafka", mode)] / best[("kafka", "raw")]
        print(f"  {MODES[mode]:<36} mock {on_mock:4.2f}   Kafka {on_kafka:4.2f}")
        out.figure(f"{MODES[mode]} / raw on Apache Kafka", on_kafka, "ratio")
    print(f"\n(took {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
