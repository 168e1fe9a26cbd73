"""What runs per name-server set (docs/clusters.md): beat's health scan scans every configured tier, each in
its own scope, so each set gets its own scan rows, broker sightings and alert rules; an alert rule on the
second tier fires from that tier's lag (a real webhook receives it, naming the set) while the same rule on
``default`` stays quiet; a set whose tier is down fails its own scan only. Rebalance and promotion jobs are
listed per set, and one active job per scope key is per set."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.admin_subscription_groups import update_subscription_group
from brokers.engine.common.subscription_group_config import SubscriptionGroupConfig
from brokers.engine.client.simple import PullClient
from brokers.gateway import namesrv_sets
from brokers.models import BrokerSighting, NamesrvSet, PromotionJob
from health import scan as health
from health.models import AlertRule
from consumers.models import RebalanceJob
from health.models import HealthScan
from health.tasks import health_scan_task
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def _known(namesrv_addr: str, group: str) -> None:
    """Create ``group``'s settings on every master of a tier (an alert rule names a group its brokers know)."""
    with BlockingMQAdminClient(namesrv_addr) as admin:
        for addr in admin.driver.run(admin.plans.examine_broker_cluster_info()).masters().values():
            admin.driver.run(update_subscription_group(addr, SubscriptionGroupConfig(group_name=group)))


def _rule(operator, group: str, url: str, **extra) -> dict:
    made = operator.post(
        "/api/v1/alert-rules",
        {
            "name": f"lag {extra.get('namesrv_set', 'default')}",
            "kind": "lag_above",
            "target": group,
            "threshold": 10,
            "webhook_url": url,
            **extra,
        },
        format="json",
    )
    assert made.status_code == 201, made.content
    return made.json()


def test_each_set_is_scanned_in_its_scope_and_its_rules_fire_from_its_own_lag(
    operator,
    viewer,
    api_client_as,
    console_cluster,
    second_session_cluster,
    unused_addr,
    topic_name,
    group,
    webhook_receiver,
) -> None:
    admin_api = api_client_as("admin")
    NamesrvSet.objects.create(name="down", namesrv_addr=unused_addr, position=1)  # a tier that does not answer
    NamesrvSet.objects.create(name="second", namesrv_addr=second_session_cluster.namesrv_addr, position=2)
    with BlockingMQAdminClient(second_session_cluster.namesrv_addr) as admin:
        create_topic(admin, second_session_cluster, topic_name, queues=2)
    member = PullClient(
        second_session_cluster.namesrv_addr, group, instance_name="scan-per-set", heartbeat_interval_s=None
    )
    try:
        member.subscribe(topic_name, "*")
        for mq in member.fetch_subscribe_message_queues(topic_name):
            member.update_offset(mq, 0)
        on_second = _rule(operator, group, webhook_receiver.url, namesrv_set="second")
        _known(console_cluster.namesrv_addr, group)
        on_default = _rule(operator, group, webhook_receiver.url)
        assert on_second["namesrv_set"] == "second" and on_default["namesrv_set"] == "default"
        send(second_session_cluster, topic_name, 12)

        scans = health_scan_task()["scans"]
    finally:
        member.close()

    assert [(s["namesrv_set"], s["ok"]) for s in scans] == [("default", True), ("down", False), ("second", True)]
    assert {s.namesrv_set for s in HealthScan.objects.all()} == {"default", "down", "second"}
    assert HealthScan.objects.get(namesrv_set="second").backlog == {group: 12}
    assert HealthScan.objects.get(namesrv_set="default").backlog.get(group, 0) == 0  # known there, no lag
    assert {(s.cluster, s.broker_name) for s in BrokerSighting.objects.filter(namesrv_set="second")} == {
        ("SecondCluster", "broker-a")
    }
    assert not BrokerSighting.objects.filter(namesrv_set="default", cluster="SecondCluster").exists()

    [body] = webhook_receiver.bodies()  # the second tier's rule fired; default's same rule saw no lag there
    assert body["rule"] == "lag second" and body["namesrv_set"] == "second" and body["value"] == 12
    assert body["text"].startswith(":red_circle: [Gantry second] lag second firing")
    assert AlertRule.objects.get(pk=on_default["id"]).firing is False
    listed = {
        r["name"]: r["namesrv_set"] for r in viewer.get("/api/v1/alert-rules").json()["results"] if not r["builtin"]
    }
    assert listed == {"lag second": "second", "lag default": "default"}
    defaults = {
        (r["namesrv_set"], r["builtin"]) for r in viewer.get("/api/v1/alert-rules").json()["results"] if r["builtin"]
    }
    assert {tier for tier, _ in defaults} == {"default", "down", "second"} and len(
        defaults
    ) == 12  # each set has its defaults

    with namesrv_sets.scope(namesrv_sets.lookup("second")):  # the overview of a set reads that set's scan only
        assert health.latest_scan().namesrv_set == "second"
    assert health.latest_scan().namesrv_set == "default"

    assert admin_api.delete("/api/v1/namesrv-sets/second").status_code == 204  # a removed set's sightings go with it
    assert (
        not BrokerSighting.objects.filter(namesrv_set="second").exists()
        and BrokerSighting.objects.filter(namesrv_set="default").exists()
    )
    assert [s["namesrv_set"] for s in health_scan_task()["scans"]] == ["default", "down"]  # and beat no longer scans it


