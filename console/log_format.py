"""One log format for every Gantry process: the console (gunicorn and Django), Celery workers and
beat, the name server and brokers (``run_cluster``) and the demo, as ``make run`` starts them.

Each record is one line on stderr, ``make run``'s supervisor writes each process's lines to
``var/log/<name>.log``. Two layouts, picked by ``GANTRY_LOG_FORMAT``:

- ``text`` (default)::

    2026-11-24T11:20:03.512+0000 INFO [web 4711] django.request req=3f2c… Not Found: /x

- ``json``: one JSON object per line with ``time``, ``level``, ``logger``, ``process``,
  ``process_name``, ``request_id``, ``message`` (and ``exc_info`` with the traceback), for a log
  shipper that reads JSON lines.

``process_name`` is ``GANTRY_PROCESS_NAME`` (the supervisor's service name), else the program's.
Standard library only: gunicorn's configuration (console/gunicorn_conf.py) builds the same dict
before Django is loaded.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

FORMATS = ("text", "json")
TEXT_LAYOUT = "%(asctime)s %(levelname)s [%(process_name)s %(process)d] %(name)s req=%(request_id)s %(message)s"


def _process_name() -> str:
    if os.environ.get("GANTRY_PROCESS_NAME"):
        return os.environ["GANTRY_PROCESS_NAME"]
    program = sys.argv[0] or "python"
    if os.path.basename(program) == "__main__.py":  # python -m gunicorn / celery: the package's name
        program = os.path.dirname(program)
    return os.path.basename(program)


class _Stamped(logging.Formatter):
    """ISO 8601 times in UTC with milliseconds, the same in both layouts."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 (logging's name)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}+0000"

    def _fill(self, record: logging.LogRecord) -> None:
        if not hasattr(record, "request_id"):
            record.request_id = "-"
        record.process_name = _process_name()


class TextFormatter(_Stamped):
    def __init__(self) -> None:
        super().__init__(TEXT_LAYOUT)

    def format(self, record: logging.LogRecord) -> str:
        self._fill(record)
        return super().format(record)


class JsonFormatter(_Stamped):
    """One JSON object per record; multi-line messages and tracebacks stay inside the line."""

    def format(self, record: logging.LogRecord) -> str:
        self._fill(record)
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "process": record.process,
            "process_name": getattr(record, "process_name"),  # set by _fill
            "request_id": getattr(record, "request_id"),
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        elif record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def log_format(value: str | None = None) -> str:
    """``value`` or ``GANTRY_LOG_FORMAT``: text or json (anything else is refused at start, naming the setting)."""
    value = (value if value is not None else os.environ.get("GANTRY_LOG_FORMAT", "text")).strip().lower() or "text"
    if value not in FORMATS:
        raise ValueError(f"GANTRY_LOG_FORMAT must be one of {', '.join(FORMATS)}, not {value!r}")
    return value


class ClientErrorsAtInfo(logging.Filter):
    """Log a 4xx answer at INFO, not WARNING: a browser asking for a missing page, a refused form or a
    login that has run out is the client's business, not the operator's (Django logs them as warnings in
    ``django.request``). 5xx stay ERROR. A record demoted below the logger's level is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if record.levelno == logging.WARNING and isinstance(status, int) and 400 <= status < 500:
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
            return logging.getLogger(record.name).isEnabledFor(logging.INFO)
        return True


def logging_config(*, level: str | None = None, fmt: str | None = None, extra_loggers: dict | None = None) -> dict:
    """The ``logging.config.dictConfig`` dict every process uses: the root logger to stderr in one layout;
    Django's request loggers say 4xx answers at INFO (:class:`ClientErrorsAtInfo`)."""
    formatter = JsonFormatter if log_format(fmt) == "json" else TextFormatter
    client_errors = {"filters": ["client_errors_at_info"]}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "request_id": {"()": "console.request_id.RequestIdFilter"},
            "client_errors_at_info": {"()": f"{__name__}.ClientErrorsAtInfo"},
        },
        "formatters": {"gantry": {"()": f"{__name__}.{formatter.__name__}"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "gantry",
                "filters": ["request_id"],
            }
        },
        "root": {"handlers": ["stderr"], "level": level or os.environ.get("LOG_LEVEL", "INFO")},
        "loggers": {"django.request": client_errors, "django.server": client_errors, **(extra_loggers or {})},
    }
