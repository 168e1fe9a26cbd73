"""``python manage.py dashboard_refresh``: one dashboard refresh in this process, as the analytics worker runs it.

The same entry point as the Celery task (``analytics.runner.dashboard_refresh``) with the Spark
session built from settings (``SPARK_MASTER``), so an operator can prove a Spark cluster setting
before the worker uses it: ``SPARK_MASTER=spark://spark-master:7077 python manage.py dashboard_refresh``.
Prints the run as one JSON line; exits non-zero when the run did not succeed.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timezone

from django.core.management.base import BaseCommand, CommandError

from analytics.models import RefreshRun
from analytics.runner import dashboard_refresh


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--as-of: not an ISO 8601 instant: {text!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


class Command(BaseCommand):
    help = "Run one dashboard refresh here (Spark from SPARK_MASTER) and print the run as JSON."

    def add_arguments(self, parser):
        parser.add_argument(
            "--as-of", default=None, help="the run's 'now' (ISO 8601, UTC unless it says; default: now)"
        )

    def handle(self, *args, as_of: str | None = None, **options):
        from analytics.spark import spark_stop

        try:
            info = dashboard_refresh(
                trigger=RefreshRun.Trigger.MANUAL, requested_by="manage.py", as_of=_instant(as_of) if as_of else None
            )
        finally:
            spark_stop()
        self.stdout.write(json.dumps(asdict(info), default=str))
        if info.status != RefreshRun.Status.SUCCEEDED:
            raise CommandError(f"refresh run {info.id} is {info.status}: {info.error or 'no reason'}")
