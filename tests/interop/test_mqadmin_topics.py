"""Apache's mqadmin 4.9.x on Gantry's topics: updateTopic, deleteTopic, topicRoute, topicStatus, and the
refusals of bad input (an unknown topic, an illegal name or queue count: a remark, nothing created).

Every command of the module runs once, side by side, in the ``answers`` fixture, after the topics they
read were made and filled with Gantry's own admin client and Producer; each test checks one command's
answer and reads the outcome back with Gantry's admin client.
"""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import MQBrokerError
from brokers.engine.client.producer import Producer
from brokers.engine.common import json_compat
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import ResponseCode
from tests.brokers.engine.client._cluster import CLUSTER, create_topic, wait_for_route
from tests.interop._mqadmin import mqadmin  # noqa: F401 (fixture)

CREATED = "MqadminCreated"  # updateTopic -c: read 3, write 5, perm 4 (read only)
ORDERED = "MqadminOrdered"  # updateTopic -b broker-b -o true
FILLED = "MqadminFilled"  # made by Gantry, messages sent to chosen queues
DELETED = "MqadminDeleted"  # made by Gantry, removed by deleteTopic -c
UNKNOWN = "MqadminNeverMade"
# Messages sent to each queue of FILLED: (broker name, queue id) -> count.
FILLED_COUNTS = {("broker-a", 0): 3, ("broker-a", 1): 0, ("broker-b", 0): 1, ("broker-b", 1): 2}
NO_READ_QUEUES = "MqadminNoReadQueues"  # updateTopic -r 0: a count RocketMQ takes (common/queue_nums.py)
BAD_NAMES = {
    "space": "bad topic",
    "too long": "L" * 128,
    "system topic": "SCHEDULE_TOPIC_XXXX",
    "cluster name": CLUSTER,
}


@pytest.fixture(scope="module")
def answers(mqadmin, module_cluster, module_admin):  # noqa: F811
    create_topic(module_admin, module_cluster, FILLED, queues=2)
    create_topic(module_admin, module_cluster, DELETED, queues=1)
    with Producer("mqadmin_topics_producer", module_cluster.namesrv_addr) as producer:
        for (broker, queue_id), count in FILLED_COUNTS.items():
            for i in range(count):
                producer.send(
                    Message(FILLED, f"{broker}-{queue_id}-{i}".encode()), mq=MessageQueue(FILLED, broker, queue_id)
                )
    n = module_cluster.namesrv_addr
    before = topic_configs(module_cluster, module_admin)
    calls = {
        "updateTopic -c": ("updateTopic", "-c", CLUSTER, "-t", CREATED, "-r", "3", "-w", "5", "-p", "4"),
        "updateTopic -b -o": (
            "updateTopic",
            "-b",
            module_cluster.broker_addr("broker-b"),
            "-t",
            ORDERED,
            "-r",
            "2",
            "-w",
            "2",
            "-o",
            "true",
        ),
        "deleteTopic": ("deleteTopic", "-c", CLUSTER, "-t", DELETED),
        "topicRoute": ("topicRoute", "-t", FILLED),
        "topicStatus": ("topicStatus", "-t", FILLED),
        "topicRoute unknown": ("topicRoute", "-t", UNKNOWN),
        "topicStatus unknown": ("topicStatus", "-t", UNKNOWN),
        **{f"updateTopic {why}": ("updateTopic", "-c", CLUSTER, "-t", name) for why, name in BAD_NAMES.items()},
        "updateTopic -r 0": ("updateTopic", "-c", CLUSTER, "-t", NO_READ_QUEUES, "-r", "0", "-w", "1"),
        "updateTopic -r-1": ("updateTopic", "-c", CLUSTER, "-t", "MqadminNegativeQueues", "-r-1", "-w", "1"),
    }
    results = dict(zip(calls, mqadmin.run_all(*((n, *call) for call in calls.values()))))
    results["configs before"] = before
    return results


def topic_configs(cluster, admin) -> dict[str, dict]:
    """Broker name -> that master's topic configs."""
    return {name: admin.get_all_topic_config(cluster.broker_addr(name)) for name in cluster.broker_names}


