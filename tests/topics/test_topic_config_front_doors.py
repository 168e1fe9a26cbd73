"""Every front door takes the perms and queue counts RocketMQ takes and refuses the others, through one rule each.

The rules are :func:`brokers.engine.common.perm.is_valid_perm` (RocketMQ's ``PermName.isValid``: an
integer from 0 to 7) and :func:`brokers.engine.common.queue_nums.is_valid_queue_nums` (0..1024: RocketMQ
takes 0, Gantry caps at 1024). The doors differ only in how they refuse: the broker's UPDATE_AND_CREATE_TOPIC
with a remark on the wire, ``manage.py mqadmin updateTopic`` with an argparse error, the console's
form and ``POST /api/v1/topics`` with a 400 naming the field, ``TopicConfig.validate``, the name
server's registration rules and the metadata import. One session cluster serves every row.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brokers.engine.common.perm import is_valid_perm
from brokers.engine.common.queue_nums import is_valid_queue_nums
from brokers.engine.common.topic_config import InvalidTopicConfigError, TopicConfig
from brokers.engine.namesrv.register_body_rules import RegisterBodyError, check_topic_registration
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from console.errors import InvalidInput
from metadata.document import parse_document
from tests.brokers.engine.common.topic_names import ACCEPT, BROKERS, CLUSTER, REFUSE
from topics.forms import TopicForm

pytestmark = pytest.mark.django_db

# (value, RocketMQ's answer): PermName.isValid is 0 <= perm < PERM_PRIORITY (8)
PERMS = [(-1, REFUSE), (0, ACCEPT), (2, ACCEPT), (4, ACCEPT), (6, ACCEPT), (7, ACCEPT), (8, REFUSE), (15, REFUSE)]
# RocketMQ checks no queue count (0 included); below 0 is meaningless and 1024 is Gantry's cap
QUEUE_NUMS = [(-1, REFUSE), (0, ACCEPT), (1, ACCEPT), (1024, ACCEPT), (1025, REFUSE)]
DEFAULTS = {"read_queue_nums": 4, "write_queue_nums": 4, "perm": 6}
WIRE = {"read_queue_nums": "readQueueNums", "write_queue_nums": "writeQueueNums", "perm": "perm"}
MQADMIN = {"read_queue_nums": "-r", "write_queue_nums": "-w", "perm": "-p"}


@pytest.fixture(scope="module")
def remoting():
    with BlockingRemotingClient(name="config-front-door-test") as client:
        yield client


def _answer(refused: bool) -> str:
    return REFUSE if refused else ACCEPT


def pure_doors(field: str, value: int) -> dict[str, str]:
    """The doors without a server: the rule itself, TopicConfig, the name server's rules, the metadata import."""
    values = {**DEFAULTS, field: value}
    answers = {}
    answers["rule"] = _answer(not (is_valid_perm if field == "perm" else is_valid_queue_nums)(value))
    try:
        TopicConfig("T", values["read_queue_nums"], values["write_queue_nums"], values["perm"]).validate()
        answers["topic_config"] = ACCEPT
    except InvalidTopicConfigError as exc:
        assert WIRE[field] in str(exc)
        answers["topic_config"] = REFUSE
    entry = {
        "brokerName": BROKERS[0],
        "readQueueNums": values["read_queue_nums"],
        "writeQueueNums": values["write_queue_nums"],
        "perm": values["perm"],
        "topicSysFlag": 0,
    }
    try:
        check_topic_registration("T", json.dumps({"queueDatas": [entry]}).encode())
        answers["namesrv"] = ACCEPT
    except RegisterBodyError as exc:
        assert WIRE[field] in str(exc)
        answers["namesrv"] = REFUSE
    document = {"topicConfigTable": {"T": {"topicName": "T", **{WIRE[k]: v for k, v in values.items()}}}}
    try:
        parse_document(document)
        answers["metadata"] = ACCEPT
    except InvalidInput as exc:
        assert list(exc.fields) == [f"topicConfigTable.T.{WIRE[field]}"], exc.fields
        answers["metadata"] = REFUSE
    return answers


