"""Dispatch throughput: a raw confluent-kafka consume loop vs hivewire with 1 and 5 no-op listeners.

All modes read the same pre-filled topic (realistic Apiary ON_ADD_PARTITION messages, zstd-compressed so
that librdkafka's mock cluster holds them all), each in its own process with its own consumer group and the
same consumer settings (``fetch.queue.backoff.ms=20``, as KafkaSource sets it), alternating over the rounds.
Also measured in the same run:

* a healthy no-op listener next to one that always fails (with backoff, or at once with every event
  dead-lettered), against running alone, with the default bounds and overflow (the failing listener, once
  a poll's worth behind, keeps only offsets and reads its records again later): the isolation target is 90%
  or more;
* what limits hivewire: the raw loop plus decoding (``apiary.decode``, as the runtime does it) in the same
  kind of process, and decoding alone over the same messages in this process, so the cost of an event
  splits into consuming, decoding and the runtime itself (hand-off to listener threads, calls, bookkeeping);
* the ceiling of any consumer that checks each message before handing it on: the raw loop plus msgspec's
  syntax check of the whole value and nothing else (the cheapest validation there is here), and what a
  hand-written loop pays with the standard library's ``json.loads``.

* listeners that wait (issue 20): a listener awaiting 10 ms per event (``asyncio.sleep``, standing in for an
  HTTP call) and one sleeping 10 ms (``time.sleep``, on threads), at concurrency 1 and at concurrency 200,
  over a topic of 20,000 events on 200 tables (concurrency 1 is timed over its first 300 events);
* worker processes (``hivewire run --workers``): a listener spending about 200 us of pure Python per event,
  with one worker and with two, over the same topic.

Usage: python bench/bench_runtime.py [--messages 200000] [--rounds 3] [--only MODE ...] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options
from confluent_kafka import Producer

from hivewire import apiary
from hivewire.events import AddPartitionEvent, Origin
from hivewire.testing import make_partition, make_table, mock_kafka

CONSUMER_SETTINGS = {"fetch.queue.backoff.ms": 20}  # what KafkaSource sets; given to every mode

CONSUMER = r"""
import json, sys, time, logging
mode, bootstrap, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
settings = json.loads(sys.argv[5])
if mode in ("raw", "syntax", "json", "decode"):
    from confluent_kafka import Consumer
    from hivewire import apiary
    from hivewire.events import Origin
    import msgspec
    check = {"syntax": msgspec.json.Decoder(msgspec.Raw).decode, "json": json.loads}.get(mode)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{mode}-{time.time()}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, **settings})
    c.subscribe([topic])
    decode = mode == "decode"
    seen, t0 = 0, None
    while seen < n:
        for m in c.consume(500, 1.0):
            if m.error() is None:
                if t0 is None: t0 = time.perf_counter()
                value = m.value()
                if decode:  # as the runtime's polling thread does it
                    kind, ts = m.timestamp()
                    apiary.decode(value, origin=Origin(m.topic(), m.partition(), m.offset(), ts if kind else None))
                elif check is not None:
                    check(value)
                seen += 1
    rate = seen / (time.perf_counter() - t0)
    c.close()
    print(json.dumps({"rate": rate}))
elif mode.startswith(("wait-", "cpu")):
    import asyncio, logging, threading
    import hivewire as hw
    logging.disable(logging.CRITICAL)
    kind, concurrency = mode.split(":")[0], int(mode.split(":")[1])
    target = n if concurrency > 1 else min(n, 300)
    app = hw.App("bench", config={"endpoint.port": "0"})
    count, marks = [0], []
    def seen():
        count[0] += 1
        if count[0] == 1:
            marks.append(time.perf_counter())
        if count[0] == target:
            marks.append(time.perf_counter()); app.stop()
    if kind == "wait-async":
        @app.on_add_partition(concurrency=concurrency)
        async def waits(event):
            await asyncio.sleep(0.01)
            seen()
    else:
        @app.on_add_partition(concurrency=concurrency)
        def sleeps(event):
            time.sleep(0.01)
            seen()
    src = hw.KafkaSource(bootstrap, topic, group_id=f"hw-{time.time()}",
                         consumer_config={"auto.offset.reset": "earliest", **settings})
    app.run(src, handle_signals=False)
    print(json.dumps({"rate": (target - 1) / (marks[1] - marks[0])}))
