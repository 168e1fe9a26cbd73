"""The dashboards' results and the refresh runs that make them (docs/analytics.md section 3).

The result tables hold what the jobs computed, ready to draw: a dashboard request is one
indexed range query, never a Spark job. A refresh replaces the windows it recomputed in one
transaction (analytics.runner), so readers see either the old rows or the new ones.

- :class:`ThroughputPoint` and :class:`BacklogPoint`: one row per (resolution, level, window,
  key), the columns of the ``throughput`` and ``backlog`` jobs. Keys that do not apply at a
  level are NULL (``broker`` at topic level), as in the API's JSON.
- :class:`BacklogTrend` and :class:`Ranking`: the latest trends and top lists, replaced whole
  by every successful run.
- :class:`RefreshRun`: one refresh (nightly, console or API), with its progress and heartbeat; its
  lease (take, heartbeat, sweep, finish, fail) is :class:`console.leased_jobs.LeasedJob`'s.
- :class:`DashboardState`: one row per name-server set: the last good run, its watermark, and
  since when the result is stale.

Every table carries ``namesrv_set`` (docs/clusters.md): each set has its own lake, runs and
results, and every index leads with it, so one set's dashboard is still one indexed range query.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from console.leased_jobs import LeasedJob

DEFAULT_SET = "default"  # brokers.gateway.namesrv_scope.DEFAULT (the rows from before sets had dashboards)
DEFAULT_LOST_AFTER_S = 120.0  # twelve missed beats (RUN_HEARTBEAT_S 10): the worker is gone, not slow


def _set_field() -> models.CharField:
    return models.CharField(max_length=64, default=DEFAULT_SET)


class RefreshRun(LeasedJob):
    """One refresh run (analytics.runs): ``queued`` -> ``running`` -> ``succeeded`` or ``failed``.

    Its lease is :class:`console.leased_jobs.LeasedJob`'s, with the hooks of a run: the lease is
    ``RUN_LOST_AFTER_S`` from the last beat, and a reader also counts a running run as lost once
    its own ``RUN_LOST_AFTER_S`` passed since the last beat (the worker's setting may differ); a
    failure writes ``error`` and marks the set's dashboards stale from the run's start.
    """

    class Trigger(models.TextChoices):
        NIGHTLY = "nightly"
        MANUAL = "manual"
        API = "api"
        LIVE = "live"  # beat, every LIVE_REFRESH_S: the windows with new samples (docs/analytics.md)

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    REASON_FIELD = "error"
    REASON_MAX = 2000

    namesrv_set = _set_field()
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    requested_by = models.CharField(max_length=150, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    rows_read = models.BigIntegerField(null=True, blank=True)
    window_from = models.DateTimeField(null=True, blank=True)  # first window start this run replaced
    window_to = models.DateTimeField(null=True, blank=True)  # the run's "now": windows up to here

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status"], name="analytics_run_status"),
            models.Index(fields=["namesrv_set", "-id"], name="analytics_run_set"),
        ]

    def __str__(self) -> str:
        return f"refresh #{self.pk} {self.status}"

    @classmethod
    def lease_s(cls) -> float:
        return float(settings.GANTRY_ANALYTICS.get("RUN_LOST_AFTER_S", DEFAULT_LOST_AFTER_S))

    @classmethod
    def patience_s(cls) -> float:
        return cls.lease_s()

    @classmethod
    def queued_max_s(cls) -> float:
        """A queued run no worker took within this long was lost with its message (Redis flushed, say)."""
        return float(settings.GANTRY_TASK_TIME_LIMITS["dashboard_refresh"]) + cls.lease_s()

    @classmethod
    def never_taken_reason(cls) -> str:
        return "never started: no worker took the task"

    def taken_fields(self) -> dict:
        return {"progress": "starting", "error": ""}

    @classmethod
    def lock_before(cls, pk: int) -> None:
        # the set's state row first, then the run's: the order of analytics.runner.commit
        DashboardState.load(
            cls.objects.filter(pk=pk).values_list("namesrv_set", flat=True).first() or DEFAULT_SET, for_update=True
        )

    def on_failed(self, reason: str, now: datetime, *, stale: bool = True, **context: Any) -> None:
        """Mark the dashboards stale from the run's start when it had started (and ``stale``), unless they were."""
        if not stale or self.started_at is None:
            return
        state = DashboardState.load(self.namesrv_set, for_update=True)
        if state.stale_since is None:
            state.stale_since = self.started_at
            state.save(update_fields=["stale_since"])


class DashboardState(models.Model):
    """The row of one set saying how current its results are (``default``'s is pk 1, as before sets)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    namesrv_set = models.CharField(max_length=64, unique=True, default=DEFAULT_SET)
    last_good_run = models.ForeignKey(RefreshRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    watermark = models.DateTimeField(
        null=True, blank=True
    )  # "now" of the last good run: the next one starts from its hour
    data_until = models.DateTimeField(null=True, blank=True)  # newest sample the last good run read
    stale_since = models.DateTimeField(null=True, blank=True)  # start of the first failed run after the last good one

    @classmethod
    def load(cls, namesrv_set: str = DEFAULT_SET, *, for_update: bool = False) -> DashboardState:
        """The set's row, created on first use (the next free id; a racing creator wins, this one rereads)."""
        queryset = cls.objects.select_for_update() if for_update else cls.objects
        state = queryset.filter(namesrv_set=namesrv_set).first()
        while state is None:
            new_id = (
                1 if namesrv_set == DEFAULT_SET else max(2, (cls.objects.aggregate(m=models.Max("id"))["m"] or 0) + 1)
            )
            try:
                with transaction.atomic():
                    cls.objects.create(pk=new_id, namesrv_set=namesrv_set)
            except IntegrityError:
                pass
            state = queryset.filter(namesrv_set=namesrv_set).first()
        return state


class ThroughputPoint(models.Model):
    namesrv_set = _set_field()
    resolution = models.CharField(max_length=4)  # 1m | 1h
    level = models.CharField(max_length=8)  # queue | topic | broker
    window_start = models.DateTimeField()
    broker = models.CharField(max_length=255, null=True, blank=True)
    topic = models.CharField(max_length=255, null=True, blank=True)
    queue_id = models.IntegerField(null=True, blank=True)
    messages = models.BigIntegerField()
    msgs_per_s = models.FloatField()
    bytes_per_s = models.FloatField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["namesrv_set", "resolution", "level", "window_start"], name="analytics_tp_window"),
            models.Index(
                fields=["namesrv_set", "resolution", "level", "topic", "window_start"], name="analytics_tp_topic"
            ),
            models.Index(
                fields=["namesrv_set", "resolution", "level", "broker", "window_start"], name="analytics_tp_broker"
            ),
        ]


