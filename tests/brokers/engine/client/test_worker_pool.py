"""WorkerPool: the consume services' threads (one queue put per task, no Future)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from brokers.engine.client.worker_pool import WorkerPool


def test_tasks_run_on_at_most_max_workers_threads_started_as_the_work_needs_them() -> None:
    pool = WorkerPool(3, "consume-G")
    release, running, lock = threading.Event(), [], threading.Lock()
    started = threading.Semaphore(0)

    def task(i: int) -> None:
        with lock:
            running.append(threading.current_thread().name)
        started.release()
        release.wait(5)

    for i in range(5):
        pool.submit(task, i)
    for _ in range(3):
        assert started.acquire(timeout=5)
    assert not started.acquire(timeout=0.2)  # two wait: every one of the 3 threads is busy
    # (the first thread started with the first task; the other two once nothing was taken for stall_s)
    assert len(pool._threads) == 3 and all(name.startswith("consume-G_") for name in running)
    release.set()
    for _ in range(2):
        assert started.acquire(timeout=5)
    pool.shutdown(cancel_pending=False)
    assert pool.join(5)


def test_one_idle_thread_takes_tasks_one_after_another_without_more_threads() -> None:
    pool = WorkerPool(8, "p")
    for _ in range(50):
        done = threading.Event()
        pool.submit(done.set)
        assert done.wait(5)
    assert len(pool._threads) <= 2  # a task submitted just as the thread finished the last may start a second
    pool.shutdown()
    assert pool.join(5)


def test_a_listener_that_keeps_up_stays_on_one_thread_however_many_tasks_wait() -> None:
    """Bursts of short CPU-bound tasks (a fast listener) queue up faster than one thread runs
    them, and more threads would only fight for the GIL: the pool does not add any."""
    pool = WorkerPool(8, "p", stall_s=1.0)  # the stall rule has its own test
    for _ in range(20):
        done = threading.Semaphore(0)
        for _ in range(64):
            pool.submit(lambda: (sum(range(2000)), done.release()))
        for _ in range(64):
            assert done.acquire(timeout=5)
    assert pool.io_share is not None and pool.io_share < 0.5
    assert len(pool._threads) <= 2  # (a second only if a burst of preemptions made the tasks look idle)
    pool.shutdown()
    assert pool.join(5)


def test_a_listener_that_waits_on_io_gets_a_thread_per_waiting_task_at_once() -> None:
    pool = WorkerPool(8, "p", stall_s=60.0)  # only the measured off-CPU share can grow the pool here
    first = threading.Event()
    pool.submit(lambda: (time.sleep(0.05), first.set()))
    assert first.wait(5)
    deadline = time.monotonic() + 5
    while pool.io_share is None and time.monotonic() < deadline:  # set just after the task returns
        time.sleep(0.01)
    assert pool.io_share is not None and pool.io_share > 0.9
    done, release = threading.Semaphore(0), threading.Event()
    for _ in range(16):
        pool.submit(lambda: (release.wait(5), done.release()))
    assert len(pool._threads) == 8  # started by the submits themselves, not later
    release.set()
    for _ in range(16):
        assert done.acquire(timeout=5)
    pool.shutdown()
    assert pool.join(5)


def test_a_raising_task_is_logged_and_the_pool_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(1, "consume-G")
    after = threading.Event()
    with caplog.at_level(logging.ERROR, logger="brokers.engine.client"):
        pool.submit(lambda: 1 / 0)
        pool.submit(after.set)
        assert after.wait(5)
    assert "consume-G: a task raised" in caplog.text and "ZeroDivisionError" in caplog.text
    pool.shutdown()
    assert pool.join(5)


def test_shutdown_drops_queued_tasks_refuses_new_ones_and_join_is_bounded() -> None:
    pool = WorkerPool(1, "p")
    block, ran = threading.Event(), []
    in_first = threading.Event()
    pool.submit(lambda: (in_first.set(), block.wait(10)))
    assert in_first.wait(5)
    pool.submit(ran.append, "queued")
    pool.shutdown(cancel_pending=True)
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(ran.append, "late")
    assert not pool.join(0.2)  # the call in progress still runs
    block.set()
    assert pool.join(5) and ran == []
    with pytest.raises(ValueError):
        WorkerPool(0, "p")
