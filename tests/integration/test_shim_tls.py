"""TLS: a TLS client works through a shim that serves TLS, and a shim reaches its upstream over TLS (here the
upstream is that TLS shim, in front of the real metastore; the metastore itself speaks plain TCP here)."""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fidelity import Captured
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSSLSocket, TTransport

import hivewire as hw
from hivewire.events._model import EventType
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_table
from hivewire_shim import Shim
from hivewire_shim.tls import client_context, server_context
from hivewire_thrift.hive_metastore import ThriftHiveMetastore


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A test CA and a server certificate for 127.0.0.1 and localhost, made with the openssl command."""
    d = tmp_path_factory.mktemp("tls")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=hivewire test CA",
    )
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (d / "san.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.cnf",
    )
    return d


@pytest.fixture
def tls_shim(metastore: LocalMetastore, certs: Path) -> Iterator[tuple[Shim, Captured]]:
    captured = Captured()
    context = server_context(str(certs / "server.pem"), str(certs / "server.key"))
    with Shim(metastore.uri, host="127.0.0.1", sinks=[captured], ssl_context=context) as shim:
        yield shim, captured


def test_a_tls_client_works_through_a_tls_shim(tls_shim: tuple[Shim, Captured], certs: Path, unique: str) -> None:
    shim, captured = tls_shim
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    sock = TSSLSocket.TSSLSocket("127.0.0.1", shim.port, ssl_context=context, server_hostname="127.0.0.1")
    transport = TTransport.TBufferedTransport(sock)
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))
    transport.open()
    try:
        client.create_database(make_database(unique))
        client.create_table(make_table(unique, "t"))
        assert client.get_table(unique, "t").tableName == "t"
        client.drop_database(unique, True, True)
    finally:
        transport.close()
    assert [e.event_type for e in captured.events] == [
        EventType.CREATE_DATABASE,
        EventType.CREATE_TABLE,
        EventType.DROP_TABLE,
        EventType.DROP_DATABASE,
    ]
    # A client without TLS gets nowhere (and the shim goes on serving TLS clients).
    with pytest.raises(hw.HivewireError), hw.MetastoreClient(shim.uri, timeout=10, connect_timeout=10) as plain:
        plain.get_all_databases()


def test_a_shim_reaches_its_upstream_over_tls(tls_shim: tuple[Shim, Captured], certs: Path, unique: str) -> None:
    upstream, _ = tls_shim
    captured = Captured()
    context = client_context(str(certs / "ca.pem"))
    with (
        Shim(upstream.uri, host="127.0.0.1", sinks=[captured], upstream_ssl_context=context) as shim,
        hw.MetastoreClient(shim.uri, timeout=60) as client,
    ):
        client.create_database(make_database(unique))
        client.create_table(make_table(unique, "t"))
        table = client.get_table(unique, "t")
        table.parameters = {**(table.parameters or {}), "k": "v"}
        client.raw.alter_table(unique, "t", table)  # its old table is read before, over TLS
        client.drop_database(unique, True, True)
    kinds = [e.event_type for e in captured.events]
    assert kinds[:3] == [EventType.CREATE_DATABASE, EventType.CREATE_TABLE, EventType.ALTER_TABLE]
    altered = captured.events[2]
    assert altered.old_table.parameters.get("k") is None and altered.new_table.parameters["k"] == "v"
    assert shim.read_failures == 0
    # Without the CA the upstream's certificate is refused.
    with (
        Shim(upstream.uri, host="127.0.0.1", upstream_ssl_context=ssl.create_default_context()) as untrusting,
        pytest.raises(hw.HivewireError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"),
        hw.MetastoreClient(untrusting.uri, timeout=30) as client,
    ):
        client.get_all_databases()
