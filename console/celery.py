"""The Celery app: Redis as broker and result backend, settings from ``CELERY_*`` in Django's settings.

Workers: ``celery -A console worker -Q celery`` (rebalance triggers, health scan, sampling) and
``celery -A console worker -Q analytics -c 1`` (one Spark job at a time); ``celery -A console
beat`` runs ``CELERY_BEAT_SCHEDULE``. Tasks are thin: ``<service>_task(primitive args)`` calling
one service, JSON arguments only.
"""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("gantry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["console", "consumers", "analytics", "brokers", "topics"])
