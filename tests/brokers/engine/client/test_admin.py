"""MQAdminClient / BlockingMQAdminClient against a real name server and two real brokers."""

from __future__ import annotations

import time

import pytest

from brokers.engine.client.admin import (
    BlockingMQAdminClient,
    ClusterInfo,
    MQAdminClient,
    MQBrokerError,
    MQClientError,
    parse_namesrv_addrs,
)
from brokers.engine.client.simple import AsyncPullClient, PullClient, SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_validator import InvalidNameError
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError
from tests.brokers.engine.client._cluster import CLUSTER, create_topic, run_async, wait_for_route


def _send(cluster, topic: str, n: int, **kw) -> list:
    with SimpleProducer(cluster.namesrv_addr, "admin_test_producer", heartbeat_interval_s=None) as producer:
        return [producer.send(Message(topic, f"m{i}".encode(), **kw)) for i in range(n)]


def test_cluster_info_lists_both_brokers(module_cluster, module_admin):
    info = module_admin.examine_broker_cluster_info()
    assert isinstance(info, ClusterInfo)
    assert info.clusters[CLUSTER] == ("broker-a", "broker-b")
    assert [(b.cluster, b.broker_name, b.broker_id, b.addr) for b in info.brokers] == [
        (CLUSTER, "broker-a", 0, module_cluster.broker_addr("broker-a")),
        (CLUSTER, "broker-b", 0, module_cluster.broker_addr("broker-b")),
    ]
    assert info.master_addrs(CLUSTER) == [
        module_cluster.broker_addr("broker-a"),
        module_cluster.broker_addr("broker-b"),
    ]
    assert module_admin.namesrv_addr_string == module_cluster.namesrv_addr


def test_broker_runtime_info_is_a_string_table(module_cluster, module_admin):
    rt = module_admin.get_broker_runtime_info(module_cluster.broker_addr("broker-a"))
    assert rt and all(isinstance(k, str) and isinstance(v, str) for k, v in rt.items())
    assert "brokerVersionDesc" in rt


def test_create_topic_in_cluster_routes_it_to_every_master(module_cluster, module_admin, topic_name):
    addrs = module_admin.create_or_update_topic_in_cluster(CLUSTER, TopicConfig(topic_name, 3, 5, perm=6))
    assert sorted(addrs) == sorted(module_cluster.broker_addr(n) for n in ("broker-a", "broker-b"))
    route = wait_for_route(module_admin, topic_name, 2)
    assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas] == [
        ("broker-a", 3, 5, 6),
        ("broker-b", 3, 5, 6),
    ]
    assert {b.broker_name: b.master_addr for b in route.broker_datas} == {
        n: module_cluster.broker_addr(n) for n in ("broker-a", "broker-b")
    }
    assert len(route.publish_queues()) == 10 and len(route.subscribe_queues()) == 6
    assert topic_name in module_admin.get_all_topic_list()
    configs = module_admin.get_all_topic_config(module_cluster.broker_addr("broker-b"))
    assert configs[topic_name] == TopicConfig(topic_name, 3, 5, 6)


def test_create_topic_on_one_broker(module_cluster, module_admin, topic_name):
    module_admin.create_or_update_topic(module_cluster.broker_addr("broker-b"), TopicConfig(topic_name, 2, 2))
    route = wait_for_route(module_admin, topic_name, 1)
    assert [q.broker_name for q in route.queue_datas] == ["broker-b"]


def test_create_topic_validates_before_sending(module_admin):
    with pytest.raises(InvalidNameError):
        module_admin.create_or_update_topic_in_cluster(CLUSTER, TopicConfig("bad topic", 1, 1))
    with pytest.raises(ValueError, match="perm"):
        module_admin.create_or_update_topic_in_cluster(CLUSTER, TopicConfig("GoodTopic", 1, 1, perm=9))
    with pytest.raises(MQClientError, match="NoSuchCluster"):
        module_admin.create_or_update_topic_in_cluster("NoSuchCluster", TopicConfig("GoodTopic", 1, 1))


