"""What the console saw of brokers: the last time each broker was registered and answering.

The name server forgets a broker that stops heartbeating; these rows remember it, so the
overview can say "known before and now gone" (an alert) and show when the console last saw it.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from console.leased_jobs import LeasedJob


class BrokerSighting(models.Model):
    namesrv_set = models.CharField(
        max_length=64, default="default", db_index=True
    )  # the tier it was seen in (docs/clusters.md)
    addr = models.CharField(max_length=255)
    cluster = models.CharField(max_length=255)
    broker_name = models.CharField(max_length=255)
    broker_id = models.IntegerField(default=0)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["cluster", "broker_name", "broker_id"]
        constraints = [
            models.UniqueConstraint(fields=["namesrv_set", "addr"], name="brokers_one_sighting_per_set_addr")
        ]

    def __str__(self) -> str:
        return f"{self.cluster}/{self.broker_name}/{self.broker_id} {self.addr}"


class PromotionJob(LeasedJob):
    """One promotion of a slave to its group's master (docs/promotion-jobs.md), run by a Celery task.

    States: ``queued`` (created, handed to Celery) -> ``running`` (a worker holds its lease) ->
    ``planned`` (a dry run finished: ``plan`` holds the candidate's answer, ``reason`` why a real
    run would be refused, if it would), ``promoted`` (the candidate is the master now), ``refused``
    (the candidate refused the real run and changed nothing: ``reason`` says what would be lost),
    or ``failed`` (it could not run: unreachable, not supported, the worker lost). ``queued`` and
    ``running`` are active: at most one active job per ``scope_key`` (``apply:<broker name>`` or
    ``dry:<broker name>``; the database refuses a second, so two requests racing get one job).
    ``before`` / ``after`` are the group as the console saw it (each member's role, epoch, HA link,
    lag) before the request and once the job ended. The lease (take, heartbeat, sweep, finish,
    fail) is :class:`console.leased_jobs.LeasedJob`'s.
    """

    QUEUED, RUNNING, PLANNED, PROMOTED, REFUSED, FAILED = (
        "queued",
        "running",
        "planned",
        "promoted",
        "refused",
        "failed",
    )
    STATUSES = (QUEUED, RUNNING, PLANNED, PROMOTED, REFUSED, FAILED)
    ACTIVE = (QUEUED, RUNNING)
    LEASE_S = 15  # a running job's lease, renewed while it waits: a silent worker is lost after this
    QUEUED_MAX_S = 600  # a job no worker took within this is failed (no worker running, or Redis lost the message)

    requested_by = models.CharField(max_length=150)
    source = models.CharField(max_length=16, default="console")  # console, api, system
    broker_name = models.CharField(max_length=255, db_index=True)
    broker_id = models.PositiveIntegerField()  # the candidate slave's id
    candidate_addr = models.CharField(max_length=255)  # where the request goes
    role = models.CharField(max_length=16, blank=True, default="")  # requested role; "" = the group's master role
    force = models.BooleanField(default=False)
    dry_run = models.BooleanField(default=True)
    namesrv_set = models.CharField(max_length=64, default="default", db_index=True)  # the tier it runs against
    scope_key = models.CharField(max_length=300)  # "apply:broker-a", "dry:broker-a" (one active per set and key)
    status = models.CharField(max_length=16, choices=[(s, s) for s in STATUSES], default=QUEUED, db_index=True)
    reason = models.TextField(blank=True, default="")
    plan = models.JSONField(
        default=dict, blank=True
    )  # the candidate's answer (docs/broker-group-promotion.md's contract)
    before = models.JSONField(default=dict, blank=True)  # the group before: {"members": [...], "epoch": ...}
    after = models.JSONField(default=dict, blank=True)  # the group when the job ended

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["namesrv_set", "scope_key"],
                condition=models.Q(status__in=("queued", "running")),
                name="brokers_one_active_promotion_per_set_group",
            ),
        ]

    def __str__(self) -> str:
        return f"promotion job {self.pk} {self.scope_key} id {self.broker_id} {self.status}"

    def taken_fields(self) -> dict:
        return {
            "progress": f"asking {self.broker_name} id {self.broker_id} ({self.candidate_addr}) "
            + ("what a promotion would do" if self.dry_run else "to promote itself")
        }

    def lost_advice(self) -> str:
        return (
            " (the worker was killed or lost its connection); "
            f"the candidate may have promoted itself: look at {self.broker_name}'s page before trying again"
        )


class NamesrvSet(models.Model):
    """A tier an admin added to the console: its name server list and how to talk to it (docs/clusters.md).

    The tier of ``settings.MQ`` (NAMESRV_ADDR, MQ_ACCESS_KEY ...) is always there, first, as
    ``default``; these rows follow it in ``position`` order. ``secret_key`` is never shown back.
    """

    name = models.CharField(max_length=64, unique=True)
    namesrv_addr = models.CharField(max_length=1000)  # host:port;host:port, as NAMESRV_ADDR
    access_key = models.CharField(max_length=255, blank=True, default="")  # the ACL account to sign with ("": unsigned)
    secret_key = models.CharField(max_length=255, blank=True, default="")
    tls = models.BooleanField(default=False)  # TLS with settings.MQ's TLS_CA / TLS_CERT / TLS_KEY / TLS_VERIFY
    position = models.PositiveIntegerField(default=0)  # the order in the switcher, after ``default``
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return f"name-server set {self.name} {self.namesrv_addr}"
