"""The overview's consumer-group alerts: a group whose members leave queues unheld (or hold one
twice), from the live check; the scan is cached, so the overview's 5 s polling does not repeat it."""

from __future__ import annotations

import pytest

from brokers.engine.client import plan
from brokers.engine.remoting.codes import RequestCode
from tests.consumers._groups import consume

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def alerts(viewer, target: str) -> list[dict]:
    return [a for a in viewer.get("/api/v1/alerts").json()["results"] if a["target"] == target]


def test_a_group_with_queues_no_member_holds_raises_an_alert(viewer, console_cluster, topic, group, members) -> None:
    a, b = members(group, topic, "alert-a"), members(group, topic, "alert-b")
    queues = a.fetch_subscribe_message_queues(topic)
    consume(a, queues[:5], commit=False)
    consume(b, queues[4:6], commit=False)  # broker-b queue 0 twice; queues 2 and 3 of broker-b by nobody
    found = {x["kind"]: x for x in alerts(viewer, f"{group}/{topic}")}
    assert set(found) == {"group_queues_unowned", "group_queues_shared"}
    assert found["group_queues_unowned"]["level"] == "warning"
    assert (
        "2 queue(s)" in found["group_queues_unowned"]["message"]
        and "broker-b:2, broker-b:3" in found["group_queues_unowned"]["message"]
    )
    assert "broker-b:0" in found["group_queues_shared"]["message"]
    assert f"consumer group {group}" in viewer.get("/api/v1/alerts").content.decode()


def test_the_scan_is_cached(viewer, console_cluster, topic, group, members, monkeypatch) -> None:
    a = members(group, topic, "cached-a")
    consume(a, a.fetch_subscribe_message_queues(topic)[:1], commit=False)
    assert alerts(viewer, f"{group}/{topic}")
    asked = []
    real = plan.Call.__init__

    def counting(self, code, *args, **kwargs):
        asked.append(code)
        real(self, code, *args, **kwargs)

    monkeypatch.setattr(plan.Call, "__init__", counting)
    assert alerts(viewer, f"{group}/{topic}")
    assert RequestCode.GET_BROKER_CLUSTER_INFO in asked and RequestCode.GET_CONSUMER_RUNNING_INFO not in asked


def test_a_whole_group_raises_nothing(viewer, console_cluster, topic, group, members) -> None:
    a = members(group, topic, "whole-a")
    consume(a, a.fetch_subscribe_message_queues(topic), commit=False)
    assert alerts(viewer, f"{group}/{topic}") == []
