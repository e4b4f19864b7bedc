"""What the shim costs a client: get_table latency, a bulk get_partitions and the latency of a change
(``alter_table``), direct vs through the shim.

Usage: python bench/bench_shim.py [--uri thrift://host:port] [--calls 2000] [--changes 300] [--partitions 5000]
       [--rounds 5] [--json] [--update-readme]

Without --uri a local Hive Metastore is started from pyspark's jars. The shim runs as ``hivewire shim`` in
its own process (as in production), so it does not share this interpreter with the benchmark's client; it
publishes to librdkafka's mock Kafka cluster through its spool, so a change's reply waits for its event
to be on disk, as in production. Direct and shim calls alternate round by round, so the machine's noise
falls on both alike.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options, hivewire_module, interleaved

import hivewire as hw
from hivewire.testing import make_database, make_partition, make_table, mock_kafka

_local = hivewire_module("hivewire.tools", "hivewire.local")
LocalMetastore, free_port = _local.LocalMetastore, _local.free_port


def start_shim(upstream: str, bootstrap: str, spool: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hivewire",
            "--log-level",
            "ERROR",
            "shim",
            "--upstream",
            upstream,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--kafka-bootstrap-servers",
            bootstrap,
            "--topic",
            "bench-shim",
            "--spool-dir",
            spool,
        ],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return proc, f"thrift://127.0.0.1:{port}"
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the shim did not start")


def prepare(uri: str, partitions: int) -> None:
    with hw.MetastoreClient(uri, timeout=600) as client:
        with contextlib.suppress(hw.AlreadyExistsError):
            client.create_database(make_database("bench_shim"))
        with contextlib.suppress(hw.AlreadyExistsError):
            client.create_table(
                make_table(
                    "bench_shim", "t", columns={f"c{i}": "string" for i in range(20)}, partition_keys={"dt": "string"}
                )
            )
        wide = make_table(
            "bench_shim", "wide", columns={f"c{i}": "string" for i in range(20)}, partition_keys={"dt": "string"}
        )
        with contextlib.suppress(hw.AlreadyExistsError):
            client.create_table(wide)
        have = len(client.get_partition_names("bench_shim", "wide"))
        if have < partitions:
            print(f"adding {partitions - have} partitions to bench_shim.wide (once) ...", file=sys.stderr, flush=True)
        for start in range(have, partitions, 500):
            client.add_partitions(
                [make_partition(wide, [f"p{i:06d}"]) for i in range(start, min(start + 500, partitions))]
            )


def latencies(clients: dict[str, hw.MetastoreClient], calls: int, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {name: [] for name in clients}
    for _ in range(rounds):
        for name, client in clients.items():
            raw = client.raw
            samples = out[name]
            for _ in range(calls // rounds):
                started = time.perf_counter()
                raw.get_table("bench_shim", "t")
                samples.append(time.perf_counter() - started)
    return out


def change_latencies(clients: dict[str, hw.MetastoreClient], calls: int, rounds: int) -> dict[str, list[float]]:
    """alter_table of a partitioned table (one parameter changed each call), as Spark's ALTER TABLE makes it."""
    out: dict[str, list[float]] = {name: [] for name in clients}
    table = next(iter(clients.values())).raw.get_table("bench_shim", "t")
    n = 0
    for _ in range(rounds):
        for name, client in clients.items():
            raw = client.raw
            samples = out[name]
            for _ in range(calls // rounds):
                n += 1
                table.parameters["bench"] = str(n)
                started = time.perf_counter()
                raw.alter_table("bench_shim", "t", table)
                samples.append(time.perf_counter() - started)
    return out


def cpu_seconds(pid: int) -> tuple[float, float] | None:
    """(user + system, user) CPU seconds of a process so far (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, int(fields[11]) / tick


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uri")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=300)
    parser.add_argument("--partitions", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    add_output_options(parser)
    args = parser.parse_args()
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    with contextlib.ExitStack() as stack:
        uri = args.uri or stack.enter_context(LocalMetastore()).uri
        prepare(uri, args.partitions)
        bootstrap = stack.enter_context(mock_kafka())
        spool = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-shim-spool-"))
        proc, shim_uri = start_shim(uri, bootstrap, spool)
        stack.callback(proc.wait, 30)
        stack.callback(proc.terminate)
        clients = {
            "direct": stack.enter_context(hw.MetastoreClient(uri, timeout=600)),
            "shim": stack.enter_context(hw.MetastoreClient(shim_uri, timeout=600)),
        }
        for client in clients.values():  # warm up both paths (JIT, connections, caches)
            for _ in range(200):
                client.raw.get_table("bench_shim", "t")
            client.raw.get_partitions("bench_shim", "wide", -1)

        cpu_before = cpu_seconds(proc.pid)
        lat = latencies(clients, args.calls, args.rounds)
        cpu_after = cpu_seconds(proc.pid)
        print(f"\nget_table latency, {args.calls} calls each, interleaved in {args.rounds} rounds ({uri})")
        p50 = {name: percentile(v, 0.50) * 1000 for name, v in lat.items()}
        p99 = {name: percentile(v, 0.99) * 1000 for name, v in lat.items()}
        for name in lat:
            print(
                f"  {name:<8} p50 {p50[name]:7.3f} ms   p99 {p99[name]:7.3f} ms   "
                f"mean {statistics.fmean(lat[name]) * 1000:7.3f} ms"
            )

        def bulk(client: hw.MetastoreClient) -> int:
            return len(client.raw.get_partitions("bench_shim", "wide", -1))

        rates = interleaved({name: (lambda c=c: bulk(c)) for name, c in clients.items()}, rounds=args.rounds)
        seconds = {name: args.partitions / rate for name, rate in rates.items()}
        print(f"\nget_partitions of {args.partitions} partitions (median of {args.rounds} interleaved rounds)")
        for name, s in seconds.items():
            print(f"  {name:<8} {s * 1000:9.1f} ms")

        p50_ratio, p99_ratio = p50["shim"] / p50["direct"], p99["shim"] / p99["direct"]
        bulk_ratio = seconds["shim"] / seconds["direct"]
        print("\nratios (shim / direct; target: p50 <= 1.3, bulk <= 1.2)")
        print(
            f"  get_table p50 {p50_ratio:5.2f}   p99 {p99_ratio:5.2f}   "
            f"({(p50['shim'] - p50['direct']) * 1000:+.0f} us per call at p50)"
        )
        print(f"  get_partitions bulk {bulk_ratio:5.2f}")
        for name in lat:
            out.figure(f"get_table p50, {name}", p50[name], "ms", "lower")
            out.figure(f"get_table p99, {name}", p99[name], "ms", "lower")
            out.figure(f"get_partitions bulk, {name}", seconds[name] * 1000, "ms", "lower")
        out.figure("get_table p50, shim / direct", p50_ratio, "ratio", "lower")
        out.figure("get_table p99, shim / direct", p99_ratio, "ratio", "lower")
        out.figure("get_partitions bulk, shim / direct", bulk_ratio, "ratio", "lower")
        if cpu_before and cpu_after:
            shim_calls = len(lat["shim"])
            total = (cpu_after[0] - cpu_before[0]) / shim_calls * 1e6
            user = (cpu_after[1] - cpu_before[1]) / shim_calls * 1e6
            print(
                f"  shim process CPU per relayed get_table: {total:.0f} us ({user:.0f} us in Python, the rest in "
                "the kernel's loopback TCP)"
            )
            out.figure("shim process CPU per relayed get_table", total, "us", "lower")

        for client in clients.values():
            change_latencies({"warm": client}, 50, 1)
        changes = change_latencies(clients, args.changes, args.rounds)
        c50 = {name: percentile(v, 0.50) * 1000 for name, v in changes.items()}
        c99 = {name: percentile(v, 0.99) * 1000 for name, v in changes.items()}
        print(f"\nalter_table latency, {args.changes} changes each, interleaved in {args.rounds} rounds")
        for name in changes:
            print(f"  {name:<8} p50 {c50[name]:7.3f} ms   p99 {c99[name]:7.3f} ms")
        change_ratio = c50["shim"] / c50["direct"]
        print(
            f"  alter_table p50 shim / direct {change_ratio:5.2f} (target <= 1.5; "
            f"+{c50['shim'] - c50['direct']:.1f} ms per change, the event spooled before the reply)"
        )
        for name in changes:
            out.figure(f"alter_table p50, {name}", c50[name], "ms", "lower")
        out.figure("alter_table p50, shim / direct", change_ratio, "ratio", "lower")
        print(
            "\nWhat it adds: a relayed call makes two more loopback hops and the shim's own work (parse the header,\n"
            "walk to the message's end in thrift's C extension, hand the bytes on: the CPU per relayed call\n"
            "above), in a second process that must be scheduled on a core. Bulk replies are relayed in 64 KB\n"
            "pieces as they arrive, so the shim never holds a whole reply, but every piece crosses that second\n"
            "process. A change waits, besides, for its event to be written to the spool (on disk) before the\n"
            "client has its reply."
        )


if __name__ == "__main__":
    main()
