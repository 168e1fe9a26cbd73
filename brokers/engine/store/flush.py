"""Flush services: put commit log data on disk, synchronously (group commit) or periodically.

SYNC_FLUSH (RocketMQ's ``GroupCommitService``): a writer appends its record, then asks for
"flush up to my record's end" and waits; nobody hears OK before their record is on disk.

- Writers on an event loop (the broker) are group-committed on that loop's own thread
  (:meth:`FlushCommitLogService.commit_on_loop`): the puts of one loop turn share one
  ``fdatasync``, run by a callback at the start of the next turn, as Redis does for
  ``appendfsync always``. Handing each commit to a thread and back costs two GIL handoffs and a
  wakeup of the loop, more than the ``fdatasync`` itself; the price is that the loop waits while
  the disk syncs.
- Other writers (threads, tools) submit a request to the flush thread, which takes *all* pending
  requests, issues one ``fdatasync`` per dirty segment (usually one) covering everything
  appended so far, and then completes every request it covered. Writers arriving while a sync
  runs queue up and share the next one, so N concurrent producers cost far fewer than N syncs.

ASYNC_FLUSH (``FlushRealTimeService``): the thread flushes every ``flush_interval_commitlog_ms``.

A :class:`PeriodicService` runs other periodic work (consume queues, index, checkpoint).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from typing import Any, Callable

from brokers.engine.common.latency_histogram import LatencyHistogram
from brokers.engine.store.commitlog import CommitLog

log = logging.getLogger(__name__)

AnyFuture = asyncio.Future[Any] | concurrent.futures.Future[Any]


def _resolve(items: list[tuple[asyncio.Future[Any], bool]]) -> None:
    for fut, ok in items:
        if not fut.done():
            fut.set_result(ok)


class FlushCommitLogService:
    """The commit log flush thread; ``sync=True`` is group commit, else periodic."""

    def __init__(
        self, commitlog: CommitLog, *, sync: bool, interval_ms: int, on_flushed: Callable[[], None] | None = None
    ) -> None:
        self.commitlog = commitlog
        self.sync = sync
        self._interval = interval_ms / 1000.0
        self._on_flushed = on_flushed
        self._cond = threading.Condition()
        self._requests: list[tuple[int, AnyFuture, asyncio.AbstractEventLoop | None]] = []
        self._loop_requests: dict[asyncio.AbstractEventLoop, list[tuple[int, asyncio.Future[Any]]]] = {}
        self._stopping = False
        self._thread = threading.Thread(
            target=self._run, name="GroupCommitService" if sync else "FlushRealTimeService", daemon=True
        )
        # Instrumentation (read by tests and runtime_info).
        self.fsync_count = 0  # fdatasync calls on commit log segments
        self.commit_count = 0  # flush rounds that synced something
        self.requests_completed = 0
        self.flush_latency = LatencyHistogram()  # seconds per flush round that synced something (/metrics)

    def start(self) -> None:
        """Start the thread; group commit first syncs what the log holds past its flushed position.

        After a crash, recovery leaves the flushed position at the start of the range it re-checked
        (the dead process may have left those bytes in the page cache only). A SYNC_FLUSH store
        serves and reports as on disk only what is, so that range is synced here, before the store
        opens for business: ``remainHowManyDataToFlush`` reads 0 from the first request on. A sync
        that fails latches as any other (the store opens unwritable, reads go on). The periodic
        service leaves the range to its first round, as ASYNC_FLUSH leaves every write; after a
        clean open there is nothing to sync.
        """
        if self.sync:
            self._flush()
        self._thread.start()

    def submit(self, next_offset: int, future: AnyFuture, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Ask for the log to be on disk up to ``next_offset``; ``future`` gets True/False.

        Pass ``loop`` for an asyncio future (it is completed through that loop).
        """
        with self._cond:
            if not self._stopping:
                self._requests.append((next_offset, future, loop))
                self._cond.notify()
                return
        # Shutting down: the thread may be gone, so flush on the caller's thread.
        self._complete([(next_offset, future, loop)], self._flush())

    def commit_on_loop(self, next_offset: int, future: asyncio.Future[Any]) -> None:
        """Complete ``future`` with True once the log is on disk up to ``next_offset`` (False when
        the disk failed), syncing on the future's own event loop at the start of its next turn;
        the requests of one turn share the sync."""
        loop = future.get_loop()
        with self._cond:
            pending = self._loop_requests.get(loop)
            if pending is None:
                pending = self._loop_requests[loop] = []
                loop.call_soon(self._commit_loop_requests, loop)
            pending.append((next_offset, future))

    async def wait_flushed(self, next_offset: int) -> bool:
        """Return True once the log is on disk up to ``next_offset``, False when the disk failed
        (group-committed on the running loop, see :meth:`commit_on_loop`)."""
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.commit_on_loop(next_offset, fut)
        return await fut

    def wait_flushed_blocking(self, next_offset: int, timeout_s: float) -> bool:
        """:meth:`wait_flushed` for a thread without a loop; False after ``timeout_s`` too."""
        fut: concurrent.futures.Future[bool] = concurrent.futures.Future()
        self.submit(next_offset, fut)
        try:
            return fut.result(timeout_s)
        except concurrent.futures.TimeoutError:
            return False

    def _commit_loop_requests(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._cond:
            requests = self._loop_requests.pop(loop, [])
        if not requests:
            return
        target = max(r[0] for r in requests)
        flushed = self._flush()
        if 0 <= flushed < target:  # appended between the snapshot and the sync? one more round
            flushed = self._flush()
        self.requests_completed += len(requests)
        for next_offset, fut in requests:
            if not fut.done():
                fut.set_result(flushed >= next_offset)

    def _flush(self) -> int:
        """Flush what is appended; return the flushed offset, or -1 when the disk failed (then
        and at every later call: the commit log keeps the first failure, see CommitLog.flush)."""
        started = time.monotonic()
        try:
            synced = self.commitlog.flush()
        except OSError:  # logged by the commit log, which tells the store (RunningFlags)
            return -1
        if synced:
            self.flush_latency.observe(time.monotonic() - started)
            self.fsync_count += synced
            self.commit_count += 1
            if self._on_flushed is not None:
                self._on_flushed()
        return self.commitlog.flushed_where

    def _complete(self, requests: list[Any], flushed: int) -> None:
        self.requests_completed += len(requests)  # before waking anyone who might read it
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool]]] = {}
        for next_offset, fut, loop in requests:
            ok = flushed >= next_offset
            if loop is None:
                if not fut.done():
                    try:
                        fut.set_result(ok)
                    except concurrent.futures.InvalidStateError:
                        pass
            else:
                by_loop.setdefault(loop, []).append((fut, ok))
        for loop, items in by_loop.items():
            try:
                loop.call_soon_threadsafe(_resolve, items)
            except RuntimeError:  # the loop is closed; nobody is waiting any more
                pass

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._requests and not self._stopping:
                    self._cond.wait(self._interval)
                requests, self._requests = self._requests, []
                stopping = self._stopping
            flushed = self._flush()
            if requests:
                target = max(r[0] for r in requests)
                if 0 <= flushed < target:  # appended after our snapshot? one more round
                    flushed = self._flush()
                self._complete(requests, flushed)
            if stopping:
                with self._cond:
                    if not self._requests:
                        return

    def shutdown(self) -> None:
        """Stop the thread after a last flush; pending requests are completed."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join()
        with self._cond:
            leftover, self._requests = self._requests, []
        if leftover:
            self._complete(leftover, self._flush())


class PeriodicService:
    """Run ``work`` every ``interval_ms`` on a daemon thread until ``shutdown`` (which does not run it
    again: the store's ``close`` runs its final flush itself, after every service stopped)."""

    def __init__(self, name: str, interval_ms: int, work: Callable[[], None]) -> None:
        self._interval = interval_ms / 1000.0
        self._work = work
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._work()
            except Exception:  # keep flushing; the next round may succeed
                log.exception("%s failed", self._thread.name)

    def shutdown(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
