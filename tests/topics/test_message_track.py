"""The message page's consume state per group (rocketmq-dashboard's message track) and the resend of a message to one
online client of a group (CONSUME_MESSAGE_DIRECTLY through the broker to Gantry's push consumer): page, API, the
operator role, the confirm step, the audit entry, and each refusal naming its field."""

from __future__ import annotations

import threading

import pytest

from brokers.engine.client import ConsumeConcurrentlyStatus, PushConsumer
from console.models import AuditEntry
from tests.consumers._groups import send
from tests.consumers._rebalance import QUIET
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.django_db


def _push(cluster, group: str, topic: str, listener) -> PushConsumer:
    c = PushConsumer(
        group,
        cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name=group[-4:],
        client_config=QUIET,
    )
    c.subscribe(topic, "*")
    c.register_listener(listener)
    return c.start()


@pytest.fixture
def tracked(console_cluster, topic, group, members):
    """One message on one queue; ``done`` (push) consumed it, ``slow`` (push) holds it in its listener, ``puller`` pulls,
    ``gone`` committed past it and left. Yields (message, groups, what done's listener got, the event that frees slow)."""
    names = {k: f"{group}_{k}" for k in ("done", "slow", "puller", "gone")}
    got: list = []
    release = threading.Event()

    def slow_listener(msgs):
        release.wait(30)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def done_listener(msgs):
        got.extend(msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumers = [
        _push(console_cluster, names["done"], topic, done_listener),
        _push(console_cluster, names["slow"], topic, slow_listener),
    ]
    puller = members(names["puller"], topic, "p1")
    mq = puller.fetch_subscribe_message_queues(topic)[0]
    gone = members(names["gone"], topic, "g1")
    sent = send(console_cluster, topic, 1, mq=mq)[0]
    gone.update_offset(mq, 1)
    gone.close()
    try:
        wait_until(
            lambda: any(m.offset_msg_id == sent.offset_msg_id for m in got),
            what="the done group to consume the message",
        )
        yield sent, names, got, release
    finally:
        release.set()
        for c in consumers:
            c.shutdown()


def _states(client, sent, topic) -> dict[str, str]:
    body = client.get(f"/api/v1/messages/{sent.offset_msg_id}/track").json()
    assert body["topic"] == topic and body["msg_id"] == sent.offset_msg_id
    return {g["group"]: g["state"] for g in body["groups"]}


def test_each_group_s_consume_state_on_the_page_and_api(viewer, viewer_client, tracked, topic) -> None:
    sent, names, _, _ = tracked
    expected = {
        names["done"]: "CONSUMED",
        names["slow"]: "NOT_CONSUME_YET",
        names["puller"]: "PULL",
        names["gone"]: "NOT_ONLINE",
    }
    wait_until(
        lambda: {g: s for g, s in _states(viewer, sent, topic).items() if g in expected} == expected, what="the states"
    )
    gone = next(
        g
        for g in viewer.get(f"/api/v1/messages/{sent.offset_msg_id}/track").json()["groups"]
        if g["group"] == names["gone"]
    )
    assert gone["consumed"] is True and gone["committed_offset"] == 1 and gone["clients"] == []
    page = viewer_client.get(f"/messages/{sent.offset_msg_id}/").content.decode()
    for group, state in expected.items():
        assert f'<tr data-group="{group}" data-state="{state}">' in page
    assert 'data-testid="resend-link"' not in page  # viewers see no resend
    chinese = viewer_client.get(f"/messages/{sent.offset_msg_id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "消费状态" in chinese and "已消费" in chinese and "尚未消费" in chinese and "不在线" in chinese


def test_an_operator_resends_to_one_client_after_a_confirm_step_audited(as_role, operator, tracked, topic) -> None:
    sent, names, got, _ = tracked
    page_client = as_role("operator")
    detail = page_client.get(f"/messages/{sent.offset_msg_id}/").content.decode()
    assert (
        detail.count('data-testid="resend-link"') == 2
    )  # the two push groups; not the puller, not the group that left
    confirm = page_client.get(f"/messages/{sent.offset_msg_id}/resend", {"group": names["done"]})
    html = confirm.content.decode()
    assert confirm.status_code == 200 and 'data-testid="resend-form"' in html and "data-confirm=" in html
    client_id = wait_until(
        lambda: next(
            iter(
                g["clients"]
                for g in operator.get(f"/api/v1/messages/{sent.offset_msg_id}/track").json()["groups"]
                if g["group"] == names["done"]
            ),
            None,
        ),
        what="the done group's client",
    )[0]
    assert f'value="{client_id}"' in html
    before = len(got)
    done = page_client.post(f"/messages/{sent.offset_msg_id}/resend", {"group": names["done"], "client_id": client_id})
    assert done.status_code == 200 and 'data-result="CR_SUCCESS"' in done.content.decode()
    assert len(got) == before + 1 and got[-1].offset_msg_id == sent.offset_msg_id  # the listener ran once more
    entry = AuditEntry.objects.filter(action="message.resend").latest("id")
    assert (
        entry.result == AuditEntry.OK
        and entry.target == sent.offset_msg_id
        and entry.after["consume_result"] == "CR_SUCCESS"
    )

    api = operator.post(
        f"/api/v1/messages/{sent.offset_msg_id}/resend", {"group": names["done"], "client_id": client_id}, format="json"
    )
    assert (
        api.status_code == 200 and api.json()["consume_result"] == "CR_SUCCESS" and api.json()["client_id"] == client_id
    )
    assert len(got) == before + 2


def test_refusals_name_the_field_and_send_nothing(as_role, operator, viewer, tracked) -> None:
    sent, names, got, _ = tracked
    url = f"/api/v1/messages/{sent.offset_msg_id}/resend"
    before, audited = len(got), AuditEntry.objects.filter(action="message.resend").count()
    wrong_client = operator.post(url, {"group": names["done"], "client_id": "nobody@1"}, format="json")
    assert wrong_client.status_code == 400 and "client_id" in wrong_client.content.decode()
    pulls = operator.post(url, {"group": names["puller"], "client_id": "x"}, format="json")
    assert pulls.status_code == 400 and "group" in pulls.json().get("fields", pulls.json())
    left = operator.post(url, {"group": names["gone"], "client_id": "x"}, format="json")
    assert left.status_code == 400 and "online" in left.content.decode()
    unknown = operator.post(url, {"group": "G_nobody_reads", "client_id": "x"}, format="json")
    assert unknown.status_code == 400 and "does not consume" in unknown.content.decode()
    assert viewer.post(url, {"group": names["done"], "client_id": "x"}, format="json").status_code == 403
    assert as_role("viewer").get(f"/messages/{sent.offset_msg_id}/resend", {"group": names["done"]}).status_code == 403
    page = as_role("operator").post(
        f"/messages/{sent.offset_msg_id}/resend", {"group": names["done"], "client_id": "nobody@1"}
    )
    assert page.status_code == 400 and 'data-field="client_id"' in page.content.decode()
    assert len(got) == before  # nothing was sent
    assert (
        AuditEntry.objects.filter(action="message.resend", result=AuditEntry.FAILED).count() >= 5
        and AuditEntry.objects.filter(action="message.resend").count() == audited + 5
    )
