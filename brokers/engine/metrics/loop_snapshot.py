"""Run one short function on an event loop from a scrape thread and wait for its result.

The broker's tables are written by its event loop only; reading them from the metrics thread
could see a dict change mid-iteration. A collector therefore copies what it reports in one call
scheduled on the loop (no locks on the hot path, no counters bumped per request for metrics),
and builds the metric families from that copy on its own thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Callable, TypeVar

T = TypeVar("T")

SNAPSHOT_TIMEOUT_S = 5.0


def on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[[], T], timeout_s: float = SNAPSHOT_TIMEOUT_S) -> T:
    """``fn()`` run on ``loop``'s thread; its exception is raised here, TimeoutError after ``timeout_s``."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # handed to the waiting thread
            future.set_exception(exc)

    loop.call_soon_threadsafe(run)
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"the event loop did not answer within {timeout_s} s") from None
