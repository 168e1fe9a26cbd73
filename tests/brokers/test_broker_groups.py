"""Broker groups in the console: the overview's groups (roles, HA links, lag), a group's page with its
promotion panel, /api/v1/broker-groups, and the health scan's replication alerts (a slave whose
master is gone; thresholds of lag)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from brokers.engine.common.subscription_group_config import SubscriptionGroupConfig
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.gateway.client import get_admin_client
from brokers.gateway.cluster import masters_by_addr, readable_by_addr
from brokers.gateway.connections import consumer_connections
from brokers.gateway.subscription_groups import subscription_group_write
from brokers.gateway.overview import LIVE, BrokerRow
from brokers.gateway.replication import HAState, group_members, ha_state
from health.scan import SLAVE_DISCONNECTED, SLAVE_LAGGING, ha_alerts, health_scan
from health.models import HealthScan
from tests.fixtures.cluster import GroupCluster

pytestmark = pytest.mark.django_db


def test_the_overview_lists_each_group_with_its_master_and_slaves(viewer_client, viewer, console_group_cluster) -> None:
    master, slave = (
        console_group_cluster.broker_addr("broker-a"),
        console_group_cluster.broker_addr(GroupCluster.SLAVE_KEY),
    )
    page = viewer_client.get("/").content.decode()
    assert (
        'data-testid="broker-groups"' in page
        and 'href="/brokers/broker-a/"' in page
        and 'href="/brokers/broker-b/"' in page
    )
    groups = viewer.get("/api/v1/broker-groups").json()["results"]
    assert [(g["broker_name"], g["role"], [m["broker_id"] for m in g["members"]]) for g in groups] == [
        ("broker-a", "SYNC_MASTER", [0, 1]),
        ("broker-b", "ASYNC_MASTER", [0]),
    ]
    a_master, a_slave = groups[0]["members"]
    assert (a_master["addr"], a_master["role"], a_master["ha_connection"]) == (master, "SYNC_MASTER", "CONNECTED")
    assert (a_slave["addr"], a_slave["role"], a_slave["ha_connection"], a_slave["master_addr"]) == (
        slave,
        "SLAVE",
        "CONNECTED",
        master,
    )
    assert a_slave["lag_bytes"] is not None and a_slave["lag_s"] is not None
    assert groups[1]["members"][0]["ha_connection"] in ("", "NO_SLAVE", None)
    brokers = viewer.get("/api/v1/brokers").json()["results"]
    assert [(b["broker_name"], b["broker_id"], b["role"]) for b in brokers] == [
        ("broker-a", 0, "SYNC_MASTER"),
        ("broker-a", 1, "SLAVE"),
        ("broker-b", 0, "ASYNC_MASTER"),
    ]
    assert viewer.get("/api/v1/broker-groups/broker-zz").status_code == 404


def test_a_group_page_shows_members_and_the_promotion_panel_to_admins(as_role, console_group_cluster) -> None:
    slave = console_group_cluster.broker_addr(GroupCluster.SLAVE_KEY)
    page = as_role("admin").get("/brokers/broker-a/").content.decode()
    assert 'data-testid="group-members"' in page and 'data-role="SYNC_MASTER"' in page and 'data-role="SLAVE"' in page
    assert (
        'data-testid="promote-form"' in page
        and f"id 1 ({slave})" in page
        and 'action="/brokers/broker-a/promote"' in page
    )
    assert 'data-testid="no-slave"' in as_role("admin").get("/brokers/broker-b/").content.decode()
    viewer_page = as_role("viewer").get("/brokers/broker-a/").content.decode()
    assert 'data-testid="group-members"' in viewer_page and 'data-testid="promote-form"' not in viewer_page
    assert as_role("viewer").post("/brokers/broker-a/promote", {"broker_id": "1"}).status_code == 403
    assert as_role("operator").post("/brokers/broker-a/promote", {"broker_id": "1"}).status_code == 403
    assert as_role("viewer").get("/brokers/broker-zz/").status_code == 404


def test_each_members_configuration_is_shown_read_only(viewer, viewer_client, console_group_cluster) -> None:
    """A broker config view (GET_BROKER_CONFIG, as mqadmin getBrokerConfig), per member."""
    master, slave = (
        console_group_cluster.broker_addr("broker-a"),
        console_group_cluster.broker_addr(GroupCluster.SLAVE_KEY),
    )
    body = viewer.get("/api/v1/broker-groups/broker-a/config").json()
    members = {m["broker_id"]: m for m in body["members"]}
    assert body["broker_name"] == "broker-a" and set(members) == {0, 1}
    assert (
        members[0]["addr"] == master
        and members[0]["error"] == ""
        and members[0]["properties"]["brokerName"] == "broker-a"
    )
    assert (
        members[0]["properties"]["brokerId"] == "0"
        and members[1]["properties"]["brokerId"] == "1"
        and members[1]["addr"] == slave
    )
    assert members[0]["properties"]["flushDiskType"] in ("ASYNC_FLUSH", "SYNC_FLUSH")
    page = viewer_client.get("/brokers/broker-a/").content.decode()
    assert (
        'data-testid="broker-config"' in page and "<code>brokerClusterName</code>" in page and 'data-member="1"' in page
    )
    assert viewer.get("/api/v1/broker-groups/broker-zz/config").status_code == 404


def test_a_refused_promotion_on_the_page_names_the_reason(as_role, console_group_cluster) -> None:
    client = as_role("admin")
    answer = client.post("/brokers/broker-a/promote", {"broker_id": "0", "dry_run": "1"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 400 and "id 0 is the master of broker-a" in answer.content.decode()


def test_the_health_scan_alerts_when_a_slave_loses_its_master(
    viewer, make_group_cluster, mq_settings, fresh_cache
) -> None:
    cluster = make_group_cluster()
    mq_settings(cluster.namesrv_addr)
    slave = cluster.broker_addr(GroupCluster.SLAVE_KEY)
    health_scan()
    assert not [a for a in HealthScan.objects.get().alerts if a["kind"] in (SLAVE_DISCONNECTED, SLAVE_LAGGING)]
    cluster.run(cluster.brokers.pop("broker-a").stop())
    deadline = time.monotonic() + 20
    while True:  # the slave notices its master went away when the HA link breaks
        scan = HealthScan.objects.get(pk=health_scan()["scan"])
        found = [a for a in scan.alerts if a["kind"] == SLAVE_DISCONNECTED]
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [a["target"] for a in found] == [slave], scan.alerts
    assert found[0]["level"] == "error" and f"slave broker-a id 1 ({slave}) is not replicating" in found[0]["message"]
    shown = [a for a in viewer.get("/api/v1/alerts").json()["results"] if a["kind"] == SLAVE_DISCONNECTED]
    assert [a["target"] for a in shown] == [slave]  # the overview shows the scan's alert


def test_groups_of_a_broker_whose_master_is_down_are_read_from_its_slave(
    viewer, make_group_cluster, mq_settings, fresh_cache
) -> None:
    """The group list, a group's page and the health scan's backlog read a broker whose master is down
    from its slave, which has the master's groups and offsets from its last sync."""
    cluster = make_group_cluster()
    mq_settings(cluster.namesrv_addr)
    master_addr, slave = cluster.broker_addr("broker-a"), cluster.broker_addr(GroupCluster.SLAVE_KEY)
    group = "G_on_broker_a"
    subscription_group_write(master_addr, SubscriptionGroupConfig(group))
    assert cluster.run(cluster.brokers[GroupCluster.SLAVE_KEY].group_member.slave_synchronize.sync_all())
    before = viewer.get("/api/v1/groups").json()
    assert [r["brokers"] for r in before["results"] if r["name"] == group] == [["broker-a"]]
    cluster.run(cluster.brokers.pop("broker-a").stop())
    deadline = time.monotonic() + 20
    while master_addr in masters_by_addr() and time.monotonic() < deadline:  # the name server drops it
        time.sleep(0.2)
    assert master_addr not in masters_by_addr() and readable_by_addr()[slave] == "broker-a"
    after = viewer.get("/api/v1/groups").json()
    assert [r["brokers"] for r in after["results"] if r["name"] == group] == [["broker-a"]], after
    assert not after.get("errors")
    page = viewer.get(f"/api/v1/groups/{group}")
    assert page.status_code == 200 and page.json()["brokers"] == ["broker-a"]


