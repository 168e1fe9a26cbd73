"""The life of a dashboard refresh run: opened, started, beating, succeeded or failed, or lost.

A run is ``queued`` when opened (by the console, the API or the nightly beat), ``running`` once a
worker took it, then ``succeeded`` or ``failed``. Only one run per name-server set is active at a
time: :func:`run_open` hands back the set's active run instead of opening a second one.

While running, the worker writes ``heartbeat_at`` every ``RUN_HEARTBEAT_S`` (a thread, so a long
Spark stage does not stop it) and with every progress line. A ``running`` run whose heartbeat is
older than ``RUN_LOST_AFTER_S`` lost its worker (killed, out of memory, host gone): readers
show it as failed with "worker lost" at once (:func:`run_info`), and the next refresh request or
run records that (:func:`runs_reap`). Taking, beating, sweeping and failing a run are the one
lease of every leased job (:class:`console.leased_jobs.LeasedJob`, with ``RefreshRun``'s hooks). A run that fails or is lost after it started marks the
dashboards stale from its start (``DashboardState.stale_since``) unless they already were; the
next good run clears it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.utils import DatabaseError
from django.utils import timezone as dj_timezone

from analytics.models import DEFAULT_SET, DashboardState, RefreshRun

log = logging.getLogger(__name__)

Status = RefreshRun.Status
DEFAULT_HEARTBEAT_S = 10.0  # a few beats fit in the lost-after period even on a busy database


@dataclass(frozen=True)
class RefreshRunInfo:
    id: int
    trigger: str
    requested_by: str
    status: str
    progress: str
    error: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    rows_read: int | None
    window_from: datetime | None
    window_to: datetime | None
    is_new: bool = False  # opened by this request (the API answers 202) rather than already active (200)

    @property
    def active(self) -> bool:
        return self.status in RefreshRun.ACTIVE


def heartbeat_s() -> float:
    return float(settings.GANTRY_ANALYTICS.get("RUN_HEARTBEAT_S", DEFAULT_HEARTBEAT_S))


def lost_after_s() -> float:
    return RefreshRun.lease_s()


def never_started_after_s() -> float:
    """A queued run no worker took within this long was lost with its message (Redis flushed, say)."""
    return RefreshRun.queued_max_s()


def _now(now: datetime | None) -> datetime:
    return now or dj_timezone.now()


def lost_reason(run: RefreshRun, *, now: datetime | None = None) -> str | None:
    """Why an active run counts as lost now, or None while it is alive (or finished)."""
    return run.lost_reason(_now(now))


def run_info(run: RefreshRun, *, now: datetime | None = None) -> RefreshRunInfo:
    """The run as the console shows it: a lost run reads as failed even before it is recorded."""
    info = RefreshRunInfo(
        id=run.pk,
        trigger=run.trigger,
        requested_by=run.requested_by,
        status=run.status,
        progress=run.progress,
        error=run.error,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        heartbeat_at=run.heartbeat_at,
        rows_read=run.rows_read,
        window_from=run.window_from,
        window_to=run.window_to,
    )
    reason = lost_reason(run, now=now)
    if reason is not None:
        info = replace(info, status=Status.FAILED, error=reason)
    return info


def runs_reap(*, now: datetime | None = None) -> list[int]:
    """Record lost runs as failed (stale from their start); the ids recorded."""
    return RefreshRun.sweep(now=_now(now))


def run_open(
    *, trigger: str, requested_by: str, namesrv_set: str = DEFAULT_SET, now: datetime | None = None
) -> tuple[RefreshRun, bool]:
    """Open a queued run for the set, or return the set's active one; ``(run, opened)``."""
    runs_reap(now=now)
    with transaction.atomic():
        DashboardState.load(
            namesrv_set, for_update=True
        )  # one opener per set at a time (PostgreSQL row lock; SQLite: the write lock)
        active = RefreshRun.objects.filter(namesrv_set=namesrv_set, status__in=RefreshRun.ACTIVE).order_by("id").first()
        if active is not None:
            return active, False
        return RefreshRun.objects.create(
            namesrv_set=namesrv_set, trigger=trigger, requested_by=requested_by, created_at=_now(now)
        ), True


def run_start(run_id: int, *, now: datetime | None = None) -> RefreshRun | None:
    """Mark the run running (a redelivered running run is taken over); None when it is finished
    or gone: a redelivered task of a finished run does nothing."""
    run = RefreshRun.take(run_id, now=_now(now), takeover=True)
    if run is not None and run.attempts > 1:
        log.warning("refresh run %s: taken over (its task was delivered again, attempt %s)", run_id, run.attempts)
    return run


def run_fail(run_id: int, reason: str, *, now: datetime | None = None, stale: bool = True) -> bool:
    """Record an active run as failed; mark the dashboards stale from its start when it had
    started (and ``stale``). False when the run was no longer active."""
    return RefreshRun.fail(run_id, reason, now=_now(now), stale=stale)


class Heartbeat:
    """Beat for a running run: a thread writes ``heartbeat_at`` every ``interval_s``, and
    :meth:`progress` writes the progress line (and a beat) from the caller.

    When the caller is inside a database transaction (a test's), beats from another connection
    would wait on its lock: then only the progress lines beat.
    """

    def __init__(self, run_id: int, *, interval_s: float | None = None) -> None:
        self.run_id = run_id
        self.interval_s = heartbeat_s() if interval_s is None else interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Heartbeat:
        if not connection.in_atomic_block:
            self._thread = threading.Thread(target=self._run, name=f"refresh-{self.run_id}-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def _beat(self, progress: str | None = None) -> bool:
        return RefreshRun.heartbeat(self.run_id, progress=progress)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                try:
                    self._beat()
                except DatabaseError as exc:  # a locked database: the next beat tries again
                    log.warning("refresh run %s: heartbeat failed: %s", self.run_id, exc)
                    connection.close()
        finally:
            connection.close()

    def progress(self, text: str) -> None:
        log.info("refresh run %s: %s", self.run_id, text)
        self._beat(progress=text)


LIVE_RUNS_KEPT = timedelta(hours=6)  # a live run a minute: the history keeps its last hours, the rest is noise


def runs_prune(*, now: datetime | None = None) -> int:
    """Delete the succeeded ``live`` runs finished more than :data:`LIVE_RUNS_KEPT` ago (beat
    opens one a minute per set), never a set's last good run; how many were deleted. Failed runs stay."""
    now = _now(now)
    old = RefreshRun.objects.filter(
        trigger=RefreshRun.Trigger.LIVE, status=Status.SUCCEEDED, finished_at__lt=now - LIVE_RUNS_KEPT
    )
    old = old.exclude(
        pk__in=[pk for pk in DashboardState.objects.values_list("last_good_run_id", flat=True) if pk is not None]
    )
    deleted, _ = old.delete()
    return deleted
