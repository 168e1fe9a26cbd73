"""Apache's mqadmin 4.9.x on Gantry's consumer groups and messages: updateSubGroup, consumerProgress,
consumerConnection, topicList -c, queryMsgById, queryMsgByKey, resetOffsetByTime (an online Gantry
PushConsumer, and an offline group).

The scene (module fixture): one topic with one queue on broker-a, six messages sent by Gantry's
Producer a few milliseconds apart (so each has a store time of its own, and a reset to the store time
of message 2 lands exactly on offset 2); group ``ONLINE`` consumes them with a Gantry PushConsumer that
stays up, group ``OFFLINE`` consumed them too and shut down. The commands that leave ``ONLINE`` as it
is run side by side; its reset runs after them.
"""

from __future__ import annotations

import re
import threading
import time

import pytest

from brokers.engine.client.admin_subscription_groups import get_all_subscription_group_config
from brokers.engine.client.client_config import ClientConfig
from brokers.engine.client.listener import ConsumeConcurrentlyStatus
from brokers.engine.client.producer import Producer
from brokers.engine.client.push_consumer import PushConsumer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import ResponseCode
from tests.brokers.engine.client._cluster import CLUSTER, wait_for_route
from tests.interop._mqadmin import body_file, mqadmin  # noqa: F401 (fixture)
from tests.fixtures.waiting import wait_until

TOPIC = "MqadminGroupsTopic"
ONLINE, OFFLINE, SUB_GROUP = "mqadmin_online_group", "mqadmin_offline_group", "mqadmin_sub_group"
COUNT = 6
RESET_TO = 2  # the reset's timestamp is the store time of this message (its queue offset)
FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


