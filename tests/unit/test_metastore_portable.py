"""MetastoreClient's version-portable calls and connection hygiene, against an in-process Thrift server.

The server is our generated ``ThriftHiveMetastore.Processor`` with a small handler, minus the methods an older
(or newer) Hive lacks: the real HMS in the integration tests is 2.3, which has ``get_table_req``, so the
``get_table_req`` -> ``get_table`` fallback can only be exercised against a server built to lack it.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.server import TServer
from thrift.transport import TSocket, TTransport

import hivewire as hw
from hivewire_thrift.hive_metastore import ThriftHiveMetastore
from hivewire_thrift.hive_metastore import ttypes as hms


class Handler:
    """Answers get_table/get_table_req/get_partition_names and counts what it was asked."""

    def __init__(self) -> None:
        self.calls: collections.Counter[str] = collections.Counter()

    def get_table(self, dbname: str, tbl_name: str) -> Any:
        self.calls["get_table"] += 1
        if tbl_name == "missing":
            raise hms.NoSuchObjectException(message=f"{dbname}.{tbl_name} table not found")
        return hms.Table(dbName=dbname, tableName=tbl_name)

    def get_table_req(self, req: Any) -> Any:
        self.calls["get_table_req"] += 1
        return hms.GetTableResult(table=hms.Table(dbName=req.dbName, tableName=req.tblName))

    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        self.calls["get_partition_names"] += 1
        return [f"n={i}" for i in range(max_parts if max_parts >= 0 else 3)]


class _Counting(TBinaryProtocol.TBinaryProtocolAcceleratedFactory):
    """Records the name of every call that arrives, known to the processor or not."""

    def __init__(self, received: collections.Counter[str]) -> None:
        super().__init__()
        self.received = received

    def getProtocol(self, trans: Any) -> Any:
        proto = super().getProtocol(trans)
        read = proto.readMessageBegin

        def read_message_begin() -> Any:
            name, kind, seqid = read()
            self.received[name] += 1
            return name, kind, seqid
        proto.readMessageBegin = read_message_begin
        return proto


class Server:
    def __init__(self, lacking: tuple[str, ...] = ()) -> None:
        self.handler = Handler()
        self.received: collections.Counter[str] = collections.Counter()  # every call, answered or not
        processor = ThriftHiveMetastore.Processor(self.handler)
        for method in lacking:  # what an older server does not know: it answers "unknown method"
            del processor._processMap[method]
        self.socket = TSocket.TServerSocket(host="127.0.0.1", port=0)
        self.server = TServer.TThreadedServer(processor, self.socket, TTransport.TBufferedTransportFactory(),
                                              _Counting(self.received), daemon=True)
        self.socket.listen()
        self.port = self.socket.handle.getsockname()[1]
        self.socket.listen = lambda: None  # already listening; serve() calls it again
        threading.Thread(target=self.server.serve, daemon=True).start()

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def old_server() -> Iterator[Server]:
    server = Server(lacking=("get_table_req",))
    yield server
    server.close()


def test_get_table_falls_back_to_the_legacy_call_once_per_connection(old_server: Server) -> None:
    with hw.MetastoreClient(old_server.uri) as client:
        for i in range(5):
            assert client.get_table("sales", f"t{i}").tableName == f"t{i}"
        assert client.unsupported_methods == {"get_table_req"}
        # Asked once, learnt, and not asked again on this connection.
        assert old_server.received == {"get_table_req": 1, "get_table": 5}
        with pytest.raises(hw.NoSuchObjectError, match=r"sales\.missing table not found"):
            client.get_table("sales", "missing")
        client.close()
        # A new connection may land on another Hive version, so it asks again (once).
        client.get_table("sales", "again")
        client.get_table("sales", "and again")
        assert client.unsupported_methods == {"get_table_req"}
        assert old_server.received == {"get_table_req": 2, "get_table": 8}


def test_a_server_that_has_the_request_call_is_asked_with_it() -> None:
    server = Server()
    try:
        with hw.MetastoreClient(server.uri) as client:
            assert client.get_table("sales", "t").tableName == "t"
            assert client.unsupported_methods == frozenset()
        assert server.received == {"get_table_req": 1}
    finally:
        server.close()


def test_an_unknown_method_is_an_unsupported_method_error_naming_it(old_server: Server) -> None:
    with hw.MetastoreClient(old_server.uri) as client, pytest.raises(hw.UnsupportedMethodError) as exc:
        client.get_table_req(hms.GetTableRequest(dbName="d", tblName="t"))
    assert exc.value.method == "get_table_req" and old_server.uri in str(exc.value)


def test_max_parts_out_of_the_i16_range_is_refused_before_anything_is_sent(old_server: Server) -> None:
    with hw.MetastoreClient(old_server.uri) as client:
        for bad in (40_000, -2, 1.5):
            with pytest.raises(hw.ConfigError, match="max_parts"):
                client.get_partition_names("d", "t", bad)  # type: ignore[arg-type]
        assert old_server.handler.calls["get_partition_names"] == 0
        assert client.get_partition_names("d", "t", 2) == ["n=0", "n=1"]


def test_a_request_that_cannot_be_encoded_leaves_the_connection_usable(old_server: Server) -> None:
    with hw.MetastoreClient(old_server.uri) as client:
        # Half of this message is written before the i16 overflows: sending anything after it on the same
        # connection would be garbage to the server.
        with pytest.raises(hw.MetastoreError, match="cannot be sent"):
            client.call("get_partition_names", "d" * 5000, "t", 1 << 20)
        assert not client.is_open
        assert client.get_partition_names("d", "t", 1) == ["n=0"]
        assert old_server.handler.calls["get_partition_names"] == 1
