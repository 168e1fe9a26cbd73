"""Apache's mqadmin 4.9.x reads a Gantry cluster: clusterList, brokerStatus, getBrokerConfig, topicList,
on the session's two masters and on a broker group (broker-a SYNC_MASTER with its slave broker-a#1).

The read-only commands run once, side by side (one JVM each), in a module fixture; each test checks
one command's answer against what Gantry's own admin client reads.
"""

from __future__ import annotations

import re

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import CLUSTER, create_topic
from tests.fixtures.cluster import GroupCluster
from tests.interop._mqadmin import mqadmin  # noqa: F401 (fixture)

SLAVE = GroupCluster.SLAVE_KEY


@pytest.fixture(scope="module")
def reads(mqadmin, session_cluster, group_cluster):  # noqa: F811
    """Every read of this module, run side by side; also the facts Gantry's admin client read just before."""
    with BlockingMQAdminClient(session_cluster.namesrv_addr, timeout_s=5.0) as admin:
        topic = "MqadminInteropListed"
        create_topic(admin, session_cluster, topic, queues=2)
        a, b = session_cluster.broker_addr("broker-a"), session_cluster.broker_addr("broker-b")
        s, g = session_cluster.namesrv_addr, group_cluster.namesrv_addr
        results = mqadmin.run_all(
            (s, "clusterList"),
            (s, "brokerStatus", "-b", a),
            (s, "getBrokerConfig", "-b", b),
            (s, "topicList"),
            (g, "clusterList"),
            (g, "brokerStatus", "-c", CLUSTER),
            (g, "brokerStatus", "-b", group_cluster.broker_addr(SLAVE)),
            (g, "getBrokerConfig", "-c", CLUSTER),
        )
        facts = {
            "topic": topic,
            "topics": set(admin.get_all_topic_list()),
            "runtime_a": admin.get_broker_runtime_info(a),
        }
    names = (
        "clusterList",
        "brokerStatus",
        "getBrokerConfig",
        "topicList",
        "group clusterList",
        "group brokerStatus",
        "slave brokerStatus",
        "group getBrokerConfig",
    )
    return dict(zip(names, results)), facts


def test_cluster_list_names_each_broker_with_its_address_and_version(reads, session_cluster):
    results, facts = reads
    rows = results["clusterList"].rows()
    version = facts["runtime_a"]["brokerVersionDesc"]
    assert [row[:5] for row in rows] == [
        [CLUSTER, name, "0", session_cluster.broker_addr(name), version] for name in ("broker-a", "broker-b")
    ]
    assert version.startswith("V4_9_")


def test_cluster_list_of_a_broker_group_shows_the_slave_under_its_master(reads, group_cluster):
    rows = reads[0]["group clusterList"].rows()
    assert [row[:4] for row in rows] == [
        [CLUSTER, "broker-a", "0", group_cluster.broker_addr("broker-a")],
        [CLUSTER, "broker-a", "1", group_cluster.broker_addr(SLAVE)],
        [CLUSTER, "broker-b", "0", group_cluster.broker_addr("broker-b")],
    ]


def test_broker_status_prints_the_whole_runtime_table(reads):
    results, facts = reads
    status = results["brokerStatus"].properties(":")
    runtime = facts["runtime_a"]
    assert set(status) == set(runtime)
    for key in ("brokerRole", "brokerVersionDesc", "brokerVersion", "bootTimestamp", "haServerPort"):
        assert status[key] == runtime[key], key
    assert status["brokerRole"] == "ASYNC_MASTER"


def test_broker_status_of_a_broker_group_names_each_role_and_the_slave_its_master(reads, group_cluster):
    results, _ = reads
    roles = {}
    for line in results["group brokerStatus"].ok().splitlines():
        match = re.match(r"^(\S+)\s+brokerRole\s+:\s+(\S+)$", line)
        if match:
            roles[match.group(1)] = match.group(2)
    assert roles == {
        group_cluster.broker_addr("broker-a"): "SYNC_MASTER",
        group_cluster.broker_addr(SLAVE): "SLAVE",
        group_cluster.broker_addr("broker-b"): "ASYNC_MASTER",
    }
    slave = results["slave brokerStatus"].properties(":")
    assert slave["brokerRole"] == "SLAVE"
    assert slave["haMasterBrokerAddr"] == group_cluster.broker_addr("broker-a")


def test_get_broker_config_of_one_broker(reads, session_cluster):
    config = reads[0]["getBrokerConfig"].properties("=")
    assert (config["brokerName"], config["brokerClusterName"], config["brokerId"], config["brokerRole"]) == (
        "broker-b",
        CLUSTER,
        "0",
        "ASYNC_MASTER",
    )
    assert f"{config['brokerIP1']}:{config['listenPort']}" == session_cluster.broker_addr("broker-b")
    assert config["namesrvAddr"] == session_cluster.namesrv_addr


def test_get_broker_config_of_a_cluster_goes_to_each_master_and_its_slaves(reads, group_cluster):
    out = reads[0]["group getBrokerConfig"].ok()
    sections = re.split(r"^=+(.*?)=+$", out, flags=re.MULTILINE)[1:]
    configs = {}
    for header, body in zip(sections[::2], sections[1::2]):
        props = dict(line.split("=", 1) for line in body.splitlines() if "=" in line)
        configs[header] = {k.strip(): v.strip() for k, v in props.items()}
    master_a, slave, master_b = (group_cluster.broker_addr(k) for k in ("broker-a", SLAVE, "broker-b"))
    assert set(configs) == {f"Master: {master_a}", f"My Master: {master_a}=====Slave: {slave}", f"Master: {master_b}"}
    facts = {
        header: (c["brokerName"], c["brokerId"], c["brokerRole"], f"{c['brokerIP1']}:{c['listenPort']}")
        for header, c in configs.items()
    }
    assert facts == {
        f"Master: {master_a}": ("broker-a", "0", "SYNC_MASTER", master_a),
        f"My Master: {master_a}=====Slave: {slave}": ("broker-a", "1", "SLAVE", slave),
        f"Master: {master_b}": ("broker-b", "0", "ASYNC_MASTER", master_b),
    }


def test_topic_list_is_the_name_servers_topic_list(reads):
    results, facts = reads
    listed = {line.strip() for line in results["topicList"].ok().splitlines() if line.strip()}
    assert facts["topic"] in listed
    assert listed == facts["topics"]
