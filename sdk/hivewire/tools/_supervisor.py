"""``hivewire run --workers N``: N processes of one app in one consumer group, supervised.

Python runs one thread of Python code at a time, so a listener that spends CPU (parsing, hashing, building
payloads) is capped at one core however much concurrency it has. Worker processes lift the cap: each is a
whole ``hivewire run`` of the same app in the same consumer group (Kafka shares the topic's partitions between
them), started by this supervisor, which

* restarts a worker that dies (after a pause that doubles, up to 30 s, while workers keep dying within 10 s of
  their start), so a ``kill -9`` or an out-of-memory kill costs only a rebalance and the uncommitted tail;
* passes SIGTERM/SIGINT on to every worker and waits for them to stop cleanly (each commits what it finished),
  killing those still running after the shutdown timeout plus a grace period;
* gives worker ``i`` (0-based) the metrics and health endpoint on ``endpoint.port + i`` (none when the port
  is 0), and ``HIVEWIRE_WORKER=i`` in its environment.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

log = logging.getLogger("hivewire.supervisor")

QUICK_DEATH = 10.0  # a worker dying sooner than this after its start is a crash loop: back off
MAX_BACKOFF = 30.0


@dataclass
class _Worker:
    index: int
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    backoff: float = 0.0
    restart_at: float = 0.0
    restarts: int = 0
    exits: list[int] = field(default_factory=list)


class Supervisor:
    """Runs ``command`` (a ``hivewire run`` without ``--workers``) ``workers`` times and keeps them running."""

    def __init__(self, command: Sequence[str], workers: int, port: int, shutdown_timeout: float) -> None:
        self.command = list(command)
        self.workers = [_Worker(i) for i in range(workers)]
        self.port = port
        self.shutdown_timeout = shutdown_timeout
        self.stopping = threading.Event()

    def _argv(self, worker: _Worker) -> list[str]:
        # Options given last win (click), so these override whatever the command line or the file said.
        port = self.port + worker.index if self.port else 0
        return [*self.command, "--workers", "1", "--endpoint-port", str(port)]

    def _start(self, worker: _Worker) -> None:
        env = {**os.environ, "HIVEWIRE_WORKER": str(worker.index)}
        worker.process = subprocess.Popen(self._argv(worker), env=env)
        worker.started = time.monotonic()
        log.info(
            "worker %d started (pid %d)%s",
            worker.index,
            worker.process.pid,
            f", /metrics and /health on port {self.port + worker.index}" if self.port else "",
        )

    def run(self) -> int:
        """Start the workers and supervise them until SIGTERM/SIGINT; 0 when they all stopped cleanly."""
        restore = self._install_signal_handlers()
        try:
            for worker in self.workers:
                self._start(worker)
            while not self.stopping.wait(0.2):
                self._check()
            return self._stop_all()
        finally:
            restore()

    def _check(self) -> None:
        now = time.monotonic()
        for worker in self.workers:
            process = worker.process
            if process is None:
                if now >= worker.restart_at:
                    worker.restarts += 1
                    self._start(worker)
                continue
            code = process.poll()
            if code is None:
                continue
            worker.exits.append(code)
            worker.process = None
            lived = now - worker.started
            worker.backoff = min(MAX_BACKOFF, max(1.0, worker.backoff * 2)) if lived < QUICK_DEATH else 0.0
            worker.restart_at = now + worker.backoff
            log.warning(
                "worker %d (pid %d) exited with status %s after %.0f s; restarting it%s",
                worker.index,
                process.pid,
                _status(code),
                lived,
                f" in {worker.backoff:.0f} s" if worker.backoff else "",
            )

    def _stop_all(self) -> int:
        running = [w.process for w in self.workers if w.process is not None]
        for process in running:
            _signal(process, signal.SIGTERM)
        deadline = time.monotonic() + self.shutdown_timeout + 10.0
        status = 0
        for process in running:
            try:
                code = process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.error("worker pid %d did not stop in time; killing it", process.pid)
                process.kill()
                code = process.wait()
            if code not in (0, -signal.SIGTERM):
                status = 1
        log.info("all workers stopped")
        return status

    def _install_signal_handlers(self) -> _Restore:
        if threading.current_thread() is not threading.main_thread():
            return _Restore({})
        previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

        def handle(signum: int, frame: FrameType | None) -> None:
            if self.stopping.is_set():
                for worker in self.workers:  # a second signal: stop now
                    if worker.process is not None:
                        _signal(worker.process, signal.SIGKILL)
                return
            log.info("received %s: stopping the workers", signal.Signals(signum).name)
            self.stopping.set()

        for sig in previous:
            signal.signal(sig, handle)
        return _Restore(previous)


class _Restore:
    def __init__(self, previous: dict[int, Any]) -> None:
        self._previous = previous

    def __call__(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def _signal(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        process.send_signal(sig)
    except ProcessLookupError:
        pass


def _status(code: int) -> str:
    return f"signal {signal.Signals(-code).name}" if code < 0 else str(code)


def worker_command(argv: Sequence[str]) -> list[str]:
    """The command that runs one worker: this interpreter, ``-m hivewire`` and the arguments given."""
    return [sys.executable, "-m", "hivewire", *argv]
