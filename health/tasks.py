"""The periodic health scan's Celery task (beat's "health-scan").

Its registered name is the one it had in the consumers app, ``consumers.tasks.health_scan_task``:
beat's schedule and messages already queued name it, so the name is given, not derived from this
module. Its hard time limit is ``settings.GANTRY_TASK_TIME_LIMITS["short"]`` (below Redis's
visibility timeout), the soft limit a tenth earlier (1..10 s).
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from health import scan

HEALTH_SCAN_TASK = "consumers.tasks.health_scan_task"  # the registered name: unchanged by the move to this app
SHORT_LIMIT_S = int(settings.GANTRY_TASK_TIME_LIMITS["short"])
SHORT_SOFT_LIMIT_S = max(1, SHORT_LIMIT_S - max(1, min(10, SHORT_LIMIT_S // 10)))


@shared_task(
    name=HEALTH_SCAN_TASK,
    acks_late=True,
    time_limit=SHORT_LIMIT_S,
    soft_time_limit=SHORT_SOFT_LIMIT_S,
)
def health_scan_task() -> dict:
    """The periodic health scan (CELERY_BEAT_SCHEDULE "health-scan"): one scan per name-server set, alerts for the overview."""
    return {"scans": scan.health_scan_all()}