else:
    import threading
    import hivewire as hw
    kind, listeners = mode.split(":")[0], int(mode.split(":")[1])
    config = {"endpoint.port": "0"}  # default bounds: a failing listener past them spills (reads again later)
    if kind == "failing":  # fails with backoff: 3 attempts, 10 ms then 20 ms apart
        config.update({"hivewire.retry.max.attempts": "3", "hivewire.retry.initial.delay.ms": "10"})
    elif kind == "instant":  # fails at once and is dead-lettered on every event: pure CPU cost
        config.update({"hivewire.retry.max.attempts": "1"})
    app = hw.App("bench", config=config)
    counts = [0] * listeners
    first, last, faults = [], [], []
    import resource
    def make(i):
        def noop(event):
            if not first:
                first.append(time.perf_counter()); faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
            counts[i] += 1
            # Done when every no-op listener has seen all n (each checks the others when it gets there).
            if counts[i] == n and all(c >= n for c in counts) and not last:
                last.append(time.perf_counter()); app.stop()
                faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
        return noop
    for i in range(listeners):
        app.add_listener(make(i), name=f"noop{i}", status=None)
    if kind in ("failing", "instant"):
        def fails(event): raise RuntimeError("always")
        app.add_listener(fails, name="failing", status=None)
    import gc
    paused, started = [0.0], [0.0]
    def collecting(phase, info):  # time spent in the cyclic garbage collector, a cost of retained backlogs
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            paused[0] += time.perf_counter() - started[0]
    gc.callbacks.append(collecting)
    logging.disable(logging.CRITICAL)
    src = hw.KafkaSource(bootstrap, topic, group_id=f"hw-{time.time()}",
                         consumer_config={"auto.offset.reset": "earliest", **settings})
    app.run(src, handle_signals=False)
    # Like the raw loop: first event to the n-th, not counting the shutdown (final commit, leaving the group).
    window = last[0] - first[0]
    print(json.dumps({"rate": n / window, "gc_share": paused[0] / window, "faults": (faults[1] - faults[0]) / n}))
"""

MODES = {
    "raw": "raw confluent-kafka consume loop",
    "syntax": "consume loop + syntax check only (msgspec)",
    "json": "consume loop + json.loads",
    "decode": "consume loop + apiary.decode (no runtime)",
    "hivewire:1": "hivewire, 1 no-op listener",
    "hivewire:5": "hivewire, 5 no-op listeners",
    "failing:1": "1 no-op + 1 failing (3 attempts, backoff)",
    "instant:1": "1 no-op + 1 failing at once, all DLQ'd",
    "wait-async:1": "async listener awaiting 10 ms, concurrency 1",
    "wait-async:200": "async listener awaiting 10 ms, concurrency 200",
    "wait-sync:1": "sync listener sleeping 10 ms, concurrency 1",
    "wait-sync:200": "sync listener sleeping 10 ms, concurrency 200",
}
WAITS = 20_000  # events of the waiting modes' topic, over 200 tables
WORKER_EVENTS = 50_000  # events of the worker modes' topic, over 40 tables
WORKER_MODES = {1: "hivewire run, ~200 us of Python an event, 1 worker", 2: "the same, --workers 2"}

CPU_APP = r"""
import os, time
import hivewire as hw

app = hw.App("bench-cpu")
out = open(os.path.join(os.environ["BENCH_OUT"], f"{os.getpid()}.times"), "a", buffering=1 << 16)

@app.on_add_partition
def cpu(event):
    total = 0
    for i in range(2500):  # about 200 us of pure Python here
        total += i * i
    out.write(f"{time.time()}\n")
"""


def run_workers(bootstrap: str, workers: int, tmp: Path, round_: int) -> float:
    """Events/s of ``hivewire run --workers N`` (CPU-bound listener): every event handled, over the whole run,
    from the first event any worker handled to the last (the workers' start-up and any worker that finished
    early count against it, as they do for a user)."""
    from confluent_kafka import Consumer, TopicPartition

    out = tmp / f"w{workers}-{round_}"
    out.mkdir()
    (out / "bench_cpu_app.py").write_text(CPU_APP)
    instance = f"w{workers}-{round_}-{time.time()}"
    group = f"apiary-kafka-metastore-receiver-{instance}"
    cmd = [sys.executable, "-m", "hivewire", "--log-level", "WARNING", "run", "bench_cpu_app:app"]
    cmd += ["--bootstrap-servers", bootstrap, "--topic", "cpu", "--instance-name", instance]
    cmd += ["--endpoint-port", "0", "--workers", str(workers)]
    cmd += ["--set", "apiary.messaging.consumer.auto.offset.reset=earliest"]
    proc = subprocess.Popen(cmd, cwd=out, env={**os.environ, "BENCH_OUT": str(out)}, stderr=subprocess.DEVNULL)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            time.sleep(0.5)
            tps = consumer.committed([TopicPartition("cpu", p) for p in range(4)], timeout=10)
            if sum(max(0, tp.offset) for tp in tps) >= WORKER_EVENTS:
                break
        else:
            sys.exit(f"--workers {workers} did not finish in time")
    finally:
        consumer.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    runs = [[float(t) for t in f.read_text().split()] for f in out.glob("*.times")]
    runs = [r for r in runs if r]
    if len(runs) < workers:
        sys.exit(f"--workers {workers}: only {len(runs)} worker(s) handled events")
    start, end = min(r[0] for r in runs), max(r[-1] for r in runs)
    handled = sum(len(r) for r in runs)
    if handled < WORKER_EVENTS or end <= start:
        sys.exit(f"--workers {workers}: {handled} events handled of {WORKER_EVENTS}")
    return handled / (end - start)


def fill(bootstrap: str, n: int, topic: str = "bench", tables_n: int = 40) -> list[bytes]:
    """Produce ``n`` messages over ``tables_n`` tables to ``topic``; return the distinct messages."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 50,
            "compression.type": "zstd",
            "batch.size": 4_000_000,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    tables = [
        make_table(
            "sales", f"orders_{i}", columns={f"c{j}": "string" for j in range(8)}, partition_keys={"dt": "string"}
        )
        for i in range(tables_n)
    ]
    messages = [
        apiary.encode(
            AddPartitionEvent(
                table=t, partitions=[make_partition(t, ["2024-01-01"])], parameters={"hive.version": "2.3.9"}
            )
        )
        for t in tables
    ]
    for i in range(n):
        while True:
            try:
                j = i % tables_n
                producer.produce(topic, messages[j], partition=apiary.partition_for(f"sales.orders_{j}", 4))
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush()
    return messages


