"""Apache RocketMQ 5.x's name server as a peer: a Gantry broker registers with it, Apache's mqadmin reads the
Gantry broker from it, and Gantry's Python clients route through it to the Gantry broker."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.topic_config import TopicConfig
from tests.brokers.engine.client._cluster import EmbeddedCluster
from tests.interop._apache_peers import consume_pulling, consume_pushed, mqadmin_json, send_all, unique, wait_until

CLUSTER = "GantryOnApache"
BROKER = "gantry-n"
REGISTERED_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def gantry_broker(apache_namesrv, tmp_path_factory):
    """Gantry's broker ``gantry-n`` (cluster GantryOnApache) registered with Apache's name server."""
    cluster = EmbeddedCluster(
        tmp_path_factory.mktemp("gantry-on-apache"),
        broker_names=(BROKER,),
        cluster=CLUSTER,
        namesrv_addrs=(apache_namesrv.addr,),
    ).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def admin(apache_namesrv):
    """Gantry's admin client on Apache's name server."""
    with BlockingMQAdminClient(apache_namesrv.addr, timeout_s=5.0) as client:
        yield client


def create_topic_on_gantry(admin, gantry_broker, topic: str, queues: int = 4):
    """Create ``topic`` on the Gantry broker; the route Apache's name server gives for it, once it has one."""
    admin.create_or_update_topic(gantry_broker.broker_addr(BROKER), TopicConfig(topic, queues, queues))
    return wait_until(lambda: admin.examine_topic_route_info(topic), REGISTERED_TIMEOUT_S, f"a route of {topic}")


def test_a_gantry_broker_is_in_the_apache_name_servers_cluster_list(
    gantry_broker, admin, apache_namesrv, apache_mqadmin
):
    addr = gantry_broker.broker_addr(BROKER)
    info = wait_until(lambda: admin.examine_broker_cluster_info(), REGISTERED_TIMEOUT_S, "cluster info")
    assert info.clusters[CLUSTER] == (BROKER,)
    assert info.broker_datas[BROKER].broker_addrs == {0: addr}

    listed = apache_mqadmin("clusterList", "-n", apache_namesrv.addr)
    [row] = [line.split() for line in listed.splitlines() if BROKER in line]
    assert row[:4] == [CLUSTER, BROKER, "0", addr], listed


def test_a_topic_created_on_the_gantry_broker_routes_through_the_apache_name_server(
    gantry_broker, admin, apache_namesrv, apache_mqadmin
):
    topic = unique("OnApacheNs")
    route = create_topic_on_gantry(admin, gantry_broker, topic)
    assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas] == [
        (BROKER, 4, 4, 6)
    ]

    printed = mqadmin_json(apache_mqadmin("topicRoute", "-n", apache_namesrv.addr, "-t", topic))
    assert printed["brokerDatas"] == [
        {
            "brokerAddrs": {0: gantry_broker.broker_addr(BROKER)},
            "brokerName": BROKER,
            "cluster": CLUSTER,
            "enableActingMaster": False,
        }
    ]
    assert printed["queueDatas"] == [
        {"brokerName": BROKER, "perm": 6, "readQueueNums": 4, "topicSysFlag": 0, "writeQueueNums": 4}
    ]


def test_a_topic_apache_mqadmin_creates_on_the_gantry_broker_routes_through_the_apache_name_server(
    gantry_broker, admin, apache_namesrv, apache_mqadmin
):
    topic = unique("ByApacheTool")
    out = apache_mqadmin(
        "updateTopic",
        "-n",
        apache_namesrv.addr,
        "-b",
        gantry_broker.broker_addr(BROKER),
        "-t",
        topic,
        "-r",
        "2",
        "-w",
        "2",
    )
    assert f"create topic to {gantry_broker.broker_addr(BROKER)} success" in out, out
    route = wait_until(lambda: admin.examine_topic_route_info(topic), REGISTERED_TIMEOUT_S, f"a route of {topic}")
    assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums) for q in route.queue_datas] == [(BROKER, 2, 2)]


def test_gantry_clients_route_through_the_apache_name_server_to_the_gantry_broker(gantry_broker, admin, apache_namesrv):
    topic = unique("RoundTrip")
    create_topic_on_gantry(admin, gantry_broker, topic)
    bodies = [f"m{i}" for i in range(20)]

    results = send_all(apache_namesrv.addr, topic, bodies)
    assert {r.message_queue.broker_name for r in results} == {BROKER}
    assert {r.message_queue.queue_id for r in results} == {0, 1, 2, 3}

    pulled = consume_pulling(apache_namesrv.addr, topic, len(bodies))
    assert sorted(m.body.decode() for m in pulled) == sorted(bodies)
    assert {m.tags for m in pulled} == {"peer"} and {m.keys for m in pulled} == {f"k-{b}" for b in bodies}
    pushed = consume_pushed(apache_namesrv.addr, topic, len(bodies))
    assert sorted(m.body.decode() for m in pushed) == sorted(bodies)


def test_a_stopped_gantry_broker_leaves_the_apache_name_servers_cluster(apache_namesrv, admin, tmp_path):
    """Gantry's broker unregisters (UNREGISTER_BROKER) and closes its connection as it stops; Apache's name server drops it."""
    leaving = EmbeddedCluster(
        tmp_path, broker_names=("gantry-leaving",), cluster=CLUSTER, namesrv_addrs=(apache_namesrv.addr,)
    ).start()
    try:
        wait_until(
            lambda: "gantry-leaving" in admin.examine_broker_cluster_info().broker_datas,
            REGISTERED_TIMEOUT_S,
            "gantry-leaving registered",
        )
    finally:
        leaving.stop()
    wait_until(
        lambda: "gantry-leaving" not in admin.examine_broker_cluster_info().broker_datas,
        REGISTERED_TIMEOUT_S,
        "gantry-leaving gone from the cluster info",
    )


@pytest.mark.parametrize("client", ["client4", "client5"])
def test_apaches_java_client_through_the_apache_name_server_to_the_gantry_broker(
    client, gantry_broker, admin, apache_namesrv, java_driver
):
    topic = unique("JavaOnApacheNs")
    create_topic_on_gantry(admin, gantry_broker, topic, queues=2)
    driver = java_driver(client)
    driver.call("producer_start", name="p", group=unique("java_pg"), namesrv=apache_namesrv.addr)
    sent = driver.call("send", name="p", mode="sync", messages=[{"topic": topic, "body": f"j{i}"} for i in range(8)])
    assert {(r["status"], r["queue"]["brokerName"]) for r in sent} == {("SEND_OK", BROKER)}

    driver.call("push_start", name="c", group=unique("java_peer"), namesrv=apache_namesrv.addr, topic=topic)
    got = driver.call("received", name="c", count=8, timeoutMs=60_000, timeout_s=90)
    assert sorted(m["body"] for m in got) == sorted(f"j{i}" for i in range(8))
    driver.call("shutdown", name="c")
    driver.call("shutdown", name="p")
