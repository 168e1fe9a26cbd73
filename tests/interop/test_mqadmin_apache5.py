"""Apache's mqadmin 5.x (the ``apache5`` classpath) against Gantry: clusterList, topicRoute and updateTopic work
as with the 4.9 tool; topicStatus (like consumerProgress) first asks each broker for the topic's config with
RocketMQ 5's GET_TOPIC_CONFIG (351), which Gantry's brokers answer as Apache's do. ``deleteSubGroup -r true``
sends RocketMQ 5's ``cleanOffset`` (4.x's tool: ``removeOffset``), and the group's offsets go too.
"""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common import json_compat
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.offsets import UpdateConsumerOffsetRequestHeader
from tests.brokers.engine.client._cluster import CLUSTER, create_topic, wait_for_route
from tests.interop._mqadmin import mqadmin5  # noqa: F401 (fixture)

READ = "Mqadmin5Read"
CREATED = "Mqadmin5Created"
DELETED_GROUP = "Mqadmin5DeletedGroup"


@pytest.fixture(scope="module")
def admin(session_cluster):
    with BlockingMQAdminClient(session_cluster.namesrv_addr, timeout_s=5.0) as client:
        yield client


@pytest.fixture(scope="module")
def answers(mqadmin5, session_cluster, admin):  # noqa: F811
    create_topic(admin, session_cluster, READ, queues=2)
    commit = UpdateConsumerOffsetRequestHeader(topic=READ, queue_id=0, consumer_group=DELETED_GROUP, commit_offset=0)
    with BlockingRemotingClient() as remoting:
        reply = remoting.invoke(
            session_cluster.broker_addr("broker-a"),
            RemotingCommand.request(RequestCode.UPDATE_CONSUMER_OFFSET, commit.encode()),
        )
        assert reply.code == 0, reply
    n = session_cluster.namesrv_addr
    calls = {
        "clusterList": ("clusterList",),
        "topicRoute": ("topicRoute", "-t", READ),
        "topicStatus": ("topicStatus", "-t", READ),
        "updateTopic": ("updateTopic", "-c", CLUSTER, "-t", CREATED, "-r", "3", "-w", "5", "-p", "4"),
        "deleteSubGroup": (
            "deleteSubGroup",
            "-b",
            session_cluster.broker_addr("broker-a"),
            "-g",
            DELETED_GROUP,
            "-r",
            "true",
        ),
    }
    return dict(zip(calls, mqadmin5.run_all(*((n, *call) for call in calls.values()))))


def test_cluster_list_5x_names_each_broker(answers, session_cluster):
    rows = answers["clusterList"].rows()
    assert [row[:4] for row in rows] == [
        [CLUSTER, name, "0", session_cluster.broker_addr(name)] for name in ("broker-a", "broker-b")
    ]


def test_topic_route_5x_names_the_brokers_and_queues(answers):
    route = json_compat.loads(answers["topicRoute"].ok())
    assert sorted(
        (q["brokerName"], q["readQueueNums"], q["writeQueueNums"], q["perm"]) for q in route["queueDatas"]
    ) == [("broker-a", 2, 2, 6), ("broker-b", 2, 2, 6)]


def test_update_topic_5x_creates_it_with_the_queue_counts_and_perm(answers, session_cluster, admin):
    out = answers["updateTopic"].ok()
    assert all(
        f"create topic to {session_cluster.broker_addr(name)} success." in out for name in ("broker-a", "broker-b")
    )
    for name in ("broker-a", "broker-b"):
        config = admin.get_all_topic_config(session_cluster.broker_addr(name))[CREATED]
        assert (config.read_queue_nums, config.write_queue_nums, config.perm) == (3, 5, 4), name
    wait_for_route(admin, CREATED, 2)


def test_topic_status_5x_shows_each_queues_offsets(answers, session_cluster):
    rows = [row for row in answers["topicStatus"].rows() if row[0].startswith("broker-")]  # then "Topic Put TPS: ..."
    assert sorted((row[0], int(row[1]), int(row[2]), int(row[3])) for row in rows) == [
        (name, qid, 0, 0) for name in ("broker-a", "broker-b") for qid in range(2)
    ]


def test_delete_sub_group_5x_with_remove_offset_drops_the_groups_offsets(answers, session_cluster):
    assert f"delete subscription group [{DELETED_GROUP}] from broker" in answers["deleteSubGroup"].ok()
    offsets = session_cluster.brokers["broker-a"].consumer_offset_manager
    assert offsets.query_offset(DELETED_GROUP, READ, 0) == -1
