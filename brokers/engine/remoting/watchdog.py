"""idle_watchdog: the periodic check that closes idle connections and trickled frames.

One task per server (and per client with an idle close) looks at every connection about four
times per limit: a connection that neither read nor wrote for ``idle_close_s`` (and waits for
nothing) is closed; one whose frame being read started more than ``frame_deadline_s`` ago is
aborted, so a peer sending a frame a byte at a time cannot hold its buffer for long; on a server,
one that has not authenticated within ``first_frame_deadline_s`` of opening is aborted, and the
responses queued for slow readers are held to the server's buffer budget.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from brokers.engine.remoting.budget import BufferBudget
from brokers.engine.remoting.limits import limit_log

__all__ = ["idle_watchdog"]

log = logging.getLogger("brokers.engine.remoting")


async def idle_watchdog(
    channels: Callable[[], list[Any]],
    idle_close_s: float | None,
    frame_deadline_s: float | None = None,
    *,
    first_frame_deadline_s: float | None = None,
    budget: BufferBudget | None = None,
) -> None:
    """Close connections (ChannelContexts) that neither read nor wrote for ``idle_close_s`` seconds, those
    whose frame being read started more than ``frame_deadline_s`` ago, and those not authenticated
    ``first_frame_deadline_s`` after they opened (each may be None)."""
    loop = asyncio.get_running_loop()
    period = min(1.0, max(min(idle_close_s or 4.0, frame_deadline_s or 4.0, first_frame_deadline_s or 4.0) / 4, 0.01))
    while True:
        await asyncio.sleep(period)
        now = loop.time()
        current = channels()
        if budget is not None:
            budget.check_queued(current)
        for ctx in current:
            if ctx.closed:
                continue
            if (
                first_frame_deadline_s is not None
                and not ctx.established
                and now - ctx.opened_at >= first_frame_deadline_s
            ):
                limit_log.refused(
                    "first-frame-deadline",
                    ctx.remote_addr,
                    "%s: no authenticated request %.1fs after it opened; connection closed",
                    ctx,
                    now - ctx.opened_at,
                )
                ctx.abort()
                continue
            started = ctx.frame_started_at
            if frame_deadline_s is not None and started is not None and now - started >= frame_deadline_s:
                limit_log.refused(
                    "frame-deadline",
                    ctx.remote_addr,
                    "%s: frame incomplete %.1fs after its first byte; connection closed",
                    ctx,
                    now - started,
                )
                ctx.abort()
            elif idle_close_s and now - ctx.last_activity >= idle_close_s and not ctx._pending and not ctx._tasks:
                log.info("%s: idle for %.1fs, closing", ctx, now - ctx.last_activity)
                ctx.close()
