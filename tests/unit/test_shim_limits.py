"""The shim's accept loop and its limits, without a metastore (connections are accepted, nothing is relayed):
a connection cap, thread exhaustion (the accept thread lives on, refuses, says so on /health and recovers),
and the budget of request bytes."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hivewire_shim import Shim
from hivewire_shim.budget import Budget, OverBudget


@pytest.fixture
def shim() -> Iterator[Shim]:
    # Nothing listens upstream: these tests only connect, they make no call.
    with Shim("thrift://127.0.0.1:9", host="127.0.0.1", max_connections=3, health_port=0) as server:
        yield server


def health(shim: Shim) -> tuple[int, dict[str, Any]]:
    assert shim.health_url is not None
    try:
        with urllib.request.urlopen(shim.health_url, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def connect(shim: Shim) -> socket.socket:
    return socket.create_connection(("127.0.0.1", shim.port), timeout=30)


def closed_by_the_shim(sock: socket.socket) -> bool:
    """True if the shim closed the connection; False if it keeps it open (waiting for a call)."""
    sock.settimeout(1.0)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def eventually(check: Callable[[], bool], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_connections_past_the_cap_are_refused_and_counted(shim: Shim, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hivewire_shim.server")
    kept = [connect(shim) for _ in range(3)]
    assert eventually(lambda: shim.connections == 3)
    extra = [connect(shim) for _ in range(4)]
    assert all(closed_by_the_shim(s) for s in extra)
    assert not any(closed_by_the_shim(s) for s in kept)
    status, report = health(shim)
    assert status == 200 and report["status"] == "UP" and report["refused_connections"] == 4
    assert len([r for r in caplog.records if "refused a connection" in r.getMessage()]) == 1  # one a minute
    for s in kept + extra:
        s.close()
    assert eventually(lambda: shim.connections == 0)
    assert not closed_by_the_shim(connect(shim))  # room again


def test_when_threads_run_out_the_shim_refuses_reports_down_and_recovers(
    shim: Shim, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A pids limit cannot be set for root here, so thread creation fails the way CPython fails it then."""
    caplog.set_level(logging.WARNING, logger="hivewire_shim.server")
    real_start = threading.Thread.start
    exhausted = threading.Event()
    exhausted.set()

    def start(self: threading.Thread) -> None:
        if exhausted.is_set() and self.name.startswith("hivewire-shim-conn-"):
            raise RuntimeError("can't start new thread")
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    refused = [connect(shim) for _ in range(20)]
    assert all(closed_by_the_shim(s) for s in refused)
    status, report = health(shim)
    assert status == 503 and report["status"] == "DOWN" and "can't start new thread" in report["problem"]
    assert shim._accept_thread is not None and shim._accept_thread.is_alive()
    exhausted.clear()
    served: list[socket.socket] = []

    def serves() -> bool:  # as a client retrying: refused until the shim's next try (backoff <= 1 s)
        served.append(connect(shim))
        return not closed_by_the_shim(served[-1])

    assert eventually(serves)
    assert eventually(lambda: health(shim)[0] == 200)
    lines = [r.getMessage() for r in caplog.records]
    assert sum("cannot start a thread for the connection" in m for m in lines) == 1  # rate-limited: one a minute
    assert any("accepting connections again" in m for m in lines)
    for s in [*refused, *served]:
        s.close()


def test_the_budget_refuses_what_would_pass_its_limit_and_takes_it_back() -> None:
    budget = Budget(100)
    budget.take(60)
    with pytest.raises(OverBudget, match=r"limit 100, hivewire.shim.max.buffered.bytes"):
        budget.take(41)
    assert (budget.held, budget.refused) == (60, 1)
    budget.give(60)
    budget.take(100)
    assert budget.held == 100


def test_calls_while_no_metastore_answers_log_one_line_not_one_per_call(caplog: pytest.LogCaptureFixture) -> None:
    # Each client gets its TApplicationException, but the log says once that the upstream is unreachable.
    from hmsclient import hmsclient

    caplog.set_level(logging.DEBUG, logger="hivewire_shim")
    caplog.set_level(logging.DEBUG, logger="hivewire.shim")
    with Shim("thrift://127.0.0.1:9", host="127.0.0.1", connect_timeout=2) as server:
        for _ in range(10):
            client = hmsclient.HMSClient(host="127.0.0.1", port=server.port)
            client.open()
            try:
                with pytest.raises(Exception, match="hivewire shim"):
                    client.get_all_databases()
            finally:
                client.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "is unreachable" in warnings[0], warnings
    assert sum("hivewire shim:" in r.getMessage() for r in caplog.records) >= 10  # each call still told, at DEBUG
