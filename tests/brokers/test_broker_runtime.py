"""A broker's runtime status on its page and at GET /api/v1/brokers/{name}/runtime: the figures of
rocketmq-dashboard's brokerStatus (GET_BROKER_RUNTIME_INFO), typed by the gateway, read from the
running brokers; a broker that does not answer is shown unavailable with the reason."""

from __future__ import annotations

import contextlib
import re

import pytest

from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.gateway.runtime_status import runtime_status

pytestmark = pytest.mark.django_db

HHMMSS = re.compile(r"^\d{2,}:[0-5]\d:[0-5]\d$")


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


def _put_total(viewer) -> int:
    total = 0
    for name in ("broker-a", "broker-b"):
        (member,) = viewer.get(f"/api/v1/brokers/{name}/runtime").json()["members"]
        total += member["status"]["msg_put_total"]
    return total


def test_the_api_returns_each_members_typed_runtime_figures(viewer, console_cluster, topic) -> None:
    before = _put_total(viewer)
    with SimpleProducer(console_cluster.namesrv_addr, "runtime_status_producer", heartbeat_interval_s=None) as producer:
        for i in range(3):
            producer.send(Message(topic=topic, body=f"runtime {i}".encode()))
    assert _put_total(viewer) >= before + 3

    body = viewer.get("/api/v1/brokers/broker-a/runtime").json()
    (member,) = body["members"]
    assert body["broker_name"] == "broker-a" and member["broker_id"] == 0
    assert (
        member["addr"] == console_cluster.broker_addr("broker-a")
        and member["available"] is True
        and member["error"] == ""
    )
    s = member["status"]
    assert s["version"] == "V4_9_8" and isinstance(s["put_tps"], float) and isinstance(s["get_tps"], float)
    assert 0 < s["commit_log_disk_ratio"] <= 1 and s["page_cache_lock_ms"] >= 0 and s["remain_to_flush_bytes"] >= 0
    assert s["boot_timestamp_ms"] > 0 and s["uptime_s"] >= 0 and HHMMSS.match(s["uptime"])
    assert s["msg_put_total"] >= s["msg_put_today"] >= 0 and s["msg_get_total"] >= s["msg_get_today"] >= 0
    assert "no thread pool" in s["thread_pools"]
    assert viewer.get("/api/v1/brokers/broker-zz/runtime").status_code == 404


def test_the_broker_page_shows_the_runtime_status_section(viewer_client, viewer, console_cluster) -> None:
    page = viewer_client.get("/brokers/broker-a/").content.decode()
    assert 'data-testid="runtime-status"' in page and ">Runtime status</h2>" in page
    assert console_cluster.broker_addr("broker-a") in page and 'data-testid="runtime-unavailable"' not in page
    for figure in (
        "put-tps",
        "get-tps",
        "put-today",
        "get-today",
        "disk-ratio",
        "page-cache-lock",
        "to-flush",
        "uptime",
        "booted",
    ):
        assert f'data-figure="{figure}"' in page
    assert "— (no thread pool: requests run on the event loop)" in page
    uptime = re.search(r'data-testid="runtime-uptime">([^<]*)<', page).group(1)
    assert HHMMSS.match(uptime), uptime
    assert "V4_9_8" in page and '<code translate="no">commitLogDiskRatio</code>' in page


def test_an_unreachable_broker_is_shown_unavailable_with_the_reason(
    viewer_client, viewer, console_cluster, unused_addr
) -> None:
    with ghost_broker(console_cluster.namesrv_addr, unused_addr):
        answer = viewer_client.get("/brokers/ghost/")
        assert answer.status_code == 200
        page = answer.content.decode()
        unavailable = re.search(r'data-testid="runtime-unavailable">([^<]*)<', page).group(1)
        assert unavailable.startswith("unavailable: ") and len(unavailable) > len("unavailable: ")
        body = viewer.get("/api/v1/brokers/ghost/runtime")
        assert body.status_code == 200
        (member,) = body.json()["members"]
        assert (
            member["available"] is False
            and member["status"] is None
            and member["error"]
            and member["addr"] == unused_addr
        )


def test_a_table_with_keys_missing_or_malformed_parses_to_none() -> None:
    status = runtime_status(
        {
            "putTps": "12.50 10.00 9.00",
            "bootTimestamp": "1000",
            "commitLogDiskRatio": "x",
            "msgPutTotalTodayNow": "10",
            "msgPutTotalTodayMorning": "4",
        },
        now_ms=3_723_000 + 1000,
    )
    assert status.put_tps == 12.5 and status.get_tps is None and status.commit_log_disk_ratio is None
    assert status.uptime == "01:02:03" and status.msg_put_today == 6 and status.msg_get_today is None
    assert runtime_status({}, now_ms=5).uptime == ""
