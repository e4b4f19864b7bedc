"""``free_port``: a port nothing listens on, outside the kernel's ephemeral range (outgoing connections take
their local ports from it, and one took a metastore's port before it bound it: "Address already in use")."""

from __future__ import annotations

import socket

import pytest

from hivewire.tools import _local
from hivewire.tools._local import free_port


def test_ports_are_free_and_below_the_ephemeral_range() -> None:
    end = _local._ephemeral_start()
    for _ in range(50):
        port = free_port()
        assert _local._PICK_FROM <= port < end
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))


class Picks:
    """Stands in for the random generator: gives these ports in turn."""

    def __init__(self, *ports: int) -> None:
        self.ports = iter(ports)

    def randrange(self, start: int, stop: int) -> int:
        return next(self.ports)


def test_a_port_something_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken, socket.socket() as other:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        other.bind(("127.0.0.1", 0))
        busy, free = taken.getsockname()[1], other.getsockname()[1]
        other.close()
        monkeypatch.setattr(_local, "_random", Picks(busy, busy, free))
        monkeypatch.setattr(_local, "_ephemeral_start", lambda: 65536)
        assert free_port() == free


def test_without_room_below_the_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_local, "_ephemeral_start", lambda: _local._PICK_FROM + 10)
    monkeypatch.setattr(_local, "_random", Picks())  # never asked
    port = free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", port))
