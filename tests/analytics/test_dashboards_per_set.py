"""Dashboards per name-server set (docs/clusters.md, docs/analytics.md): beat's sample round samples every
configured set in its own scope into that set's own lake, and a refresh of one set puts its topics on that
set's dashboards only; ``default``'s lake stays LAKE_DIR itself, so the lakes from before keep working."""

from __future__ import annotations

import pytest

from analytics.runner import dashboard_refresh
from analytics.tasks import metrics_sample_task
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.gateway import namesrv_sets
from brokers.models import NamesrvSet
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def _topics(root) -> set[str]:
    import pyarrow.parquet as pq

    return {
        t
        for f in (root / "queue_samples").rglob("*.parquet")
        for t in pq.read_table(f, columns=["topic"]).column("topic").to_pylist()
    }


def _series_topics(viewer, tier: str) -> set[str]:
    answer = viewer.get(f"/api/v1/dashboards/throughput?range=hour&by=topic&namesrv_set={tier}")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["coverage"] == {"namesrv_set": tier, "covers_current_set": True, "note": ""}
    return {s["key"]["topic"] for s in body["series"]}


def test_each_set_is_sampled_into_its_own_lake_and_refreshed_onto_its_own_dashboards(
    viewer, console_cluster, second_session_cluster, unused_addr, lake, spark, topic_name
) -> None:
    NamesrvSet.objects.create(name="down", namesrv_addr=unused_addr, position=1)  # a tier that does not answer
    NamesrvSet.objects.create(name="second", namesrv_addr=second_session_cluster.namesrv_addr, position=2)
    with BlockingMQAdminClient(second_session_cluster.namesrv_addr) as admin:
        create_topic(admin, second_session_cluster, topic_name, queues=2)
    send(second_session_cluster, topic_name, 5)

    first = metrics_sample_task()["sets"]
    send(second_session_cluster, topic_name, 7)
    metrics_sample_task()

    # the round went on past the set that is down; each set's rows are in its own lake
    assert [(s["namesrv_set"], "error" in s and not s.get("ok", True)) for s in first] == [
        ("default", False),
        ("down", True),
        ("second", False),
    ]
    second_lake = lake / "sets" / "second"
    assert topic_name in _topics(second_lake)
    assert topic_name not in _topics(lake)  # default's lake is LAKE_DIR itself, as before sets
    assert not (lake / "sets" / "down").exists()

    with namesrv_sets.scope(namesrv_sets.lookup("second")):  # "refresh now" on the second set's pages
        run = dashboard_refresh(trigger="manual", requested_by="ops", spark=spark)
    assert run.status == "succeeded", run.error
    dashboard_refresh(trigger="manual", requested_by="ops", spark=spark, namesrv_set="default")

    assert topic_name in _series_topics(viewer, "second")
    assert topic_name not in _series_topics(viewer, "default")
    state = viewer.get("/api/v1/dashboards/throughput?range=hour&namesrv_set=second").json()["state"]
    assert state["run"]["id"] == run.id and state["last_refresh_at"] is not None
