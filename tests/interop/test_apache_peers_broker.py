"""Apache RocketMQ 5.x's broker as a peer: it registers with a Gantry name server, its topics route through that
name server to Gantry's clients, and it serves one topic together with a Gantry broker in one cluster
(``apache_peer_cluster``: Gantry's name server, Gantry's broker gantry-a and Apache's broker apache-a)."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.topic_config import TopicConfig
from tests.fixtures.apache_servers import start_apache_broker
from tests.interop._apache_peers import consume_pulling, consume_pushed, mqadmin_json, send_all, unique, wait_until

ROUTE_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def peers(apache_peer_cluster):
    return apache_peer_cluster


@pytest.fixture(scope="module")
def admin(peers):
    """Gantry's admin client on Gantry's name server."""
    with BlockingMQAdminClient(peers.namesrv_addr, timeout_s=5.0) as client:
        yield client


def test_the_apache_broker_is_in_the_gantry_name_servers_cluster_info(peers, admin, apache_mqadmin):
    def both():  # the Apache broker registers once its JVM is up: seconds on a loaded machine
        info = admin.examine_broker_cluster_info()
        return info if len(info.clusters.get(peers.cluster, ())) == 2 else None

    info = wait_until(both, ROUTE_TIMEOUT_S, "both brokers in the cluster info")
    assert info.clusters[peers.cluster] == ("apache-a", "gantry-a")
    assert info.broker_datas["apache-a"].broker_addrs == {0: peers.apache_broker_addr}
    assert info.broker_datas["apache-a"].cluster == peers.cluster
    assert info.masters()["apache-a"] == peers.apache_broker_addr

    listed = apache_mqadmin(
        "clusterList", "-n", peers.namesrv_addr
    )  # Apache's tool reads both from Gantry's name server
    rows = {line.split()[1]: line.split() for line in listed.splitlines() if line.startswith(peers.cluster)}
    assert rows["apache-a"][2:4] == ["0", peers.apache_broker_addr], listed
    assert rows["gantry-a"][2:4] == ["0", peers.gantry_broker_addr], listed
    assert rows["apache-a"][4].startswith("V5_"), listed


def test_a_topic_apache_mqadmin_creates_on_the_apache_broker_routes_through_the_gantry_name_server(
    peers, admin, apache_mqadmin
):
    topic = unique("OnApacheBroker")
    out = apache_mqadmin(
        "updateTopic", "-n", peers.namesrv_addr, "-b", peers.apache_broker_addr, "-t", topic, "-r", "4", "-w", "4"
    )
    assert f"create topic to {peers.apache_broker_addr} success" in out, out

    route = wait_until(lambda: admin.examine_topic_route_info(topic), ROUTE_TIMEOUT_S, f"a route of {topic}")
    assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas] == [
        ("apache-a", 4, 4, 6)
    ]
    assert [(b.broker_name, b.broker_addrs) for b in route.broker_datas] == [
        ("apache-a", {0: peers.apache_broker_addr})
    ]
    printed = mqadmin_json(apache_mqadmin("topicRoute", "-n", peers.namesrv_addr, "-t", topic))
    assert printed["brokerDatas"][0]["brokerAddrs"] == {0: peers.apache_broker_addr}


def test_gantry_clients_send_to_and_consume_from_the_apache_broker_through_the_gantry_name_server(peers, admin):
    topic = unique("ViaGantryNs")
    admin.create_or_update_topic(
        peers.apache_broker_addr, TopicConfig(topic, 4, 4)
    )  # Gantry's admin client on Apache's broker
    wait_until(lambda: admin.examine_topic_route_info(topic), ROUTE_TIMEOUT_S, f"a route of {topic}")
    bodies = [f"a{i}" for i in range(20)]

    results = send_all(peers.namesrv_addr, topic, bodies)
    assert {r.message_queue.broker_name for r in results} == {"apache-a"}
    assert {r.message_queue.queue_id for r in results} == {0, 1, 2, 3}

    pulled = consume_pulling(peers.namesrv_addr, topic, len(bodies))
    assert sorted(m.body.decode() for m in pulled) == sorted(bodies)
    assert {m.tags for m in pulled} == {"peer"} and {m.keys for m in pulled} == {f"k-{b}" for b in bodies}
    assert {m.msg_id for m in pulled} == {r.msg_id for r in results}
    pushed = consume_pushed(peers.namesrv_addr, topic, len(bodies))
    assert sorted(m.body.decode() for m in pushed) == sorted(bodies)


def test_one_topic_on_a_gantry_and_an_apache_broker_in_one_cluster(peers, admin):
    topic = unique("Mixed")
    created = admin.create_or_update_topic_in_cluster(peers.cluster, TopicConfig(topic, 4, 4))
    assert sorted(created) == sorted([peers.apache_broker_addr, peers.gantry_broker_addr])
    route = wait_until(
        lambda: (r := admin.examine_topic_route_info(topic)) and len(r.queue_datas) == 2 and r,
        ROUTE_TIMEOUT_S,
        f"{topic} routed to both brokers",
    )
    assert sorted(q.broker_name for q in route.queue_datas) == ["apache-a", "gantry-a"]
    bodies = [f"x{i}" for i in range(40)]

    results = send_all(peers.namesrv_addr, topic, bodies)
    spread = {(r.message_queue.broker_name, r.message_queue.queue_id) for r in results}
    assert spread == {(b, q) for b in ("apache-a", "gantry-a") for q in range(4)}

    pushed = consume_pushed(peers.namesrv_addr, topic, len(bodies))
    assert sorted(m.body.decode() for m in pushed) == sorted(bodies)
    assert {m.message_queue.broker_name for m in pushed} == {"apache-a", "gantry-a"}
    pulled = consume_pulling(peers.namesrv_addr, topic, len(bodies))
    assert sorted(m.body.decode() for m in pulled) == sorted(bodies)

    stats = admin.examine_topic_stats(topic)  # GET_TOPIC_STATS_INFO from both brokers, one table
    assert sum(o.max_offset for o in stats.offset_table.values()) == len(bodies)


def test_an_apache_broker_with_5x_registration_options_on_the_gantry_name_server(
    peers, admin, interop_classpaths, tmp_path, apache_mqadmin
):
    """compressedRegister (a compressed body whose header says compressed=false), enableSingleTopicRegister (each new
    topic alone, REGISTER_TOPIC_IN_NAMESRV) and enableSlaveActingMaster (BROKER_HEARTBEAT and GET_BROKER_MEMBER_GROUP
    every second); the broker unregisters as it stops. Gantry's routes carry no ``enableActingMaster``: 5.x clients
    read it as false (Apache's name server would say true for this broker)."""
    broker = start_apache_broker(
        interop_classpaths["apache5"],
        tmp_path / "apache-v",
        broker_name="apache-v",
        cluster="ActingCluster",
        namesrv_addr=peers.namesrv_addr,
        compressedRegister="true",
        enableSingleTopicRegister="true",
        enableSlaveActingMaster="true",
    )
    try:
        info = wait_until(
            lambda: (i := admin.examine_broker_cluster_info()) and "apache-v" in i.broker_datas and i,
            ROUTE_TIMEOUT_S,
            "apache-v registered",
        )
        assert info.broker_datas["apache-v"].broker_addrs == {0: broker.addr}
        assert "ActingCluster" in info.clusters

        topic = unique("SingleTopic")
        admin.create_or_update_topic(broker.addr, TopicConfig(topic, 2, 2))
        wait_until(
            lambda: f"Register single topic {topic} to broker apache-v with response code 0" in broker.log_tail(400),
            ROUTE_TIMEOUT_S,
            "the broker's REGISTER_TOPIC_IN_NAMESRV answered SUCCESS",
        )
        route = admin.examine_topic_route_info(topic)
        assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums) for q in route.queue_datas] == [
            ("apache-v", 2, 2)
        ]
        assert send_all(peers.namesrv_addr, topic, ["one"])[0].message_queue.broker_name == "apache-v"
        printed = mqadmin_json(apache_mqadmin("topicRoute", "-n", peers.namesrv_addr, "-t", topic))
        assert printed["brokerDatas"][0]["enableActingMaster"] is False
        assert "Failed to register current broker to name server" not in broker.log_tail(400)
    finally:
        broker.stop()
    wait_until(
        lambda: "apache-v" not in admin.examine_broker_cluster_info().broker_datas,
        ROUTE_TIMEOUT_S,
        "apache-v gone from the cluster info",
    )


