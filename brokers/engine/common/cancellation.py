"""Cancel tasks and wait until they have ended, even one that swallowed a cancellation.

Python 3.11's ``asyncio.wait_for`` returns its inner call's result, instead of raising, when it is
cancelled at the moment that call finishes. A periodic task cancelled there carries on to its next
sleep, and a plain ``gather`` of the cancelled tasks then waits through that sleep and forever after
(a slave's stop hung under load this way: tests/brokers/engine/broker/test_broker_group.py). Here a
task still running a second after its cancel is cancelled again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(tasks: Iterable[asyncio.Task[None]], recancel_s: float = 1.0) -> None:
    """Cancel ``tasks`` and return once every one has ended; their exceptions are retrieved (not raised)."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=recancel_s)
    for task in tasks:
        if not task.cancelled():
            task.exception()  # retrieved, as gather(return_exceptions=True) did
