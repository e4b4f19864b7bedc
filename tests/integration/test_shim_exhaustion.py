"""Issue 18 with real limits on a shim process of its own: descriptor exhaustion (few log lines, /health DOWN,
recovery) and eight clients sending 60 MB requests at once under a memory limit (the refused ones are told
why, in a TApplicationException)."""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TTransport
from waiting import wait_for

import hivewire as hw
from hivewire.tools._local import LocalMetastore

SCRIPT = Path(__file__).with_name("shim_process.py")


class ShimProcess:
    def __init__(
        self, upstream: str, log: Path, *, nofile: int = 0, max_buffered: int = 1 << 30, threads: int = 0
    ) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), upstream, str(nofile), str(max_buffered), str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            env={**os.environ, "MALLOC_ARENA_MAX": "2"},  # glibc's per-thread arenas would take the room
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().split()
        assert len(line) == 2, log.read_text()
        self.port, self.health_port = int(line[0]), int(line[1])

    def health(self) -> tuple[int, dict[str, Any]]:
        url = f"http://127.0.0.1:{self.health_port}/health"
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        url = f"http://127.0.0.1:{self.health_port}/metrics"
        with urllib.request.urlopen(url, timeout=30) as r:
            text = r.read().decode()
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }

    def peak_rss(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


@pytest.fixture
def processes() -> Iterator[list[ShimProcess]]:
    out: list[ShimProcess] = []
    yield out
    for p in out:
        if p.proc.poll() is None:
            p.close()


def eventually(check: Any, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())


def served(shim: ShimProcess) -> bool:
    """A client's call through ``shim`` is answered."""
    try:
        with hw.MetastoreClient(f"thrift://127.0.0.1:{shim.port}", timeout=30) as client:
            return "default" in client.get_all_databases()
    except hw.HivewireError:
        return False


def test_descriptor_exhaustion_logs_a_few_lines_reports_down_and_recovers(
    metastore: LocalMetastore, tmp_path: Path, processes: list[ShimProcess]
) -> None:
    shim = ShimProcess(metastore.uri, tmp_path / "shim.log", nofile=64)
    processes.append(shim)
    clients = []
    for _ in range(120):  # well past 64 descriptors: each connection holds one in the shim
        try:
            clients.append(socket.create_connection(("127.0.0.1", shim.port), timeout=30))
        except OSError:
            break
    assert eventually(lambda: shim.health()[0] == 503, timeout=60)
    time.sleep(5)  # five seconds of exhaustion: the accept loop must not spin or log a storm
    status, report = shim.health()
    assert status == 503 and "Too many open files" in report["problem"] and report["refused_connections"] > 0
    log = (tmp_path / "shim.log").read_text()
    assert log.count("cannot serve new connections") <= 2 and log.count("Traceback") == 0, log[-3000:]
    for c in clients:
        c.close()

    assert eventually(lambda: served(shim), timeout=60)
    assert eventually(lambda: shim.health()[0] == 200)
    assert "accepting connections again" in (tmp_path / "shim.log").read_text()


def test_a_shim_out_of_threads_says_so_once_a_minute_with_the_limit_and_counts_the_refusals(
    metastore: LocalMetastore, tmp_path: Path, processes: list[ShimProcess]
) -> None:
    """Room for a few more threads only (shim_process.py: the address space holds few more stacks): forty
    clients connect, each would need a thread of its own; those beyond the room are refused, one ERROR line
    says so naming the limit and the count, and ``/metrics`` counts them."""
    shim = ShimProcess(metastore.uri, tmp_path / "shim.log", threads=6)
    processes.append(shim)
    clients = [socket.create_connection(("127.0.0.1", shim.port), timeout=30) for _ in range(40)]
    refused = ("hivewire_shim_connections_refused_total", (("reason", "no_thread"),))
    assert eventually(lambda: shim.metrics().get(refused, 0) > 0, timeout=60), (tmp_path / "shim.log").read_text()
    time.sleep(3)  # refusals go on: still one line
    log = (tmp_path / "shim.log").read_text()
    lines = [line for line in log.splitlines() if "cannot start a thread" in line]
    assert len(lines) == 1, log[-3000:]
    assert "RLIMIT_AS" in lines[0] and "threads run in the shim" in lines[0], lines[0]
    assert re.search(r"(\d+) connection\(s\) refused for want of a thread since the last such line", lines[0])
    assert "hivewire.shim.max.connections" in lines[0] and "cannot serve new connections" not in log
    count = shim.metrics()[refused]
    status, report = shim.health()
    assert status == 503 and "could not start a thread" in report["problem"]
    assert report["refused_connections"] >= count > 0
    for c in clients:
        c.close()

    assert eventually(lambda: served(shim), timeout=60)
    assert eventually(lambda: shim.health()[0] == 200)


def _big_request(size: int) -> bytes:
    """A framed get_table call whose database name is ``size`` bytes."""
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    proto.writeMessageBegin("get_table", TMessageType.CALL, 1)
    proto.writeStructBegin("get_table_args")
    proto.writeFieldBegin("dbname", 11, 1)
    head = buf.getvalue()
    tail = b"\x00"  # the field stop
    body_len = len(head) + 4 + size + len(tail)
    return struct.pack(">i", body_len) + head + struct.pack(">i", size) + b"x" * size + tail


def test_eight_60_mb_senders_stay_under_the_memory_limit(
    metastore: LocalMetastore, tmp_path: Path, processes: list[ShimProcess]
) -> None:
    limit = 200 << 20
    shim = ShimProcess(metastore.uri, tmp_path / "shim.log", max_buffered=limit)
    processes.append(shim)
    time.sleep(1)
    baseline = shim.peak_rss()
    request = _big_request(60 << 20)
    outcomes: list[str] = []

    def send() -> None:
        try:
            with socket.create_connection(("127.0.0.1", shim.port), timeout=300) as sock:
                sock.sendall(request)
                reply = sock.recv(4096)
                # Refused: a TApplicationException that says why (the connection stays usable).
                outcomes.append("refused" if b"refused" in reply and b"max.buffered.bytes" in reply else "answered")
        except OSError as e:
            outcomes.append(f"failed: {e}")

    threads = [threading.Thread(target=send) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    growth = shim.peak_rss() - baseline
    assert len(outcomes) == 8 and set(outcomes) == {"refused", "answered"}, outcomes
    # The budget counts each received byte twice (pieces and the joined request), so it bounds this growth;
    # decoding and relaying a request may add a copy of the one being sent on.
    assert growth < limit + (64 << 20), f"peak RSS grew {growth >> 20} MB (limit {limit >> 20} MB)"
    # The budget is given back once each answered request has been relayed and its connection moved on.
    status, report = wait_for(lambda: (h := shim.health())[1]["buffered_request_bytes"] == 0 and h, "the budget back")
    assert status == 200 and report["refused_requests"] > 0
