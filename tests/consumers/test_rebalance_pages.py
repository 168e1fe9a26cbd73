"""The rebalance pages without a worker: the group page's panel (dry run first), the trigger
(page and htmx), the job card polling while active and the Apply button once planned, refusals,
and the history with its filters and a group's queue moves."""

from __future__ import annotations

import pytest

from console.models import AuditEntry
from consumers.models import RebalanceGroupResult, RebalanceJob, RebalanceQueueChange
from consumers.rebalance.jobs import scope_key

pytestmark = pytest.mark.django_db


def planned_job(group: str, status: str = "planned", dry_run: bool = True) -> RebalanceJob:
    job = RebalanceJob.objects.create(
        requested_by="ops",
        scope="group",
        scope_value=group,
        dry_run=dry_run,
        status=status,
        scope_key=scope_key("group", group, dry_run) + ("" if status in ("queued", "running") else "#done"),
        queues_moved=1,
        groups_total=1,
        timeout_s=25,
    )
    result = RebalanceGroupResult.objects.create(
        job=job, group=group, status="planned", strategy="AVG", queues_total=2, queues_moved=1
    )
    for qid, before, expected, after in (
        (0, "c1", "c2", "c2" if not dry_run else ""),
        (1, "c1", "c1", "c1" if not dry_run else ""),
    ):
        RebalanceQueueChange.objects.create(
            result=result,
            job=job,
            group=group,
            topic="T",
            broker_name="broker-a",
            queue_id=qid,
            owner_before=before,
            owner_expected=expected,
            owner_after=after,
            moved=before != expected,
        )
    return job


def test_the_group_page_offers_a_dry_run_to_operators_only(as_role, online) -> None:
    page = as_role("viewer").get(f"/groups/{online}/").content.decode()
    assert (
        'data-testid="rebalance-panel"' in page
        and 'data-testid="rebalance-form"' not in page
        and "Operators can rebalance" in page
    )
    page = as_role("operator").get(f"/groups/{online}/").content.decode()
    assert 'data-testid="rebalance-form"' in page and 'name="dry_run" value="1"' in page
    assert f'action="/groups/{online}/rebalance"' in page and f'hx-post="/groups/{online}/rebalance"' in page


