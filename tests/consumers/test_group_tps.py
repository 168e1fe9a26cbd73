"""One consume TPS and the real consumeEnable.

The group list, the group page, GET /api/v1/groups/{g}/progress and ``mqadmin consumerProgress``
all show the brokers' consumeTps (messages pulled per second over the last minute, a figure that
changes once every 10 s): while a group consumes, they give the same figure, above 0. The list
shows the consumeEnable of the group's subscription config on the brokers.
"""

from __future__ import annotations

import io
import json
import re
import time

import pytest
from django.core.management import call_command
from django.template.defaultfilters import floatformat

from brokers.engine.client.plan import Call
from brokers.engine.remoting.codes import RequestCode
from tests.consumers._groups import consume, send

pytestmark = pytest.mark.django_db


def mqadmin_tps(cluster, group: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", "consumerProgress", "-g", group, "-n", cluster.namesrv_addr, stdout=out)
    return re.search(r"^Consume TPS: (\S+)$", out.getvalue(), re.M).group(1)


def four_figures(viewer, viewer_client, console_cluster, group: str) -> dict[str, str]:
    """The consume TPS each of the four shows, as the page or command prints it (1 or 2 decimals)."""
    listed = viewer.get("/api/v1/groups", {"search": group}).json()["results"][0]["tps"]
    progress = viewer.get(f"/api/v1/groups/{group}/progress").json()["consume_tps"]
    row = re.search(
        rf'<tr data-group="{group}".*?</tr>', viewer_client.get("/groups/", {"q": group}).content.decode(), re.S
    ).group(0)
    list_page = re.findall(r'<td class="num">([^<]*)</td>', row)[-1]  # the row's last number: TPS
    detail_page = re.search(r"\(TPS ([^)]*)\)", viewer_client.get(f"/groups/{group}/").content.decode()).group(1)
    return {
        "list api": "none" if listed is None else f"{listed:.2f}",
        "list page": list_page,
        "progress api": f"{progress:.2f}",
        "progress api, 1 decimal": floatformat(progress, 1),
        "group page": detail_page,
        "mqadmin": mqadmin_tps(console_cluster, group),
    }


def agree(figures: dict[str, str]) -> bool:
    return (
        figures["list api"] == figures["progress api"] == figures["mqadmin"]
        and figures["list page"] == figures["group page"] == figures["progress api, 1 decimal"]
    )


def test_the_list_the_page_the_api_and_mqadmin_give_one_consume_tps(
    viewer, viewer_client, console_cluster, topic, group, members
) -> None:
    send(console_cluster, topic, 40)
    member = members(group, topic, "tps")
    consume(member, member.fetch_subscribe_message_queues(topic))  # 40 messages pulled, offsets committed
    deadline = time.monotonic() + 40  # the brokers take a snapshot every 10 s; a read may straddle one
    while True:
        figures = four_figures(viewer, viewer_client, console_cluster, group)
        if (agree(figures) and float(figures["mqadmin"]) > 0) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert agree(figures), figures
    assert float(figures["progress api"]) > 0, figures


def set_consume_enable(admin_mq, cluster, group: str, enabled: bool) -> None:
    """Write the group's subscription config on every broker with consumeEnable = ``enabled``."""
    body = json.dumps({"groupName": group, "consumeEnable": enabled}).encode()
    for name in cluster.broker_names:
        reply = admin_mq.driver.invoke(
            Call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, body=body, addr=cluster.broker_addr(name))
        )
        assert reply.code == 0, reply.remark


def test_the_list_shows_a_disabled_group_as_disabled(
    viewer, viewer_client, console_admin, console_cluster, topic, group, members
) -> None:
    members(group, topic, "enable")
    set_consume_enable(console_admin, console_cluster, group, True)
    assert viewer.get("/api/v1/groups", {"search": group}).json()["results"][0]["consume_enable"] is True
    set_consume_enable(console_admin, console_cluster, group, False)
    assert viewer.get("/api/v1/groups", {"search": group}).json()["results"][0]["consume_enable"] is False
    page = viewer_client.get("/groups/", {"q": group}).content.decode()
    assert f'<tr data-group="{group}" class="status-not-answering">' in page