@pytest.mark.parametrize("client", ["client4", "client5"])
def test_apaches_java_client_through_the_gantry_name_server_to_both_brokers(client, peers, admin, java_driver):
    """Apache's Java producer and push consumer (4.9.8 and 5.5.0) on Gantry's name server: the topic's queues on the
    Gantry broker and on the Apache broker."""
    topic, group = unique("JavaMixed"), unique("java_peer")
    admin.create_or_update_topic_in_cluster(peers.cluster, TopicConfig(topic, 2, 2))
    wait_until(
        lambda: (r := admin.examine_topic_route_info(topic)) and len(r.queue_datas) == 2,
        ROUTE_TIMEOUT_S,
        f"{topic} routed to both brokers",
    )
    driver = java_driver(client)
    driver.call("producer_start", name="p", group=unique("java_pg"), namesrv=peers.namesrv_addr)
    sent = driver.call(
        "send", name="p", mode="sync", messages=[{"topic": topic, "body": f"j{i}", "tags": "J"} for i in range(16)]
    )
    assert {r["status"] for r in sent} == {"SEND_OK"}
    assert {r["queue"]["brokerName"] for r in sent} == {"apache-a", "gantry-a"}

    driver.call("push_start", name="c", group=group, namesrv=peers.namesrv_addr, topic=topic)
    got = driver.call("received", name="c", count=16, timeoutMs=60_000, timeout_s=90)
    assert sorted(m["body"] for m in got) == sorted(f"j{i}" for i in range(16))
    assert {m["brokerName"] for m in got} == {"apache-a", "gantry-a"} and {m["tags"] for m in got} == {"J"}
    driver.call("shutdown", name="c")
    driver.call("shutdown", name="p")
