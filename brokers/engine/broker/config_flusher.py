"""ConfigFlusher: coalesced writes of one config file, run in a thread off the event loop.

A burst of changes (a heartbeat auto-creating groups, say) used to rewrite and fsync the file
once per change on the event loop. Now each change calls :meth:`ConfigFlusher.request`; the
first schedules a write ``delay_s`` later and the changes made until then share it. The write
takes a snapshot on the loop (cheap: a dict copy of frozen values), then encodes and stores it
atomically (tmp + fsync + rename + fsync of the directory, as ``config_file`` does) in a thread.
A change made while a write runs is written by one more write after it. Durability is kept:
every change ends up on disk, ``delay_s`` plus one write later at most; :meth:`flush_now`
writes synchronously (at shutdown, or without a running loop, where ``request`` writes at once).
A write that fails (a full disk) is logged and remembered: :meth:`ConfigFlusher.retry` (the
controller calls it every few seconds) writes again until one succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

__all__ = ["ConfigFlusher"]

log = logging.getLogger("brokers.engine.broker")


class ConfigFlusher:
    """``snapshot()`` runs on the loop and returns a ``write`` callable that runs in a thread."""

    def __init__(
        self, snapshot: Callable[[], Callable[[], None]], *, delay_s: float = 0.1, name: str = "config"
    ) -> None:
        self._snapshot = snapshot
        self.delay_s = delay_s
        self.name = name
        self._lock = threading.Lock()  # one writer of the file at a time (thread or flush_now)
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._dirty = False
        self.writes = 0  # files written, for tests and stats
        self.write_failed = False  # the last write failed; retry() writes again

    def request(self) -> None:
        """Note a change: write it soon (at once when no event loop runs in this thread)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush_now()
            return
        self._dirty = True
        if self._timer is None and (self._task is None or self._task.done()):
            self._timer = loop.call_later(self.delay_s, self._start, loop)

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        while self._dirty:
            self._dirty = False
            write = self._snapshot()
            try:
                await asyncio.to_thread(self._write, write)
            except OSError as exc:
                if not self.write_failed:
                    log.error("%s: writing the config file failed: %s; the write is retried", self.name, exc)
                self.write_failed = True
                return
            except Exception:
                log.exception("%s: writing the config file failed; the write is retried", self.name)
                self.write_failed = True
                return

    def _write(self, write: Callable[[], None]) -> None:
        with self._lock:
            write()
            self.writes += 1
            if self.write_failed:
                log.info("%s: written after an earlier failure", self.name)
            self.write_failed = False

    def retry(self) -> None:
        """Write again if the last write failed (a full disk); nothing otherwise."""
        if self.write_failed:
            self.request()

    def flush_now(self) -> None:
        """Write the current state synchronously (a running thread write finishes first)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._dirty = False
        self._write(self._snapshot())

    async def wait_idle(self) -> None:
        """Wait until no change is waiting to be written (tests, orderly shutdown)."""
        while self._timer is not None or (self._task is not None and not self._task.done()):
            if self._task is not None and not self._task.done():
                await asyncio.shield(self._task)
            else:
                await asyncio.sleep(self.delay_s / 2 or 0.001)
