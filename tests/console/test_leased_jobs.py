"""The one lease of every leased job (console.leased_jobs): take, heartbeat, sweep, finish, fail.

One suite over the three models that subclass it (promotion jobs, rebalance jobs, refresh runs),
on the injected clock (every step is given ``now``): no sleeps. `make test` runs it on SQLite and,
with ``GANTRY_TEST_DB=postgres``, on PostgreSQL.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from datetime import timezone as dt_timezone

import pytest
from django.utils import timezone


def _promotion():
    from brokers.models import PromotionJob

    return PromotionJob.objects.create(
        requested_by="alice", broker_name="broker-a", broker_id=1, candidate_addr="127.0.0.1:1", scope_key="dry:a"
    )


def _rebalance():
    from consumers.models import RebalanceGroupResult, RebalanceJob

    job = RebalanceJob.objects.create(requested_by="alice", scope="group", scope_value="G_x", scope_key="dry:group:G")
    RebalanceGroupResult.objects.create(job=job, group="G_x")
    return job


def _refresh_run():
    from analytics.models import RefreshRun

    return RefreshRun.objects.create(trigger="api", requested_by="alice")


MAKERS = pytest.mark.parametrize(
    "make", [_promotion, _rebalance, _refresh_run], ids=["promotion", "rebalance", "refresh-run"]
)


def _reason(job) -> str:
    return getattr(job, type(job).REASON_FIELD)


def _lapse(job):
    """An instant just past the row's lease."""
    return job.lease_until + timedelta(seconds=1)


@MAKERS
@pytest.mark.django_db(transaction=True)
def test_of_two_concurrent_takers_one_takes_the_row(make):
    from django.db import connection

    job = make()
    model = type(job)
    start, taken, errors = threading.Barrier(2), [], []

    def taker():
        try:
            start.wait(10)
            taken.append(model.take(job.pk))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=taker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert sorted(t is None for t in taken) == [False, True]  # one row, one None
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("running", 1)


@MAKERS
@pytest.mark.django_db
def test_take_leases_the_row_and_a_live_lease_is_taken_only_by_a_takeover(make):
    job = make()
    model, t0 = type(job), timezone.now()
    taken = model.take(job.pk, now=t0)
    assert (taken.status, taken.attempts, taken.started_at, taken.heartbeat_at) == ("running", 1, t0, t0)
    assert taken.lease_until == t0 + timedelta(seconds=model.lease_s())

    assert model.take(job.pk, now=t0 + timedelta(seconds=1)) is None  # its worker holds it
    again = model.take(job.pk, now=t0 + timedelta(seconds=2), takeover=True)  # the same task, delivered again
    assert (again.attempts, again.started_at, again.heartbeat_at) == (2, t0, t0 + timedelta(seconds=2))

    assert model.take(job.pk, now=_lapse(again)) is not None  # a lapsed lease is taken by anyone
    assert model.finish(job.pk, "failed", now=_lapse(again)) is True
    assert model.take(job.pk, takeover=True) is None  # a finished row is never taken again
    assert model.objects.get(pk=job.pk).attempts == 3


@MAKERS
@pytest.mark.django_db
def test_heartbeat_extends_the_lease_so_the_sweep_leaves_the_row(make):
    job = make()
    model, t0 = type(job), timezone.now()
    lease = timedelta(seconds=model.lease_s())
    model.take(job.pk, now=t0)
    beat_at = t0 + lease - timedelta(seconds=1)
    assert model.heartbeat(job.pk, progress="look 3: " + "x" * 600, now=beat_at) is True
    job.refresh_from_db()
    assert (job.heartbeat_at, job.lease_until) == (beat_at, beat_at + lease)
    assert job.progress.startswith("look 3: ") and len(job.progress) == model._meta.get_field("progress").max_length

    assert model.sweep(now=t0 + lease + timedelta(seconds=1)) == []  # past the first lease, within the renewed one
    job.refresh_from_db()
    assert job.status == "running" and job.lost_reason(t0 + lease + timedelta(seconds=1)) is None
    assert model.sweep(now=beat_at + lease + timedelta(seconds=1)) == [job.pk]


