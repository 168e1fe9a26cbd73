"""Start a request's handler at once, in the read loop's turn, and give it a task only if it waits.

Most requests (a send to an ASYNC_FLUSH store, a heartbeat, a route query) finish without ever
waiting. Started by hand (``coro.send(None)``) they cost no task, no trip through the event
loop's ready queue and no extra turn of the loop: about a tenth of the broker's CPU per single
send. One that waits (a long-polling pull, a synchronous flush or double write, a call back to
the client) goes on in a task exactly as if the task had started it. Python 3.12's
``eager_task_factory`` does the same for every task; this is the one place Gantry needs it.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["start_eagerly"]


def start_eagerly(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[None] | None:
    """Run ``coro`` up to its first wait: None when it finished, else the task that goes on with it.

    An exception the coroutine raises before its first wait propagates to the caller.
    """
    try:
        waiting_on = coro.send(None)
    except StopIteration:
        return None
    return loop.create_task(_resume(coro, waiting_on))


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], waiting_on: object) -> Generator[Any, Any, Any]:
    """Go on with a coroutine already started by hand, inside the task that runs this.

    The task waits on what the coroutine first waited on (``waiting_on``); then the coroutine
    runs on as if the task had started it: ``yield from`` hands on every later wait, and a
    cancellation thrown in while it waits reaches the coroutine at its ``await``.
    """
    while True:
        try:
            yield waiting_on
        except GeneratorExit:  # the task is destroyed unfinished: so is the coroutine
            coro.close()
            raise
        except BaseException as exc:
            try:
                waiting_on = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
            continue
        return (yield from coro)
