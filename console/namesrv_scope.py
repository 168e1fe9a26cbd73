"""The name-server set (tier) the code running now talks to, as the kernel sees it: a context variable.

The console knows several tiers (brokers.gateway.namesrv_sets resolves names, builds clients and
says which exist); this module only holds the current one so the kernel can carry it without
importing an app: console.queueing sends its name with a Celery task (:data:`CELERY_HEADER`) and
console.celery makes the name current again while the task runs (the gateway resolves it on first
use). The value is the gateway's target (anything with a ``name``), a bare name from a task header,
or None for ``default`` (settings.MQ's tier).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

PARAM = "namesrv_set"  # the query parameter any page or API call takes (brokers.namesrv_set_scope reads it)
CELERY_HEADER = "gantry_namesrv_set"  # the Celery message header that carries the set's name to a task
DEFAULT = "default"  # the name of settings.MQ's tier

_current: contextvars.ContextVar[object | None] = contextvars.ContextVar("gantry_namesrv_set", default=None)


def get() -> object | None:
    return _current.get()


def set_current(value: object | None) -> None:
    """Replace the value inside the current scope (the gateway caching what a bare name resolved to)."""
    _current.set(value)


def current_name() -> str:
    """The current set's name (``default`` outside any request or task that chose another)."""
    value = _current.get()
    if value is None:
        return DEFAULT
    return value if isinstance(value, str) else str(getattr(value, "name", DEFAULT))


def begin(value: object | None) -> contextvars.Token:
    """Make ``value`` current until :func:`end` with the returned token (Celery's prerun/postrun)."""
    return _current.set(value)


def end(token: contextvars.Token) -> None:
    _current.reset(token)


@contextmanager
def scope(value: object | None) -> Iterator[None]:
    """Make ``value`` current for the block (a request's handling, a test's call)."""
    token = begin(value)
    try:
        yield
    finally:
        end(token)
