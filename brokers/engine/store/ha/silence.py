"""SilenceWatch: drop an HA connection whose peer has said nothing for too long.

Both ends of the HA stream read in a loop, thousands of reads a second at full speed. A timeout
around each read (``asyncio.timeout``) costs a timer scheduled and cancelled per read; this
watch costs one timer per connection: the reader notes each read (:meth:`heard`, a clock read),
and the timer, when it fires, either re-arms itself for the rest of the allowance or, when the
peer has been silent for the whole of it, marks the watch expired and aborts the transport.
The reader's pending read then ends (an empty read), and the reader raises its own "silent for
N s" error after seeing :attr:`expired`. A peer is thus dropped between ``limit_s`` and
``limit_s`` plus a timer's lateness after its last bytes, as the per-read timeout did.
"""

from __future__ import annotations

import asyncio


class SilenceWatch:
    """Abort ``transport`` once nothing was heard on it for ``limit_s``; use as a context manager."""

    def __init__(self, transport: asyncio.WriteTransport, limit_s: float) -> None:
        self._transport = transport
        self._limit = limit_s
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self.expired = False

    def __enter__(self) -> SilenceWatch:
        self._timer = self._loop.call_later(self._limit, self._check)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def heard(self) -> None:
        """The peer sent something just now."""
        self._last = self._loop.time()

    def _check(self) -> None:
        left = self._last + self._limit - self._loop.time()
        if left > 0:
            self._timer = self._loop.call_later(left, self._check)
            return
        self._timer = None
        self.expired = True
        self._transport.abort()
