"""The periodic health scan: group alerts stored for the overview (read without scanning again),
rising backlogs over consecutive scans, expired brokers, and rebalance jobs whose worker vanished."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from brokers.engine.client import plan
from brokers.engine.remoting.codes import RequestCode
from brokers.models import BrokerSighting
from health.scan import health_scan
from consumers.models import RebalanceJob
from health.models import HealthScan
from health.tasks import health_scan_task
from tests.consumers._groups import consume, send

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def alerts(viewer) -> list[dict]:
    return viewer.get("/api/v1/alerts").json()["results"]


def test_the_overview_shows_the_last_scan_without_scanning_again(
    viewer, console_cluster, topic, group, members, monkeypatch
) -> None:
    a = members(group, topic, "scan-a")
    consume(a, a.fetch_subscribe_message_queues(topic)[:3], commit=False)  # 5 of 8 queues held by nobody
    summary = health_scan()
    assert summary["ok"] and summary["alerts"] >= 1
    scan = HealthScan.objects.get(pk=summary["scan"])
    assert {"level": "warning", "kind": "group_queues_unowned", "target": f"{group}/{topic}"}.items() <= next(
        x for x in scan.alerts if x["target"] == f"{group}/{topic}"
    ).items()
    cache.clear()  # the live check's cache gone too: only the stored scan can answer
    asked = []
    real = plan.Call.__init__

    def counting(self, code, *args, **kwargs):
        asked.append(code)
        real(self, code, *args, **kwargs)

    monkeypatch.setattr(plan.Call, "__init__", counting)
    shown = [x for x in alerts(viewer) if x["target"] == f"{group}/{topic}"]
    assert [x["kind"] for x in shown] == ["group_queues_unowned"] and "5 queue(s)" in shown[0]["message"]
    assert RequestCode.GET_CONSUMER_RUNNING_INFO not in asked


def test_a_backlog_rising_at_three_scans_in_a_row_raises_an_alert(
    viewer, console_cluster, topic, group, members, settings
) -> None:
    settings.GANTRY_HEALTH = {"BACKLOG_SCANS": 3, "BACKLOG_RISE_MIN": 30}
    a = members(group, topic, "backlog-a")
    for mq in a.fetch_subscribe_message_queues(topic):
        a.update_offset(mq, 0)  # the group is known, at the start of every queue
    for _ in range(4):
        send(console_cluster, topic, 12)
        health_scan()
    backlog = [s.backlog.get(group) for s in HealthScan.objects.order_by("started_at", "id")]
    assert backlog == [12, 24, 36, 48]
    [alert] = [x for x in alerts(viewer) if x["kind"] == "group_backlog_rising"]
    assert alert["target"] == group and "12 → 48 messages (+36)" in alert["message"]
    consume(a, a.fetch_subscribe_message_queues(topic))  # consumed and committed: the backlog falls
    health_scan()
    assert not [x for x in alerts(viewer) if x["kind"] == "group_backlog_rising"]


def test_an_expired_broker_is_recorded_by_the_scan_and_shown_once(viewer, console_cluster) -> None:
    BrokerSighting.objects.create(
        addr="127.0.0.1:1", cluster="Old", broker_name="broker-gone", last_seen_at=timezone.now() - timedelta(minutes=5)
    )
    scan = HealthScan.objects.get(pk=health_scan()["scan"])
    assert [a["target"] for a in scan.alerts if a["kind"] == "broker_expired"] == ["127.0.0.1:1"]
    assert [a["target"] for a in alerts(viewer) if a["kind"] == "broker_expired"] == [
        "127.0.0.1:1"
    ]  # the overview's own, not twice
    assert BrokerSighting.objects.filter(broker_name="broker-a").exists()  # the scan records who it saw


def test_the_scan_fails_jobs_whose_worker_vanished_and_keeps_few_scans(console_cluster) -> None:
    lost = RebalanceJob.objects.create(
        requested_by="ops",
        scope="group",
        scope_value="G",
        scope_key="apply:group:G",
        dry_run=False,
        status="running",
        lease_until=timezone.now() - timedelta(seconds=5),
    )
    assert health_scan()["jobs_failed"] == 1
    lost.refresh_from_db()
    assert lost.status == "failed" and "worker lost" in lost.reason
    for _ in range(22):
        HealthScan.objects.create(finished_at=timezone.now())
    health_scan()
    assert HealthScan.objects.count() == 20


def test_a_name_server_down_is_a_failed_scan_not_an_exception(mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    summary = health_scan()
    assert summary["ok"] is False and "name server" in summary["error"]


@pytest.mark.slow
def test_the_beat_entry_runs_in_a_worker(celery_worker, console_cluster) -> None:
    assert settings.CELERY_BEAT_SCHEDULE["health-scan"]["task"] == health_scan_task.name
    assert health_scan_task.name == "consumers.tasks.health_scan_task"  # the name it had before moving to health/
    celery_worker()
    [summary] = health_scan_task.delay().get(timeout=60)["scans"]
    assert (
        summary["ok"] is True
        and summary["namesrv_set"] == "default"
        and HealthScan.objects.filter(pk=summary["scan"]).exists()
    )
