"""WorkerPool: the consume services' threads, at the cost of one queue put per task.

``concurrent.futures.ThreadPoolExecutor`` builds a Future, a work item, a condition and a
semaphore round trip for every task; a push consumer hands the pool one task per message
(``consume_message_batch_max_size`` = 1, RocketMQ's default), and that bookkeeping was about a
third of the consumer's CPU per message (docs/benchmarks.md, issue 15). Here a task is a
``(fn, args)`` tuple on a ``queue.SimpleQueue`` (C), taken by up to ``max_workers`` daemon
threads started as the work needs them: a new thread when every thread is busy or already has a
task waiting for it. Nobody waits on a task's result, so there is none; an exception a task raises
is logged with the pool's name, not kept in an unread Future.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["WorkerPool"]

log = logging.getLogger("brokers.engine.client")

_STOP = None  # one per thread: the thread exits when it takes it


class WorkerPool:
    """Run ``submit``-ted calls on at most ``max_workers`` threads named ``<name>_<n>``."""

    def __init__(self, max_workers: int, name: str) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self.name = name
        self._tasks: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._busy = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)``; RuntimeError once the pool is shut down."""
        if self._closed:
            raise RuntimeError(f"{self.name}: cannot submit after shutdown")
        self._tasks.put((fn, args))
        if self._busy + self._tasks.qsize() > len(self._threads) and len(self._threads) < self.max_workers:
            self._start_thread()

    def _start_thread(self) -> None:
        with self._lock:
            if self._closed or len(self._threads) >= self.max_workers:
                return
            thread = threading.Thread(target=self._work, name=f"{self.name}_{len(self._threads)}", daemon=True)
            self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        get, lock = self._tasks.get, self._lock
        while True:
            task = get()
            if task is _STOP:
                return
            with lock:
                self._busy += 1
            try:
                task[0](*task[1])
            except Exception:
                log.exception("%s: a task raised", self.name)
            finally:
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
