"""The register sidecar's health check: one bounded attempt, never a retry inside a check.

A "hung" metastore here is a listening socket nobody answers on: the kernel completes the TCP handshake
(as it does for a SIGSTOPped JVM), so only a read timeout can tell. Counting the connections it received
shows whether a check retried.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

import hivewire as hw
from hivewire.metastore._health_probe import _HealthProbe
from hivewire.metastore._registration import Registration
from hivewire.tools._local import free_port


@pytest.fixture
def silent() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server
    server.close()


def pending_connections(server: socket.socket) -> int:
    """Accept (and close) every connection waiting in the backlog; how many there were."""
    server.setblocking(False)
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def test_a_hung_metastore_fails_one_check_with_one_connection(silent: socket.socket) -> None:
    probe = _HealthProbe(f"127.0.0.1:{silent.getsockname()[1]}", {})
    try:
        healthy, reason = probe.check(0.3)
        assert healthy is False
        assert reason.startswith("no answer to getStatus() within the check's 0.3 s"), reason
        # MetastoreClient would have reconnected and asked again inside the same check: two connections.
        assert pending_connections(silent) == 1
        healthy, reason = probe.check(0.3)
        assert healthy is False and "getStatus()" in reason
        assert pending_connections(silent) == 1  # the next check is the retry, on a fresh connection
    finally:
        probe.close()


def test_a_refused_connection_fails_the_check_and_says_so() -> None:
    probe = _HealthProbe(f"127.0.0.1:{free_port()}", {})
    healthy, reason = probe.check(1.0)
    assert healthy is False and reason.startswith("connecting failed:"), reason


def test_transport_options_are_validated_and_timeouts_refused() -> None:
    with pytest.raises(hw.ConfigError) as bad:
        _HealthProbe("127.0.0.1:9083", {"timeout": 30})
    assert "check_timeout" in str(bad.value)
    with pytest.raises(hw.ConfigError, match="transport"):
        _HealthProbe("127.0.0.1:9083", {"transport": "zlib"})
    framed = _HealthProbe("127.0.0.1:9083", {"transport": "framed", "protocol": "compact", "ugi": "hive:hadoop"})
    assert (framed._framed, framed._compact, framed._ugi) == (True, True, ("hive", ["hadoop"]))


def test_check_timeout_is_derived_from_and_bounded_by_the_interval() -> None:
    reg = Registration("127.0.0.1:9083", "127.0.0.1:1", "ns", interval=4.0)
    assert reg.check_timeout == 2.0
    assert Registration("127.0.0.1:9083", "127.0.0.1:1", interval=4.0, check_timeout=3.5).check_timeout == 3.5
    for bad in (4.0, 10.0, 0.0, -1.0):
        with pytest.raises(hw.ConfigError) as exc:
            Registration("127.0.0.1:9083", "127.0.0.1:1", interval=4.0, check_timeout=bad)
        assert exc.value.key == "check_timeout" and "less than the interval" in str(exc.value)
