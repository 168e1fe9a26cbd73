"""The one admin client the Django side (views, services, tasks) talks to the tier through.

Built lazily from ``settings.MQ`` on first use (no I/O at import time), shared by threads: the
blocking client is thread-safe.
"""
from __future__ import annotations

import threading

from django.conf import settings

from brokers.engine.client.admin import BlockingMQAdminClient, parse_namesrv_addrs
from console.errors import Unavailable

_lock = threading.Lock()
_client: BlockingMQAdminClient | None = None


def configured_namesrv_addrs() -> tuple[str, ...]:
    """The name servers of ``settings.MQ["NAMESRV_ADDR"]`` (empty when the setting is unusable)."""
    try:
        return parse_namesrv_addrs(settings.MQ["NAMESRV_ADDR"])
    except ValueError:
        return ()


def get_admin_client() -> BlockingMQAdminClient:
    """The shared client; Unavailable (503) when NAMESRV_ADDR is not a usable address list."""
    global _client
    with _lock:
        if _client is None:
            try:
                _client = BlockingMQAdminClient(
                    settings.MQ["NAMESRV_ADDR"], timeout_s=settings.MQ["ADMIN_TIMEOUT_S"]
                )
            except ValueError as exc:
                raise Unavailable(f"NAMESRV_ADDR is not usable: {exc}") from exc
        return _client


def reset_admin_client() -> None:
    """Drop the shared client (tests that point NAMESRV_ADDR elsewhere call this)."""
    global _client
    with _lock:
        if _client is not None:
            _client.close()
        _client = None
