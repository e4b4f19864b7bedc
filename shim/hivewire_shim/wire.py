"""Thrift binary-protocol messages on a socket: where each one starts and ends, without re-encoding anything.

The shim relays bytes. It needs to know where a message ends (buffered transport has no length prefix),
the method name and sequence id of each call, and, for the few methods it models, the decoded arguments
and result. :class:`MessageReader` gives all three cheaply:

* it is a ``CReadableTransport``, so thrift's C extension (``fastbinary``) can walk a message in place.
  Skipping a struct with an empty spec makes the C code skip every field without building Python
  objects, far cheaper than the pure-Python ``skip`` or a full decode of a large ``get_partitions`` reply;
* every byte the parser consumes can be handed to a *sink* on the way: a list (to capture a request's
  exact bytes) or the other socket (to relay a reply while it is still arriving). Bytes are handed off
  each time the parser needs more input, so a relayed reply lags the upstream by at most one read.

Without the C extension the same reader works with thrift's pure-Python protocol, only slower.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TType
from thrift.transport import TTransport

from hivewire_shim.budget import Budget, OverBudget

try:
    from thrift.protocol import fastbinary as _fastbinary
except ImportError:  # pragma: no cover - depends on how thrift was installed
    _fastbinary = None


__all__ = [
    "CALL",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "EXCEPTION",
    "MAX_REPLY_VALUE_BYTES",
    "ONEWAY",
    "REPLY",
    "Header",
    "MessageReader",
    "PeerClosed",
    "WireError",
    "application_exception",
    "decode_args",
    "frame",
    "parse_header",
]

CALL, REPLY, EXCEPTION, ONEWAY = 1, 2, 3, 4
_VERSION_MASK = 0xFFFF0000
_VERSION_1 = 0x80010000
_COMPACT_PROTOCOL_ID = 0x82
#: Hive's method names are under 60 characters; anything this long is not a Thrift message.
MAX_NAME_BYTES = 4096
#: Default cap on one client request (a client claiming more is cut off rather than buffered): Hive's own
#: ``hive.metastore.server.max.message.size`` default, 100 MB. Each connection may buffer one request this big.
DEFAULT_MAX_MESSAGE_BYTES = 100 * 1024 * 1024
#: Cap on one value (a string, a list's length) in an upstream reply. The metastore is trusted: this only
#: stops garbage, and must not refuse a legitimately huge ``get_partitions`` reply.
MAX_REPLY_VALUE_BYTES = 1 << 30
_I32 = struct.Struct(">i")
_MESSAGE_TYPES = {CALL: "call", REPLY: "reply", EXCEPTION: "exception", ONEWAY: "oneway"}


class WireError(Exception):
    """The bytes are not a Thrift binary-protocol message (or exceed a limit)."""


class PeerClosed(EOFError):
    """The other side closed the connection or the socket failed. ``started`` says whether the message
    being read had begun (a peer that closes between messages is not an error)."""

    def __init__(self, message: str, *, started: bool) -> None:
        super().__init__(message)
        self.started = started


@dataclass(frozen=True)
class Header:
    """A message's header: method ``name``, message ``type`` (CALL, REPLY, EXCEPTION, ONEWAY), ``seqid``."""

    name: str
    type: int
    seqid: int

    def __str__(self) -> str:
        return f"{self.name}#{self.seqid} ({_MESSAGE_TYPES.get(self.type, self.type)})"


def parse_header(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[Header, int] | None:
    """The header at ``data[offset:]`` and the offset just after it, or None if ``data`` ends first.

    Accepts the strict form every current client writes (version word, name, seqid) and the old
    non-strict one (name, type byte, seqid). Raises :class:`WireError` for anything else.
    """
    end = len(data)
    if end - offset < 4:
        return None
    (word,) = _I32.unpack_from(data, offset)
    if word < 0:
        if word & _VERSION_MASK != _VERSION_1:
            if data[offset] == _COMPACT_PROTOCOL_ID:
                raise WireError("the compact protocol is not supported (use TBinaryProtocol)")
            raise WireError(f"not a Thrift binary message (bad version word {word & 0xFFFFFFFF:#010x})")
        mtype = word & 0xFF
        if end - offset < 8:
            return None
        (size,) = _I32.unpack_from(data, offset + 4)
        name_at = offset + 8
        tail = 4  # seqid
    else:
        size, mtype, name_at, tail = word, -1, offset + 4, 5  # type byte + seqid follow the name
    if size < 0 or size > MAX_NAME_BYTES:
        raise WireError(f"not a Thrift binary message (method name length {size})")
    after = name_at + size + tail
    if after > end:
        return None
    try:
        name = bytes(data[name_at : name_at + size]).decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("not a Thrift binary message (method name is not UTF-8)") from None
    if mtype < 0:
        mtype = data[name_at + size]
    (seqid,) = _I32.unpack_from(data, after - 4)
    if mtype not in _MESSAGE_TYPES:
        raise WireError(f"not a Thrift binary message (message type {mtype})")
    return Header(name, mtype, seqid), after


def decode_args(cls: Any, body: bytes, offset: int) -> Any:
    """``cls`` (a generated struct) decoded from ``body[offset:]`` (a message body after its header)."""
    proto = TBinaryProtocol.TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(body[offset:]))
    obj = cls()
    obj.read(proto)
    return obj


