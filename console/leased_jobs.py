"""One base for the rows a Celery worker runs under a lease: promotion jobs, rebalance jobs, refresh runs.

A row is ``queued`` when created, ``running`` once a worker *took* it, then ends in a state of its
own kind (``failed`` is common to all). The lease is what a running row says about its worker:

- **take** (:meth:`LeasedJob.take`): in one transaction holding the row's lock, a ``queued`` row or
  a ``running`` one whose lease lapsed becomes ``running`` with a fresh lease and ``attempts`` + 1.
  A finished row is not taken (a redelivered message does nothing). ``takeover=True`` also takes a
  running row whose lease still holds: the row's own task delivered again or retried, which knows
  the earlier delivery is gone. The row lock makes two takers wait for each other, so of two
  takers of one row one gets it, and a row failed meanwhile stays failed.
- **heartbeat** (:meth:`LeasedJob.heartbeat`): a running row's worker renews the lease
  (``heartbeat_at`` = now, ``lease_until`` = now + :meth:`LeasedJob.lease_s`), with a progress line.
- **sweep** (:meth:`LeasedJob.sweep`): a running row whose lease lapsed lost its worker: it is
  queued again while ``attempts`` < ``MAX_ATTEMPTS``, else failed ("worker lost: no heartbeat since
  ..."); a queued row no worker took within :meth:`LeasedJob.queued_max_s` of its last sign of life
  is failed (no worker running, or the broker lost the message). The decision is rechecked under
  the row's lock, so a worker that beat in between keeps its row.
- **finish** (:meth:`LeasedJob.finish`) and **fail** (:meth:`LeasedJob.fail`): a running row ends in
  a status; an active one fails with a reason. Both drop the lease.

Every step takes ``now`` (default: ``django.utils.timezone.now()``), the clock the callers inject.

A subclass declares ``status`` (its choices, with ``queued``, ``running`` and ``failed``) and the
text field ``REASON_FIELD`` names, and may override the hooks below (each says what it is for).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any, Self

from django.db import models, transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

log = logging.getLogger(__name__)

LIFE = "_last_sign_of_life"  # the annotation the sweep's query filters on (heartbeat, else start, else creation)


class LeasedJob(models.Model):
    QUEUED, RUNNING, FAILED = "queued", "running", "failed"
    ACTIVE: tuple[str, ...] = (QUEUED, RUNNING)  # the states a row can still leave

    # -- hooks: class attributes ----------------------------------------------------------------------
    LEASE_S: float = 15.0  # a take's or a beat's lease: a silent worker is lost after this
    QUEUED_MAX_S: float = 600.0  # a queued row no worker took within this is failed
    MAX_ATTEMPTS: int = 1  # a lapsed row is queued again while attempts < this; 1: a lapse fails it
    REASON_FIELD: str = "reason"  # the text field a failure writes (analytics' runs say "error")
    REASON_MAX: int = 4000  # the failure text is cut to this

    attempts = models.PositiveIntegerField(default=0)  # takes of the row (a retry or a redelivery adds one)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)  # a running row whose lease passed lost its worker
    progress = models.CharField(max_length=500, blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        abstract = True

    # -- hooks: methods -------------------------------------------------------------------------------

    @classmethod
    def lease_s(cls) -> float:
        """The lease a take or a beat grants (a setting, for a subclass that reads one)."""
        return float(cls.LEASE_S)

    @classmethod
    def queued_max_s(cls) -> float:
        return float(cls.QUEUED_MAX_S)

    @classmethod
    def patience_s(cls) -> float | None:
        """How long a reader waits after a running row's last sign of life before it counts as lost,
        whatever its lease says; None (the default): the lease alone decides."""
        return None

    def taken_fields(self) -> dict[str, Any]:
        """The fields a take writes besides the lease's (a progress line, a cleared error)."""
        return {"progress": "taken" if self.attempts <= 1 else f"delivered again (attempt {self.attempts})"}

    def lost_advice(self) -> str:
        """What follows "worker lost: no heartbeat since ... UTC" in the failure (what to look at)."""
        return ""

    @classmethod
    def never_taken_reason(cls) -> str:
        return f"no worker took the job within {cls.queued_max_s():.0f} s (is a Celery worker running?)"

    @classmethod
    def lock_before(cls, pk: int) -> None:
        """Lock, before the row, what a failure also writes (one lock order with the subclass's own writers)."""

    def on_failed(self, reason: str, now: datetime, **context: Any) -> None:
        """Write what a failure changes beside the row, in the failure's transaction (``context``: the caller's)."""

    # -- what the row says --------------------------------------------------------------------------------

    def last_sign_of_life(self) -> datetime:
        return self.heartbeat_at or self.started_at or self.created_at

    def lapsed(self, now: datetime) -> bool:
        """Whether a running row lost its worker at ``now`` (its lease passed, or the reader's patience)."""
        if self.status != self.RUNNING:
            return False
        if self.lease_until is not None and self.lease_until < now:
            return True
        patience = self.patience_s()
        return patience is not None and self.last_sign_of_life() < now - timedelta(seconds=patience)

    def lost_reason(self, now: datetime) -> str | None:
        """Why an active row counts as lost at ``now``; None while it is alive (or finished)."""
        if self.lapsed(now):
            seen = self.last_sign_of_life().astimezone(dt_timezone.utc)
            return f"worker lost: no heartbeat since {seen:%Y-%m-%d %H:%M:%S} UTC{self.lost_advice()}"
        if self.status == self.QUEUED and self.last_sign_of_life() < now - timedelta(seconds=self.queued_max_s()):
            return self.never_taken_reason()
        return None

    @classmethod
    def lost_q(cls, now: datetime) -> Q:
        """:meth:`lost_reason`'s rows as a filter on a queryset annotated with ``LIFE``."""
        lapsed = Q(lease_until__lt=now)
        patience = cls.patience_s()
        if patience is not None:
            lapsed |= Q(**{f"{LIFE}__lt": now - timedelta(seconds=patience)})
        never_taken = Q(status=cls.QUEUED, **{f"{LIFE}__lt": now - timedelta(seconds=cls.queued_max_s())})
        return (Q(status=cls.RUNNING) & lapsed) | never_taken

    # -- the steps ----------------------------------------------------------------------------------------

    @classmethod
    def take(cls, pk: int, *, now: datetime | None = None, takeover: bool = False) -> Self | None:
        """Take row ``pk`` for a worker (see the module's docstring); None when it is not to be taken."""
        now = now or timezone.now()
        with transaction.atomic():
            # the row lock serializes two takers and a sweep or a failure (PostgreSQL; SQLite's
            # IMMEDIATE transaction holds the database's write lock already)
            job = cls.objects.select_for_update().filter(pk=pk).first()
            if job is None or job.status not in cls.ACTIVE:
                return None
            if job.status == cls.RUNNING and not takeover and not job.lapsed(now):
                return None
            job.attempts += 1
            job.status = cls.RUNNING
            job.started_at = job.started_at or now
            job.heartbeat_at = now
            job.lease_until = now + timedelta(seconds=cls.lease_s())
            extra = job.taken_fields()
            for name, value in extra.items():
                setattr(job, name, value)
            job.save(update_fields=["attempts", "status", "started_at", "heartbeat_at", "lease_until", *extra])
        return job

    @classmethod
    def heartbeat(cls, pk: int, *, progress: str | None = None, now: datetime | None = None) -> bool:
        """Renew a running row's lease (and write ``progress``); False when it is no longer running."""
        now = now or timezone.now()
        fields: dict[str, Any] = {"heartbeat_at": now, "lease_until": now + timedelta(seconds=cls.lease_s())}
        if progress is not None:
            fields["progress"] = progress[: cls._meta.get_field("progress").max_length]
        return bool(cls.objects.filter(pk=pk, status=cls.RUNNING).update(**fields))

    @classmethod
    def finish(cls, pk: int, status: str, *, now: datetime | None = None, **fields: Any) -> bool:
        """End a running row in ``status`` with ``fields``; False when it was no longer running."""
        now = now or timezone.now()
        done = cls.objects.filter(pk=pk, status=cls.RUNNING).update(
            status=status, finished_at=now, heartbeat_at=now, lease_until=None, **fields
        )
        return bool(done)

    @classmethod
    def fail(cls, pk: int, reason: str, *, now: datetime | None = None, **context: Any) -> bool:
        """Fail an active row with ``reason`` (and :meth:`on_failed`); False when it had finished."""
        now = now or timezone.now()
        with transaction.atomic():
            cls.lock_before(pk)
            job = cls.objects.select_for_update().filter(pk=pk, status__in=cls.ACTIVE).first()
            if job is None:
                return False
            job._fail(reason, now, **context)
        return True

    def _fail(self, reason: str, now: datetime, **context: Any) -> None:
        self.status, self.finished_at, self.lease_until = self.FAILED, now, None
        setattr(self, self.REASON_FIELD, reason[: self.REASON_MAX])
        self.save(update_fields=["status", "finished_at", "lease_until", self.REASON_FIELD])
        self.on_failed(reason, now, **context)

    def _queue_again(self, reason: str) -> None:
        self.status, self.lease_until = self.QUEUED, None
        self.progress = f"{reason}: queued again after attempt {self.attempts} of {self.MAX_ATTEMPTS}"[
            : self._meta.get_field("progress").max_length
        ]
        self.save(update_fields=["status", "lease_until", "progress"])

    @classmethod
    def sweep(cls, *, jobs: QuerySet | None = None, now: datetime | None = None) -> list[int]:
        """Queue again or fail the rows of ``jobs`` (default: all) that lost their worker; their ids."""
        now = now or timezone.now()
        jobs = cls.objects.all() if jobs is None else jobs
        life = Coalesce("heartbeat_at", "started_at", "created_at")
        swept = []
        for pk in jobs.annotate(**{LIFE: life}).filter(cls.lost_q(now)).values_list("pk", flat=True):
            with transaction.atomic():
                cls.lock_before(pk)
                job = cls.objects.select_for_update().filter(pk=pk, status__in=cls.ACTIVE).first()
                reason = job.lost_reason(now) if job is not None else None  # a beat in between keeps it
                if reason is None:
                    continue
                if job.status == cls.RUNNING and max(job.attempts, 1) < cls.MAX_ATTEMPTS:  # running: taken once
                    job._queue_again(reason)
                else:
                    job._fail(reason, now)
            log.warning("%s %s: %s (%s)", cls._meta.verbose_name, pk, reason, job.status)
            swept.append(pk)
        return swept
