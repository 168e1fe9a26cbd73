"""The cluster harness (brokers/engine/cluster): a spec's group with a slave replicates, a restarted
broker keeps its store, one broker stops while the others serve, and a bad spec is refused by name.
In-process here; tests/brokers/engine/cluster/test_processes.py runs specs as processes."""

from __future__ import annotations

import pytest

from brokers.engine.client import Message, Producer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.cluster import ClusterSpec, ClusterSpecError, GroupSpec, ThreadedCluster
from brokers.engine.common.topic_config import TopicConfig
from tests.fixtures.waiting import wait_until

SMALL_STORE = {
    "commitlog_file_size": 1 << 20,
    "consume_queue_units_per_file": 1000,
    "max_index_hash_slots": 1000,
    "max_index_count": 4000,
}


def _spec(root, *groups: GroupSpec, **kw) -> ClusterSpec:
    return ClusterSpec(str(root), groups=groups or (GroupSpec("broker-a"),), store_overrides=SMALL_STORE, **kw)


def _send(cluster: ThreadedCluster, topic: str, count: int, brokers: int = 1) -> None:
    with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=3.0) as admin:
        admin.create_or_update_topic_in_cluster(cluster.spec.cluster_name, TopicConfig(topic, 2, 2))
        wait_until(
            lambda: len(admin.examine_topic_route_info(topic).queue_datas) >= brokers,
            what=f"a route of {topic}",
            ignoring=(Exception,),
        )
    with Producer("harness_pg", cluster.namesrv_addr) as producer:
        for i in range(count):
            producer.send(Message(topic, f"m{i}".encode()))


def test_a_group_with_a_slave_replicates_its_master(tmp_path):
    spec = _spec(tmp_path, GroupSpec("broker-a", slaves=1), GroupSpec("broker-b"), cluster_name="HarnessCluster")
    cluster = ThreadedCluster(spec).start(wait_slaves=True)
    try:
        assert list(cluster.brokers) == ["broker-a", "broker-a#1", "broker-b"]
        master, slave = cluster.brokers["broker-a"], cluster.brokers["broker-a#1"]
        assert (master.config.broker_role, slave.config.broker_role, slave.config.broker_id) == (
            "SYNC_MASTER",
            "SLAVE",
            1,
        )
        assert cluster.brokers["broker-b"].config.broker_role == "ASYNC_MASTER"
        assert slave.config.store.store_dir == str(tmp_path / "broker-a-s1")
        assert cluster.ha_addr("broker-a") == master.identity.ha_server_addr != cluster.addr("broker-a")
        _send(cluster, "HarnessReplicated", 20, brokers=2)
        assert master.store.max_phy_offset > 0
        wait_until(lambda: slave.store.max_phy_offset == master.store.max_phy_offset, what="the slave caught up")
    finally:
        cluster.stop()
    assert cluster.brokers == {} and cluster.namesrvs == []


def test_a_restarted_broker_keeps_its_store_and_its_port(tmp_path):
    cluster = ThreadedCluster(_spec(tmp_path)).start()
    try:
        _send(cluster, "HarnessKept", 10)
        before = cluster.brokers["broker-a"]
        offset, port = before.store.get_max_offset_in_queue("HarnessKept", 0), before.port
        assert offset > 0
        after = cluster.restart_broker("broker-a")
        assert after is not before and after.port == port
        assert after.store.get_max_offset_in_queue("HarnessKept", 0) == offset
        assert "HarnessKept" in after.topic_config_manager.topic_config_table
        again = cluster.restart_broker("broker-a", keep_port=False, max_message_size=2048)
        assert again.config.max_message_size == 2048
        assert again.store.get_max_offset_in_queue("HarnessKept", 0) == offset
    finally:
        cluster.stop()


def test_one_broker_stops_and_is_killed_while_the_others_run(tmp_path):
    cluster = ThreadedCluster(_spec(tmp_path, GroupSpec("broker-a"), GroupSpec("broker-b"))).start()
    try:
        cluster.stop_broker("broker-a")
        assert list(cluster.brokers) == ["broker-b"]
        with pytest.raises(ClusterSpecError, match="broker-a"):
            cluster.stop_broker("broker-a")
        _send(cluster, "HarnessOneLeft", 3)
        cluster.kill_broker("broker-b")
        assert cluster.brokers == {}
        cluster.restart_broker("broker-a")
        cluster.restart_broker("broker-b")
        assert sorted(cluster.brokers) == ["broker-a", "broker-b"]
        assert cluster.brokers["broker-b"].store.get_max_offset_in_queue("HarnessOneLeft", 0) >= 0
    finally:
        cluster.stop()


def test_per_broker_overrides_layer_over_the_spec_and_the_group(tmp_path):
    spec = _spec(
        tmp_path,
        GroupSpec(
            "broker-a",
            slaves=1,
            role="ASYNC_MASTER",
            overrides={"enable_property_filter": True},
            member_overrides={1: {"slave_synchronize_interval_s": 0.5}},
        ),
        broker_overrides={"grpc_port": 0, "max_message_size": 4096},
    )
    cluster = ThreadedCluster(spec).start(wait_slaves=True)
    try:
        master, slave = cluster.brokers["broker-a"], cluster.brokers["broker-a#1"]
        assert master.config.broker_role == "ASYNC_MASTER" and master.config.enable_property_filter
        assert slave.config.slave_synchronize_interval_s == 0.5 and master.config.slave_synchronize_interval_s == 10.0
        assert master.grpc_addr is not None and master.config.max_message_size == 4096
        assert master.config.store.commitlog_file_size == 1 << 20
    finally:
        cluster.stop()


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda root: ClusterSpec(root, broker_overrides={"no_such_setting": 1}), "no_such_setting"),
        (lambda root: ClusterSpec(root, store_overrides={"commitlog_size": 1}), "commitlog_size"),
        (lambda root: ClusterSpec(root, groups=(GroupSpec("broker-a"), GroupSpec("broker-a"))), "broker-a"),
        (lambda root: ClusterSpec(root, groups=(GroupSpec("broker-a", slaves=-1),)), "slaves"),
        (lambda root: ClusterSpec(root, groups=(GroupSpec("broker-a", role="SLAVE"),)), "role"),
        (lambda root: ClusterSpec(root, groups=(GroupSpec("broker-a", ports=(70000,)),)), "port"),
        (lambda root: ClusterSpec(root, broker_overrides={"broker_id": 3}), "broker_id"),
        (lambda root: ClusterSpec(root, namesrv_addrs=("127.0.0.1:9876",)), "namesrv_addrs"),
        (lambda root: ClusterSpec(""), "root"),
    ],
)
def test_a_malformed_spec_is_refused_naming_the_field(tmp_path, make, field):
    with pytest.raises(ClusterSpecError, match=field):
        make(str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_a_spec_round_trips_through_json(tmp_path):
    spec = _spec(
        tmp_path,
        GroupSpec("broker-a", slaves=2, ports=(0, 0), member_overrides={2: {"grpc_port": 0}}),
        namesrvs=2,
        broker_overrides={"tls": {"mode": "disabled"}},
    )
    assert ClusterSpec.from_json(spec.to_json()) == spec
