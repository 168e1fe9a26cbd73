"""Which asyncio event loop the tier's processes run: uvloop when installed, else asyncio's own.

``GANTRY_EVENT_LOOP`` chooses: ``uvloop`` or ``asyncio``; unset or empty means uvloop when it can
be imported (``requirements.txt`` installs it; the ``gantry-client`` wheel does not require it). A
name server, a broker, ``run_cluster`` and every client instance's loop thread go through
:func:`new_event_loop` / :func:`run`, so one switch covers the tier and the clients. A loop a
caller hands to the client (the asyncio producer and consumer) is the caller's choice.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["ENV", "kind", "loop_name", "new_event_loop", "run"]

ENV = "GANTRY_EVENT_LOOP"
T = TypeVar("T")


def kind() -> str:
    """``"uvloop"`` or ``"asyncio"``: the loop :func:`new_event_loop` makes in this environment.

    Raises ValueError for an unknown ``GANTRY_EVENT_LOOP``, and ImportError when it asks for uvloop
    and uvloop is not installed.
    """
    wanted = os.environ.get(ENV, "").strip().lower()
    if wanted not in ("", "uvloop", "asyncio"):
        raise ValueError(f"{ENV}={wanted!r}: expected 'uvloop' or 'asyncio'")
    if wanted == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if wanted == "uvloop":
            raise ImportError(f"{ENV}=uvloop but uvloop is not installed (pip install uvloop)") from None
        return "asyncio"
    return "uvloop"


def _factory() -> Callable[[], asyncio.AbstractEventLoop]:
    if kind() == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop of the configured kind (not set as the thread's current loop)."""
    return _factory()()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``"uvloop"`` or ``"asyncio"``: the kind of a running ``loop`` (for the servers' start-up line)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a loop of the configured kind."""
    with asyncio.Runner(loop_factory=_factory()) as runner:
        return runner.run(main)
