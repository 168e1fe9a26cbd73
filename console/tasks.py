"""Console-level tasks: a liveness probe of the background tier."""

from __future__ import annotations

import logging
import socket

from celery import shared_task

from console import namesrv_scope
from console.request_id import current_request_id

log = logging.getLogger(__name__)


@shared_task(name="console.tasks.ping_task")
def ping_task() -> dict:
    """Answer from a worker: proves Redis -> worker -> result backend works end to end (and names the
    request and the name-server set it was queued under)."""
    log.info("pong")  # the line carries the id of the request that queued the ping
    return {
        "pong": True,
        "host": socket.gethostname(),
        "request_id": current_request_id(),
        "namesrv_set": namesrv_scope.current_name(),
    }
