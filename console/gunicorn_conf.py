"""gunicorn's configuration for the console: ``gunicorn -c python:console.gunicorn_conf console.wsgi``.

``make run`` starts it so (console/management/commands/run_embedded.py) with ``--bind`` from its
``--web`` option; a deployment does the same behind its proxy. Environment:

- ``GANTRY_WEB_BIND`` (default ``127.0.0.1:8000``; loopback unless told otherwise),
- ``GANTRY_WEB_WORKERS`` (default 2: one per core of a small host; each is a process with its own
  engine admin client) and ``GANTRY_WEB_THREADS`` (default 4 per worker: pages wait on the name
  server and brokers, not on the CPU),
- ``GANTRY_WEB_TIMEOUT_S`` (default 60: a worker silent that long is restarted).

SIGTERM stops gracefully: no new connections, requests in flight get ``graceful_timeout`` seconds
(below the supervisor's 20 s before SIGKILL). Each worker freezes its heap once it has loaded the
application (``post_worker_init``, as the name server and brokers do after their start-up:
brokers/engine/common/gc_freeze.py), so its full garbage collections skip Django's and Gantry's
~150,000 import-time objects: a group list's allocations otherwise set off collections that walk
them all and add tens of milliseconds to a request. Logs go through console.log_format like every other
Gantry process; the access line carries the response's X-Request-ID as its request id.
"""

from __future__ import annotations

import logging
import os

from brokers.engine.common.gc_freeze import freeze_startup_heap
from console.log_format import logging_config


class AccessRequestId(logging.Filter):
    """An access line's request id: the X-Request-ID the console answered (the request is over by then)."""

    def filter(self, record: logging.LogRecord) -> bool:
        atoms = record.args if isinstance(record.args, dict) else {}
        record.request_id = atoms.get("{x-request-id}o") or "-"
        return True


def post_worker_init(worker) -> None:
    """The worker has imported the application: freeze what that made (see the module docstring)."""
    freeze_startup_heap()


bind = [os.environ.get("GANTRY_WEB_BIND", "127.0.0.1:8000")]
worker_class = "gthread"
workers = int(os.environ.get("GANTRY_WEB_WORKERS", "2"))
threads = int(os.environ.get("GANTRY_WEB_THREADS", "4"))
timeout = int(os.environ.get("GANTRY_WEB_TIMEOUT_S", "60"))
graceful_timeout = 15  # the supervisor SIGKILLs after 20 s
keepalive = 5  # behind a proxy that reuses connections
limit_request_line = 8190  # gunicorn's defaults, stated: oversize request lines and headers get a 400
limit_request_fields = 100
forwarded_allow_ips = os.environ.get("GANTRY_FORWARDED_ALLOW_IPS", "127.0.0.1")  # who may set X-Forwarded-*
proc_name = "gantry-web"
control_socket_disable = True  # no gunicornc socket under $HOME: stop and reload by signals (systemd, the supervisor)
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
logconfig_dict = logging_config(
    extra_loggers={
        # gunicorn's own loggers through the root handler (one format); its defaults would add their own handlers
        "gunicorn.error": {"handlers": [], "propagate": True},
        "gunicorn.access": {"handlers": [], "propagate": True, "filters": ["access_request_id"]},
    }
)
logconfig_dict["filters"]["access_request_id"] = {"()": f"{__name__}.AccessRequestId"}
