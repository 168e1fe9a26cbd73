"""The Celery app: Redis as broker and result backend, settings from ``CELERY_*`` in Django's settings.

Workers: ``celery -A console worker -Q celery`` (rebalance triggers, health scan, sampling) and
``celery -A console worker -Q analytics -c 1`` (one Spark job at a time); ``celery -A console
beat`` runs ``CELERY_BEAT_SCHEDULE``. Tasks are thin: ``<service>_task(primitive args)`` calling
one service, JSON arguments only. Logging: console.log_format's, with the request id of the web
request that queued the task (console.request_id).
"""

from __future__ import annotations

import logging.config
import os

from celery import Celery, signals

from console import namesrv_scope, request_id

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("gantry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["console", "consumers", "health", "analytics", "brokers", "topics"])


@signals.setup_logging.connect
def _use_gantry_logging(**_: object) -> None:
    """Workers and beat log in the one Gantry format (settings.LOGGING), not Celery's own."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@signals.task_prerun.connect
def _enter_request_id(task=None, **_: object) -> None:
    """The id of the web request that queued this task (console.queueing.submit) is current while it runs."""
    if task is not None:
        task.request.gantry_request_id_token = request_id.begin(getattr(task.request, request_id.CELERY_HEADER, None))
        _enter_namesrv_set(task)


@signals.task_postrun.connect
def _leave_request_id(task=None, **_: object) -> None:
    token = getattr(task.request, "gantry_request_id_token", None) if task is not None else None
    if token is not None:
        request_id.end(token)
    set_token = getattr(task.request, "gantry_namesrv_set_token", None) if task is not None else None
    if set_token is not None:
        namesrv_scope.end(set_token)


def _enter_namesrv_set(task) -> None:
    """The name of the name-server set the task was queued under (console.queueing.submit) is current
    while it runs; the gateway resolves it on first use, and one removed since makes the task's calls
    fail (Unavailable) rather than run against another tier."""
    task.request.gantry_namesrv_set_token = namesrv_scope.begin(
        getattr(task.request, namesrv_scope.CELERY_HEADER, None) or None
    )
