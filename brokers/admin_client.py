"""The one admin client the Django side (views, services, tasks) talks to the tier through.

Built lazily from ``settings.MQ`` on first use (no I/O at import time), shared by threads: the
blocking client is thread-safe.
"""
from __future__ import annotations

import threading

from django.conf import settings

from brokers.engine.client.admin import BlockingMQAdminClient

_lock = threading.Lock()
_client: BlockingMQAdminClient | None = None


def get_admin_client() -> BlockingMQAdminClient:
    global _client
    with _lock:
        if _client is None:
            _client = BlockingMQAdminClient(
                settings.MQ["NAMESRV_ADDR"], timeout_s=settings.MQ["ADMIN_TIMEOUT_S"]
            )
        return _client


def reset_admin_client() -> None:
    """Drop the shared client (tests that point NAMESRV_ADDR elsewhere call this)."""
    global _client
    with _lock:
        if _client is not None:
            _client.close()
        _client = None
