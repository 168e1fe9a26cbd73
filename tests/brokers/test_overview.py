"""The overview (/) and /api/v1/{clusters,brokers,namesrvs,alerts}: name servers, brokers with
their figures, and the alerts for brokers that stopped answering or went away."""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from django.utils import timezone

from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.models import BrokerSighting

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def ghost_broker(namesrv_addr: str, addr: str):
    """A broker registered with the name server at an address where nothing answers."""
    header = {
        "brokerName": "ghost",
        "brokerAddr": addr,
        "clusterName": "GhostCluster",
        "haServerAddr": "",
        "brokerId": 0,
    }
    client = BlockingRemotingClient()
    try:
        reply = client.invoke(namesrv_addr, RemotingCommand.request(RequestCode.REGISTER_BROKER, header), 3.0)
        assert reply.code == ResponseCode.SUCCESS
        yield
    finally:
        client.invoke(namesrv_addr, RemotingCommand.request(RequestCode.UNREGISTER_BROKER, header), 3.0)
        client.close()


def test_home_shows_name_servers_brokers_and_no_alerts(admin_client, console_cluster) -> None:
    page = admin_client.get("/").content.decode()
    assert 'data-testid="namesrvs"' in page and console_cluster.namesrv_addr in page and "V4_9_8" in page
    for header in ("TPS in", "TPS out", "Topics", "Queues", "Last seen", "Disk used"):
        assert f">{header}</th>" in page
    assert "No alerts." in page


def test_api_clusters_brokers_namesrvs_alerts(viewer, console_cluster) -> None:
    clusters = viewer.get("/api/v1/clusters").json()["results"]
    assert {"name": console_cluster.cluster, "broker_names": ["broker-a", "broker-b"]} in clusters
    assert viewer.get(f"/api/v1/clusters/{console_cluster.cluster}").json()["broker_names"] == ["broker-a", "broker-b"]
    assert viewer.get("/api/v1/clusters/NoSuch").status_code == 404

    brokers = viewer.get("/api/v1/brokers", {"cluster": console_cluster.cluster}).json()["results"]
    assert [b["broker_name"] for b in brokers] == ["broker-a", "broker-b"]
    for b in brokers:
        assert (
            b["status"] == "live"
            and b["addr"] == console_cluster.broker_addr(b["broker_name"])
            and b["version"] == "V4_9_8"
        )
        assert b["topics"] >= 7 and b["queues"] > 0 and b["tps_in"] >= 0 and b["tps_out"] >= 0
        assert 0 <= b["disk_ratio"] <= 1 and b["last_seen"] is not None
    assert viewer.get("/api/v1/brokers", {"status": "expired"}).json()["count"] == 0

    namesrvs = viewer.get("/api/v1/namesrvs").json()["results"]
    assert namesrvs == [{"addr": console_cluster.namesrv_addr, "live": True, "version": "V4_9_8", "error": ""}]
    assert viewer.get("/api/v1/alerts").json()["count"] == 0


def test_a_registered_broker_that_does_not_answer_is_an_alert(
    viewer, admin_client, console_cluster, unused_addr
) -> None:
    with ghost_broker(console_cluster.namesrv_addr, unused_addr):
        brokers = viewer.get("/api/v1/brokers", {"cluster": "GhostCluster"}).json()["results"]
        assert [(b["broker_name"], b["status"]) for b in brokers] == [("ghost", "not answering")]
        alerts = viewer.get("/api/v1/alerts").json()["results"]
        assert [(a["kind"], a["target"]) for a in alerts] == [("broker_not_answering", unused_addr)]
        page = admin_client.get("/").content.decode()
        assert "is registered with the name server but does not answer" in page


def test_a_broker_seen_before_and_gone_now_is_expired(viewer, admin_client, console_cluster) -> None:
    now = timezone.now()
    BrokerSighting.objects.create(
        addr="127.0.0.1:1",
        cluster=console_cluster.cluster,
        broker_name="broker-old",
        broker_id=0,
        first_seen_at=now - timedelta(hours=3),
        last_seen_at=now - timedelta(minutes=2),
    )
    BrokerSighting.objects.create(
        addr="127.0.0.1:2",
        cluster=console_cluster.cluster,
        broker_name="broker-ancient",
        first_seen_at=now - timedelta(days=9),
        last_seen_at=now - timedelta(days=2),
    )
    expired = viewer.get("/api/v1/brokers", {"status": "expired"}).json()["results"]
    assert [(b["broker_name"], b["addr"]) for b in expired] == [("broker-old", "127.0.0.1:1")]
    alerts = viewer.get("/api/v1/alerts").json()["results"]
    assert [a["kind"] for a in alerts] == ["broker_expired"]
    assert "was registered before and is gone from the name server" in alerts[0]["message"]
    assert "broker-old" in admin_client.get("/").content.decode()


def test_live_brokers_are_remembered_by_the_health_scan_not_by_a_read(viewer, console_cluster) -> None:
    from health.scan import health_scan

    assert all(b["last_seen"] is not None for b in viewer.get("/api/v1/brokers").json()["results"])  # answering now
    assert not BrokerSighting.objects.exists()  # a read writes nothing
    health_scan()
    assert set(BrokerSighting.objects.values_list("broker_name", flat=True)) >= {"broker-a", "broker-b"}


def test_one_name_server_down_of_two(viewer, console_cluster, mq_settings, unused_addr) -> None:
    mq_settings(f"{console_cluster.namesrv_addr};{unused_addr}")
    namesrvs = {n["addr"]: n["live"] for n in viewer.get("/api/v1/namesrvs").json()["results"]}
    assert namesrvs == {console_cluster.namesrv_addr: True, unused_addr: False}
    alerts = viewer.get("/api/v1/alerts").json()["results"]
    assert [(a["kind"], a["target"]) for a in alerts] == [("namesrv_down", unused_addr)]
    assert viewer.get("/api/v1/brokers").json()["count"] >= 2


def test_all_name_servers_down(viewer, admin_client, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    for url in ("/api/v1/brokers", "/api/v1/clusters"):
        response = viewer.get(url)
        assert response.status_code == 503 and response.json()["code"] == "namesrv_unreachable"
        assert "name server unreachable" in response.json()["detail"]
    assert viewer.get("/api/v1/alerts").json()["results"][0]["kind"] == "namesrv_down"
    assert admin_client.get("/").status_code == 200


def alerts_for_test(info):
    from brokers.gateway.overview import Alert

    return [Alert("warning", "group_unowned", "G1", f"group G1 on {sorted(info.clusters)[0]} has queues no one owns")]


def test_other_apps_add_alerts_through_the_setting(viewer, console_cluster, settings) -> None:
    settings.GANTRY_ALERT_SOURCES = ["tests.brokers.test_overview.alerts_for_test"]
    alerts = viewer.get("/api/v1/alerts").json()["results"]
    assert [(a["kind"], a["target"]) for a in alerts] == [("group_unowned", "G1")]


def test_a_lone_async_master_reads_no_slave_not_an_error(admin_client, console_cluster) -> None:
    """A multi-master deployment without slaves is healthy: its HA link is shown muted, not red."""
    page = admin_client.get("/").content.decode()
    assert '<span class="muted">no slave</span>' in page
    assert '<span class="bad">NO_SLAVE</span>' not in page
