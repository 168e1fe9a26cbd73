"""A Celery job runs against the tier it was created under: a rebalance dry run asked with
``?namesrv_set=second`` plans the group that lives only on the second tier (real worker, real Redis,
two real tiers); the same request on ``default`` finds no such group. A task queued under a set that
is removed before it runs fails rather than running against another tier."""

from __future__ import annotations

import pytest

from brokers.gateway.client import get_admin_client
from brokers.models import NamesrvSet
from console import namesrv_scope
from console.errors import Unavailable
from console.queueing import submit
from console.tasks import ping_task
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._rebalance import balanced_group, wait_until

pytestmark = pytest.mark.slow


def test_a_rebalance_job_runs_on_the_tier_it_was_created_under(
    celery_worker, operator, console_cluster, second_session_cluster, topic_name, group
) -> None:
    from brokers.engine.client.admin import BlockingMQAdminClient

    NamesrvSet.objects.create(name="second", namesrv_addr=second_session_cluster.namesrv_addr)
    with BlockingMQAdminClient(second_session_cluster.namesrv_addr) as admin:
        create_topic(admin, second_session_cluster, topic_name, queues=4)
    members, _ = balanced_group(second_session_cluster, group, topic_name, 2)
    try:
        celery_worker()
        asked = operator.post(f"/api/v1/groups/{group}/rebalance?namesrv_set=second", {}, format="json")
        assert asked.status_code == 202, asked.content

        def done():
            body = operator.get(f"/api/v1/rebalance-jobs/{asked.json()['id']}").json()
            return body if not body["active"] else None

        job = wait_until(done, 60, "the job to finish", every_s=0.3)
        assert job["status"] == "planned", job
        assert job["groups_total"] == 1 and job["groups"][0]["group"] == group
        on_default = operator.post(f"/api/v1/groups/{group}/rebalance", {}, format="json")
        assert (
            on_default.status_code != 202
            or wait_until(
                lambda: (
                    (b := operator.get(f"/api/v1/rebalance-jobs/{on_default.json()['id']}").json())
                    and not b["active"]
                    and b
                ),
                60,
                "the default job",
            )["status"]
            != "planned"
        )
    finally:
        for m in members:
            m.shutdown()


def test_a_task_carries_its_set_and_fails_once_the_set_is_gone(
    celery_worker, console_cluster, second_session_cluster
) -> None:
    celery_worker()
    row = NamesrvSet.objects.create(name="second", namesrv_addr=second_session_cluster.namesrv_addr)
    with namesrv_scope.scope("second"):  # as brokers.namesrv_set_scope sets it for a request with ?namesrv_set=second
        result = ping_task.AsyncResult(submit(ping_task, kwargs={}))
    assert result.get(timeout=30)["namesrv_set"] == "second"
    assert ping_task.delay().get(timeout=30)["namesrv_set"] == "default"
    row.delete()
    with (
        namesrv_scope.scope("second"),
        pytest.raises(Unavailable, match="no longer configured"),
    ):  # a task's run, as console.celery enters it
        get_admin_client()