def test_unknown_topic_route_raises_topic_not_exist(module_admin):
    with pytest.raises(MQBrokerError) as err:
        module_admin.examine_topic_route_info("NoSuchTopic_xyz")
    assert err.value.code == ResponseCode.TOPIC_NOT_EXIST
    assert "topic does not exist" in str(err.value)
    assert isinstance(err.value, RemotingError)


def test_topic_stats_after_sends(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    results = _send(module_cluster, topic_name, 8)
    stats = module_admin.examine_topic_stats(topic_name)
    assert sorted(stats.offset_table) == [
        MessageQueue(topic_name, b, q) for b in ("broker-a", "broker-b") for q in range(2)
    ]
    assert sum(o.max_offset for o in stats.offset_table.values()) == 8
    assert stats.total_messages == 8
    for r in results:
        o = stats.offset_table[r.message_queue]
        assert o.min_offset == 0 and o.max_offset > r.queue_offset and o.last_update_timestamp > 0


def test_consume_stats_after_pull_and_commit(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = f"G_{topic_name}"
    _send(module_cluster, topic_name, 6)
    with PullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
        assert puller.subscribe(topic_name) == 2
        committed = 0
        for mq in puller.fetch_subscribe_message_queues(topic_name):
            result = puller.pull(mq, 0, 32)
            if result.messages:
                puller.update_offset(mq, result.next_begin_offset - 1)  # leave one message unconsumed
                committed += result.next_begin_offset - 1
        stats = module_admin.examine_consume_stats(group, topic_name)
        assert {mq.broker_name for mq in stats.offset_table} == {"broker-a", "broker-b"}
        assert sum(w.broker_offset for w in stats.offset_table.values()) == 6
        assert sum(w.consumer_offset for w in stats.offset_table.values()) == committed
        assert stats.diff_total == 6 - committed == 2
        assert stats.consume_tps >= 0
        assert all(w.last_timestamp > 0 for w in stats.offset_table.values() if w.consumer_offset > 0)
        assert module_admin.examine_consume_stats(group).diff_total == 2  # all topics of the group


def test_consumer_connection_after_heartbeat(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = f"G_{topic_name}"
    with pytest.raises(MQBrokerError) as err:
        module_admin.examine_consumer_connection_info(group)
    assert err.value.code == ResponseCode.CONSUMER_NOT_ONLINE
    with PullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
        puller.subscribe(topic_name, "TagA || TagB")
        cc = module_admin.examine_consumer_connection_info(group)
        assert [c.client_id for c in cc.connections] == [puller.client_id]
        assert cc.connections[0].language == "PYTHON" and cc.connections[0].client_addr.startswith("127.0.0.1:")
        sub = cc.subscription_table[topic_name]
        assert sub.sub_string == "TagA || TagB" and set(sub.tags_set) == {"TagA", "TagB"}
        assert cc.consume_type == "CONSUME_ACTIVELY" and cc.message_model == "CLUSTERING"


def test_producer_connection_after_send(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    with SimpleProducer(module_cluster.namesrv_addr, "PG_conn_test", heartbeat_interval_s=None) as producer:
        producer.send(Message(topic_name, b"x"))
        pc = module_admin.examine_producer_connection_info("PG_conn_test", topic_name)
        assert [c.client_id for c in pc.connections] == [producer.client_id]


def test_query_by_key_and_view_by_id(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    results = _send(module_cluster, topic_name, 3, keys=["order-1", "shared"], tags="TagQ")
    _send(module_cluster, topic_name, 2, keys="other")
    deadline = time.monotonic() + 5
    while True:  # the index is written right after the commit log; allow the dispatch a moment
        found = module_admin.query_message_by_key(topic_name, "order-1")
        if len(found) == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(found) == 3
    assert {m.uniq_key for m in found} == {r.msg_id for r in results}
    assert all(m.keys == "order-1 shared" and m.tags == "TagQ" for m in found)
    assert module_admin.query_message_by_key(topic_name, "order") == []  # hash hits are re-checked by key
    assert len(module_admin.query_message_by_key(topic_name, results[0].msg_id, unique_key=True)) == 1

    msg = module_admin.view_message(results[1].offset_msg_id)
    assert msg.msg_id == results[1].offset_msg_id
    assert msg.body == b"m1" and msg.topic == topic_name and msg.uniq_key == results[1].msg_id
    assert msg.queue_id == results[1].message_queue.queue_id and msg.queue_offset == results[1].queue_offset
    with pytest.raises(MQClientError, match="not an offset message id"):
        module_admin.view_message("XYZ")


def test_delete_topic_from_cluster(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    assert sorted(module_admin.delete_topic(topic_name, cluster=CLUSTER)) == sorted(
        module_cluster.broker_addr(n) for n in ("broker-a", "broker-b")
    )
    with pytest.raises(MQBrokerError) as err:
        module_admin.examine_topic_route_info(topic_name)
    assert err.value.code == ResponseCode.TOPIC_NOT_EXIST
    assert topic_name not in module_admin.get_all_topic_list()
    assert topic_name not in module_admin.get_all_topic_config(module_cluster.broker_addr("broker-a"))


def test_delete_topic_by_route(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    module_admin.delete_topic(topic_name)
    assert topic_name not in module_admin.get_all_topic_config(module_cluster.broker_addr("broker-b"))
    assert topic_name not in module_admin.get_all_topic_list()


def test_wipe_and_add_write_perm_of_broker(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    assert module_admin.wipe_write_perm_of_broker(module_cluster.namesrv_addr, "broker-a") >= 1
    try:
        route = module_admin.examine_topic_route_info(topic_name)
        perms = {q.broker_name: q.perm for q in route.queue_datas}
        assert perms["broker-a"] & PERM_WRITE == 0 and perms["broker-a"] & PERM_READ
        assert {mq.broker_name for mq in route.publish_queues()} == {"broker-b"}
    finally:
        assert module_admin.add_write_perm_of_broker(module_cluster.namesrv_addr, "broker-a") >= 1
    route = module_admin.examine_topic_route_info(topic_name)
    assert {mq.broker_name for mq in route.publish_queues()} == {"broker-a", "broker-b"}


def test_consumer_running_info_is_forwarded_to_the_client(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = f"G_{topic_name}"

    async def scenario():
        async with AsyncPullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
            await puller.subscribe(topic_name, "TagA")
            mq = (await puller.fetch_subscribe_message_queues(topic_name))[0]
            await puller.pull(mq, 0)
            async with MQAdminClient(module_cluster.namesrv_addr) as async_admin:
                info = await async_admin.get_consumer_running_info(group, puller.client_id)
            return puller.client_id, mq, info

    client_id, mq, info = run_async(scenario())
    assert info.properties["PROP_CONSUME_TYPE"] == "CONSUME_ACTIVELY"
    assert [s.topic for s in info.subscriptions] == [topic_name]
    assert mq in info.mq_table


def test_async_admin_client(module_cluster):
    async def scenario():
        async with MQAdminClient(["127.0.0.1:1", module_cluster.namesrv_addr], timeout_s=2.0) as a:
            info = await a.examine_broker_cluster_info()
            topics = await a.get_all_topic_list()
            return info, topics

    info, topics = run_async(scenario())
    assert sorted(info.broker_datas) == ["broker-a", "broker-b"]
    assert CLUSTER in topics  # brokers register their cluster name as a topic


def test_first_name_server_down_falls_back_to_the_next(module_cluster):
    with BlockingMQAdminClient(f"127.0.0.1:1;{module_cluster.namesrv_addr}", timeout_s=2.0) as a:
        assert len(a.examine_broker_cluster_info().brokers) == 2
        assert a.namesrv_addrs == ("127.0.0.1:1", module_cluster.namesrv_addr)


def test_no_name_server_reachable():
    with BlockingMQAdminClient("127.0.0.1:1", timeout_s=1.0) as a:
        with pytest.raises(RemotingConnectError, match="no name server answered"):
            a.examine_broker_cluster_info()


def test_parse_namesrv_addrs():
    assert parse_namesrv_addrs("a:1; b:2;;a:1") == ("a:1", "b:2")
    assert parse_namesrv_addrs(["a:1", "b:2;c:3"]) == ("a:1", "b:2", "c:3")
    for bad in ("", ";", "nohost", "h:0", "h:x"):
        with pytest.raises(ValueError):
            parse_namesrv_addrs(bad)