def _row(broker_id: int, role: str, **ha) -> BrokerRow:
    return BrokerRow("C", "broker-a", broker_id, f"10.0.0.{broker_id + 1}:10911", LIVE, ha=HAState(role=role, **ha))


def test_lag_thresholds_and_a_sync_master_without_slave() -> None:
    groups = group_members(
        [
            _row(0, "SYNC_MASTER", connection="CONNECTED", slave_count=2),
            _row(1, "SLAVE", connection="CONNECTED", lag_bytes=2048, lag_ms=500),
            _row(2, "SLAVE", connection="CONNECTED", lag_bytes=10, lag_ms=12_000),
        ]
    )
    alerts = ha_alerts(groups, lag_bytes=1024, lag_s=10)
    assert [(a.kind, a.target) for a in alerts] == [
        (SLAVE_LAGGING, "10.0.0.2:10911"),
        (SLAVE_LAGGING, "10.0.0.3:10911"),
    ]
    assert "2,048 bytes (alert above 1,024)" in alerts[0].message and "12.0 s (alert above 10 s)" in alerts[1].message
    assert ha_alerts(groups, lag_bytes=4096, lag_s=20) == []
    lone = group_members([_row(0, "SYNC_MASTER", connection="NO_SLAVE", slave_count=0)])
    [alert] = ha_alerts(lone, lag_bytes=1024, lag_s=10)
    assert alert.kind == SLAVE_DISCONNECTED and "SLAVE_NOT_AVAILABLE" in alert.message
    assert ha_alerts(group_members([_row(0, "ASYNC_MASTER", connection="NO_SLAVE")]), lag_bytes=0, lag_s=0) == []