class Bodies:
    """A concurrent listener that records the bodies it was given."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: list[str] = []

    def __call__(self, msgs) -> ConsumeConcurrentlyStatus:
        with self.lock:
            self.bodies.extend(m.body.decode() for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def count(self, body: str) -> int:
        with self.lock:
            return self.bodies.count(body)


def consumer(cluster, group: str, listener: Bodies) -> PushConsumer:
    c = PushConsumer(group, cluster.namesrv_addr, client_config=FAST, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(TOPIC, "*")
    c.register_listener(listener)
    return c.start()


def committed(admin, group: str) -> int:
    stats = admin.examine_consume_stats(group, TOPIC)
    return stats.offset_table[MessageQueue(TOPIC, "broker-a", 0)].consumer_offset


@pytest.fixture(scope="module")
def scene(mqadmin, module_cluster, module_admin):  # noqa: F811
    module_admin.create_or_update_topic(module_cluster.broker_addr("broker-a"), TopicConfig(TOPIC, 1, 1))
    wait_for_route(module_admin, TOPIC, 1)
    with Producer("mqadmin_groups_producer", module_cluster.namesrv_addr) as producer:
        sent = []
        for i in range(COUNT):
            sent.append(producer.send(Message(TOPIC, f"body-{i}".encode(), tags="TagM", keys=f"key-{i}")))
            time.sleep(0.005)  # a store time of its own for each message (not a timing assertion)
    assert [r.queue_offset for r in sent] == list(range(COUNT))
    reset_ts = module_admin.view_message(sent[RESET_TO].offset_msg_id).store_timestamp

    offline = consumer(module_cluster, OFFLINE, Bodies())
    try:
        wait_until(lambda: committed(module_admin, OFFLINE) == COUNT, what="the offline group's offsets")
    finally:
        offline.shutdown()
    online_bodies = Bodies()
    online = consumer(module_cluster, ONLINE, online_bodies)
    try:
        wait_until(lambda: committed(module_admin, ONLINE) == COUNT, what="the online group's offsets")
        n = module_cluster.namesrv_addr
        calls = {
            "updateSubGroup": (
                "updateSubGroup",
                "-c",
                CLUSTER,
                "-g",
                SUB_GROUP,
                "-s",
                "false",
                "-m",
                "true",
                "-d",
                "false",
                "-q",
                "3",
                "-r",
                "7",
                "-i",
                "1",
                "-w",
                "1",
                "-a",
                "false",
            ),
            "consumerProgress": ("consumerProgress", "-g", ONLINE),
            "consumerConnection": ("consumerConnection", "-g", ONLINE),
            "consumerConnection offline": ("consumerConnection", "-g", OFFLINE),
            "queryMsgById": ("queryMsgById", "-i", sent[3].offset_msg_id),
            "queryMsgByKey": ("queryMsgByKey", "-t", TOPIC, "-k", "key-4"),
            "topicList -c": ("topicList", "-c"),
            "resetOffsetByTime offline": ("resetOffsetByTime", "-g", OFFLINE, "-t", TOPIC, "-s", str(reset_ts)),
        }
        results = dict(zip(calls, mqadmin.run_all(*((n, *call) for call in calls.values()))))
        results["resetOffsetByTime online"] = mqadmin.run(
            "resetOffsetByTime", "-g", ONLINE, "-t", TOPIC, "-s", str(reset_ts), namesrv=n, retry=False
        )  # twice would deliver 2..5 three times
        wait_until(
            lambda: all(online_bodies.count(f"body-{i}") == 2 for i in range(RESET_TO, COUNT)),
            what="the online consumer to be given messages 2..5 again",
        )
        yield {"results": results, "sent": sent, "online": online, "online_bodies": online_bodies, "reset_ts": reset_ts}
    finally:
        online.shutdown()


def test_update_sub_group_creates_the_group_with_its_settings_on_every_master(scene, module_cluster, module_admin):
    out = scene["results"]["updateSubGroup"].ok()
    for name in ("broker-a", "broker-b"):
        assert f"create subscription group to {module_cluster.broker_addr(name)} success." in out
        config = module_admin.driver.run(get_all_subscription_group_config(module_cluster.broker_addr(name)))[SUB_GROUP]
        assert (
            config.consume_enable,
            config.consume_from_min_enable,
            config.consume_broadcast_enable,
            config.retry_queue_nums,
            config.retry_max_times,
            config.broker_id,
            config.which_broker_when_consume_slowly,
            config.notify_consumer_ids_changed_enable,
        ) == (False, True, False, 3, 7, 1, 1, False), name


def test_consumer_progress_shows_the_groups_offsets(scene):
    result = scene["results"]["consumerProgress"]
    rows = {(row[0], row[1], int(row[2])): [int(v) for v in row[3:6]] for row in result.rows() if len(row) >= 6}
    assert rows[(TOPIC, "broker-a", 0)] == [COUNT, COUNT, 0]  # broker offset, consumer offset, diff
    assert all(key[0] in (TOPIC, f"%RETRY%{ONLINE}") for key in rows)
    assert "Diff Total: 0" in result.stdout


def test_consumer_connection_names_the_gantry_client_and_its_subscriptions(scene):
    out = scene["results"]["consumerConnection"].ok()
    lines = out.splitlines()
    client_id, client_addr, language, version = lines[1].split()
    assert client_id == scene["online"].client_id and language == "PYTHON" and client_addr.startswith("127.0.0.1:")
    subscription = lines[lines.index("Below is subscription:") + 2 :]
    assert {tuple(line.split()) for line in subscription[:2]} == {(TOPIC, "*"), (f"%RETRY%{ONLINE}", "*")}
    for fact in (
        "ConsumeType: CONSUME_PASSIVELY",
        "MessageModel: CLUSTERING",
        "ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET",
    ):
        assert fact in lines


def test_consumer_connection_of_an_offline_group_is_refused(scene):
    code, remark = scene["results"]["consumerConnection offline"].refusal()
    assert code == ResponseCode.CONSUMER_NOT_ONLINE and remark.startswith(f"the consumer group[{OFFLINE}] not online")


def test_topic_list_with_groups_names_the_groups_of_the_topic(scene):
    rows = [row for row in scene["results"]["topicList -c"].rows() if len(row) >= 2 and row[1] == TOPIC]
    assert sorted(row[2] for row in rows) == sorted([ONLINE, OFFLINE])
    assert {row[0] for row in rows} == {CLUSTER}


def test_query_msg_by_id_shows_the_message_and_who_consumed_it(scene):
    result = scene["results"]["queryMsgById"]
    sent = scene["sent"][3]
    fields = dict(re.findall(r"^([A-Za-z ]+):\s+(.*)$", result.ok(), re.MULTILINE))
    assert (
        fields["OffsetID"],
        fields["Topic"],
        fields["Tags"],
        fields["Keys"],
        fields["Queue ID"],
        fields["Queue Offset"],
    ) == (sent.offset_msg_id, TOPIC, "[TagM]", "[key-3]", "0", "3")
    assert f"UNIQ_KEY={sent.msg_id}" in fields["Properties"]
    assert body_file(result) == b"body-3"
    tracks = set(re.findall(r"MessageTrack \[consumerGroup=(\S+), trackType=(\w+)", result.stdout))
    assert tracks == {(ONLINE, "CONSUMED"), (OFFLINE, "NOT_ONLINE")}


def test_query_msg_by_key_finds_the_message(scene):
    result = scene["results"]["queryMsgByKey"]
    assert result.rows() == [[scene["sent"][4].msg_id, "0", "4"]]  # message id (UNIQ_KEY), queue id, queue offset


def test_reset_offset_by_time_moves_an_offline_groups_offset(scene, module_admin):
    out = scene["results"]["resetOffsetByTime offline"].ok()
    rows = [line.split() for line in out.splitlines() if line.startswith("broker-a")]
    assert rows == [
        ["broker-a", "0", str(COUNT), str(COUNT), str(RESET_TO), str(RESET_TO)]
    ]  # broker, consumer, by time, rollback
    assert committed(module_admin, OFFLINE) == RESET_TO


def test_reset_offset_by_time_moves_an_online_push_consumer(scene, module_admin):
    out = scene["results"]["resetOffsetByTime online"].ok()
    assert f"rollback consumer offset by specified group[{ONLINE}], topic[{TOPIC}], force[true]" in out
    assert [line.split() for line in out.splitlines() if line.startswith("broker-a")] == [
        ["broker-a", "0", str(RESET_TO)]
    ]
    bodies = scene["online_bodies"]
    assert [bodies.count(f"body-{i}") for i in range(COUNT)] == [1] * RESET_TO + [2] * (COUNT - RESET_TO)
    wait_until(
        lambda: committed(module_admin, ONLINE) == COUNT, what="the online group's offsets after the second pass"
    )