def decode_alone(messages: list[bytes], n: int) -> float:
    """Microseconds per event to decode the same messages, in this process (no Kafka, no threads)."""
    origin = Origin("bench", 0, 0, None)
    start = time.perf_counter()
    for i in range(n):
        apiary.decode(messages[i % 40], origin=origin)
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[*MODES, "workers"],
        metavar="MODE",
        help=f"run only these modes and print their rates (of: {', '.join(MODES)})",
    )
    add_output_options(parser)
    args = parser.parse_args()
    if args.only and args.update_readme:
        parser.error("--update-readme records a full run: leave out --only")
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    n = args.messages
    began = time.monotonic()
    rates: dict[str, list[float]] = {}
    gc_shares: dict[str, list[float]] = {}
    faults: dict[str, list[float]] = {}
    decode_us: list[float] = []
    with mock_kafka() as bootstrap, tempfile.TemporaryDirectory(prefix="hivewire-bench-") as tmp:
        messages = fill(bootstrap, n)
        if any(mode.startswith("wait-") for mode in args.only or MODES):
            fill(bootstrap, WAITS, "waits", 200)
        with_workers = not args.only or "workers" in args.only
        if with_workers:
            fill(bootstrap, WORKER_EVENTS, "cpu", 40)
        print(
            f"{n} messages of {len(messages[0])} bytes in topic 'bench' (4 partitions); "
            f"{args.rounds} rounds, modes alternating"
        )
        script = Path(tmp) / "runtime_consumer.py"
        script.write_text(CONSUMER)
        for round_ in range(args.rounds):
            if with_workers:
                for workers in WORKER_MODES:
                    rates.setdefault(f"workers:{workers}", []).append(
                        run_workers(bootstrap, workers, Path(tmp), round_)
                    )
            for mode in [m for m in args.only or MODES if m != "workers"]:
                topic, count = ("waits", WAITS) if mode.startswith("wait-") else ("bench", n)
                proc = subprocess.run(
                    [sys.executable, str(script), mode, bootstrap, topic, str(count), json.dumps(CONSUMER_SETTINGS)],
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                if proc.returncode != 0:
                    sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                rates.setdefault(mode, []).append(result["rate"])
                if "gc_share" in result:
                    gc_shares.setdefault(mode, []).append(result["gc_share"])
                    faults.setdefault(mode, []).append(result["faults"])
            decode_us.append(decode_alone(messages, n))
    labels = {**MODES, **{f"workers:{w}": label for w, label in WORKER_MODES.items()}}
    best = {mode: max(values) for mode, values in rates.items()}
    for mode, rate in best.items():
        out.figure(f"{labels[mode]} (best)", rate, "events/s")
    if "workers:1" in rates:
        paired = statistics.median(b / a for a, b in zip(rates["workers:1"], rates["workers:2"], strict=True))
        print(f"\nworker processes: --workers 2 / 1 worker, median of rounds {paired:4.2f}   (target >= 1.6)")
        out.figure("--workers 2 / 1 worker (median of rounds)", paired, "ratio")
    if args.only:  # every round, with its page faults per event where measured
        for mode, values in rates.items():
            marks = [f" ({f:.2f})" for f in faults[mode]] if mode in faults else [""] * len(values)
            print(f"  {labels[mode]:<44} " + ", ".join(f"{r:,.0f}{m}" for r, m in zip(values, marks, strict=True)))
        return
    raw = best["raw"]
    print(f"\nthroughput over the same topic (events/s, best of {args.rounds}; every round in brackets)")
    for mode, label in MODES.items():
        rounds = ", ".join(f"{r:,.0f}" for r in rates[mode])
        print(f"  {label:<44} {best[mode]:>9,.0f}   ratio to raw: {best[mode] / raw:4.2f}   [{rounds}]")
    print(f"\n  hivewire 1 listener / raw:  {best['hivewire:1'] / raw:4.2f}   (must not fall below 0.11)")
    print(f"  hivewire 5 listeners / raw: {best['hivewire:5'] / raw:4.2f}")
    print("\nisolation: a healthy listener's rate next to an always-failing one, vs alone (target >= 0.90);")
    print("best against best, and the median of each round's ratio (the runs of a round are seconds apart, so")
    print("the machine's own swings, 0.7x to 1.3x between rounds here, cancel out more)")
    for mode, label in (
        ("failing:1", "next to one failing with backoff:"),
        ("instant:1", "next to one failing at once, every event DLQ'd:"),
    ):
        paired = statistics.median(f / a for f, a in zip(rates[mode], rates["hivewire:1"], strict=True))
        print(f"  {label:<48} best {best[mode] / best['hivewire:1']:4.2f}   median of rounds {paired:4.2f}")
        out.figure(f"isolation {label[:-1]} (median of rounds)", paired, "ratio")
    per_event = {mode: 1e6 / rate for mode, rate in best.items()}
    alone = min(decode_us)
    print("\nwhat limits hivewire with 1 listener (microseconds per event, from the rates above)")
    print(f"  consuming (the raw loop)                          {per_event['raw']:6.2f}")
    print(
        f"  decoding (consume+decode loop minus raw loop)     {per_event['decode'] - per_event['raw']:6.2f}"
        f"   (decode alone, same messages, in process: {alone:.2f})"
    )
    print(
        f"  the runtime (hivewire minus consume+decode loop)  {per_event['hivewire:1'] - per_event['decode']:6.2f}"
        "   (hand-off to the listener thread, its event, the call, batch bookkeeping, GIL)"
    )
    print(f"  total                                             {per_event['hivewire:1']:6.2f}")
    out.figure("hivewire 1 listener / raw", best["hivewire:1"] / raw, "ratio")
    out.figure(
        "per event: decoding (consume+decode loop minus raw loop)",
        per_event["decode"] - per_event["raw"],
        "us",
        "lower",
    )
    out.figure("per event: decode alone, in process", alone, "us", "lower")
    out.figure(
        "per event: the runtime (hivewire minus consume+decode loop)",
        per_event["hivewire:1"] - per_event["decode"],
        "us",
        "lower",
    )
    out.figure("per event: hivewire with 1 listener", per_event["hivewire:1"], "us", "lower")
    print("\nthe ceiling of validating every message before dispatch (the malformed ones are dead-lettered with a")
    print("reason before any listener sees them): the raw loop plus a syntax check of each value, nothing else")
    print(
        f"  consume + syntax check / raw:   {best['syntax'] / raw:4.2f}   "
        f"(syntax check {per_event['syntax'] - per_event['raw']:.2f} us an event)"
    )
    print(f"  consume + json.loads / raw:     {best['json'] / raw:4.2f}   (what a hand-written loop pays)")
    print(
        f"  hivewire 1 listener / consume + syntax check: {best['hivewire:1'] / best['syntax']:4.2f} (0.28 to beat);"
        f"  / consume + json.loads: {best['hivewire:1'] / best['json']:4.2f}"
    )
    out.figure("hivewire 1 listener / consume + syntax check", best["hivewire:1"] / best["syntax"], "ratio")
    print(f"\nlisteners that wait: {WAITS:,} events over 200 tables (concurrency 1 timed over its first 300)")
    for kind, label in (("wait-async", "async, awaiting 10 ms"), ("wait-sync", "sync, sleeping 10 ms (threads)")):
        one, wide = best[f"{kind}:1"], best[f"{kind}:200"]
        print(f"  {label:<32} concurrency 200 / concurrency 1: {wide / one:6.1f}x   (target >= 50)")
        out.figure(f"{label}: concurrency 200 / concurrency 1", wide / one, "ratio")
    print("\nwhat a backlog held in memory costs: every record polled lands in fresh memory (minor page faults)")
    print("instead of memory just freed, and the cyclic garbage collector runs (its share of the time); a failing")
    print("listener holds one poll before it spills, and the polling thread waits while no listener needs more")
    for mode, shares in gc_shares.items():
        best_round = rates[mode].index(best[mode])
        print(
            f"  {MODES[mode]:<44} gc {shares[best_round]:6.1%}   page faults per event {faults[mode][best_round]:5.2f}"
        )
    print(f"\n(took {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
