"""MetastoreClient's version-portable calls and connection hygiene, against an in-process Thrift server.

The server is our generated ``ThriftHiveMetastore.Processor`` with a small handler, minus the methods an older
(or newer) Hive lacks: the real HMS in the integration tests is 2.3, which has ``get_table_req``, so the
``get_table_req`` -> ``get_table`` fallback can only be exercised against a server built to lack it. The same
goes for connecting over IPv6 (the test metastore's JVM runs with ``preferIPv4Stack``) and for a host that never
answers (a listening socket whose accept queue is full: the kernel drops further connection attempts).
"""

from __future__ import annotations

import collections
import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.server import TServer
from thrift.transport import TSocket, TTransport

import hivewire as hw
from hivewire.errors import MetastoreServerError
from hivewire.metastore._addresses import _connect_socket
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
        if tbl_name == "broken":
            raise hms.MetaException(message=f"java.lang.NullPointerException reading {dbname}.{tbl_name}")
        return hms.Table(dbName=dbname, tableName=tbl_name)

    def get_config_value(self, name: str, default: str) -> str:
        self.calls["get_config_value"] += 1
        if not name.startswith("hive."):
            raise hms.ConfigValSecurityException(
                message=f"For security reasons, the config key {name} cannot be accessed"
            )
        return default

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
    def __init__(self, lacking: tuple[str, ...] = (), host: str = "127.0.0.1") -> None:
        self.handler = Handler()
        self.received: collections.Counter[str] = collections.Counter()  # every call, answered or not
        processor = ThriftHiveMetastore.Processor(self.handler)
        for method in lacking:  # what an older server does not know: it answers "unknown method"
            del processor._processMap[method]
        self.host = host
        self.socket = TSocket.TServerSocket(host=host, port=0)
        self.server = TServer.TThreadedServer(
            processor, self.socket, TTransport.TBufferedTransportFactory(), _Counting(self.received), daemon=True
        )
        self.socket.listen()
        self.port = self.socket.handle.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        # TThreadedServer.serve() never returns: after close() it would spin logging failed accepts.
        while not self.closed:
            try:
                client = self.socket.accept()
            except Exception:
                continue
            if client is not None:
                threading.Thread(target=self.server.handle, args=(client,), daemon=True).start()

    @property
    def uri(self) -> str:
        return f"thrift://[{self.host}]:{self.port}" if ":" in self.host else f"thrift://{self.host}:{self.port}"

    def close(self) -> None:
        self.closed = True
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
        with pytest.raises(hw.MetastoreError, match="cannot be sent") as exc:
            client.call("get_partition_names", "d" * 5000, "t", 1 << 20)
        assert "max_parts = 1048576 does not fit the IDL's i16" in str(exc.value)
        assert not client.is_open
        assert client.get_partition_names("d", "t", 1) == ["n=0"]
        assert old_server.handler.calls["get_partition_names"] == 1


def test_a_declared_server_error_keeps_the_connection_and_the_learnt_fallback(old_server: Server) -> None:
    with hw.MetastoreClient(old_server.uri) as client:
        client.get_table("sales", "t")  # learns that get_table_req is missing
        transport = client._trans
        with pytest.raises(MetastoreServerError) as exc:
            client.get_table("sales", "broken")  # MetaException, declared by get_table
        assert type(exc.value) is MetastoreServerError
        assert "MetaException" in str(exc.value) and "sales, broken" in str(exc.value)
        assert old_server.uri in str(exc.value)
        with pytest.raises(MetastoreServerError, match=r"config key fs\.s3a\.secret\.key"):
            client.get_config_value("fs.s3a.secret.key", "")  # ConfigValSecurityException
        with pytest.raises(hw.NoSuchObjectError):
            client.get_table("sales", "missing")
        assert client.get_table("sales", "after").tableName == "after"
        # Same connection throughout, and get_table_req was asked once: nothing was re-learnt.
        assert client._trans is transport
        assert client.unsupported_methods == {"get_table_req"}
        assert old_server.received == {"get_table_req": 1, "get_table": 4, "get_config_value": 1}


def test_a_wrong_argument_count_fails_before_anything_is_sent(old_server: Server) -> None:
    with hw.MetastoreClient(old_server.uri) as client:
        transport = client._trans
        with pytest.raises(TypeError, match=r"takes 3 argument\(s\) \(db_name, tbl_name, max_parts\), 2 given"):
            client.call("get_partition_names", "d", "t")
        with pytest.raises(AttributeError, match="no method 'no_such_call'"):
            client.call("no_such_call")
        assert client.get_partition_names("d", "t", 1) == ["n=0"]
        assert client._trans is transport
        assert old_server.received == {"get_partition_names": 1}


def test_connects_to_an_ipv6_address_in_brackets() -> None:
    server = Server(host="::1")
    try:
        with hw.MetastoreClient(server.uri) as client:
            assert client.uri == server.uri == f"thrift://[::1]:{server.port}"
            assert client.get_table("sales", "v6").tableName == "v6"
    finally:
        server.close()


@contextlib.contextmanager
def blackhole(family: socket.AddressFamily = socket.AF_INET, host: str = "127.0.0.1") -> Iterator[tuple[str, int]]:
    """An address whose connection attempts are never answered: a listener with a full accept queue."""
    listener = socket.socket(family, socket.SOCK_STREAM)
    queued: list[socket.socket] = []
    try:
        listener.bind((host, 0))
        listener.listen(0)
        address = listener.getsockname()[:2]
        while True:  # fill the queue (backlog 0 holds one) until an attempt goes unanswered
            filler = socket.socket(family, socket.SOCK_STREAM)
            filler.settimeout(0.2)
            try:
                filler.connect(address)
            except TimeoutError:
                filler.close()
                break
            queued.append(filler)
        yield address
    finally:
        for s in queued:
            s.close()
        listener.close()


def test_a_host_that_never_answers_costs_one_timeout_and_the_error_says_so() -> None:
    with blackhole() as (host, port):
        uri = f"thrift://{host}:{port}"
        client = hw.MetastoreClient(uri, connect_timeout=0.3)
        with pytest.raises(hw.MetastoreConnectionError) as exc:
            client.get_all_databases()
    message = str(exc.value)
    assert uri in message and "timed out" in message and "connect_timeout" in message
    assert exc.value.tried == [(uri, f"connecting to {host}:{port} timed out (connect_timeout 0.3 s)")]


def test_one_deadline_covers_every_address_of_a_name() -> None:
    # What getaddrinfo returns for a name with a dead IPv4 and a dead IPv6 address: the first uses up the
    # connect timeout and the second is not given another.
    with blackhole() as v4, blackhole(socket.AF_INET6, "::1") as v6:
        addresses = [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", v4),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (*v6, 0, 0)),
        ]
        with pytest.raises(TimeoutError) as exc:
            _connect_socket(addresses, 0.3)
    assert str(exc.value) == (
        f"connecting to {v4[0]}:{v4[1]} timed out (connect_timeout 0.3 s); "
        "1 more address(es) not tried within connect_timeout"
    )


def test_an_address_that_refuses_leaves_the_rest_of_the_deadline_to_the_next(old_server: Server) -> None:
    refusing = socket.socket()
    refusing.bind(("127.0.0.1", 0))
    closed = refusing.getsockname()
    refusing.close()  # nothing listens there now: connecting is refused at once
    addresses = [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", closed),
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", old_server.port)),
    ]
    sock = _connect_socket(addresses, 5)
    try:
        assert sock.getpeername() == ("127.0.0.1", old_server.port)
    finally:
        sock.close()
