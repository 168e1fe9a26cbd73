"""Every front door gives RocketMQ's ``updateTopic`` answer for every name of the shared table.

The four doors — the broker (UPDATE_AND_CREATE_TOPIC, code 17, over the wire), ``manage.py mqadmin
updateTopic``, the console's topic form and ``POST /api/v1/topics`` — call the one rule
(:mod:`brokers.engine.common.topic_validator`) and differ only in how they report a refusal.
One session cluster serves every row; the table is built once, at import.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.common.topic_names import ACCEPT, BROKERS, CLUSTER, REFUSE, TOPIC_NAMES, Row, row_id
from topics.forms import TopicForm

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def remoting():
    with BlockingRemotingClient(name="front-door-test") as client:
        yield client


def through_broker(remoting: BlockingRemotingClient, cluster, name: str) -> str:
    ext = {"topic": name, "readQueueNums": 4, "writeQueueNums": 4, "perm": 6, "topicFilterType": "SINGLE_TAG"}
    response = remoting.invoke(
        cluster.broker_addr(BROKERS[0]), RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, ext), 10.0
    )
    return ACCEPT if response.code == ResponseCode.SUCCESS else REFUSE


def through_mqadmin(cluster, name: str) -> str:
    try:
        call_command(
            "mqadmin", "updateTopic", "-c", CLUSTER, f"--topic={name}", "-n", cluster.namesrv_addr, stdout=io.StringIO()
        )
    except CommandError:
        return REFUSE
    return ACCEPT


def through_form(name: str) -> str:
    data = {"name": name, "mode": "cluster", "cluster": CLUSTER, "read_queue_nums": 4, "write_queue_nums": 4, "perm": 6}
    form = TopicForm(data, clusters=(CLUSTER,), brokers=BROKERS)
    form.is_valid()
    return REFUSE if "name" in form.errors else ACCEPT


def through_api(client, name: str) -> str:
    response = client.post("/api/v1/topics", {"name": name, "cluster": CLUSTER}, format="json")
    if response.status_code == 400:
        assert list(response.json()["fields"]) == ["name"], response.content
        return REFUSE
    # 409 says the topic exists already, which the service checks only after the name passed the rule.
    assert response.status_code in (201, 409), response.content
    return ACCEPT


@pytest.mark.parametrize("row", TOPIC_NAMES, ids=row_id)
def test_every_front_door_agrees_with_rocketmq(row: Row, console_cluster, operator, console_admin, remoting) -> None:  # noqa: F811
    assert console_cluster.cluster == CLUSTER and tuple(console_cluster.broker_names) == BROKERS
    answers = {
        "form": through_form(row.name),
        "api": through_api(operator, row.name),
        "mqadmin": through_mqadmin(console_cluster, row.name),
        "broker": through_broker(remoting, console_cluster, row.name),
    }
    try:
        assert answers == dict.fromkeys(answers, row.answer), row.why
    finally:
        if ACCEPT in answers.values():
            console_admin.delete_topic(row.name, cluster=CLUSTER)  # leave the shared cluster as it was