class BacklogPoint(models.Model):
    namesrv_set = _set_field()
    resolution = models.CharField(max_length=4)
    level = models.CharField(max_length=8)  # queue | group
    window_start = models.DateTimeField()
    group = models.CharField(max_length=255)
    topic = models.CharField(max_length=255)
    broker = models.CharField(max_length=255, null=True, blank=True)
    queue_id = models.IntegerField(null=True, blank=True)
    backlog = models.BigIntegerField()
    consume_rate = models.FloatField(null=True, blank=True)
    produce_rate = models.FloatField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["namesrv_set", "resolution", "level", "window_start"], name="analytics_bl_window"),
            models.Index(
                fields=["namesrv_set", "resolution", "level", "group", "window_start"], name="analytics_bl_group"
            ),
            models.Index(
                fields=["namesrv_set", "resolution", "level", "topic", "window_start"], name="analytics_bl_topic"
            ),
        ]


class BacklogTrend(models.Model):
    namesrv_set = _set_field()
    group = models.CharField(max_length=255)
    topic = models.CharField(max_length=255)
    backlog = models.BigIntegerField()
    slope_per_s = models.FloatField(null=True, blank=True)
    trend = models.CharField(max_length=16)  # growing | draining | steady
    consume_rate = models.FloatField(null=True, blank=True)
    produce_rate = models.FloatField(null=True, blank=True)
    time_to_drain_s = models.FloatField(null=True, blank=True)
    as_of = models.DateTimeField()

    class Meta:
        ordering = ["group", "topic"]
        indexes = [models.Index(fields=["namesrv_set", "group", "topic"], name="analytics_trend_key")]


class Ranking(models.Model):
    class Kind(models.TextChoices):
        TOPICS = "topics"  # topics by msgs/s over the last hour
        GROUPS = "groups"  # groups by backlog now

    namesrv_set = _set_field()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    rank = models.PositiveIntegerField()
    name = models.CharField(max_length=255)
    value = models.FloatField()
    as_of = models.DateTimeField()

    class Meta:
        ordering = ["kind", "rank"]
        indexes = [models.Index(fields=["namesrv_set", "kind", "rank"], name="analytics_ranking_kind")]