def test_runtime_tables_without_ha_keys_read_by_id() -> None:
    """An Apache broker (or one before broker groups) says nothing of replication."""
    assert ha_state({}, 0) == HAState(role="MASTER")
    assert ha_state({"haReplicationLagBytes": "-1", "haReplicationLagMs": "x", "groupEpoch": "3"}, 1) == HAState(
        role="SLAVE", epoch=3
    )


def test_a_member_only_a_slave_knows_is_a_member(viewer, console_group_cluster) -> None:
    """While a master is down, or right after it returns, some clients have heartbeated only its
    slave: the group's page and the health scan's online count still list them."""
    slave = console_group_cluster.broker_addr(GroupCluster.SLAVE_KEY)
    group, client_id = "G_known_to_the_slave", "10.0.0.9@slave-only"
    body = {
        "clientID": client_id,
        "producerDataSet": [],
        "consumerDataSet": [
            {
                "groupName": group,
                "consumeType": "CONSUME_PASSIVELY",
                "messageModel": "CLUSTERING",
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                "unitMode": False,
                "subscriptionDataSet": [
                    {
                        "topic": "T_slave_member",
                        "subString": "*",
                        "tagsSet": [],
                        "codeSet": [],
                        "subVersion": 1,
                        "expressionType": "TAG",
                        "classFilterMode": False,
                    }
                ],
            }
        ],
    }
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    on_loop = lambda coro: asyncio.run_coroutine_threadsafe(coro, loop).result(30)  # noqa: E731

    async def connect() -> RemotingClient:  # the connection stays open: the slave keeps the member while it is
        member = RemotingClient()
        reply = await member.invoke(
            slave, RemotingCommand.request(RequestCode.HEART_BEAT, None, json.dumps(body).encode()), 5.0
        )
        assert reply.code == ResponseCode.SUCCESS, reply
        return member

    member = on_loop(connect())
    try:
        detail = viewer.get(f"/api/v1/groups/{group}").json()
        assert detail["online"] and [m["client_id"] for m in detail["members"]] == [client_id]
        assert [m["brokers"] for m in detail["members"]] == [[slave]]
        assert consumer_connections([group], masters_by_addr())[group].online
        assert not consumer_connections([group], masters_by_addr(), with_slaves=False)[
            group
        ].online  # the masters' view alone
        conns = get_admin_client().examine_consumer_connection_info(group)  # mqadmin consumerConnection's read
        assert [c.client_id for c in conns.connections] == [client_id]
    finally:
        on_loop(member.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
