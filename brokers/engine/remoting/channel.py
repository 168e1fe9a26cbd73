"""ChannelContext: one TCP connection carrying requests both ways, shared by server and client.

Each connection has one read loop.  A frame that is a response completes the pending
``invoke`` with the same opaque; a frame that is a request runs its handler in a task of its own
(a long-polling pull or a slow handler never holds up the other requests on the connection).

Writes are coalesced by a :class:`~brokers.engine.remoting.frame_writer.FrameWriter` (a few
``send`` calls for a burst of pipelined frames); a writer waits only while the peer is not
reading. Closing the connection first hands the queued frames to the transport.

Bad input is answered, never stored or dispatched:

- malformed header (bad JSON, truncated binary header): SYSTEM_ERROR with a remark, answered to
  the opaque recovered from the header bytes (0 when none); the length framing was intact, so the
  connection keeps serving;
- frame longer than ``max_frame_size``: only its header is read, the body is skipped in chunks
  without buffering, and the request is answered SYSTEM_ERROR; the connection keeps serving;
- header length larger than the frame, or a length below 4: answered, then the connection is
  closed (the stream is out of step);
- end of stream in the middle of a frame: the connection just closes.

A server's :class:`~brokers.engine.remoting.request_guard.RequestGuard` sees each request first;
a refused one is answered NO_PERMISSION with the guard's remark and nothing else runs. On a
connection not yet established, each refusal also holds the reading of its next request back, 10 ms
after the first and twice as long after each one more, up to 1 s (``REFUSED_HOLD_*``): a peer sending
requests it may not make (unsigned, badly signed, or replayed) again and again gets a handful answered,
then one a second, instead of as many as the server can answer. A connection that has authenticated
is never held (a client refused one topic among many keeps its pace).
A server's connection is *established* once a request of its passed the guard (with no guard: once
it sent a decoded request); until then it counts against its server's unauthenticated caps and
budget (``budget.py``, ``server.py``). A server's connections also enforce its :class:`~brokers.engine.remoting.limits.ConnectionLimits`
(client connections have none): a frame not complete within the receive deadline closes the
connection (the :mod:`~brokers.engine.remoting.watchdog` checks); a header over the size cap or
nested too deep is answered SYSTEM_ERROR undecoded; the read loop pauses while the connection's
requests in flight are at the cap; unread responses past the queued-bytes cap abort it.

Requests sent on a connection this side dialed use the process's serialize type
(:func:`~brokers.engine.remoting.command.request_serialize_type`); on a connection the peer dialed,
JSON until the peer has sent a frame with the ROCKETMQ binary header (a client that reads only JSON
never receives one), see :meth:`ChannelContext.request_serialize_type`. Answers always go in the
serialize type of the request they answer.

Unknown request codes get REQUEST_CODE_NOT_SUPPORTED (remark `` request type <code> not
supported``, as the Java broker writes it); oneway requests never get a reply, and responses with
an opaque nobody waits for are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from brokers.engine.common.constants import MAX_FRAME_SIZE
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting import command as _command
from brokers.engine.remoting.budget import BufferBudget
from brokers.engine.remoting.command import (
    FLAG_ONEWAY,
    FLAG_RESPONSE,
    HEADER_WORD,
    SERIALIZE_JSON,
    SERIALIZE_ROCKETMQ,
    RemotingCommand,
    next_opaque,
    salvage_ids,
)
from brokers.engine.remoting.eager_start import start_eagerly
from brokers.engine.remoting.errors import (
    RemotingBodyTooLargeError,
    RemotingConnectError,
    RemotingError,
    RemotingProtocolError,
    RemotingSendRequestError,
    RemotingTimeoutError,
)
from brokers.engine.remoting.frame_reader import FrameReader
from brokers.engine.remoting.frame_writer import FrameWriter
from brokers.engine.remoting.request_guard import RequestGuard
from brokers.engine.remoting.limits import ConnectionLimits, header_refusal, limit_log
from brokers.engine.remoting.request_stats import ACL_REFUSAL, request_stats
from brokers.engine.remoting.watchdog import idle_watchdog as idle_watchdog  # re-exported

log = logging.getLogger("brokers.engine.remoting")

UNREAD_LINGER_S = 1.0  # how long a connection closed on an unread body waits for its peer to read the answer
REFUSED_HOLD_FIRST_S = 0.01  # before reading the next request after a first refusal (not established)
REFUSED_HOLD_MAX_S = 1.0  # the hold doubles with each further refusal, up to this


def next_refusal_hold(hold: float) -> float:
    """The hold after one more refusal, given the one before (0: none yet): REFUSED_HOLD_FIRST_S, doubling
    up to REFUSED_HOLD_MAX_S (the gRPC endpoint's RefusalHold keeps the same schedule)."""
    return min(REFUSED_HOLD_MAX_S, hold * 2 or REFUSED_HOLD_FIRST_S)


Handler = Callable[["ChannelContext", RemotingCommand], Awaitable["RemotingCommand | None"]]

_channel_ids = itertools.count(1)


def format_peer(peer: object) -> str:
    """Render a socket peer name as RocketMQ's ``ip:port`` (IPv4-mapped IPv6 shown as IPv4)."""
    if isinstance(peer, tuple) and len(peer) >= 2:
        host = str(peer[0])
        if host.startswith("::ffff:") and "." in host:
            host = host[7:]
        return f"{host}:{peer[1]}"
    return str(peer) if peer else "unknown"


def _extra_info(writer: asyncio.StreamWriter, name: str) -> object:
    """``writer.get_extra_info(name)``, or None when the transport lost its socket already (a peer
    that reset the connection at once: uvloop then raises AttributeError)."""
    try:
        return writer.get_extra_info(name)
    except (AttributeError, OSError):
        return None


class ChannelContext:
    """One connection: send requests on it, answer the peer's requests, close it."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        lookup: Callable[[int], Handler | None],
        on_closed: Callable[[ChannelContext], None] | None = None,
        max_frame_size: int = MAX_FRAME_SIZE,
        name: str = "remoting",
        guard: RequestGuard | None = None,
        limits: ConnectionLimits | None = None,
        dialed: bool = False,
        budget: BufferBudget | None = None,
        on_established: Callable[[ChannelContext], None] | None = None,
        body_limits: Mapping[int, tuple[int, str]] | None = None,
    ) -> None:
        self.id = next(_channel_ids)
        self.dialed = dialed  # True: this side opened the connection (a client's); False: a server accepted it
        self.peer_sent_binary = False  # the peer has sent a frame with the ROCKETMQ binary header
        self.name = name
        self.remote_addr = format_peer(_extra_info(writer, "peername"))
        self.local_addr = format_peer(_extra_info(writer, "sockname"))
        self.max_frame_size = max_frame_size
        self.limits = limits  # None: a client's connection, no limits
        self.attributes: dict[str, object] = {}  # owner data (e.g. a client id); never read here
        self.closed = False
        self._writer = writer
        self._reader = reader
        self.established = False  # a request of this peer passed the guard (server side; see the module docstring)
        self._refused_hold_s = 0.0  # the next hold after a refusal before establishing (0: none yet)
        self._read_after = 0.0  # loop time before which the next request is not read
        self._budget = budget
        self._on_established = on_established
        self._frames_in = FrameReader(
            reader,
            max_frame_size=max_frame_size,
            name=self,
            max_header_size=limits.max_header_size if limits else None,
            reserve=(lambda size: budget.reserve(self, size)) if budget is not None else None,
            release=(lambda: budget.release(self)) if budget is not None else None,
            body_limits=body_limits,
        )
        self._frames = FrameWriter(writer, on_written=self._written, on_failed=self._write_failed)
        self._lookup = lookup
        self._guard = guard
        self._on_closed = on_closed
        self._pending: dict[int, asyncio.Future[RemotingCommand]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()
        self.last_activity = self.opened_at = self._loop.time()
        self._done = asyncio.Event()

    def __repr__(self) -> str:
        return f"<ChannelContext #{self.id} {self.name} {self.local_addr}->{self.remote_addr}{' closed' if self.closed else ''}>"

    # -- public API ----------------------------------------------------------------------------

    def request_serialize_type(self) -> int:
        """The serialize type of a request this side starts on the connection.

        On a connection we dialed, the process's (:data:`~brokers.engine.remoting.command.REQUEST_SERIALIZE_TYPE`).
        On one the peer dialed, the binary header only when the process uses it and either the
        peer has sent it on this connection (so it reads it) or ``GANTRY_SERIALIZE_TYPE=ROCKETMQ``
        forces it; JSON otherwise, as Apache's servers send their own requests.
        """
        preferred = _command.REQUEST_SERIALIZE_TYPE
        if self.dialed or preferred != SERIALIZE_ROCKETMQ:
            return preferred
        if self.peer_sent_binary or _command.SERIALIZE_FORCED == SERIALIZE_ROCKETMQ:
            return SERIALIZE_ROCKETMQ
        return SERIALIZE_JSON

    async def invoke(self, request: RemotingCommand, timeout_s: float = 3.0) -> RemotingCommand:
        """Send a request on this connection and wait for the response with the same opaque."""
        if self.closed:
            raise RemotingConnectError(f"connection to {self.remote_addr} is closed", self.remote_addr)
        request.flag &= ~(FLAG_RESPONSE | FLAG_ONEWAY)
        request.serialize_type = self.request_serialize_type()
        if request.opaque in self._pending:
            request.opaque = next_opaque()
        data = request.encode(self.max_frame_size)
        opaque = request.opaque
        loop = self._loop
        future: asyncio.Future[RemotingCommand] = loop.create_future()
        self._pending[opaque] = future
        timer = loop.call_at(loop.time() + timeout_s, self._expire, future, request.code, opaque, timeout_s)
        try:
            self._frames.write(data)
            self._check_queued(len(data))
            if self._frames.congested:
                waits: set[asyncio.Future[Any]] = {future, loop.create_task(self._drain_quietly())}
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            return await future
        finally:
            timer.cancel()
            self._pending.pop(opaque, None)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved here or by the await above; never "never retrieved"

    def _expire(self, future: asyncio.Future[RemotingCommand], code: int, opaque: int, timeout_s: float) -> None:
        if not future.done():
            future.set_exception(
                RemotingTimeoutError(
                    f"no response to request code {code} (opaque {opaque}) from {self.remote_addr} within {timeout_s}s",
                    self.remote_addr,
                    timeout_s,
                )
            )

    async def invoke_oneway(self, request: RemotingCommand) -> None:
        """Send a request flagged ONEWAY; nothing is awaited but the write."""
        if self.closed:
            raise RemotingConnectError(f"connection to {self.remote_addr} is closed", self.remote_addr)
        request.mark_oneway()
        request.serialize_type = self.request_serialize_type()
        await self._write(request.encode(self.max_frame_size))

    async def write_response(self, response: RemotingCommand) -> bool:
        """Write a response (e.g. a long-polling pull answered later); False if it could not be sent.

        A response too large for a frame is replaced by SYSTEM_ERROR saying so.
        """
        response.mark_response()
        try:
            data = response.encode(self.max_frame_size)
        except RemotingProtocolError as exc:
            log.warning("%s: cannot send response code %s: %s", self, response.code, exc)
            data = RemotingCommand(
                code=ResponseCode.SYSTEM_ERROR,
                opaque=response.opaque,
                flag=FLAG_RESPONSE,
                remark=f"response not sent: {exc}",
            ).encode()
        try:
            self._queue(data)
            del data  # the transport holds its own copy; a writer waiting below keeps none
            if self._frames.congested:
                await self._drain()
            return True
        except RemotingError as exc:
            log.debug("%s: response to opaque %s dropped: %s", self, response.opaque, exc)
            return False

    def close(self) -> None:
        """Close the connection (after handing queued frames to the transport); pending invokes
        fail with RemotingConnectError."""
        if not self.closed:
            self._frames.close()
            self.closed = True
            self._writer.close()
            if self._budget is not None:
                self._budget.forget(self)  # a frame waiting for room fails: its read loop ends
        self._fail_pending()

    def abort(self) -> None:
        """Close at once, dropping queued frames (a peer that does not read must not keep them)."""
        if not self.closed:
            self._writer.transport.abort()
        self.close()

    def stop_reading(self) -> None:
        """Read nothing more from the peer: its bytes stay in the kernel's buffers, then its sends wait."""
        if not self.closed:
            cast(asyncio.Transport, self._writer.transport).pause_reading()

    async def wait_closed(self) -> None:
        await self._done.wait()

    @property
    def queued_bytes(self) -> int:
        """Bytes of frames written but not yet taken by the peer."""
        return self._frames.queued_bytes

    def _establish(self) -> None:
        if self._budget is not None:
            self._budget.authenticated(self)
        self.established = True
        if self._on_established is not None:
            self._on_established(self)

    @property
    def in_flight(self) -> int:
        """Requests from the peer whose handlers are still running."""
        return len(self._tasks)

    # -- read loop -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read frames until the connection ends, then clean up and tell the owner."""
        try:
            await self._read_loop()
        except (ConnectionError, OSError) as exc:
            log.debug("%s: connection error: %s", self, exc)
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug here must not take the server down with it
            log.exception("%s: read loop failed", self)
        finally:
            self.close()
            if self._budget is not None:
                self._budget.release(self)
            self._done.set()
            if self._on_closed is not None:
                try:
                    self._on_closed(self)
                except Exception:
                    log.exception("%s: close callback failed", self)
            # The reader's and writer's callbacks point back here: cut them, so a closed connection is
            # freed by reference counting at once instead of waiting, with its transport and buffers,
            # for a full collection (a flood of short connections made thousands per second of them).
            self._frames_in.detach()
            self._frames.detach()

    async def _read_loop(self) -> None:
        frames = self._frames_in
        limits = self.limits
        while not self.closed:
            held = self._read_after - self._loop.time()
            if held > 0:
                await asyncio.sleep(held)
                continue
            try:
                data = await frames.read()
            except RemotingProtocolError as exc:  # answered; the connection serves on unless fatal
                await self._answer_error(exc.opaque, exc.flag, str(exc), exc)
                if isinstance(exc, RemotingBodyTooLargeError):
                    await self._linger_unread()
                if exc.fatal:
                    return
                continue
            if data is None:
                return
            self.last_activity = self._loop.time()
            if limits is not None:
                remark = header_refusal(data, limits)
                if remark is not None:
                    (word,) = HEADER_WORD.unpack_from(data)
                    opaque, flag = salvage_ids(data[4 : 4 + (word & 0xFFFFFF)], (word >> 24) & 0xFF)
                    limit_log.refused("header", self.remote_addr, "%s: %s; answered SYSTEM_ERROR", self, remark)
                    await self._answer_error(opaque, flag, remark)
                    continue
            try:
                cmd = RemotingCommand.decode(data)
            except RemotingProtocolError as exc:
                await self._answer_error(exc.opaque, exc.flag, str(exc))
                if exc.fatal:
                    return
                continue
            if cmd.serialize_type == SERIALIZE_ROCKETMQ:
                self.peer_sent_binary = True
            self._dispatch(cmd)
            if limits is not None and len(self._tasks) >= limits.max_in_flight_per_connection:
                await self._wait_in_flight_below(limits.max_in_flight_per_connection)

    @property
    def frame_started_at(self) -> float | None:
        """Loop time of the first byte of the frame being read; None between frames."""
        return self._frames_in.frame_started_at

    async def _wait_in_flight_below(self, limit: int) -> None:
        """Stop reading until fewer than ``limit`` of this connection's requests are running."""
        limit_log.refused(
            "in-flight", self.remote_addr, "%s: %d requests in flight; reading paused", self, len(self._tasks)
        )
        while len(self._tasks) >= limit and not self.closed:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)

    async def _linger_unread(self) -> None:
        """Before closing on a body left unread: send our FIN after the answer and give the peer up to
        ``UNREAD_LINGER_S`` to read it and close. Closing at once, with the body unread in our receive
        buffer, sends a reset that can destroy the answer in the peer's buffer before it is read."""
        try:
            if self._writer.can_write_eof():
                self._writer.write_eof()
        except (OSError, RuntimeError):
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._peer_closed(), UNREAD_LINGER_S)

    async def _peer_closed(self) -> None:
        while not (self._writer.transport.is_closing() or self._reader.at_eof()):
            await asyncio.sleep(0.05)

    async def _answer_error(
        self, opaque: int | None, flag: int, remark: str, error: RemotingError | None = None
    ) -> None:
        """Answer a frame that could not be decoded: fail our own request, or reply to the peer's."""
        if flag & FLAG_RESPONSE:
            future = self._pending.get(opaque) if opaque is not None else None
            if future is not None and not future.done():
                future.set_exception(error or RemotingProtocolError(remark, opaque=opaque))
            else:
                log.warning("%s: undecodable response dropped: %s", self, remark)
            return
        if self.limits is not None:
            limit_log.refused(
                "bad-frame", self.remote_addr, "%s: bad request frame (opaque %s): %s", self, opaque, remark
            )
        else:
            log.warning("%s: bad request frame (opaque %s): %s", self, opaque, remark)
        if flag & FLAG_ONEWAY:
            return
        reply = RemotingCommand(code=ResponseCode.SYSTEM_ERROR, opaque=opaque or 0, flag=FLAG_RESPONSE, remark=remark)
        await self.write_response(reply)

    def _dispatch(self, cmd: RemotingCommand) -> None:
        if cmd.is_response:
            future = self._pending.get(cmd.opaque)
            if future is not None and not future.done():
                future.set_result(cmd)
            else:
                log.debug("%s: response with unknown opaque %s dropped", self, cmd.opaque)
            return
        # Start the handler at once: most requests (a send to an ASYNC_FLUSH store, a heartbeat)
        # finish without ever waiting, and then cost no task and no extra turn of the loop. One
        # that waits (a long-polling pull, a synchronous flush or double write) goes on in a task.
        try:
            task = start_eagerly(self._loop, self._serve(cmd))
        except Exception:  # _serve answers its handler's failures; this is a bug in it
            log.exception("%s: request code %s failed", self, cmd.code)
            return
        if task is None:
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, request: RemotingCommand) -> None:
        if self._guard is not None:
            remark = self._guard.refusal(request, self.remote_addr)
            if remark is not None:
                request_stats.refused(ACL_REFUSAL)
                if not self.established:
                    self._refused_hold_s = next_refusal_hold(self._refused_hold_s)
                    self._read_after = self._loop.time() + self._refused_hold_s
                if not request.is_oneway:
                    await self.write_response(request.response(ResponseCode.NO_PERMISSION, remark))
                return
        if not self.established:
            self._establish()
        handler = self._lookup(request.code)
        if handler is None:
            log.info("%s: request code %s not supported", self, request.code)
            if request.is_oneway:
                return
            response: RemotingCommand | None = request.response(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {request.code} not supported"
            )
        else:
            started = self._loop.time()
            try:
                response = await handler(self, request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning(
                    "%s: handler for request code %s failed: %s",
                    self,
                    request.code,
                    exc,
                    exc_info=not isinstance(exc, RemotingError),
                )
                response = request.response(ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__)
            request_stats.observe(request.code, self._loop.time() - started)
        if response is None or request.is_oneway:
            return
        await self.write_response(response)

    # -- internals -----------------------------------------------------------------------------

    def _written(self) -> None:
        self.last_activity = self._loop.time()

    def _write_failed(self, exc: BaseException) -> None:
        log.debug("%s: write failed: %s", self, exc)
        self.close()

    async def _drain(self) -> None:
        """Wait until the peer has read enough of what is queued."""
        try:
            await self._frames.drain()
        except (ConnectionError, OSError, RuntimeError) as exc:
            self.close()
            raise RemotingSendRequestError(f"write to {self.remote_addr} failed: {exc}", self.remote_addr) from exc

    async def _drain_quietly(self) -> None:
        try:
            await self._drain()
        except RemotingError:
            pass  # the connection is closed, which failed every pending invoke

    async def _write(self, data: bytes) -> None:
        """Queue a frame; wait only while the transport's buffer is over its high-water mark."""
        self._queue(data)
        del data
        if self._frames.congested:
            await self._drain()

    def _queue(self, data: bytes) -> None:
        """Hand a frame to the writer (RemotingSendRequestError when closed or over the queued-bytes cap)."""
        if self.closed:
            raise RemotingSendRequestError(f"connection to {self.remote_addr} is closed", self.remote_addr)
        self._frames.write(data)
        self._check_queued(len(data))

    def _check_queued(self, frame_size: int) -> None:
        """Abort the connection when its unread frames pass the queued-bytes cap (one frame always fits)."""
        limits = self.limits
        if limits is None:
            return
        queued = self._frames.queued_bytes
        if queued > limits.max_queued_response_bytes and queued > frame_size:
            limit_log.refused(
                "queued-bytes",
                self.remote_addr,
                "%s: %d bytes of responses unread (cap %d); connection closed",
                self,
                queued,
                limits.max_queued_response_bytes,
            )
            self.abort()
            raise RemotingSendRequestError(
                f"connection to {self.remote_addr} closed: too many unread responses", self.remote_addr
            )

    def _fail_pending(self) -> None:
        for opaque, future in list(self._pending.items()):
            if not future.done():
                future.set_exception(
                    RemotingConnectError(
                        f"connection to {self.remote_addr} closed before the response (opaque {opaque})",
                        self.remote_addr,
                    )
                )

    async def cancel_tasks(self, grace_s: float = 0.0) -> None:
        """Wait up to ``grace_s`` for running handlers, then cancel the rest (used on shutdown)."""
        tasks = list(self._tasks)
        if tasks and grace_s > 0:
            await asyncio.wait(tasks, timeout=grace_s)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
