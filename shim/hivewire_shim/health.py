"""The shim's health: whether it accepts connections, and an HTTP ``/health`` endpoint that says so.

The accept loop reports here when it cannot take a connection (descriptors or threads exhausted) and when
it can again. ``/health`` answers 200 with ``{"status": "UP", ...}`` while the shim accepts connections and
503 with ``"DOWN"`` and the reason while it cannot, so an orchestrator can route clients elsewhere (or
restart it if it never recovers).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST

__all__ = ["Health", "HealthEndpoint"]


class Health:
    """Whether the shim can accept connections; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.problem: str | None = None
        self.since = 0.0
        #: Connections refused: accepted and closed at once (no room), counted since the start.
        self.refused = 0
        #: Of those, the connections refused because no thread could be started for them.
        self.refused_no_thread = 0

    def trouble(self, problem: str) -> bool:
        """Report that connections cannot be served (True: this starts a spell of trouble)."""
        with self._lock:
            first = self.problem is None
            if first:
                self.since = time.monotonic()
            self.problem = problem
            return first

    def fine(self) -> float | None:
        """Report that connections are served again; how long the trouble lasted (None: there was none)."""
        with self._lock:
            if self.problem is None:
                return None
            self.problem = None
            return time.monotonic() - self.since

    def refuse(self, *, no_thread: bool = False) -> None:
        with self._lock:
            self.refused += 1
            self.refused_no_thread += no_thread

    def refusals(self) -> tuple[int, int]:
        """The connections refused for want of a thread and for any other reason, read together."""
        with self._lock:
            return self.refused_no_thread, self.refused - self.refused_no_thread

    @property
    def up(self) -> bool:
        return self.problem is None


class _Server(HTTPServer):
    """An HTTP server that still answers when the process is out of descriptors: it keeps a spare one,
    frees it to accept a request and takes it back once the request is answered."""

    def server_activate(self) -> None:
        super().server_activate()
        self._spare: int | None = _spare()

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return super().get_request()
        except OSError as e:
            if e.errno not in (errno.EMFILE, errno.ENFILE) or self._spare is None:
                raise
            os.close(self._spare)
            self._spare = None
            return super().get_request()

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        if self._spare is None:
            self._spare = _spare()

    def server_close(self) -> None:
        super().server_close()
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None


def _spare() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return None


class HealthEndpoint:
    """Serves ``GET /health`` on ``host:port`` (port 0: a free one, see :attr:`port`) from ``report()``:
    a dict with ``status`` ``"UP"`` (200) or anything else (503); and ``GET /metrics``, Prometheus's text
    format, from ``metrics()``."""

    def __init__(
        self, host: str, port: int, report: Callable[[], dict[str, Any]], metrics: Callable[[], bytes] | None = None
    ) -> None:
        class Handler(BaseHTTPRequestHandler):
            timeout = 5  # one request at a time (no thread per request: threads may be what ran out)

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics" and metrics is not None:
                    self._answer(200, CONTENT_TYPE_LATEST, metrics())
                    return
                if path not in ("/health", "/"):
                    self.send_error(404)
                    return
                state = report()
                self._answer(
                    200 if state.get("status") == "UP" else 503, "application/json", json.dumps(state).encode()
                )

            def _answer(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = _Server((host, port), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="hivewire-shim-health", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
