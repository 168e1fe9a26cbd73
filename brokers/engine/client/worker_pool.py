"""WorkerPool: the consume services' threads, at the cost of one queue put per task.

``concurrent.futures.ThreadPoolExecutor`` builds a Future, a work item, a condition and a semaphore
round trip for every task; a push consumer hands the pool one task per message
(``consume_message_batch_max_size`` = 1, RocketMQ's default), and that bookkeeping was about a third
of the consumer's CPU per message (docs/benchmarks.md, the consume pool's entry of 2026-11-24). Here
a task is a ``(fn, args)`` tuple on a ``queue.SimpleQueue`` (C), taken by up to ``max_workers``
daemon threads. Nobody waits on a task's result, so there is none; an exception a task raises is
logged with the pool's name, not kept in an unread Future.

How many threads: RocketMQ's pool keeps ``consumeThreadMax`` threads, which costs nothing in
Java; in Python every extra runnable thread fights for the GIL, and a listener that returns in
microseconds ran about a third slower on 20 threads than on one (docs/benchmarks.md). So the pool
starts its first thread with the first task and adds threads only where they help:

- when its tasks mostly wait (I/O: the share of a task's wall time its thread spent off the CPU,
  averaged over recent tasks, is above IO_BOUND): a new thread whenever every thread is busy or
  already has a task waiting for it, as a fixed pool would have one;
- when nothing was taken off the queue for ``stall_s`` while tasks wait (every thread is held
  up, whatever by: a slow call before the pool had measured anything, a lock, a long task): as
  many threads as tasks wait, at once.

A listener that keeps up on the threads it has therefore stays on them; one that waits on I/O
gets its threads as the work arrives.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["IO_BOUND", "STALL_S", "WorkerPool"]

log = logging.getLogger("brokers.engine.client")

_STOP = None  # one per thread: the thread exits when it takes it
IO_BOUND = 0.5  # a pool whose tasks spend more than this share of their time off the CPU grows freely
STALL_S = 0.02  # nothing taken for this long while tasks wait: start threads for them (well above
# the GIL switch interval, 5 ms: a thread waiting that long for the GIL is not held up)
_IO_WEIGHT = 0.1  # weight of the newest task in the moving average of the off-CPU share


class WorkerPool:
    """Run ``submit``-ted calls on at most ``max_workers`` threads named ``<name>_<n>``."""

    def __init__(self, max_workers: int, name: str, *, stall_s: float = STALL_S) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self.name = name
        self.stall_s = stall_s
        self._tasks: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._busy = 0
        self._taken = 0  # tasks taken so far: the watcher's mark of progress
        self.io_share: float | None = None  # moving average of the tasks' off-CPU share (None: none ran yet)
        self._closed = False
        self._wake = threading.Event()  # tasks wait beyond the threads: the watcher looks for a stall
        self._watcher: threading.Thread | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)``; RuntimeError once the pool is shut down."""
        if self._closed:
            raise RuntimeError(f"{self.name}: cannot submit after shutdown")
        self._tasks.put((fn, args))
        threads = len(self._threads)
        if self._busy + self._tasks.qsize() > threads and threads < self.max_workers:
            share = self.io_share
            if threads == 0 or (share is not None and share > IO_BOUND):
                self._start_threads(1)
            elif not self._wake.is_set():
                self._watch()

    def _start_threads(self, count: int) -> None:
        started = []
        with self._lock:
            for _ in range(count):
                if self._closed or len(self._threads) >= self.max_workers:
                    break
                thread = threading.Thread(target=self._work, name=f"{self.name}_{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                started.append(thread)
        for thread in started:
            thread.start()

    def _watch(self) -> None:
        self._wake.set()
        if self._watcher is None:
            with self._lock:
                if self._watcher is not None or self._closed:
                    return
                self._watcher = threading.Thread(target=self._watch_stalls, name=f"{self.name}_watch", daemon=True)
            self._watcher.start()

    def _watch_stalls(self) -> None:
        """While tasks wait beyond the threads: every ``stall_s``, start threads for them when
        none was taken meanwhile; sleep again once the queue is empty."""
        while True:
            self._wake.wait()
            if self._closed:
                return
            taken = self._taken
            time.sleep(self.stall_s)
            if self._closed:
                return
            waiting = self._tasks.qsize()
            if not waiting:
                self._wake.clear()
                if self._tasks.qsize():  # a submit between the check and the clear
                    self._wake.set()
                continue
            if self._taken == taken:
                self._start_threads(waiting)
            if len(self._threads) >= self.max_workers:
                return

    def _work(self) -> None:
        get, lock = self._tasks.get, self._lock
        wall, cpu = time.perf_counter, time.thread_time
        while True:
            task = get()
            if task is _STOP:
                return
            with lock:
                self._busy += 1
                self._taken += 1
            t0, c0 = wall(), cpu()
            try:
                task[0](*task[1])
            except Exception:
                log.exception("%s: a task raised", self.name)
            finally:
                elapsed = wall() - t0
                off_cpu = max(0.0, 1.0 - (cpu() - c0) / elapsed) if elapsed > 0 else 0.0
                share = self.io_share
                self.io_share = off_cpu if share is None else share + _IO_WEIGHT * (off_cpu - share)
                with lock:
                    self._busy -= 1

    def shutdown(self, *, cancel_pending: bool = True) -> None:
        """Take no more tasks, drop the queued ones (``cancel_pending``) and stop the threads once
        the calls in progress return; does not wait (see :meth:`join`)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = len(self._threads)
        self._wake.set()  # the watcher sees the pool closed and ends
        if cancel_pending:
            try:
                while True:
                    self._tasks.get_nowait()
            except queue.Empty:
                pass
        for _ in range(threads):
            self._tasks.put(_STOP)

    def join(self, timeout_s: float | None = None) -> bool:
        """Wait up to ``timeout_s`` for every thread to end (after :meth:`shutdown`); whether they did."""
        with self._lock:
            threads = list(self._threads)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
        return True
