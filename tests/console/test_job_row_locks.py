"""A task delivery taking a promotion or rebalance job waits for whoever holds the job's row, so a job
failed in the meantime (the sweep, a failed submit) stays failed instead of being revived as running.

On SQLite the IMMEDIATE transaction serializes the two already; on PostgreSQL (read committed) only
the row lock the take asks for does: without it the take reads "queued", waits at its UPDATE, and
then overwrites the failure. `make test` runs this on both backends.
"""

from __future__ import annotations

import threading
import time

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def _promotion_job():
    from brokers.models import PromotionJob
    from brokers.promotion.runner import _take

    job = PromotionJob.objects.create(
        requested_by="alice",
        broker_name="broker-a",
        broker_id=1,
        candidate_addr="127.0.0.1:1",
        scope_key="apply:broker-a",
        dry_run=False,
    )
    return PromotionJob, job, _take


def _rebalance_job():
    from consumers.models import RebalanceJob
    from consumers.rebalance.runner import _take

    job = RebalanceJob.objects.create(
        requested_by="alice",
        scope="group",
        scope_value="G_x",
        scope_key="apply:group:G_x",
        dry_run=False,
        task_id="t-1",
    )
    return RebalanceJob, job, _take


@pytest.mark.parametrize("make", [_promotion_job, _rebalance_job], ids=["promotion", "rebalance"])
def test_a_delivery_does_not_revive_a_job_failed_while_it_waited(make):
    from django.db import connection, transaction

    model, job, take = make()
    locked, errors = threading.Event(), []

    def fail_it_while_holding_the_row():
        try:
            with transaction.atomic():
                model.objects.select_for_update().get(pk=job.pk)
                locked.set()
                time.sleep(0.5)  # the delivery arrives meanwhile
                model.objects.filter(pk=job.pk).update(status=model.FAILED, reason="worker lost")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            locked.set()
        finally:
            connection.close()

    holder = threading.Thread(target=fail_it_while_holding_the_row)
    holder.start()
    assert locked.wait(10)
    taken = take(job.pk)
    holder.join(10)
    assert not errors
    job.refresh_from_db()
    assert taken is None
    assert (job.status, job.reason, job.attempts) == (model.FAILED, "worker lost", 0)
