"""SIGINT and SIGTERM set an event: how the name server, the broker and the proxy processes stop cleanly."""

from __future__ import annotations

import asyncio
import signal


def stop_on_signals(stop: asyncio.Event) -> list[signal.Signals]:
    """Set ``stop`` on SIGINT or SIGTERM; the signals handled (none off the main thread or where the loop
    cannot, e.g. a server started in a test's background thread)."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return installed
