"""Gantry's clients with access_key / secret_key against a real ACL-enabled cluster (loopback)."""

from __future__ import annotations

import threading

import pytest

from brokers.engine.client import ClientConfig, ConsumeConcurrentlyStatus, Message, Producer, PushConsumer
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.client.errors import MQClientError
from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingError
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, acl_text, start_acl_cluster, write_acl
from tests.brokers.engine.client._cluster import wait_for_route
from tests.fixtures.waiting import wait_until

FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("acl-clients")
    cluster = start_acl_cluster(root / "stores", write_acl(root / "plain_acl.yml", acl_text()))
    yield cluster
    cluster.stop()


def make_topic(cluster, topic: str) -> None:
    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig(topic, 2, 2))
        wait_for_route(admin, topic, 1)


def test_producer_and_push_consumer_with_keys_send_and_consume(acl_cluster):
    topic, group = "AclClientTopic", "AclClientGroup"
    make_topic(acl_cluster, topic)
    got: list[str] = []
    lock = threading.Lock()

    def listener(msgs):
        with lock:
            got.extend(m.body.decode() for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        group,
        acl_cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        client_config=FAST,
        access_key=DEMO[0],
        secret_key=DEMO[1],
    )
    consumer.subscribe(topic, "*")
    consumer.register_listener(listener)
    consumer.start()
    producer = Producer(
        "AclClientProducer", acl_cluster.namesrv_addr, client_config=FAST, access_key=DEMO[0], secret_key=DEMO[1]
    ).start()
    try:
        sent = [f"m{i}" for i in range(20)]
        for body in sent:
            producer.send(Message(topic, body.encode()))
        wait_until(lambda: sorted(got) == sorted(sent), what="every message consumed")
    finally:
        producer.shutdown()
        consumer.shutdown()


def test_simple_producer_and_pull_client_sign_and_unsigned_ones_are_refused(acl_cluster):
    topic = "AclSimpleTopic"
    make_topic(acl_cluster, topic)
    with SimpleProducer(
        acl_cluster.namesrv_addr, "AclSimpleProducer", access_key=DEMO[0], secret_key=DEMO[1]
    ) as producer:
        result = producer.send(Message(topic, b"signed"))
    with PullClient(acl_cluster.namesrv_addr, "AclSimpleGroup", access_key=DEMO[0], secret_key=DEMO[1]) as puller:
        pulled = puller.pull(result.message_queue, result.queue_offset, 1)
        assert [m.body for m in pulled.messages] == [b"signed"]
    with SimpleProducer(acl_cluster.namesrv_addr, "AclSimpleProducer") as unsigned:
        with pytest.raises(RemotingError) as info:
            unsigned.send(Message(topic, b"unsigned"))
    assert isinstance(info.value, MQClientError) and info.value.code == ResponseCode.NO_PERMISSION


def test_admin_client_with_admin_keys_creates_topics_without_keys_is_refused(acl_cluster):
    with BlockingMQAdminClient(acl_cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        admin.create_or_update_topic_in_cluster(acl_cluster.cluster, TopicConfig("AclAdminTopic", 1, 1))
        wait_for_route(admin, "AclAdminTopic", 1)
    with BlockingMQAdminClient(acl_cluster.namesrv_addr) as anonymous:
        with pytest.raises(MQBrokerError) as info:
            anonymous.get_all_topic_list()
    assert info.value.code == ResponseCode.NO_PERMISSION


def test_keys_come_in_pairs_and_one_instance_signs_with_one_account(acl_cluster):
    with pytest.raises(ValueError):
        Producer("P", acl_cluster.namesrv_addr, access_key=DEMO[0])
    with pytest.raises(ValueError):
        BlockingMQAdminClient(acl_cluster.namesrv_addr, secret_key=DEMO[1])
    first = Producer(
        "P1", acl_cluster.namesrv_addr, instance_name="acl-shared", access_key=DEMO[0], secret_key=DEMO[1]
    ).start()
    try:
        with pytest.raises(ValueError, match="other ACL credentials"):
            Producer(
                "P2", acl_cluster.namesrv_addr, instance_name="acl-shared", access_key=ADMIN[0], secret_key=ADMIN[1]
            ).start()
    finally:
        first.shutdown()


def test_a_slave_registers_and_syncs_from_its_master_signing_with_the_files_admin(tmp_path):
    from tests.brokers.engine.client._cluster import EmbeddedCluster

    acl_file = str(write_acl(tmp_path / "plain_acl.yml", acl_text()))
    cluster = EmbeddedCluster(
        tmp_path / "stores",
        broker_names=("broker-a",),
        namesrv_options={"acl_file": acl_file},
        acl_file=acl_file,
        slave_synchronize_interval_s=0.2,
    ).start()
    try:
        make_topic(cluster, "AclSlaveTopic")
        slave = cluster.run(  # the group's slave, started once the master has its topic
            cluster.engine.start_broker("broker-a#1", broker_name="broker-a", broker_id=1, broker_role="SLAVE")
        )
        wait_until(
            lambda: "AclSlaveTopic" in slave.topic_config_manager.topic_config_table, what="the slave's topic sync (21)"
        )
        with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            wait_until(
                lambda: 1 in admin.examine_broker_cluster_info().broker_datas["broker-a"].broker_addrs,
                what="the slave's registration (103)",
            )
    finally:
        cluster.stop()