def through_form(field: str, value: int) -> str:
    data = {"name": "FrontDoorForm", "mode": "cluster", "cluster": CLUSTER, **DEFAULTS, field: value}
    form = TopicForm(data, clusters=(CLUSTER,), brokers=BROKERS)
    form.is_valid()
    assert set(form.errors) <= {field}, form.errors
    return _answer(field in form.errors)


def through_api(client, name: str, field: str, value: int) -> str:
    response = client.post(
        "/api/v1/topics", {"name": name, "cluster": CLUSTER, **DEFAULTS, field: value}, format="json"
    )
    if response.status_code == 400:
        assert list(response.json()["fields"]) == [field], response.content
        return REFUSE
    assert response.status_code == 201, response.content
    return ACCEPT


def through_mqadmin(cluster, name: str, field: str, value: int) -> str:
    values = {**DEFAULTS, field: value}
    flags = [f"{MQADMIN[k]}{v}" for k, v in values.items()]  # -p-1: a value glued to its flag, as argparse allows
    try:
        call_command(
            "mqadmin",
            "updateTopic",
            "-c",
            CLUSTER,
            "-t",
            name,
            *flags,
            "-n",
            cluster.namesrv_addr,
            stdout=io.StringIO(),
        )
    except CommandError:
        return REFUSE
    return ACCEPT


def through_broker(remoting: BlockingRemotingClient, cluster, name: str, field: str, value: int) -> str:
    ext = {
        "topic": name,
        **{WIRE[k]: str(v) for k, v in {**DEFAULTS, field: value}.items()},
        "topicFilterType": "SINGLE_TAG",
    }
    response = remoting.invoke(
        cluster.broker_addr(BROKERS[0]), RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, ext), 10.0
    )
    if response.code != ResponseCode.SUCCESS:
        assert response.code == ResponseCode.SYSTEM_ERROR and WIRE[field] in response.remark, response.remark
        return REFUSE
    return ACCEPT


def every_door(field: str, value: int, name: str, console_cluster, operator, remoting) -> dict[str, str]:
    assert console_cluster.cluster == CLUSTER and tuple(console_cluster.broker_names) == BROKERS
    return {
        **pure_doors(field, value),
        "form": through_form(field, value),
        "api": through_api(operator, name, field, value),
        "mqadmin": through_mqadmin(console_cluster, name, field, value),
        "broker": through_broker(remoting, console_cluster, name, field, value),
    }


@pytest.mark.parametrize(("value", "answer"), PERMS, ids=[f"perm={v}" for v, _ in PERMS])
def test_every_door_takes_rocketmqs_perms(
    value: int, answer: str, console_cluster, operator, console_admin, remoting
) -> None:
    name = f"PermDoor_{value + 1}"
    try:
        answers = every_door("perm", value, name, console_cluster, operator, remoting)
        assert answers == dict.fromkeys(answers, answer)
    finally:
        if answer == ACCEPT:
            console_admin.delete_topic(name, cluster=CLUSTER)  # leave the shared cluster as it was


@pytest.mark.parametrize("field", ["read_queue_nums", "write_queue_nums"])
@pytest.mark.parametrize(("value", "answer"), QUEUE_NUMS, ids=[f"count={v}" for v, _ in QUEUE_NUMS])
def test_every_door_takes_rocketmqs_queue_counts(
    field: str, value: int, answer: str, console_cluster, operator, console_admin, remoting
) -> None:
    name = f"CountDoor_{field[0]}{value + 1}"
    try:
        answers = every_door(field, value, name, console_cluster, operator, remoting)
        assert answers == dict.fromkeys(answers, answer)
    finally:
        if answer == ACCEPT:
            console_admin.delete_topic(name, cluster=CLUSTER)  # leave the shared cluster as it was
