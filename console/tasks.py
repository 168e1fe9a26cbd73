"""Console-level tasks: a liveness probe of the background tier."""
from __future__ import annotations

import socket

from celery import shared_task


@shared_task(name="console.tasks.ping_task")
def ping_task() -> dict:
    """Answer from a worker: proves Redis -> worker -> result backend works end to end."""
    return {"pong": True, "host": socket.gethostname()}