def test_update_topic_in_a_cluster_creates_it_on_every_master_with_the_queue_counts_and_perm(
    answers, module_cluster, module_admin
):
    out = answers["updateTopic -c"].ok()
    for name in ("broker-a", "broker-b"):
        assert f"create topic to {module_cluster.broker_addr(name)} success." in out
    assert f"TopicConfig [topicName={CREATED}, readQueueNums=3, writeQueueNums=5, perm=R--" in out
    for name, configs in topic_configs(module_cluster, module_admin).items():
        config = configs[CREATED]
        assert (config.read_queue_nums, config.write_queue_nums, config.perm, config.order) == (3, 5, 4, False), name
    route = wait_for_route(module_admin, CREATED, 2)
    assert sorted((q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas) == [
        ("broker-a", 3, 5, 4),
        ("broker-b", 3, 5, 4),
    ]


def test_update_topic_on_one_broker_as_ordered_records_the_order_config(answers, module_cluster, module_admin):
    result = answers["updateTopic -b -o"]
    assert f"create topic to {module_cluster.broker_addr('broker-b')} success." in result.stdout
    assert "set broker orderConf. isOrder=true, orderConf=[broker-b:2]" in result.stdout
    # Apache's tool first reads the old order config and prints the name server's "not found" (as it does with Apache's).
    assert result.refusal() == (
        ResponseCode.QUERY_NOT_FOUND,
        f"No config item, Namespace: ORDER_TOPIC_CONFIG Key: {ORDERED}",
    )
    configs = topic_configs(module_cluster, module_admin)
    assert ORDERED not in configs["broker-a"]
    config = configs["broker-b"][ORDERED]
    assert (config.read_queue_nums, config.write_queue_nums) == (2, 2)
    # The order lives in the name server's ORDER_TOPIC_CONFIG (a 4.9 broker ignores the header's order flag too).
    assert module_admin.get_kv_config("ORDER_TOPIC_CONFIG", ORDERED) == "broker-b:2"


def test_delete_topic_removes_it_from_every_master_and_the_name_server(answers, module_cluster, module_admin):
    out = answers["deleteTopic"].ok()
    assert f"delete topic [{DELETED}] from cluster [{CLUSTER}] success." in out
    assert f"delete topic [{DELETED}] from NameServer success." in out
    assert all(DELETED not in configs for configs in topic_configs(module_cluster, module_admin).values())
    assert DELETED not in module_admin.get_all_topic_list()
    with pytest.raises(MQBrokerError) as raised:
        module_admin.examine_topic_route_info(DELETED)
    assert raised.value.code == ResponseCode.TOPIC_NOT_EXIST


def test_topic_route_names_the_brokers_and_queues(answers, module_cluster):
    route = json_compat.loads(answers["topicRoute"].ok())
    assert sorted((b["cluster"], b["brokerName"], dict(b["brokerAddrs"])) for b in route["brokerDatas"]) == [
        (CLUSTER, name, {0: module_cluster.broker_addr(name)}) for name in ("broker-a", "broker-b")
    ]
    assert sorted(
        (q["brokerName"], q["readQueueNums"], q["writeQueueNums"], q["perm"]) for q in route["queueDatas"]
    ) == [("broker-a", 2, 2, 6), ("broker-b", 2, 2, 6)]


def test_topic_status_shows_each_queues_offsets(answers, module_admin):
    result = answers["topicStatus"]
    assert result.ok().splitlines()[0].split() == [
        "#Broker",
        "Name",
        "#QID",
        "#Min",
        "Offset",
        "#Max",
        "Offset",
        "#Last",
        "Updated",
    ]
    rows = {(row[0], int(row[1])): row[2:] for row in result.rows()}
    assert {key: (int(row[0]), int(row[1])) for key, row in rows.items()} == {
        key: (0, n) for key, n in FILLED_COUNTS.items()
    }
    assert {key for key, row in rows.items() if row[2:]} == {
        key for key, n in FILLED_COUNTS.items() if n
    }  # a time once written
    stats = module_admin.examine_topic_stats(FILLED)
    assert {
        (mq.broker_name, mq.queue_id): offsets.max_offset for mq, offsets in stats.offset_table.items()
    } == FILLED_COUNTS


@pytest.mark.parametrize("command", ["topicRoute", "topicStatus"])
def test_an_unknown_topic_is_refused_by_the_name_server(answers, command):
    assert answers[f"{command} unknown"].refusal() == (
        ResponseCode.TOPIC_NOT_EXIST,
        f"No topic route info in name server for the topic: {UNKNOWN}",
    )


@pytest.mark.parametrize("why", sorted(BAD_NAMES))
def test_update_topic_with_an_illegal_name_is_refused_and_creates_nothing(answers, module_cluster, module_admin, why):
    name = BAD_NAMES[why]
    code, remark = answers[f"updateTopic {why}"].refusal()
    assert code == ResponseCode.SYSTEM_ERROR and remark.startswith("topic name is illegal: ")
    now = topic_configs(module_cluster, module_admin)
    if why in ("cluster name", "system topic"):  # these topics exist; they stay as they were
        assert {broker: configs[name] for broker, configs in now.items()} == {
            broker: configs[name] for broker, configs in answers["configs before"].items()
        }
        return
    assert all(name not in configs for configs in now.values())
    assert name not in module_admin.get_all_topic_list()


def test_update_topic_without_read_queues_is_taken_as_rocketmq_takes_it(answers, module_cluster, module_admin):
    answers["updateTopic -r 0"].ok()
    for name, configs in topic_configs(module_cluster, module_admin).items():
        assert (configs[NO_READ_QUEUES].read_queue_nums, configs[NO_READ_QUEUES].write_queue_nums) == (0, 1), name


def test_update_topic_with_a_negative_queue_count_is_refused_and_creates_nothing(answers, module_cluster, module_admin):
    assert answers["updateTopic -r-1"].refusal() == (
        ResponseCode.SYSTEM_ERROR,
        "readQueueNums -1 is out of range, it must be within 0..1024",
    )
    assert all(
        "MqadminNegativeQueues" not in configs for configs in topic_configs(module_cluster, module_admin).values()
    )
