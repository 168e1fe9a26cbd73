"""The request id: one token per web request, carried into log lines, the audit row and Celery tasks.

:class:`RequestIdMiddleware` takes the caller's ``X-Request-ID`` when it is well formed (a proxy or
load balancer in front may have assigned one already), else generates one; it is answered in the
response's ``X-Request-ID`` header. While the request runs it is :func:`current_request_id`, which
:class:`RequestIdFilter` puts on every log record (``record.request_id``), console.audit writes into
the audit row and console.queueing sends to the Celery task as a message header
(:data:`CELERY_HEADER`); the worker makes it current again for the task's run (console.celery).

Standard library only: gunicorn's master loads the logging filter before Django is set up.
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

HEADER = "X-Request-ID"
META_KEY = "HTTP_X_REQUEST_ID"
CELERY_HEADER = "gantry_request_id"  # the Celery message header that carries it to the task
NONE = "-"  # shown in a log line made outside any request or task
# An incoming id is kept only if it is short and plain: it ends up in log lines, headers and the audit
# table, so no spaces, quotes or control characters (a UUID, a ULID, an AWS trace id all pass).
WELL_FORMED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:=+/-]{7,63}")

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("gantry_request_id", default=None)


def current_request_id() -> str | None:
    """The id of the request or task this code runs for, or None."""
    return _current.get()


def well_formed(value: str | None) -> bool:
    return value is not None and bool(value) and WELL_FORMED.fullmatch(value) is not None


def new_request_id() -> str:
    return uuid.uuid4().hex


@contextmanager
def request_id_scope(request_id: str | None) -> Iterator[str | None]:
    """Make ``request_id`` current for the block (a task's run, a request's handling)."""
    token = _current.set(request_id)
    try:
        yield request_id
    finally:
        _current.reset(token)


def begin(request_id: str | None) -> contextvars.Token:
    """Make ``request_id`` current until :func:`end` with the returned token (Celery's prerun/postrun)."""
    return _current.set(request_id)


def end(token: contextvars.Token) -> None:
    _current.reset(token)


class RequestIdMiddleware:
    """Assign the request its id (the caller's if well formed), answer it in ``X-Request-ID``.

    Placed first, so every other middleware, the view and the ``django.request`` log line of an
    error answer run with it."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.META.get(META_KEY)
        request_id = incoming if well_formed(incoming) else new_request_id()
        request.request_id = request_id
        with request_id_scope(request_id):
            response = self.get_response(request)
        response[HEADER] = request_id
        return response


class RequestIdFilter(logging.Filter):
    """Put the current request id on every record (``-`` outside requests and tasks); drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            # django.request's line for an error answer is logged after the middleware returned,
            # with the request attached
            record.request_id = _current.get() or getattr(getattr(record, "request", None), "request_id", None) or NONE
        return True
