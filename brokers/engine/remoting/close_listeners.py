"""Close listeners: what a server or client calls when one of its connections ends."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brokers.engine.remoting.channel import ChannelContext

__all__ = ["CloseListener", "notify_close_listeners"]

log = logging.getLogger("brokers.engine.remoting")

CloseListener = Callable[["ChannelContext"], object]


async def notify_close_listeners(listeners: list[CloseListener], ctx: ChannelContext) -> None:
    """Call each close listener (sync or async); one failing does not stop the others."""
    for listener in listeners:
        try:
            result = listener(ctx)
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("close listener %r failed for %s", listener, ctx)
