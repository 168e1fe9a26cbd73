"""``manage.py mqadmin``: every subcommand once against a real embedded cluster, and bad arguments."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common import json_compat
from brokers.engine.common.message import Message
from tests.brokers.engine.client._cluster import CLUSTER, create_topic, wait_for_route

ROOT = Path(__file__).resolve().parents[2]


def mqadmin(cluster, *args: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", *args, "-n", cluster.namesrv_addr, stdout=out)
    return out.getvalue()


def run_manage(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings"}
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_cluster_list(module_cluster):
    lines = mqadmin(module_cluster, "clusterList").splitlines()
    assert lines[0].split()[:4] == ["#Cluster", "Name", "#Broker", "Name"]
    rows = [line.split() for line in lines[1:]]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (CLUSTER, "broker-a", "0", module_cluster.broker_addr("broker-a")),
        (CLUSTER, "broker-b", "0", module_cluster.broker_addr("broker-b")),
    ]


def test_update_topic_route_status_list_and_delete(module_cluster, module_admin):
    out = mqadmin(module_cluster, "updateTopic", "-c", CLUSTER, "-t", "MqadminTopic", "-r", "3", "-w", "3", "-p", "6")
    assert f"create topic to {module_cluster.broker_addr('broker-a')} success." in out
    assert f"create topic to {module_cluster.broker_addr('broker-b')} success." in out
    assert "TopicConfig [topicName=MqadminTopic, readQueueNums=3, writeQueueNums=3, perm=RW-" in out
    wait_for_route(module_admin, "MqadminTopic", 2)

    assert "MqadminTopic" in mqadmin(module_cluster, "topicList").splitlines()
    route = json_compat.loads(mqadmin(module_cluster, "topicRoute", "-t", "MqadminTopic"))
    assert [(q["brokerName"], q["readQueueNums"], q["perm"]) for q in route["queueDatas"]] == [
        ("broker-a", 3, 6),
        ("broker-b", 3, 6),
    ]
    assert {b["brokerName"]: b["brokerAddrs"][0] for b in route["brokerDatas"]} == {
        n: module_cluster.broker_addr(n) for n in ("broker-a", "broker-b")
    }

    status = mqadmin(module_cluster, "topicStatus", "-t", "MqadminTopic").splitlines()
    assert status[0].split() == ["#Broker", "Name", "#QID", "#Min", "Offset", "#Max", "Offset", "#Last", "Updated"]
    assert [row.split()[:4] for row in status[1:]] == [
        [b, str(q), "0", "0"] for b in ("broker-a", "broker-b") for q in range(3)
    ]

    out = mqadmin(module_cluster, "deleteTopic", "-c", CLUSTER, "-t", "MqadminTopic")
    assert "delete topic [MqadminTopic] from NameServer success." in out
    assert "MqadminTopic" not in mqadmin(module_cluster, "topicList").splitlines()
    with pytest.raises(CommandError, match="does not exist"):
        mqadmin(module_cluster, "topicStatus", "-t", "MqadminTopic")


def test_update_topic_on_one_broker(module_cluster, module_admin):
    out = mqadmin(
        module_cluster,
        "updateTopic",
        "-b",
        module_cluster.broker_addr("broker-b"),
        "-t",
        "MqadminOneBroker",
        "-r",
        "2",
        "-w",
        "2",
    )
    assert f"create topic to {module_cluster.broker_addr('broker-b')} success." in out
    route = wait_for_route(module_admin, "MqadminOneBroker", 1)
    assert [q.broker_name for q in route.queue_datas] == ["broker-b"]


def test_update_order_topic_records_its_layout(module_cluster, module_admin):
    out = mqadmin(
        module_cluster, "updateTopic", "-c", CLUSTER, "-t", "MqadminOrderTopic", "-r", "2", "-w", "2", "-o", "true"
    )
    assert "order=true" in out
    wait_for_route(module_admin, "MqadminOrderTopic", 2)
    assert module_admin.get_kv_config("ORDER_TOPIC_CONFIG", "MqadminOrderTopic") == "broker-a:2;broker-b:2"
    assert module_admin.get_kv_config("ORDER_TOPIC_CONFIG", "NoSuchTopic") is None


def test_update_topic_with_attributes_sets_the_message_type(module_cluster, module_admin):
    mqadmin(
        module_cluster,
        "updateTopic",
        "-c",
        CLUSTER,
        "-t",
        "MqadminFifoTopic",
        "-r",
        "2",
        "-w",
        "2",
        "--attributes=+message.type=FIFO",
    )
    wait_for_route(module_admin, "MqadminFifoTopic", 2)
    for name in ("broker-a", "broker-b"):
        assert module_admin.get_all_topic_config(module_cluster.broker_addr(name))["MqadminFifoTopic"].attributes == {
            "message.type": "FIFO"
        }
    with pytest.raises(CommandError, match=r"message\.type"):  # the broker's refusal, naming the attribute
        mqadmin(
            module_cluster,
            "updateTopic",
            "-c",
            CLUSTER,
            "-t",
            "MqadminFifoTopic",
            "--attributes=+message.type=SOMETIMES",
        )
    assert module_admin.get_all_topic_config(module_cluster.broker_addr("broker-a"))["MqadminFifoTopic"].attributes == {
        "message.type": "FIFO"
    }


def test_send_query_and_consume(module_cluster, module_admin):
    create_topic(module_admin, module_cluster, "MqadminMsgTopic", queues=2)
    out = mqadmin(
        module_cluster,
        "sendMessage",
        "-t",
        "MqadminMsgTopic",
        "-p",
        "hello mqadmin",
        "-k",
        "order-77",
        "-c",
        "TagM",
        "-b",
        "broker-b",
        "-i",
        "1",
    )
    header, row = out.splitlines()
    assert header.split() == ["#Broker", "Name", "#QID", "#Send", "Result", "#MsgId"]
    broker, qid, status, uniq_id = row.split()
    assert (broker, qid, status) == ("broker-b", "1", "SEND_OK")

    lines = mqadmin(module_cluster, "queryMsgByKey", "-t", "MqadminMsgTopic", "-k", "order-77").splitlines()
    assert lines[0].split() == ["#Message", "ID", "#QID", "#Offset"] and lines[1].split() == [uniq_id, "1", "0"]
    [msg] = module_admin.query_message_by_key("MqadminMsgTopic", "order-77")

    details = mqadmin(module_cluster, "queryMsgById", "-i", msg.msg_id)
    assert f"OffsetID:            {msg.msg_id}" in details
    assert "Tags:                [TagM]" in details and "Keys:                [order-77]" in details
    assert "Message Body:        hello mqadmin" in details
    by_uniq = mqadmin(module_cluster, "queryMsgById", "-i", uniq_id, "-t", "MqadminMsgTopic")
    assert "Message Body:        hello mqadmin" in by_uniq

    consumed = mqadmin(module_cluster, "consumeMessage", "-t", "MqadminMsgTopic")
    assert "BODY: hello mqadmin" in consumed and "Consume ok, 1 message(s)" in consumed
    one_queue = mqadmin(
        module_cluster, "consumeMessage", "-t", "MqadminMsgTopic", "-b", "broker-a", "-i", "0", "-c", "5"
    )
    assert "Consume ok, 0 message(s)" in one_queue


def test_consumer_progress_and_connection(module_cluster, module_admin):
    create_topic(module_admin, module_cluster, "MqadminGroupTopic", queues=1)
    with SimpleProducer(module_cluster.namesrv_addr, "mqadmin_test_producer", heartbeat_interval_s=None) as producer:
        for i in range(4):
            producer.send(Message("MqadminGroupTopic", f"{i}".encode()))
    with PullClient(module_cluster.namesrv_addr, "MqadminGroup", heartbeat_interval_s=None) as puller:
        puller.subscribe("MqadminGroupTopic", "*")
        for mq in puller.fetch_subscribe_message_queues("MqadminGroupTopic"):
            result = puller.pull(mq, 0)
            puller.update_offset(mq, result.next_begin_offset)
        wait_for_route(module_admin, "%RETRY%MqadminGroup", 1)

        progress = mqadmin(
            module_cluster, "consumerProgress", "-g", "MqadminGroup", "-t", "MqadminGroupTopic"
        ).splitlines()
        assert progress[0].split()[:3] == ["#Topic", "#Broker", "Name"]
        rows = [line.split() for line in progress[1:] if line.startswith("MqadminGroupTopic")]
        assert sorted(r[1] for r in rows) == ["broker-a", "broker-b"]
        assert all(r[3] == r[4] and r[5] == "0" for r in rows)  # broker offset == consumer offset, diff 0
        assert "Consume Diff Total: 0" in progress

        summary = mqadmin(module_cluster, "consumerProgress")
        assert any(line.split()[:2] == ["MqadminGroup", "1"] for line in summary.splitlines())

        conn = mqadmin(module_cluster, "consumerConnection", "-g", "MqadminGroup")
        assert f"001  {puller.client_id}" in conn
        assert "Topic: MqadminGroupTopic" in conn and "SubExpression: *" in conn
        assert "ConsumeType: CONSUME_ACTIVELY" in conn and "MessageModel: CLUSTERING" in conn


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["noSuchCommand"], "invalid choice"),
        (["topicRoute"], "-t"),
        (["topicRoute", "-t", "bad topic!"], "illegal topic name"),
        (["updateTopic", "-c", CLUSTER, "-t", "T1", "-r", "many"], "not an integer"),
        (["updateTopic", "-c", CLUSTER, "-t", "T1", "-p", "9"], "outside 0..7"),
        (["updateTopic", "-t", "T1"], "-b/--brokerAddr -c/--clusterName"),
        (["updateTopic", "-c", CLUSTER, "-t", "TBW102"], "system topic"),
        (["updateTopic", "-c", "NoSuchCluster", "-t", "T1"], "NoSuchCluster"),
        (["updateTopic", "-c", CLUSTER, "-t", "T1", "--attributes", "message.type=FIFO"], "illegal attributes"),
        (["sendMessage", "-t", "T1", "-p", "x", "-i", "1"], "needs -b"),
        (["consumerConnection", "-g", "bad group!"], "illegal group name"),
        (["consumerConnection", "-g", "NobodyHere"], "not online"),
        (["queryMsgById", "-i", "XYZ"], "not an offset message id"),
    ],
)
def test_bad_arguments_raise_command_error(module_cluster, args, message):
    with pytest.raises(CommandError, match=message):
        mqadmin(module_cluster, *args)


def test_unreachable_name_server_is_a_command_error():
    with pytest.raises(CommandError, match="no name server answered"):
        call_command("mqadmin", "topicList", "-n", "127.0.0.1:1", stdout=io.StringIO())
    with pytest.raises(CommandError, match="bad -n"):
        call_command("mqadmin", "topicList", "-n", "nonsense", stdout=io.StringIO())


def test_exit_codes_from_the_command_line():
    bad_arg = run_manage("mqadmin", "updateTopic", "-c", CLUSTER, "-t", "T1", "-p", "9")
    assert bad_arg.returncode == 2 and "outside 0..7" in bad_arg.stderr
    unknown = run_manage("mqadmin", "noSuchCommand")
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
    unreachable = run_manage("mqadmin", "clusterList", "-n", "127.0.0.1:1")
    assert unreachable.returncode == 1 and "no name server answered" in unreachable.stderr
