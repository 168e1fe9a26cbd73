"""FrameWriter: coalesced writes of whole frames to one connection.

A frame is queued whole. The first frame of a turn of the event loop goes to the transport at
once; the frames queued after it in the same turn go together at the end of the turn, or as
soon as FLUSH_FRAMES of them (or FLUSH_BYTES) wait. A burst of pipelined requests or responses
thus costs a few ``send`` calls instead of one each, while the peer can start on the first frame
of the burst as this side still works on the rest (flushing only at the end of the turn made the
two sides take turns over whole bursts). Writers wait only when the transport's buffer is over
its high-water mark, i.e. when the peer is not reading.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["FLUSH_BYTES", "FLUSH_FRAMES", "FrameWriter"]

FLUSH_FRAMES = 16  # frames queued in one turn before they are written anyway
FLUSH_BYTES = 16 * 1024  # bytes likewise: a frame this large (a pull response) goes out on its own


class FrameWriter:
    """Queue frames for one StreamWriter's transport; see the module docstring for when they go out.

    ``on_written()`` is called after each write to the transport; ``on_failed(exc)`` when the
    transport refuses a write (the owner closes the connection).
    """

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        *,
        on_written: Callable[[], None],
        on_failed: Callable[[BaseException], None],
    ) -> None:
        self._writer = writer
        self._transport = writer.transport
        self._high_water = writer.transport.get_write_buffer_limits()[1]
        self._loop = asyncio.get_running_loop()
        self._on_written = on_written
        self._on_failed = on_failed
        self._out: list[bytes] = []
        self._out_bytes = 0
        self._turn_started = False
        self._closed = False

    def write(self, frame: bytes) -> None:
        """Queue one whole frame (written at once if it is the first of this loop turn)."""
        out = self._out
        out.append(frame)
        self._out_bytes += len(frame)
        if not self._turn_started:
            self._turn_started = True
            self._loop.call_soon(self._end_turn)
            self.flush()
        elif len(out) >= FLUSH_FRAMES or self._out_bytes >= FLUSH_BYTES:
            self.flush()

    @property
    def congested(self) -> bool:
        """Whether queued and unsent bytes exceed the transport's high-water mark."""
        return self._out_bytes + self._transport.get_write_buffer_size() > self._high_water

    @property
    def queued_bytes(self) -> int:
        """Bytes queued here and in the transport, not yet taken by the socket."""
        return self._out_bytes + self._transport.get_write_buffer_size()

    def _end_turn(self) -> None:
        self._turn_started = False
        self.flush()

    def flush(self) -> None:
        """Hand the queued frames to the transport in one write."""
        out = self._out
        if not out or self._closed:
            return
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
        self._out_bytes = 0
        try:
            self._transport.write(data)
        except (ConnectionError, OSError, RuntimeError) as exc:
            self._on_failed(exc)
            return
        self._on_written()

    async def drain(self) -> None:
        """Write what is queued, then wait until the transport's buffer is below its low-water mark.

        Raises ConnectionError/OSError/RuntimeError as StreamWriter.drain does.
        """
        self.flush()
        await self._writer.drain()

    def close(self) -> None:
        """Write what is queued; later frames are dropped (the owner closes the transport)."""
        self.flush()
        self._closed = True

    def detach(self) -> None:
        """Drop the owner's callbacks (the connection ended): no reference back to the owner."""
        self._on_written = self._on_failed = _ignore


def _ignore(*_: object) -> None:
    pass
