"""One bad connection does not hurt the others, and an upstream restart is a Thrift error, then business as usual.

This module runs its own metastore (it is restarted), with the framed transport, so the shim translates
between buffered clients and a framed upstream throughout.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TTransport

import hivewire as hw
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import make_database, make_partition, make_table
from hivewire_shim import Shim
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T

FRAMED = {"hive.metastore.thrift.framed.transport.enabled": "true"}


@pytest.fixture(scope="module")
def hms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMetastore]:
    server = LocalMetastore(workdir=tmp_path_factory.mktemp("framed-metastore"), properties=FRAMED)
    server.start()
    try:  # a setup that fails must not leave the metastore running
        with hw.MetastoreClient(server.uri, transport="framed") as client:
            client.create_database(make_database("robust", location=(server.warehouse / "robust.db").as_uri()))
            table = make_table(
                "robust", "wide", partition_keys={"dt": "string"}, columns={f"c{i}": "string" for i in range(30)}
            )
            client.create_table(table)
            client.add_partitions([make_partition(table, [f"d{i:04d}"]) for i in range(300)])
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def shim(hms: LocalMetastore) -> Iterator[Shim]:
    with Shim(hms.uri, framed=True, connect_timeout=2) as server:
        yield server


def request(name: str, args: object, seqid: int = 1) -> bytes:
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    proto.writeMessageBegin(name, TMessageType.CALL, seqid)
    args.write(proto)  # type: ignore[attr-defined]
    proto.writeMessageEnd()
    return bytes(buf.getvalue())


def raw(shim: Shim) -> socket.socket:
    return socket.create_connection(("127.0.0.1", shim.port), timeout=30)


def closed_by_shim(sock: socket.socket) -> bool:
    """True once the shim has closed this connection (EOF or reset)."""
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_malformed_and_vanishing_clients_lose_only_their_own_connection(shim: Shim) -> None:
    with hw.MetastoreClient(shim.uri) as healthy:
        tables = healthy.get_all_tables("robust")
        bad_inputs = [
            b"GET / HTTP/1.1\r\nHost: metastore\r\n\r\n",  # not Thrift at all
            b"\x82\x21\x00\x11get_all_databases",  # the compact protocol
            struct.pack(">i", 2_000_000_000) + b"\x80\x01\x00\x01",  # a 2 GB frame
            b"\x80\x01\x00\x07" + struct.pack(">i", 17) + b"get_all_databases\0\0\0\1",  # unknown type 7
        ]
        for data in bad_inputs:
            with raw(shim) as sock:
                sock.sendall(data)
                assert closed_by_shim(sock), data
            assert healthy.get_all_tables("robust") == tables
        # A client that sends half a call and leaves, and one that leaves while its big reply is on the way.
        big = request("get_partitions", T.get_partitions_args(db_name="robust", tbl_name="wide", max_parts=-1))
        with raw(shim) as sock:
            sock.sendall(big[: len(big) // 2])
        for _ in range(5):
            with raw(shim) as sock:
                sock.sendall(big)
        assert healthy.get_all_tables("robust") == tables
        assert len(healthy.get_partitions("robust", "wide")) == 300
    deadline = time.monotonic() + 30
    while shim.connections and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shim.connections == 0  # every one of them was closed and cleaned up


def test_an_upstream_restart_is_a_thrift_error_then_the_connection_works_again(shim: Shim, hms: LocalMetastore) -> None:
    with (
        hw.MetastoreClient(shim.uri, ugi="hivewire:users") as client,
        hw.MetastoreClient(shim.uri, transport="framed") as framed,
    ):
        assert "robust" in client.get_all_databases()
        assert "robust" in framed.get_all_databases()
        hms.stop()
        try:
            for c in (client, framed):
                with pytest.raises(TApplicationException) as during:
                    c.raw.get_all_databases()  # the generated client: no error translation
                assert during.value.type == TApplicationException.INTERNAL_ERROR
                assert hms.uri in during.value.message and "upstream" in during.value.message
            with pytest.raises(hw.MetastoreError, match="upstream metastore unavailable"):
                client.get_table("robust", "wide")
        finally:
            hms.start()
        # The same client connections, now relayed to the restarted metastore (set_ugi replayed first).
        assert "robust" in client.get_all_databases()
        assert len(framed.get_partitions("robust", "wide")) == 300
        assert client.get_table("robust", "wide").tableName == "wide"


def test_a_framed_upstream_relayed_without_framed_names_the_fix(hms: LocalMetastore) -> None:
    with Shim(hms.uri, connect_timeout=2) as unframed, hw.MetastoreClient(unframed.uri) as client:
        with pytest.raises(TApplicationException) as refused:
            client.raw.get_all_databases()
        assert refused.value.type == TApplicationException.INTERNAL_ERROR
        assert hms.uri in refused.value.message and "start the shim with --framed" in refused.value.message
