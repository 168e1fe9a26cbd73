"""What the console keeps of consumer groups: rebalance jobs, their per-group results and queue
moves, and the health scans' records (alerts and per-group backlog, for "backlog rising").

Broker state is never stored here (DESIGN §1): these rows record what the console asked for
and what it saw. See docs/rebalance.md for the job states.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from console.leased_jobs import LeasedJob


class RebalanceJob(LeasedJob):
    """One rebalance trigger: a group, the groups of a topic, or every online group.

    States: ``queued`` (created, handed to Celery) -> ``running`` (a worker holds its lease) ->
    ``planned`` (a dry run finished: the expected movement is recorded), ``converged``,
    ``not_converged`` (the timeout passed first) or ``failed`` (with the reason). ``queued`` and
    ``running`` are the active states: at most one active job per ``scope_key`` (the database
    refuses a second, so two triggers racing for one group get one job). The lease (take,
    heartbeat, sweep, finish, fail) is :class:`console.leased_jobs.LeasedJob`'s.
    """

    QUEUED, RUNNING, PLANNED, CONVERGED, NOT_CONVERGED, FAILED = (
        "queued",
        "running",
        "planned",
        "converged",
        "not_converged",
        "failed",
    )
    STATUSES = (QUEUED, RUNNING, PLANNED, CONVERGED, NOT_CONVERGED, FAILED)
    ACTIVE = (QUEUED, RUNNING)
    GROUP, TOPIC, ALL = "group", "topic", "all"
    SCOPES = (GROUP, TOPIC, ALL)
    LEASE_S = 15  # a running job's lease, renewed every poll (< 3 s apart): a silent worker is lost after this
    QUEUED_MAX_S = 600  # a job no worker took within this is failed (no worker running, or Redis lost the message)

    requested_by = models.CharField(max_length=150)
    source = models.CharField(max_length=16, default="console")  # console, api, system
    scope = models.CharField(max_length=8, choices=[(s, s) for s in SCOPES])
    scope_value = models.CharField(max_length=255, blank=True, default="")  # the group or topic; "" for all
    namesrv_set = models.CharField(max_length=64, default="default", db_index=True)  # the tier it runs against
    scope_key = models.CharField(
        max_length=300
    )  # "apply:group:G", "dry:topic:T", "apply:all" (one active per set and key)
    dry_run = models.BooleanField(default=True)
    status = models.CharField(max_length=16, choices=[(s, s) for s in STATUSES], default=QUEUED, db_index=True)
    reason = models.TextField(blank=True, default="")
    timeout_s = models.PositiveIntegerField(default=30)
    groups_total = models.PositiveIntegerField(default=0)
    groups_converged = models.PositiveIntegerField(default=0)
    queues_moved = models.PositiveIntegerField(default=0)  # dry run: expected to move

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["namesrv_set", "scope_key"],
                condition=Q(status__in=("queued", "running")),
                name="consumers_one_active_rebalance_per_set_scope",
            ),
        ]

    def __str__(self) -> str:
        return f"rebalance job {self.pk} {self.scope_key} {self.status}"

    @property
    def active(self) -> bool:
        return self.status in self.ACTIVE

    def taken_fields(self) -> dict:
        return {
            "progress": "reading the group"
            if self.attempts == 1
            else f"delivered again (attempt {self.attempts}): taking over"
        }

    def lost_advice(self) -> str:
        return (
            " (the worker was killed or lost its connection); "
            "the members may be in the middle of a rebalance: look at the group, then trigger again"
        )

    def on_failed(self, reason: str, now, **context) -> None:
        """Fail the job's unfinished groups with it."""
        RebalanceGroupResult.objects.filter(job_id=self.pk, status=RebalanceGroupResult.PENDING).update(
            status=RebalanceGroupResult.FAILED, reason=reason[: self.REASON_MAX], finished_at=now
        )


class RebalanceGroupResult(models.Model):
    """One group of a job: its strategy, members before and after, and the outcome."""

    PENDING, PLANNED, CONVERGED, NOT_CONVERGED, FAILED, SKIPPED = (
        "pending",
        "planned",
        "converged",
        "not_converged",
        "failed",
        "skipped",
    )
    STATUSES = (PENDING, PLANNED, CONVERGED, NOT_CONVERGED, FAILED, SKIPPED)

    job = models.ForeignKey(RebalanceJob, on_delete=models.CASCADE, related_name="group_results")
    group = models.CharField(max_length=255, db_index=True)
    status = models.CharField(max_length=16, choices=[(s, s) for s in STATUSES], default=PENDING)
    reason = models.TextField(blank=True, default="")
    strategy = models.CharField(max_length=100, blank=True, default="")
    expected_known = models.BooleanField(
        default=False
    )  # the strategy could be recomputed (AVG, AVG_BY_CIRCLE, CONSISTENT_HASH)
    members_before = models.JSONField(default=list)
    members_after = models.JSONField(default=list)
    notified = models.JSONField(default=dict)  # broker address -> client ids it notified, or the error
    queues_total = models.PositiveIntegerField(default=0)
    queues_moved = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["group"]
        constraints = [models.UniqueConstraint(fields=["job", "group"], name="consumers_one_result_per_job_group")]


class RebalanceQueueChange(models.Model):
    """One queue of a group in a job: who held it before, who should, who holds it after.

    Owners are client ids, several joined by ", " (a queue held twice), "" for nobody; ``moved``
    is True when the holders after differ from the holders before (for a dry run: when the
    expected owner differs from the holders now).
    """

    result = models.ForeignKey(RebalanceGroupResult, on_delete=models.CASCADE, related_name="changes")
    job = models.ForeignKey(RebalanceJob, on_delete=models.CASCADE, related_name="queue_changes")
    group = models.CharField(max_length=255, db_index=True)
    topic = models.CharField(max_length=255)
    broker_name = models.CharField(max_length=255)
    queue_id = models.PositiveIntegerField()
    owner_before = models.CharField(max_length=1000, blank=True, default="")
    owner_expected = models.CharField(max_length=1000, blank=True, default="")
    owner_after = models.CharField(max_length=1000, blank=True, default="")
    moved = models.BooleanField(default=False, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["topic", "broker_name", "queue_id"]
