"""A TCP proxy for tests: a service that appears where nothing listened, goes away, or is cut off mid-call.

Invariant: while cut, every connection through the proxy is closed and new ones are refused; a connection
whose target cannot be reached is refused the same way (the client sees its peer close).
"""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    """Forwards connections on ``port`` (0: any free one) to ``target`` (``(host, port)`` or ``"host:port"``)."""

    def __init__(self, target: tuple[str, int] | str, port: int = 0) -> None:
        if isinstance(target, str):
            host, target_port = target.rsplit(":", 1)
            target = (host, int(target_port))
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", port))
        self.port: int = self.listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._refusing = False
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                try:
                    if self._refusing:
                        raise ConnectionRefusedError
                    upstream = socket.create_connection(self.target)
                except OSError:
                    client.close()
                    continue
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        """Close every connection through the proxy and refuse new ones until :meth:`restore`."""
        with self._lock:
            self._refusing = True
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self._open.clear()

    def restore(self) -> None:
        with self._lock:
            self._refusing = False

    def close(self) -> None:
        self.cut()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread: close() alone does not
        self.listener.close()
