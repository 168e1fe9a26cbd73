"""Alert rules and their history, and the health scan's record: what an operator asked to be told about,
what was sent, and what each scan found (:class:`HealthScan`).

The tables keep the names they had in the consumers app (``db_table``): moving the models here changed
the migration state only (``health/migrations/0001_initial.py``, ``consumers/migrations/0006_...``).

A rule watches one condition of one group, topic or broker (``kind``, ``target``, ``threshold``),
evaluated by every health scan (health.rules); the evaluation state lives on the rule
(``pending_since``: the condition holds since then; ``firing``) so "for T minutes" survives between
scans and a restart. Each change of state writes an :class:`AlertEvent` with the delivery results.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

LAG_ABOVE = "lag_above"
NO_CONSUMER_ONLINE = "no_consumer_online"
DLQ_GROWING = "dlq_growing"
BROKER_EXPIRED = "broker_expired"
DISK_ABOVE = "disk_above"
TOPIC_LAG_ABOVE = "topic_lag_above"  # every group consuming the topic, their lag on it summed
TOPIC_NO_CONSUMER_ONLINE = "topic_no_consumer_online"  # no online member of any group subscribes to the topic
LAG_GROWING = "lag_growing"  # a group's lag rose over the last for_minutes and never fell in between
SLAVE_DISCONNECTED = "slave_disconnected"  # a slave's HA link is down, or a SYNC_MASTER has no slave connected
KINDS = (
    LAG_ABOVE,
    LAG_GROWING,
    NO_CONSUMER_ONLINE,
    DLQ_GROWING,
    TOPIC_LAG_ABOVE,
    TOPIC_NO_CONSUMER_ONLINE,
    BROKER_EXPIRED,
    SLAVE_DISCONNECTED,
    DISK_ABOVE,
)
FIRING, RESOLVED = "firing", "resolved"


class AlertRule(models.Model):
    """One rule: condition, how long it must hold, where to send, and its evaluation state."""

    name = models.CharField(max_length=100)  # a label; rules are named by id
    kind = models.CharField(max_length=32, choices=[(k, k) for k in KINDS])
    target = models.CharField(
        max_length=255, blank=True, default=""
    )  # group, topic, or broker name ("" = every group / broker)
    namesrv_set = models.CharField(max_length=64, default="default", db_index=True)  # the tier whose scan evaluates it
    threshold = models.FloatField(default=0)  # messages (lag, DLQ rise) or a ratio 0..1 (disk)
    for_minutes = models.PositiveIntegerField(default=0)  # the condition must hold this long before it fires
    webhook_url = models.CharField(max_length=2000, blank=True, default="")
    emails = models.JSONField(default=list)  # addresses
    enabled = models.BooleanField(default=True)
    silenced_until = models.DateTimeField(null=True, blank=True)  # no notification before then
    silenced_by = models.CharField(max_length=150, blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # evaluation state (written by the health scan only)
    pending_since = models.DateTimeField(null=True, blank=True)
    firing = models.BooleanField(default=False)
    last_value = models.FloatField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    samples = models.JSONField(default=list)  # dlq_growing: [[epoch seconds, messages], ...] over its window
    last_message = models.TextField(
        blank=True, default=""
    )  # what the last evaluation read (the overview shows it while firing)
    # a default rule's key (health.defaults): created once per cluster, edited, silenced or disabled, never deleted
    builtin = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        ordering = ["name"]
        db_table = "consumers_alertrule"  # created by the consumers app: the move changed no table
        constraints = [
            models.UniqueConstraint(
                fields=["namesrv_set", "builtin"],
                condition=~models.Q(builtin=""),
                name="alert_rule_one_builtin_per_set",
            )
        ]

    def silenced(self, now=None) -> bool:
        return self.silenced_until is not None and self.silenced_until > (now or timezone.now())

    def __str__(self) -> str:
        return self.name


class AlertEvent(models.Model):
    """A rule started firing or resolved: when, why, and what each channel answered."""

    rule = models.ForeignKey(AlertRule, on_delete=models.SET_NULL, null=True, blank=True, related_name="events")
    rule_name = models.CharField(max_length=100)  # kept when the rule is deleted
    kind = models.CharField(max_length=32)
    target = models.CharField(max_length=255, blank=True, default="")
    state = models.CharField(max_length=16, choices=[(FIRING, FIRING), (RESOLVED, RESOLVED)], db_index=True)
    value = models.FloatField(null=True, blank=True)
    message = models.TextField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    notified = models.BooleanField(default=False)  # False: silenced, acknowledged or no channel
    delivery = models.JSONField(default=list)  # [{"channel", "to", "ok", "detail", "attempts"}]
    acked_by = models.CharField(max_length=150, blank=True, default="")
    acked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        db_table = "consumers_alertevent"


class HealthScan(models.Model):
    """One run of the periodic health scan: the alerts it raised and each group's backlog.

    The overview reads the alerts of the newest fresh scan (no scanning per page load); "backlog
    rising" compares ``backlog`` over the last scans. Old rows are pruned by the scan itself.
    """

    namesrv_set = models.CharField(
        max_length=64, default="default", db_index=True
    )  # the tier scanned (one scan per set)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    ok = models.BooleanField(default=True)
    error = models.TextField(blank=True, default="")
    alerts = models.JSONField(default=list)  # [{"level", "kind", "target", "message"}]
    backlog = models.JSONField(default=dict)  # group -> total lag (messages) at this scan
    offline = models.JSONField(
        default=dict
    )  # group -> lag, for groups with a backlog and no consumer online at this scan
    jobs_failed = models.PositiveIntegerField(default=0)  # rebalance jobs found without a worker and failed

    class Meta:
        ordering = ["-started_at", "-id"]
        db_table = "consumers_healthscan"  # created by the consumers app: the move changed no table
