"""``python manage.py mqadmin consumerProgress`` and GET /api/v1/groups/{name}/progress give the
same numbers: both read GET_CONSUME_STATS through the same admin client."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from tests.consumers._groups import consume, send

pytestmark = pytest.mark.django_db


def mqadmin(cluster, *args: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", *args, "-n", cluster.namesrv_addr, stdout=out)
    return out.getvalue()


def test_consumer_progress_equals_the_api(viewer, console_cluster, topic, group, members) -> None:
    send(console_cluster, topic, 20)
    member = members(group, topic, "parity")
    queues = member.fetch_subscribe_message_queues(topic)
    consume(member, queues[:3])
    member.update_offset(queues[3], 1)
    member.update_offset(queues[4], 0)  # broker-b knows the group too: it reports all its queues
    printed = {}
    lines = mqadmin(console_cluster, "consumerProgress", "-g", group).splitlines()
    for line in lines[1:]:
        cells = line.split()
        if cells and cells[0] == topic:
            printed[(cells[1], int(cells[2]))] = (int(cells[3]), int(cells[4]), int(cells[5]))
    body = viewer.get(f"/api/v1/groups/{group}/progress").json()
    served = {
        (q["broker_name"], q["queue_id"]): (q["broker_offset"], q["consumer_offset"], q["lag"]) for q in body["queues"]
    }
    assert printed == served and len(served) == 8
    assert f"Consume Diff Total: {body['diff_total']}" in lines
    assert f"Consume TPS: {body['consume_tps']:.2f}" in lines
    assert body["diff_total"] == sum(lag for _, _, lag in served.values()) > 0