def test_a_dry_run_from_the_page_goes_to_the_job_which_polls_while_active(as_role, online, celery_redis) -> None:
    client = as_role("operator")
    response = client.post(f"/groups/{online}/rebalance", {"dry_run": "1", "timeout_s": "20"})
    job = RebalanceJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/rebalance-jobs/{job.pk}/"
    assert job.dry_run and job.status == "queued" and job.timeout_s == 20 and job.source == "console"
    page = client.get(response["Location"]).content.decode()
    assert (
        'data-status="queued"' in page
        and 'hx-trigger="every 1s"' in page
        and f'hx-get="/rebalance-jobs/{job.pk}/"' in page
    )
    fragment = client.post(f"/groups/{online}/rebalance", {"dry_run": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert (
        "<html" not in fragment and 'data-testid="rebalance-already"' in fragment and f'data-job="{job.pk}"' in fragment
    )
    assert not AuditEntry.objects.filter(action="group.rebalance").exists()  # dry runs change nothing


def test_a_planned_job_shows_the_movement_and_offers_apply(as_role, online, celery_redis) -> None:
    job = planned_job(online)
    client = as_role("operator")
    card = client.get(f"/rebalance-jobs/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in card  # finished: polling stops
    assert 'data-queue="T/broker-a:0" data-moved="1"' in card and 'data-queue="T/broker-a:1" data-moved="0"' in card
    assert (
        'data-testid="apply-form"' in card
        and 'name="dry_run" value="0"' in card
        and 'name="timeout_s" value="25"' in card
    )
    applied = client.post(f"/groups/{online}/rebalance", {"dry_run": "0", "timeout_s": "25"}, HTTP_HX_REQUEST="true")
    assert applied.status_code == 200
    new = RebalanceJob.objects.exclude(pk=job.pk).get()
    assert not new.dry_run and new.status == "queued" and 'hx-trigger="every 1s"' in applied.content.decode()
    assert AuditEntry.objects.get(action="group.rebalance").target == online
    viewer_card = as_role("viewer").get(f"/rebalance-jobs/{job.pk}/").content.decode()
    assert 'data-testid="apply-form"' not in viewer_card


def test_refusals_on_the_page(as_role, online, celery_redis) -> None:
    client = as_role("viewer")
    assert client.post(f"/groups/{online}/rebalance", {"dry_run": "1"}).status_code == 403
    client = as_role("operator")
    bad = client.post(f"/groups/{online}/rebalance", {"timeout_s": "0"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 400 and 'data-field="timeout_s"' in bad.content.decode()
    celery_redis.stop()
    down = client.post(f"/groups/{online}/rebalance", {"dry_run": "0"}, HTTP_HX_REQUEST="true")
    assert down.status_code == 503 and "Redis" in down.content.decode()
    redirected = client.post(f"/groups/{online}/rebalance", {"dry_run": "1"}, follow=True)
    assert "Redis" in redirected.content.decode() and redirected.redirect_chain[-1][0] == f"/groups/{online}/"
    assert set(RebalanceJob.objects.values_list("status", flat=True)) == {"failed"}
    assert client.get("/groups/G_unknown_group/").status_code == 404


def test_the_history_filters_and_shows_a_groups_moves(as_role) -> None:
    applied = planned_job("G1", status="converged", dry_run=False)
    planned_job("G1")
    planned_job("G2", status="failed", dry_run=False)
    client = as_role("viewer")
    page = client.get("/rebalance-jobs/").content.decode()
    assert page.count("<tr data-job=") == 3 and "Rebalance jobs" in page
    fragment = client.get(
        "/rebalance-jobs/", {"group": "G1", "dry_run": "false"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and fragment.count("<tr data-job=") == 1 and f'data-job="{applied.pk}"' in fragment
    assert (
        'data-testid="group-moves"' in fragment
        and "broker-a:0" in fragment
        and "broker-a:1" not in fragment.split("group-moves")[1]
    )
    assert client.get("/rebalance-jobs/", {"status": "failed"}).content.decode().count("<tr data-job=") == 1
    assert client.get("/rebalance-jobs/", {"since": "not a time"}).status_code == 400
    assert client.get("/rebalance-jobs/999999/").status_code == 404


def test_the_history_pages_through_every_job_keeping_the_filters(as_role) -> None:
    jobs = [
        RebalanceJob.objects.create(
            requested_by="ops",
            scope="group",
            scope_value="G1",
            dry_run=True,
            status="planned",
            scope_key=f"dry:group:G1#done{i}",
            timeout_s=25,
        )
        for i in range(55)
    ]
    RebalanceJob.objects.create(
        requested_by="ops",
        scope="group",
        scope_value="G2",
        dry_run=True,
        status="planned",
        scope_key="dry:group:G2#done",
        timeout_s=25,
    )
    client = as_role("viewer")
    first = client.get("/rebalance-jobs/", {"group": "G1"}).content.decode()
    assert first.count("<tr data-job=") == 50 and f'data-job="{jobs[-1].pk}"' in first  # newest first
    assert "page 1 of 2" in first and "group=G1&amp;page=2" in first
    second = client.get("/rebalance-jobs/", {"group": "G1", "page": "2"}, HTTP_HX_REQUEST="true").content.decode()
    assert second.count("<tr data-job=") == 5 and f'data-job="{jobs[0].pk}"' in second and "page 2 of 2" in second
    assert (
        client.get("/rebalance-jobs/", {"group": "G1", "page": "99"}).content.decode().count("<tr data-job=") == 5
    )  # the last page
