"""One client connection: read a call, forward its exact bytes upstream, relay the reply.

Each client connection gets its own upstream connection, opened on its first call, so whatever a client
sets on its connection (``set_ugi``, ``setMetaConf``) applies to its calls only, exactly as without the
shim. Calls are handled one at a time, as Thrift clients make them (a oneway call such as fb303
``shutdown`` gets no reply and may be followed at once by the next call). A call of any other method sent
as a ONEWAY message is carried out as a call (a change publishes its event with the final state); the
metastore's reply is read and not relayed, so the connection stays in step.

Replies to calls the shim does not model are relayed as they arrive. The reply to a change is read in
full first and relayed only once its event was published (see :mod:`hivewire_shim.capture`), so a
client never sees a change succeed whose event a crash of the shim could still lose.

Client sockets have TCP keepalive (a vanished client is noticed while its connection is idle) and a send
timeout: a client that takes nothing of a reply for ``send_timeout`` seconds is disconnected.

Failures stay on this connection:

* a malformed message, or a client that disappears mid-call, closes this connection (and its upstream
  connection) and nothing else;
* when the upstream cannot be reached, or dies before replying, the client gets a
  ``TApplicationException`` (INTERNAL_ERROR, naming the upstream) for that call; the next call reconnects,
  first replaying the connection's ``set_ugi`` and ``setMetaConf`` calls. If the upstream dies in the
  middle of a reply, part of it has already reached the client, so the client's connection is closed.

The client's transport (buffered or framed) is detected from its first bytes; the upstream's is
configured. When they differ, messages are re-framed (their bytes are unchanged).
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import ssl
import struct
import time
from collections.abc import Callable
from typing import Any

from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException

from hivewire_shim.budget import Budget
from hivewire_shim.capture import Capture, Plan
from hivewire_shim.reply import Reply
from hivewire_shim.upstream import Upstream, UpstreamUnavailable
from hivewire_shim.wire import (
    CALL,
    EXCEPTION,
    MAX_REPLY_VALUE_BYTES,
    ONEWAY,
    Header,
    MessageReader,
    PeerClosed,
    WireError,
    application_exception,
    decode_args,
    frame,
    parse_header,
)
from hivewire_thrift.hive_metastore import ThriftHiveMetastore

__all__ = ["ClientGone", "Connection"]

log = logging.getLogger(__name__)
_I32 = struct.Struct(">i")


#: Methods the IDL declares ``oneway`` (fb303 ``shutdown``): the server sends no reply to them.
REPLYLESS_METHODS = frozenset(
    name
    for name in dir(ThriftHiveMetastore.Iface)
    if not name.startswith("_") and not hasattr(ThriftHiveMetastore.Client, f"recv_{name}")
)


#: Seconds a client may take over its TLS handshake.
_HANDSHAKE_TIMEOUT = 30.0

#: What :meth:`Connection._read_request` returns for a request it refused (and answered).
_REFUSED = object()


def _discard(piece: bytes) -> None:
    return None


class ClientGone(Exception):
    """Sending to the client failed: it went away."""


class _Outbox:
    """Where the bytes of one reply go: to the client as they arrive or, for a modeled call, into
    :attr:`held` until its events are published. A client that leaves mid-reply is remembered in
    :attr:`gone`, not raised: the reply is still read to its end, so the upstream connection stays in step
    (the client's connection ends after the call)."""

    __slots__ = ("_send", "gone", "held")

    def __init__(self, send: Callable[[bytes], None], *, hold: bool) -> None:
        self._send = send
        self.held: list[bytes] | None = [] if hold else None
        self.gone: ClientGone | None = None

    def put(self, piece: bytes) -> None:
        if self.held is not None:
            self.held.append(piece)
        elif self.gone is None:
            try:
                self._send(piece)
            except ClientGone as e:
                self.gone = e


class _UpstreamFailed(Exception):
    """The upstream failed during a call; ``forwarded`` says whether part of its reply reached the client."""

    def __init__(self, message: str, *, forwarded: bool) -> None:
        super().__init__(message)
        self.forwarded = forwarded


#: Keepalive probes on client sockets: first after a minute idle, then every 10 s, 6 unanswered = gone.
_KEEPALIVE = {"TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 6}


def _configure_client_socket(sock: socket.socket, send_timeout: float) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in _KEEPALIVE.items():
            if hasattr(socket, name):
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
    if send_timeout > 0:
        # SO_SNDTIMEO bounds sends only (a socket timeout would also cut off clients idle between calls,
        # which Hive clients legitimately are for hours). A send that makes no progress for this long
        # fails, and the client is treated as gone.
        seconds = int(send_timeout)
        with contextlib.suppress(OSError):
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", seconds, int((send_timeout - seconds) * 1e6))
            )


def _transport_hint(framed: bool) -> str:
    if framed:
        return (
            "; if the metastore does not use the framed transport (metastore.thrift.framed.transport.enabled), "
            "start the shim without --framed"
        )
    return (
        "; if the metastore uses the framed transport (metastore.thrift.framed.transport.enabled=true), start "
        "the shim with --framed; if it uses SASL (hive.metastore.sasl.enabled=true), with "
        "--upstream-sasl-mechanism"
    )


class Connection:
    """Serves one client socket until it closes (call :meth:`run` on the connection's thread).

    ``count(method, answered)`` is told of every call once it is over; ``answered`` says whether the
    upstream replied to it as a method it knows (an exception such as "Invalid method name" is no answer).
    """

    def __init__(
        self,
        sock: socket.socket,
        peer: str,
        *,
        upstream: Upstream,
        capture: Capture,
        count: Callable[[str, bool], None],
        max_message_bytes: int,
        send_timeout: float = 600.0,
        budget: Budget | None = None,
    ) -> None:
        self.sock = sock
        self.peer = peer
        self._upstream = upstream
        self._capture = capture
        self._count = count
        self._max = max_message_bytes
        self._reader = MessageReader(sock, side=f"client {peer}", max_message_bytes=max_message_bytes, budget=budget)
        self._framed = False
        self._up: socket.socket | None = None
        self._up_reader: MessageReader | None = None
        self._up_uri: str | None = None
        self._up_replies = 0  # replies read on the current upstream connection
        # Calls that set per-connection state, replayed on a new upstream connection, in order.
        self._session: dict[str | tuple[str, str | bytes], bytes] = {}
        self.busy = False
        _configure_client_socket(sock, send_timeout)

    # -- the loop -----------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            if isinstance(self.sock, ssl.SSLSocket) and not self._handshake():
                return
            if not self._detect_transport():
                return
            while True:
                request = self._read_request()
                if request is None:
                    return
                if request is _REFUSED:
                    self._reader.release()
                    continue
                assert isinstance(request, tuple)
                self.busy = True
                try:
                    self._handle(*request)
                finally:
                    self.busy = False
                    self._reader.release()
        except ClientGone as e:
            log.info("client %s went away mid-call (%s); connection closed", self.peer, e)
        except PeerClosed as e:
            if e.started:
                log.info("client %s closed its connection mid-message", self.peer)
            else:
                log.debug("client %s closed its connection", self.peer)
        except WireError as e:
            log.warning("client %s sent a malformed message (%s); closing its connection", self.peer, e)
        except _UpstreamFailed as e:
            log.warning("client %s: %s; closing the client's connection (part of the reply was sent)", self.peer, e)
        except Exception:
            log.exception("client %s: unexpected error; closing its connection", self.peer)
        finally:
            self._reader.release()
            self.close()

    def close(self) -> None:
        self._close_upstream()
        with contextlib.suppress(OSError):
            self.sock.close()

    def stop_reading(self) -> None:
        """Make the connection end after its current call (the shim is stopping)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RD)

    def _handshake(self) -> bool:
        """The TLS handshake with the client (bounded: a silent client must not hold its thread for long)."""
        assert isinstance(self.sock, ssl.SSLSocket)
        try:
            self.sock.settimeout(_HANDSHAKE_TIMEOUT)
            self.sock.do_handshake()
            self.sock.settimeout(None)
        except (OSError, ssl.SSLError) as e:
            log.info("client %s: TLS handshake failed (%s); connection closed", self.peer, e)
            return False
        return True

    def _detect_transport(self) -> bool:
        """Buffered (the message starts at once) or framed (a length first); False if the client left."""
        try:
            first = self._reader.peek(1)
            if first[0] in (0x80, 0x82):  # a strict binary (or compact) message header
                self._framed = False
            else:
                # A frame length is followed by a strict header (0x80 0x01) or a name length (0x00 ...);
                # an old-style unframed message has the method name's first letters there.
                self._framed = self._reader.peek(6)[4] in (0x80, 0x00)
        except PeerClosed as e:
            if e.started:
                raise
            log.debug("client %s connected and left without a call", self.peer)
            return False
        log.debug("client %s: %s transport", self.peer, "framed" if self._framed else "buffered")
        return True

    def _refuse_request(self, size: int) -> None:
        """No room for a framed request of ``size`` bytes: read it through without keeping it, and answer
        with a TApplicationException that says why (the connection stays in step)."""
        r = self._reader
        r.charging = False
        try:
            parsed = parse_header(r.peek(min(size, 4096)))
            r.skip_bytes(size)
        finally:
            r.charging = True
        if parsed is None:
            raise WireError("a frame shorter than its message header")
        header = parsed[0]
        budget = r.budget
        assert budget is not None  # only a reader with a budget refuses
        message = (
            f"hivewire shim: request of {size} bytes refused: the shim holds too much of other clients' requests "
            f"({budget.setting}={budget.limit}); retry later"
        )
        log.warning("client %s: %s refused: %d bytes, no room (%s)", self.peer, header, size, message)
        if header.type != ONEWAY:
            self._client_send(frame(application_exception(header, TApplicationException.INTERNAL_ERROR, message)))

    def _read_request(self) -> tuple[Header, bytes] | object | None:
        r = self._reader
        r.message_start()
        try:
            if self._framed:
                size = r.read_i32()
                if size <= 0 or size > self._max:
                    raise WireError(f"frame length {size}")
                if not r.reserve(2 * size):
                    self._refuse_request(size)
                    return _REFUSED
                body = r.read_exact(size)
                parsed = parse_header(body)
                if parsed is None:
                    raise WireError("a frame shorter than its message header")
                header = parsed[0]
            else:
                pieces: list[bytes] = []
                r.begin(pieces.append, capture=True)
                header = r.read_header()
                r.skip_struct()
                r.finish()
                body = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        except PeerClosed as e:
            if e.started:
                raise
            return None
        except (EOFError, OSError) as e:
            raise PeerClosed(f"client {self.peer}: {e}", started=True) from e
        except WireError:
            raise
        except Exception as e:  # the C decoder's TProtocolException and friends: bad bytes
            raise WireError(str(e) or type(e).__name__) from e
        if header.type not in (CALL, ONEWAY):
            raise WireError(f"a {header} message where a call was expected")
        return header, body

    # -- one call ---------------------------------------------------------------------------------------------
    def _handle(self, header: Header, body: bytes) -> None:
        """One call: forward it and relay its reply (a modeled call's once its events are published)."""
        started = time.perf_counter()
        reply: Reply | None = None
        try:
            plan = self._capture.plan(header, body)
            # A call sent as ONEWAY waits for no reply, but the metastore answers every method that is not
            # oneway in the IDL whatever the message type: its reply is read (so the connection stays in
            # step and a change's event has the final state) and not relayed.
            send = self._client_send if header.type != ONEWAY else _discard
            out = _Outbox(send, hold=plan is not None)
            reply = self._forward(header, body, None, out) if plan is None else self._carry_out(plan, body, out)
            if out.gone is not None:
                raise out.gone
            if reply.ok and header.name in ("set_ugi", "setMetaConf"):
                self._remember_setting(header.name, body)
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "client %s: %s%s -> %s in %.1f ms",
                    self.peer,
                    header,
                    " (modeled)" if plan is not None else "",
                    "ok" if reply.ok else reply.error or "failed",
                    (time.perf_counter() - started) * 1000,
                )
        finally:
            self._count(header.name, reply is not None and reply.answered)

    def _carry_out(self, plan: Plan, body: bytes, out: _Outbox) -> Reply:
        """Run a modeled call by its plan (see :mod:`hivewire_shim.capture`); relay the reply once its events
        are in the sinks and its locks are released."""
        try:
            with plan.locked():
                plan.read_before()
                plan.intend(body)
                try:
                    reply = self._forward(plan.header, body, plan.result_class, out)
                    plan.publish(reply)
                finally:
                    plan.done()
        finally:
            if plan.header.type != ONEWAY:
                self._client_send_all(out.held)
        return reply

    def _remember_setting(self, name: str, body: bytes) -> None:
        """Keep a set_ugi or setMetaConf call that worked, to replay it on a new upstream connection (not on
        this one); a later setMetaConf of the same key replaces the earlier one."""
        if name == "set_ugi":
            self._session["set_ugi"] = body
        else:
            self._session[("setMetaConf", self._meta_conf_key(body))] = body

    @staticmethod
    def _meta_conf_key(body: bytes) -> str | bytes:
        """The key a setMetaConf call sets."""
        try:
            parsed = parse_header(body)
            assert parsed is not None
            return str(decode_args(ThriftHiveMetastore.setMetaConf_args, body, parsed[1]).key)
        except Exception:
            return body  # undecodable: replay it as it came

    def _forward(self, header: Header, body: bytes, result_class: Any, out: _Outbox) -> Reply:
        """Send one call upstream and pass its reply to ``out``, decoded as ``result_class`` if one is given;
        a failed upstream becomes a TApplicationException for the client."""
        replyless = header.name in REPLYLESS_METHODS
        for attempt in (1, 2):
            try:
                self._ensure_upstream()
            except UpstreamUnavailable as e:
                # While no metastore answers, the upstream's reachability says so once; one line per call would
                # be a storm.
                quiet = not self._upstream.reachability.reachable
                return self._fail(header, f"hivewire shim: {e}", out, quiet=quiet)
            try:
                self._send_upstream(body)
            except OSError as e:
                # Nothing complete reached that connection, so nothing ran: safe to try a fresh one once.
                self._close_upstream()
                if attempt == 1:
                    continue
                return self._fail(header, f"hivewire shim: upstream {self._up_uri} failed: {e}", out)
            break
        if replyless:
            return Reply(header, True)
        try:
            return self._relay(out.put, result_class)
        except _UpstreamFailed as e:
            uri = self._up_uri
            self._close_upstream()
            if out.held is None:
                if e.forwarded:
                    raise
            else:
                out.held.clear()  # part of a reply: the client gets the error instead
            return self._fail(
                header, f"hivewire shim: upstream {uri} failed during {header.name}: {e}", out, maybe_applied=True
            )

    def _fail(
        self, header: Header, message: str, out: _Outbox, *, maybe_applied: bool = False, quiet: bool = False
    ) -> Reply:
        log.log(logging.DEBUG if quiet else logging.WARNING, "client %s: %s", self.peer, message)
        if header.type != ONEWAY:
            out.put(
                self._framed_for_client(application_exception(header, TApplicationException.INTERNAL_ERROR, message))
            )
        return Reply(header, False, error=message, from_upstream=False, maybe_applied=maybe_applied)

    # -- upstream ---------------------------------------------------------------------------------------------
    def _ensure_upstream(self) -> None:
        if self._up is not None and not self._upstream_usable():
            log.info("client %s: upstream %s closed the connection; reconnecting", self.peer, self._up_uri)
            self._close_upstream()
        if self._up is not None:
            return
        sock, uri = self._upstream.connect()
        self._up, self._up_uri, self._up_replies = sock, uri, 0
        self._up_reader = MessageReader(sock, side=f"upstream {uri}", max_message_bytes=MAX_REPLY_VALUE_BYTES)
        log.debug("client %s: connected to upstream %s", self.peer, uri)
        try:
            for body in list(self._session.values()):
                self._send_upstream(body)
                self._relay(lambda piece: None, None)
        except (OSError, _UpstreamFailed) as e:
            self._close_upstream()
            raise UpstreamUnavailable(f"upstream {uri} failed while restoring the connection's settings: {e}") from e

    def _upstream_usable(self) -> bool:
        """False if the idle upstream connection was closed (e.g. the metastore restarted)."""
        assert self._up is not None and self._up_reader is not None
        if self._up_reader.buffered:
            return False  # bytes nobody asked for: the connection is out of step
        try:
            readable, _, _ = select.select([self._up], [], [], 0)
            if readable:
                return False  # EOF, a reset, or unexpected bytes: none is a usable idle connection
        except (OSError, ValueError):
            return False
        return True

    def _send_upstream(self, body: bytes) -> None:
        assert self._up is not None
        if self._upstream.frames:
            self._sendall(self._up, _I32.pack(len(body)), body)
        else:
            self._up.sendall(body)

    @staticmethod
    def _sendall(sock: socket.socket, head: bytes, body: bytes) -> None:
        if len(body) < 65536:
            sock.sendall(head + body)
        else:  # don't copy a large body to prepend four bytes
            sock.sendall(head)
            sock.sendall(body)

    def _close_upstream(self) -> None:
        up, self._up, self._up_reader = self._up, None, None
        if up is not None:
            with contextlib.suppress(OSError):
                up.close()

    # -- replies --------------------------------------------------------------------------------------------
    def _client_send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise ClientGone(str(e) or type(e).__name__) from e

    def _client_send_all(self, pieces: list[bytes] | None) -> None:
        if not pieces:
            return
        if len(pieces) == 1 or sum(map(len, pieces)) < 1 << 20:
            self._client_send(b"".join(pieces))  # one send for the usual small reply
        else:
            for piece in pieces:
                self._client_send(piece)

    def _framed_for_client(self, message: bytes) -> bytes:
        return frame(message) if self._framed else message

    def _relay(self, send: Callable[[bytes], None], result_class: Any) -> Reply:
        """Relay one reply from the upstream to ``send`` as it is read; decode it if ``result_class``."""
        r = self._up_reader
        assert r is not None
        r.message_start()
        forwarded = False

        def to_client(piece: bytes) -> None:
            nonlocal forwarded
            forwarded = True
            send(piece)

        collected: list[bytes] = []
        try:
            if self._upstream.frames:
                if self._framed:
                    r.begin(to_client)  # the length prefix goes through as is
                size = r.read_i32()
                if size <= 0:
                    raise WireError(f"frame length {size}")
                if not self._framed:
                    r.begin(to_client)
                start = r.offset
                header = r.read_header()
                reply = self._read_result(header, result_class)
                rest = size - (r.offset - start)
                if rest < 0:
                    raise WireError("a reply longer than its frame")
                r.skip_bytes(rest)
                r.finish()
            elif self._framed:  # buffered upstream, framed client: the frame needs the whole length first
                r.begin(collected.append)
                header = r.read_header()
                reply = self._read_result(header, result_class)
                r.finish()
                to_client(frame(b"".join(collected)))
            else:
                r.begin(to_client)
                header = r.read_header()
                reply = self._read_result(header, result_class)
                r.finish()
        except ClientGone:
            raise
        except PeerClosed as e:
            raise _UpstreamFailed(str(e) + self._first_reply_hint(), forwarded=forwarded) from e
        except (WireError, OSError, EOFError) as e:
            raise _UpstreamFailed(f"bad reply: {e}{self._first_reply_hint()}", forwarded=forwarded) from e
        except Exception as e:  # the C decoder's errors on a garbled reply
            raise _UpstreamFailed(f"bad reply: {e}{self._first_reply_hint()}", forwarded=forwarded) from e
        self._up_replies += 1
        return reply

    def _first_reply_hint(self) -> str:
        # A transport mismatch fails the first call on every connection; a metastore that dies does not
        # usually do so before its first reply on a fresh connection.
        if self._upstream.sasl is not None:
            return ""  # SASL frames every message: no transport setting to get wrong
        return _transport_hint(self._upstream.framed) if self._up_replies == 0 else ""

    def _read_result(self, header: Header, result_class: Any) -> Reply:
        r = self._up_reader
        assert r is not None
        if header.type == EXCEPTION:
            exc = TApplicationException()
            exc.read(TBinaryProtocol.TBinaryProtocol(r))
            return Reply(header, False, error=f"TApplicationException: {exc.message}")
        if result_class is None:
            if not self._upstream.frames:
                r.skip_struct()
            return Reply(header, True)
        return Reply.of(header, r.decode_struct(result_class))
