"""FrameReader: whole frames from one connection's StreamReader, checked before they are buffered.

``read()`` returns the next frame without its length prefix (header word, header, body), None at
the end of the stream, or raises :class:`~brokers.engine.remoting.errors.RemotingProtocolError`
for a frame to be answered as an error:

- a length below 4: fatal (the stream is out of step);
- a length over ``max_frame_size``: only the header is read, the body is skipped in chunks
  without being buffered, and RemotingTooLargeError (not fatal) carries the request's opaque;
  a header that does not fit the frame, or over ``max_header_size``, is fatal;
- a first byte 0x16 (a TLS ClientHello; as a length it would be over 352 MiB): end of stream;
- with ``body_limits`` (request code -> max body bytes and the setting's name, e.g. HEART_BEAT's
  ``max_heartbeat_bytes``), a frame large enough to break one of them has its header read and decoded
  first; if its code's limit is broken, RemotingBodyTooLargeError (fatal: the body is not read, so the
  stream is out of step) carries the opaque to answer before the connection closes. Smaller frames are
  read in one piece as before.

With ``reserve``/``release`` (a server's :class:`~brokers.engine.remoting.budget.BufferBudget`), a
frame's declared size is reserved before its bytes are read and released once they are; a
reservation may make the frame wait for room (``reserve`` returns an awaitable: nothing more is read
until it is done), and one refused (fatal RemotingProtocolError) ends the connection.

``frame_started_at`` is the loop time of a frame's first byte while the frame is being read
(None between frames), so a watchdog can close a connection whose frame trickles in; the time
waiting for a frame's first byte is idle time and is not counted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping

from brokers.engine.remoting.command import FLAG_RESPONSE, HEADER_WORD, LENGTH_PREFIX, RemotingCommand, salvage_ids
from brokers.engine.remoting.errors import RemotingBodyTooLargeError, RemotingProtocolError, RemotingTooLargeError

__all__ = ["FrameReader"]

log = logging.getLogger("brokers.engine.remoting")

_DISCARD_CHUNK = 64 * 1024  # oversize bodies are skipped this many bytes at a time
_TLS_HANDSHAKE = 0x16  # first byte of a TLS ClientHello


class FrameReader:
    """Read frames of at most ``max_frame_size`` bytes; ``name`` labels the log lines."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        *,
        max_frame_size: int,
        max_header_size: int | None = None,
        name: object = "connection",
        reserve: Callable[[int], Awaitable[None] | None] | None = None,
        release: Callable[[], None] | None = None,
        body_limits: Mapping[int, tuple[int, str]] | None = None,
    ) -> None:
        self._reader = reader
        self._reserve = reserve
        self._release = release
        self.max_frame_size = max_frame_size
        self.max_header_size = max_header_size
        self.name = name
        self.frame_started_at: float | None = None
        self._loop = asyncio.get_running_loop()
        self._first = True
        self._body_limits = body_limits or {}

    def detach(self) -> None:
        """Drop the callbacks and the owner's name (the connection ended): no reference back to the owner."""
        self._reserve = self._release = None
        self.name = repr(self.name)

    def _body_threshold(self) -> int | None:
        """The smallest body limit (frames at most this large are read without a look at their code)."""
        return min(limit for limit, _ in self._body_limits.values()) if self._body_limits else None

    async def read(self) -> bytes | None:
        """The next frame (header word onwards), or None when the stream ended; see the module docstring."""
        reader = self._reader
        prefix = await reader.read(4)
        if not prefix:
            return None
        self.frame_started_at = self._loop.time()
        try:
            if len(prefix) < 4:
                prefix += await reader.readexactly(4 - len(prefix))
            if self._first and prefix[0] == _TLS_HANDSHAKE and self.max_frame_size < 0x16000000:
                log.warning("%s: TLS handshake received; only plain TCP is served", self.name)
                return None
            self._first = False
            (total,) = LENGTH_PREFIX.unpack(prefix)
            if total < 4:
                raise RemotingProtocolError(f"frame length {total} is shorter than the 4-byte header word", fatal=True)
            if total > self.max_frame_size:
                await self._skip_oversize(total)
            threshold = self._body_threshold()
            check_code = threshold is not None and total > threshold
            if self._reserve is None:
                data = await (self._read_checked(total) if check_code else reader.readexactly(total))
            else:
                waiting = self._reserve(total)
                try:
                    if waiting is not None:  # no room yet: the frame's bytes stay unread until there is
                        await waiting
                    data = await (self._read_checked(total) if check_code else reader.readexactly(total))
                finally:
                    self._release()  # type: ignore[misc]
        except asyncio.IncompleteReadError as exc:
            log.info("%s: connection closed in the middle of a frame (%d bytes read)", self.name, len(exc.partial))
            return None
        self.frame_started_at = None
        return data

    async def _read_checked(self, total: int) -> bytes:
        """A frame that may break its code's body limit: its header first, then (within the limit) its body."""
        reader = self._reader
        word_bytes = await reader.readexactly(4)
        (word,) = HEADER_WORD.unpack(word_bytes)
        header_length = word & 0xFFFFFF
        if header_length > min(total - 4, self.max_header_size or self.max_frame_size):
            raise RemotingProtocolError(
                f"header length {header_length} does not fit a frame of {total} bytes", fatal=True
            )
        header = await reader.readexactly(header_length)
        body_length = total - 4 - header_length
        try:
            head = RemotingCommand.decode_header((word >> 24) & 0xFF, header)
        except RemotingProtocolError:
            head = None  # read on: the channel answers the undecodable header as before
        is_request = head is not None and not head.flag & FLAG_RESPONSE
        limit = self._body_limits.get(head.code) if head is not None and is_request else None
        if head is not None and limit is not None and body_length > limit[0]:
            self.frame_started_at = None
            raise RemotingBodyTooLargeError(head.code, body_length, *limit, opaque=head.opaque, flag=head.flag)
        return word_bytes + header + await reader.readexactly(body_length)

    async def _skip_oversize(self, total: int) -> None:
        """Read the header of a frame over the limit, skip its body, raise the error to answer."""
        reader = self._reader
        (word,) = HEADER_WORD.unpack(await reader.readexactly(4))
        header_length = word & 0xFFFFFF
        header_cap = min(total - 4, self.max_frame_size, self.max_header_size or self.max_frame_size)
        if header_length > header_cap:
            raise RemotingProtocolError(
                f"header length {header_length} does not fit a frame of {total} bytes", fatal=True
            )
        header = await reader.readexactly(header_length)
        remaining = total - 4 - header_length
        while remaining:
            remaining -= len(await reader.readexactly(min(_DISCARD_CHUNK, remaining)))
        self.frame_started_at = None
        opaque: int | None
        code: int | None
        try:
            head = RemotingCommand.decode_header((word >> 24) & 0xFF, header)
            opaque, flag, code = head.opaque, head.flag, head.code
        except RemotingProtocolError:
            (opaque, flag), code = salvage_ids(header, (word >> 24) & 0xFF), None
        error = RemotingTooLargeError(total, self.max_frame_size, opaque=opaque, flag=flag)
        log.warning("%s: %s (request code %s, opaque %s)", self.name, error, code, opaque)
        raise error
