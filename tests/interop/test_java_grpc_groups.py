"""Apache's 5.x gRPC Java clients as members of a Gantry consumer group: the group's connection info (what
mqadmin consumerConnection and the console read) lists each running 5.x client as a JAVA connection with
its subscription, and drops it when the client shuts down (NotifyClientTermination); two push consumers
of one group share its messages, each message consumed once."""

from __future__ import annotations

import collections

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.errors import MQBrokerError
from tests.fixtures.waiting import wait_until
from tests.interop._grpc_clients import (
    GRPC,
    GrpcClients,
    create_group,
    create_topic,
    endpoints,
    start_grpc_cluster,
    unique,
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_grpc_cluster(tmp_path_factory.mktemp("grpc-groups-cluster"))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def admin(cluster):
    with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=5.0) as client:
        yield client


@pytest.fixture
def grpc(module_java_drivers, cluster):
    clients = GrpcClients(module_java_drivers[GRPC], endpoints=endpoints(cluster))
    yield clients
    clients.close()


def connections(admin: BlockingMQAdminClient, group: str):
    try:
        return admin.examine_consumer_connection_info(group)
    except MQBrokerError:
        return None


def test_running_grpc_consumers_are_group_members_until_they_shut_down(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_members"))
    first = grpc.simple(group, topic_name, filter="TagA || TagB")
    grpc.simple(group, topic_name, filter="TagA || TagB")

    info = wait_until(lambda: (c := connections(admin, group)) and len(c.connections) == 2 and c, 20, "two members")
    assert {c.language for c in info.connections} == {"JAVA"}
    assert len({c.client_id for c in info.connections}) == 2
    assert topic_name in info.subscription_table
    assert set(info.subscription_table[topic_name].tags_set) == {"TagA", "TagB"}

    grpc.shutdown(first)
    wait_until(lambda: (c := connections(admin, group)) and len(c.connections) == 1, 20, "one member left")


def test_two_push_consumers_of_a_group_consume_each_message_once(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=4)
    group = create_group(admin, cluster, unique("g_shared"))
    consumers = [grpc.push(group, topic_name), grpc.push(group, topic_name)]
    grpc.send(grpc.producer(topic_name), *[{"topic": topic_name, "body": f"m{i}"} for i in range(20)])

    def everything():
        got = [m for consumer in consumers for m in grpc.received(consumer)]
        return got if len(got) >= 20 else None

    got = wait_until(everything, 40, "20 deliveries over the two consumers", every_s=0.5)
    counts = collections.Counter(m["body"] for m in got)
    assert sorted(counts) == sorted(f"m{i}" for i in range(20))
    assert set(counts.values()) == {1}, {body: n for body, n in counts.items() if n > 1}
