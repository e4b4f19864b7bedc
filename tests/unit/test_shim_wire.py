"""Finding Thrift message boundaries on a socket without re-encoding: headers, skipping, capture, limits."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TTransport

from hivewire.tools._testing import make_partition, make_table
from hivewire_shim.wire import (
    CALL,
    EXCEPTION,
    ONEWAY,
    REPLY,
    Header,
    MessageReader,
    PeerClosed,
    WireError,
    application_exception,
    frame,
    parse_header,
)
from hivewire_thrift.fb303 import FacebookService
from hivewire_thrift.hive_metastore import ThriftHiveMetastore as T


def message(name: str, mtype: int, seqid: int, body: object, *, strict: bool = True) -> bytes:
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf, strictWrite=strict)
    proto.writeMessageBegin(name, mtype, seqid)
    body.write(proto)  # type: ignore[attr-defined]
    proto.writeMessageEnd()
    return bytes(buf.getvalue())


def big_reply(partitions: int = 2000) -> bytes:
    table = make_table("db", "t", columns={f"c{i}": "string" for i in range(10)}, partition_keys={"dt": "string"})
    parts = [make_partition(table, [f"2024-{i:05d}"], parameters={"k": "v" * 30}) for i in range(partitions)]
    return message("get_partitions", REPLY, 7, T.get_partitions_result(success=parts))


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def feed(sock: socket.socket, data: bytes, chunk: int) -> threading.Thread:
    """Write ``data`` in ``chunk``-byte pieces from another thread, so the reader sees partial messages."""

    def run() -> None:
        for i in range(0, len(data), chunk):
            sock.sendall(data[i : i + chunk])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_parse_header_strict_and_old_style() -> None:
    strict = message("get_table", CALL, 42, T.get_table_args(dbname="db", tbl_name="t"))
    header, end = parse_header(strict)  # type: ignore[misc]
    assert header == Header("get_table", CALL, 42)
    assert end == 4 + 4 + len("get_table") + 4
    old = message("shutdown", ONEWAY, 3, FacebookService.shutdown_args(), strict=False)
    header, end = parse_header(old)  # type: ignore[misc]
    assert header == Header("shutdown", ONEWAY, 3)
    assert end == 4 + len("shutdown") + 1 + 4
    for cut in range(end):  # every prefix shorter than the header is "incomplete", never an error
        assert parse_header(old[:cut]) is None
        assert parse_header(strict[: min(cut, 20)]) is None


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x80\x02\x00\x01" + b"\x00" * 12, "bad version"),
        (b"\x82\x21\x00\x09get_table", "compact protocol"),
        (b"\x80\x01\x00\x09" + struct.pack(">i", 3) + b"abc" + b"\x00" * 4, "message type 9"),
        (struct.pack(">i", 1 << 20) + b"x" * 20, "method name length"),
        (b"\x80\x01\x00\x01" + struct.pack(">i", 2) + b"\xff\xfe" + b"\x00" * 4, "not UTF-8"),
    ],
)
def test_parse_header_rejects_what_is_not_thrift_binary(data: bytes, reason: str) -> None:
    with pytest.raises(WireError, match=reason):
        parse_header(data)


@pytest.mark.parametrize("chunk", [1, 7, 1000, 1 << 20])
def test_a_message_is_captured_byte_for_byte_however_it_arrives(
    pair: tuple[socket.socket, socket.socket], chunk: int
) -> None:
    a, b = pair
    first = message(
        "add_partitions",
        CALL,
        1,
        T.add_partitions_args(
            new_parts=[
                make_partition(make_table("db", "t", partition_keys={"dt": "string"}), [str(i)]) for i in range(50)
            ]
        ),
    )
    second = message("shutdown", ONEWAY, 2, FacebookService.shutdown_args())  # a oneway call right behind it
    writer = feed(a, first + second, chunk)
    reader = MessageReader(b, side="client")
    for expected, name in ((first, "add_partitions"), (second, "shutdown")):
        pieces: list[bytes] = []
        reader.begin(pieces.append, capture=True)
        assert reader.read_header().name == name
        reader.skip_struct()
        assert reader.finish() == len(expected)
        assert b"".join(pieces) == expected
    writer.join()
    assert reader.buffered == 0


def test_a_large_reply_is_relayed_as_it_is_read_and_decoded_on_the_way(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair
    data = big_reply()
    writer = feed(a, data, 65536)
    reader = MessageReader(b, side="upstream")
    relayed: list[bytes] = []
    reader.begin(relayed.append)
    header = reader.read_header()
    result = reader.decode_struct(T.get_partitions_result)
    reader.finish()
    writer.join()
    assert header == Header("get_partitions", REPLY, 7)
    assert len(result.success) == 2000 and result.success[-1].values == ["2024-01999"]
    assert b"".join(relayed) == data
    assert len(relayed) > 1  # handed off in pieces while reading, not at the end only


def test_end_of_stream_between_messages_is_not_an_error_but_inside_one_is(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair
    data = message("get_all_databases", CALL, 1, T.get_all_databases_args())
    a.sendall(data + data[:9])
    a.shutdown(socket.SHUT_WR)
    reader = MessageReader(b, side="client")
    reader.message_start()
    reader.read_header()
    reader.skip_struct()
    reader.message_start()
    with pytest.raises(PeerClosed) as truncated:
        reader.read_header()
        reader.skip_struct()
    assert truncated.value.started
    c, d = socket.socketpair()
    c.close()
    quiet = MessageReader(d, side="client")
    quiet.message_start()
    with pytest.raises(PeerClosed) as clean:
        quiet.read_header()
    assert not clean.value.started
    d.close()


def test_captures_and_values_over_the_limit_are_refused(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    data = message(
        "add_partitions",
        CALL,
        1,
        T.add_partitions_args(
            new_parts=[
                make_partition(make_table("db", "t", partition_keys={"dt": "string"}), [str(i)]) for i in range(100)
            ]
        ),
    )
    writer = feed(a, data, 4096)
    reader = MessageReader(b, side="client", max_message_bytes=10_000)
    reader.begin(lambda piece: None, capture=True)
    with pytest.raises(WireError, match="over 10000 bytes"):
        reader.read_header()
        reader.skip_struct()
        reader.finish()
    writer.join()
    # A string claiming 2 GB is refused when it is claimed, not buffered.
    c, d = socket.socketpair()
    c.sendall(
        b"\x80\x01\x00\x01"
        + struct.pack(">i", 9)
        + b"get_table"
        + b"\x00\x00\x00\x01"
        + b"\x0b\x00\x01"
        + struct.pack(">i", 2_000_000_000)
    )
    huge = MessageReader(d, side="client", max_message_bytes=1 << 20)
    huge.read_header()
    with pytest.raises(WireError, match="2000000000 bytes"):
        huge.skip_struct()
    c.close()
    d.close()


def test_skip_bytes_and_peek(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    data = bytes(range(256)) * 400
    writer = feed(a, data, 3000)
    reader = MessageReader(b, side="upstream", chunk=1024)
    assert reader.peek(6) == data[:6]
    assert reader.offset == 0
    reader.skip_bytes(100_000)
    assert reader.offset == 100_000
    assert reader.read_exact(10) == data[100_000:100_010]
    assert reader.read_exact(len(data) - 100_010) == data[100_010:]
    writer.join()


def test_application_exception_and_frame() -> None:
    header = Header("get_table", CALL, 9)
    data = application_exception(header, TApplicationException.INTERNAL_ERROR, "upstream down")
    proto = TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(data))
    assert proto.readMessageBegin() == ("get_table", TMessageType.EXCEPTION, 9)
    exc = TApplicationException()
    exc.read(proto)
    assert (exc.type, exc.message) == (TApplicationException.INTERNAL_ERROR, "upstream down")
    assert parse_header(data) == (Header("get_table", EXCEPTION, 9), 4 + 4 + 9 + 4)
    assert frame(data) == struct.pack(">i", len(data)) + data