def frame(body: bytes) -> bytes:
    """``body`` with the framed transport's 4-byte length prefix."""
    return _I32.pack(len(body)) + body


def application_exception(header: Header, kind: int, message: str) -> bytes:
    """A complete EXCEPTION message answering ``header``'s call (unframed)."""
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    proto.writeMessageBegin(header.name, EXCEPTION, header.seqid)
    TApplicationException(kind, message).write(proto)
    proto.writeMessageEnd()
    return bytes(buf.getvalue())


class _SkipAll:
    """A struct with no known fields: fastbinary skips every field of it, in C."""

    thrift_spec = ()


_SKIP_ARGS = [_SkipAll, ()]
_SKIP_TARGET = _SkipAll()


class MessageReader(TTransport.TTransportBase, TTransport.CReadableTransport):  # type: ignore[misc]
    """Reads Thrift messages from ``sock`` through a buffer that fastbinary can walk in place.

    Consumed bytes go to the sink set with :meth:`begin` (until :meth:`finish`), in order, each exactly
    once. ``max_message_bytes`` bounds a single read request and what one capture may hold, so a client
    claiming a 2 GB string is cut off instead of buffered. ``side`` names the peer in errors.
    """

    def __init__(
        self,
        sock: socket.socket,
        *,
        side: str,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        chunk: int = 65536,
        budget: Budget | None = None,
    ) -> None:
        self._sock = sock
        self._budget = budget
        #: The budget this reader takes from (None: none).
        self.budget = budget
        #: Bytes taken from ``budget`` since the last :meth:`release`; ``charging`` False reads without.
        self.taken = 0
        self._reserved = 0
        self.charging = True
        self.side = side
        self._chunk = chunk
        self._max = max_message_bytes
        self._data = b""
        self._buf = BytesIO(self._data)
        self._base = 0  # stream offset of self._data[0]
        self._sink: Callable[[bytes], Any] | None = None
        self._mark = 0  # where in self._data the sink's next hand-off starts
        self._sunk = 0  # bytes handed to the sink since begin()
        self._limit: int | None = None
        self._started = False  # bytes of the current message were consumed (for PeerClosed.started)
        # fastbinary reads these off "the protocol" it is given; the reader is its own protocol.
        self.trans = self
        self.string_length_limit = max_message_bytes
        self.container_length_limit = max_message_bytes

    # -- CReadableTransport --------------------------------------------------------------------------
    @property
    def cstringio_buf(self) -> BytesIO:
        return self._buf

    def cstringio_refill(self, partialread: bytes, reqlen: int) -> BytesIO:
        """Called (by C or by us) when the buffer holds fewer than ``reqlen`` unread bytes.

        ``partialread`` is the unread tail, already taken out of the buffer; it goes first in the new one.
        """
        if reqlen > self._max:
            raise WireError(f"{self.side} sent a value of {reqlen} bytes (limit {self._max})")
        consumed_to = len(self._data) - len(partialread)
        self._hand_off(consumed_to)
        fresh = self._recv(reqlen - len(partialread), pending=len(partialread))
        self._base += consumed_to
        self._data = bytes(partialread) + fresh if partialread else fresh
        self._buf = BytesIO(self._data)
        self._mark = 0
        return self._buf

    # -- TTransportBase (pure-Python protocol fallback) ----------------------------------------------
    def isOpen(self) -> bool:
        return True

    def read(self, sz: int) -> bytes:
        return self.read_exact(sz)

    def readAll(self, sz: int) -> bytes:
        return self.read_exact(sz)

    # -- reading ----------------------------------------------------------------------------------------
    @property
    def offset(self) -> int:
        """Bytes consumed from the stream so far."""
        return self._base + self._buf.tell()

    @property
    def buffered(self) -> int:
        """Bytes received but not consumed yet."""
        return len(self._data) - self._buf.tell()

    def read_exact(self, n: int) -> bytes:
        data = self._buf.read(n)
        if len(data) < n:
            data = self.cstringio_refill(data, n).read(n)
        self._started = True
        return data

    def peek(self, n: int) -> bytes:
        """The next ``n`` bytes, without consuming them."""
        pos = self._buf.tell()
        if len(self._data) - pos < n:
            self.cstringio_refill(self._buf.read(), n)
            pos = 0
        return self._data[pos : pos + n]

    def skip_bytes(self, n: int) -> None:
        """Consume ``n`` bytes without building them (a frame being relayed)."""
        while n > 0:
            available = len(self._data) - self._buf.tell()
            if available == 0:
                self.cstringio_refill(b"", 1)
                available = len(self._data)
            take = min(available, n)
            self._buf.seek(take, 1)
            n -= take
        self._started = True

    def read_i32(self) -> int:
        value: int = _I32.unpack(self.read_exact(4))[0]
        return value

    def read_header(self) -> Header:
        """Consume and return a message header."""
        while True:
            pos = self._buf.tell()
            parsed = parse_header(self._data, pos)
            if parsed is not None:
                header, after = parsed
                self._buf.seek(after)
                self._started = True
                return header
            # Ask for one byte more than we have; the header is tiny, so this loops at most a few times.
            self.cstringio_refill(self._buf.read(), len(self._data) - pos + 1)

    def skip_struct(self) -> None:
        """Consume one struct (a message body) without decoding it."""
        self._started = True
        if _fastbinary is not None:
            _fastbinary.decode_binary(_SKIP_TARGET, self, _SKIP_ARGS)
        else:  # pragma: no cover - only without thrift's C extension
            TBinaryProtocol.TBinaryProtocol(self, string_length_limit=self._max, container_length_limit=self._max).skip(
                TType.STRUCT
            )

    def decode_struct(self, cls: Any) -> Any:
        """Consume one struct and return it decoded as the generated class ``cls``."""
        self._started = True
        obj = cls()
        if _fastbinary is not None:
            _fastbinary.decode_binary(obj, self, [cls, cls.thrift_spec])
        else:  # pragma: no cover - only without thrift's C extension
            obj.read(
                TBinaryProtocol.TBinaryProtocol(self, string_length_limit=self._max, container_length_limit=self._max)
            )
        return obj

    def message_start(self) -> None:
        """Mark the start of a message (for :class:`PeerClosed`'s ``started``)."""
        self._started = False

    # -- sinks ------------------------------------------------------------------------------------------
    def begin(self, sink: Callable[[bytes], Any], *, capture: bool = False) -> None:
        """From here on, hand every consumed byte to ``sink`` (in pieces, in order).

        ``capture``: the sink keeps the bytes, so ``max_message_bytes`` applies to their total.
        """
        self._sink = sink
        self._mark = self._buf.tell()
        self._sunk = 0
        self._limit = self._max if capture else None

    def finish(self) -> int:
        """Hand off what was consumed since the last hand-off, stop sinking; return the bytes sunk."""
        self._hand_off(self._buf.tell())
        self._sink = None
        return self._sunk

    def _hand_off(self, upto: int) -> None:
        if self._sink is not None and upto > self._mark:
            piece = self._data[self._mark : upto]
            self._sunk += len(piece)
            if self._limit is not None and self._sunk > self._limit:
                raise WireError(f"{self.side} sent a message over {self._limit} bytes")
            self._sink(piece)
        self._mark = upto

    def _recv(self, need: int, pending: int) -> bytes:
        pieces = []
        got = 0
        while got < need:
            try:
                piece = self._sock.recv(min(max(self._chunk, need - got), 1 << 22))
            except OSError as e:
                raise PeerClosed(f"{self.side}: {e}", started=self._started or pending > 0 or got > 0) from e
            if not piece:
                raise PeerClosed(f"{self.side} closed the connection", started=self._started or pending > 0 or got > 0)
            if self._budget is not None and self.charging:
                # Twice: a request's pieces and the joined whole are both in memory while it is assembled.
                charge = 2 * len(piece)
                covered = min(self._reserved, charge)
                self._reserved -= covered
                if charge > covered:
                    try:
                        self._budget.take(charge - covered)
                    except OverBudget as e:
                        raise WireError(f"{self.side}: request refused: {e}") from e
                    self.taken += charge - covered
            pieces.append(piece)
            got += len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def reserve(self, n: int) -> bool:
        """Take ``n`` bytes of the budget ahead (a frame of known length); False if there is no room."""
        if self._budget is None:
            return True
        try:
            self._budget.take(n)
        except OverBudget:
            return False
        self._reserved += n
        self.taken += n
        return True

    def release(self) -> None:
        """Give back to the budget what this reader took (its request is over)."""
        if self._budget is not None:
            self._budget.give(self.taken)
        self.taken = 0
        self._reserved = 0
