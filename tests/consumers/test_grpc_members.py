"""A group with a 4.x member (Gantry's PullClient over remoting) and a 5.x member (Apache's official Python
client over the gRPC endpoint): both on the group page and in /api/v1/groups/<g>, each with its language and
version, the group's lag counting what the 5.x member received but did not ack, and the 5.x member's
running info from the settings it sent."""

from __future__ import annotations

import pytest

from tests.consumers._groups import send
from tests.fixtures.waiting import wait_until
from tests.interop._python_grpc import PythonClients, receive_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed_group(console_cluster, topic, group, members):
    send(console_cluster, topic, 10)
    old = members(group, topic, "remoting-member")
    old.heartbeat()
    clients = PythonClients(console_cluster.brokers["broker-a"].grpc_addr)
    consumer = clients.simple(group, topic)
    got = receive_until(consumer, 10)  # from both brokers, none acked: all of it is still lag
    yield old, consumer, got
    clients.close()


def test_both_members_are_shown_with_lag(viewer, viewer_client, mixed_group, group) -> None:
    old, new, got = mixed_group

    def detail():
        body = viewer.get(f"/api/v1/groups/{group}").json()
        return body if len(body["members"]) == 2 else None

    body = wait_until(detail, 15, "two members")
    by_id = {m["client_id"]: m for m in body["members"]}
    assert set(by_id) == {old.client_id, new.client_id}
    assert by_id[new.client_id]["language"] == "PYTHON" and by_id[new.client_id]["version"] == "V5_1_2"
    assert body["progress"]["diff_total"] == 10  # received, none acked: nothing committed
    page = viewer_client.get(f"/groups/{group}/").content.decode()
    assert old.client_id in page and new.client_id in page and "V5_1_2" in page
    listed = [row for row in viewer.get("/api/v1/groups").json()["results"] if row["name"] == group]
    assert listed and listed[0]["members"] == 2 and listed[0]["lag"] == 10


def test_acks_bring_the_lag_down(viewer, mixed_group, group) -> None:
    _, consumer, got = mixed_group
    for message in got:
        consumer.ack(message)
    wait_until(
        lambda: viewer.get(f"/api/v1/groups/{group}").json()["progress"]["diff_total"] == 0, 15, "lag 0 after every ack"
    )


def test_running_info_of_the_5x_member(viewer, mixed_group, group, topic) -> None:
    _, new, _ = mixed_group
    url = f"/api/v1/groups/{group}/clients/{new.client_id}/running-info"
    answer = wait_until(lambda: (r := viewer.get(url)).status_code == 200 and r, 15, "the member's running info")
    body = answer.json()
    props = body["properties"]
    assert props.get("clientType") == "SIMPLE_CONSUMER" and props["protocol"].startswith("gRPC")
    assert [s["topic"] for s in body["subscriptions"]] == [topic]