@MAKERS
@pytest.mark.django_db
def test_a_lapsed_lease_fails_the_row_at_max_attempts(make):
    job = make()
    model, t0 = type(job), timezone.now()
    assert model.MAX_ATTEMPTS == 1  # every leased job today: a worker lost fails its job
    taken = model.take(job.pk, now=t0)
    lapsed_at = _lapse(taken)
    assert model.sweep(now=lapsed_at - timedelta(seconds=2)) == []
    assert model.sweep(now=lapsed_at) == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.finished_at, job.lease_until) == ("failed", lapsed_at, None)
    assert _reason(job) == f"worker lost: no heartbeat since {t0.astimezone(dt_timezone.utc):%Y-%m-%d %H:%M:%S} UTC" + (
        job.lost_advice()
    )
    assert model.heartbeat(job.pk, now=lapsed_at) is False  # the lost worker's late beat changes nothing
    assert model.sweep(now=lapsed_at + timedelta(days=1)) == []


@MAKERS
@pytest.mark.django_db
def test_a_lapsed_lease_is_queued_again_and_retaken_until_max_attempts(make, monkeypatch):
    job = make()
    model, now = type(job), timezone.now()
    monkeypatch.setattr(model, "MAX_ATTEMPTS", 3)
    for attempt in (1, 2):
        taken = model.take(job.pk, now=now)
        assert taken.attempts == attempt
        now = _lapse(taken)
        assert model.sweep(now=now) == [job.pk]
        job.refresh_from_db()
        assert job.status == "queued" and job.lease_until is None and job.finished_at is None
        assert job.progress.startswith("worker lost: no heartbeat since")
        assert f"queued again after attempt {attempt} of 3" in job.progress
        assert model.sweep(now=now) == []  # queued again: a worker may take it
        now += timedelta(seconds=1)
    third = model.take(job.pk, now=now)
    assert third.attempts == 3 and third.started_at is not None
    assert model.sweep(now=_lapse(third)) == [job.pk]
    job.refresh_from_db()
    assert job.status == "failed" and _reason(job).startswith("worker lost: no heartbeat since")


@MAKERS
@pytest.mark.django_db
def test_a_queued_row_no_worker_took_is_failed(make):
    job = make()
    model = type(job)
    late = job.created_at + timedelta(seconds=model.queued_max_s() + 1)
    assert model.sweep(now=late - timedelta(seconds=2)) == []
    assert model.sweep(jobs=model.objects.exclude(pk=job.pk), now=late) == []  # only the rows asked about
    assert model.sweep(now=late) == [job.pk]
    job.refresh_from_db()
    assert job.status == "failed" and _reason(job) == model.never_taken_reason() and job.attempts == 0


@MAKERS
@pytest.mark.django_db
def test_fail_and_finish_change_only_a_row_they_may_end(make):
    job = make()
    model, t0 = type(job), timezone.now()
    assert model.finish(job.pk, "failed", now=t0) is False  # queued: not running yet
    model.take(job.pk, now=t0)
    assert model.fail(job.pk, "x" * 5000, now=t0 + timedelta(seconds=1)) is True
    job.refresh_from_db()
    assert (job.status, job.finished_at, job.lease_until) == ("failed", t0 + timedelta(seconds=1), None)
    assert _reason(job) == "x" * model.REASON_MAX
    assert model.fail(job.pk, "again", now=t0 + timedelta(seconds=2)) is False
    assert model.finish(job.pk, "failed", now=t0 + timedelta(seconds=2)) is False
    job.refresh_from_db()
    assert _reason(job) == "x" * model.REASON_MAX and job.finished_at == t0 + timedelta(seconds=1)


@pytest.mark.django_db
def test_the_subclasses_hooks_write_beside_the_row():
    from analytics.models import DashboardState
    from consumers.models import RebalanceGroupResult

    rebalance = _rebalance()
    type(rebalance).fail(rebalance.pk, "worker lost")
    assert RebalanceGroupResult.objects.get(job=rebalance).status == "failed"  # its unfinished groups with it

    run, t0 = _refresh_run(), timezone.now()
    type(run).take(run.pk, now=t0)
    type(run).fail(run.pk, "Spark: executor lost", now=t0)
    assert DashboardState.load(run.namesrv_set).stale_since == t0  # the dashboards stale from the run's start