def test_a_rule_names_a_configured_set_or_is_refused_naming_the_field(
    operator, console_cluster, second_session_cluster, group, operator_client
) -> None:
    refused = operator.post(
        "/api/v1/alert-rules",
        {"kind": "lag_above", "target": group, "threshold": 1, "emails": ["a@example.com"], "namesrv_set": "nowhere"},
        format="json",
    )
    assert refused.status_code == 400 and "namesrv_set" in refused.json()["fields"] and not AlertRule.objects.exists()
    NamesrvSet.objects.create(name="second", namesrv_addr=second_session_cluster.namesrv_addr)
    _known(second_session_cluster.namesrv_addr, group)
    scoped = operator.post(
        "/api/v1/alert-rules?namesrv_set=second",
        {"kind": "lag_above", "target": group, "threshold": 1, "emails": ["a@example.com"]},
        format="json",
    )
    assert scoped.status_code == 201 and scoped.json()["namesrv_set"] == "second"  # default: the request's set
    kept = operator.put(
        f"/api/v1/alert-rules/{scoped.json()['id']}",
        {"kind": "lag_above", "target": group, "threshold": 2, "emails": ["a@example.com"]},
        format="json",
    )
    assert kept.status_code == 200 and kept.json()["namesrv_set"] == "second"  # an edit naming no set keeps the rule's
    page = operator_client.get("/alerts/")
    assert page.status_code == 200 and b'data-testid="set-lag_above ' + group.encode() + b'">second<' in page.content
    assert b'<option value="second">second</option>' in page.content  # the form offers every configured set


def test_jobs_are_listed_per_set_and_one_active_job_per_key_is_per_set(
    operator, console_cluster, second_session_cluster
) -> None:
    NamesrvSet.objects.create(name="second", namesrv_addr=second_session_cluster.namesrv_addr)
    for tier in ("default", "second"):  # the same active scope key on both tiers: the database takes both
        RebalanceJob.objects.create(
            requested_by="t", scope="all", scope_key="apply:all", dry_run=False, namesrv_set=tier, timeout_s=30
        )
        PromotionJob.objects.create(
            requested_by="t",
            broker_name="broker-a",
            broker_id=1,
            candidate_addr="127.0.0.1:1",
            scope_key="apply:broker-a",
            dry_run=False,
            namesrv_set=tier,
        )

    def listed(path: str, query: str = "") -> list[int]:
        answer = operator.get(f"/api/v1/{path}{query}")
        assert answer.status_code == 200, answer.content
        assert {row["namesrv_set"] for row in answer.json()["results"]} == {"second" if query else "default"}
        return [row["id"] for row in answer.json()["results"]]

    assert listed("rebalance-jobs") == [RebalanceJob.objects.get(namesrv_set="default").pk]
    assert listed("rebalance-jobs", "?namesrv_set=second") == [RebalanceJob.objects.get(namesrv_set="second").pk]
    assert listed("promotion-jobs") == [PromotionJob.objects.get(namesrv_set="default").pk]
    assert listed("promotion-jobs", "?namesrv_set=second") == [PromotionJob.objects.get(namesrv_set="second").pk]
