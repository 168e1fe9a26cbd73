"""RouteInfoManager on its own: registration rules, removal, expiry, admin operations."""

from __future__ import annotations

from brokers.engine.common.perm import PERM_READ, PERM_RW
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.route_info import RouteInfoManager


def wrapper(*configs: TopicConfig, counter: int = 1) -> dict:
    return {
        "dataVersion": {"counter": counter, "timestamp": 1700000000000},
        "topicConfigTable": {c.topic_name: c.to_json() for c in configs},
    }


def register(
    rim: RouteInfoManager,
    name: str,
    addr: str,
    *configs: TopicConfig,
    broker_id: int = 0,
    counter: int = 1,
    channel: object = None,
    now: float = 0.0,
    cluster: str = "DefaultCluster",
):
    return rim.register_broker(
        cluster,
        addr,
        name,
        broker_id,
        addr.replace(":109", ":119"),
        wrapper(*configs, counter=counter),
        channel or addr,
        now,
    )


def test_master_registration_builds_the_route():
    rim = RouteInfoManager()
    register(rim, "broker-a", "10.0.0.1:10911", TopicConfig("T", 4, 4), TopicConfig("U", 2, 3, perm=PERM_READ))
    route = rim.pickup_topic_route_data("T")
    assert route == {
        "brokerDatas": [{"brokerAddrs": {0: "10.0.0.1:10911"}, "brokerName": "broker-a", "cluster": "DefaultCluster"}],
        "filterServerTable": {},
        "queueDatas": [
            {
                "brokerName": "broker-a",
                "perm": 6,
                "readQueueNums": 4,
                "topicSynFlag": 0,
                "topicSysFlag": 0,
                "writeQueueNums": 4,
            }
        ],
    }
    assert rim.pickup_topic_route_data("U")["queueDatas"][0]["writeQueueNums"] == 3
    assert rim.pickup_topic_route_data("missing") is None
    assert rim.get_all_topic_list() == ["T", "U"]


def test_slave_gets_master_address_and_its_topics_are_ignored():
    rim = RouteInfoManager()
    register(rim, "broker-a", "10.0.0.1:10911", TopicConfig("T", 4, 4))
    result = register(rim, "broker-a", "10.0.0.2:10911", TopicConfig("T", 8, 8), TopicConfig("S", 1, 1), broker_id=1)
    assert result.master_addr == "10.0.0.1:10911" and result.ha_server_addr == "10.0.0.1:11911"
    route = rim.pickup_topic_route_data("T")
    assert route["brokerDatas"][0]["brokerAddrs"] == {0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}
    assert route["queueDatas"][0]["readQueueNums"] == 4
    assert rim.pickup_topic_route_data("S") is None
    assert register(rim, "broker-a", "10.0.0.1:10911", TopicConfig("T", 4, 4)).master_addr == ""


def test_topic_configs_applied_only_when_data_version_changes():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4), counter=1)
    register(rim, "broker-a", "a:1", TopicConfig("T", 8, 8), counter=1)  # same version: ignored
    assert rim.pickup_topic_route_data("T")["queueDatas"][0]["readQueueNums"] == 4
    register(rim, "broker-a", "a:1", TopicConfig("T", 8, 8), counter=2)
    assert rim.pickup_topic_route_data("T")["queueDatas"][0]["readQueueNums"] == 8
    register(rim, "broker-a", "a:1", counter=3)  # a registration never removes topics
    assert rim.get_all_topic_list() == ["T"]
    assert rim.is_broker_topic_config_changed("a:1", {"counter": 3, "timestamp": 1700000000000}) is False
    assert rim.is_broker_topic_config_changed("a:1", {"counter": 4, "timestamp": 1700000000000}) is True


def test_slave_switched_to_master_is_rekeyed():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4))
    register(rim, "broker-a", "a:2", broker_id=1)
    rim.unregister_broker("DefaultCluster", "a:1", "broker-a", 0)
    register(rim, "broker-a", "a:2", TopicConfig("T", 4, 4), broker_id=0)
    assert rim.broker_addr_table["broker-a"].broker_addrs == {0: "a:2"}


def test_unregister_last_address_removes_broker_and_its_queues():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4), TopicConfig("OnlyA", 1, 1))
    register(rim, "broker-b", "b:1", TopicConfig("T", 2, 2))
    rim.unregister_broker("DefaultCluster", "a:1", "broker-a", 0)
    assert rim.get_all_topic_list() == ["T"]
    assert [q["brokerName"] for q in rim.pickup_topic_route_data("T")["queueDatas"]] == ["broker-b"]
    assert rim.get_all_cluster_info()["clusterAddrTable"] == {"DefaultCluster": ["broker-b"]}
    rim.unregister_broker("DefaultCluster", "stale:1", "broker-b", 0)  # another address: no effect
    assert "broker-b" in rim.broker_addr_table


def test_scan_not_active_broker_expires_silent_brokers():
    rim = RouteInfoManager(broker_channel_expired_s=120)
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4), now=0.0)
    register(rim, "broker-b", "b:1", TopicConfig("T", 4, 4), now=100.0)
    assert rim.scan_not_active_broker(120.0) == []
    removed = rim.scan_not_active_broker(121.0)
    assert [r.broker_addr for r in removed] == ["a:1"] and removed[0].channel_key == "a:1"
    assert [q["brokerName"] for q in rim.pickup_topic_route_data("T")["queueDatas"]] == ["broker-b"]
    assert [r.broker_addr for r in rim.scan_not_active_broker(221.0)] == ["b:1"]
    assert rim.get_all_topic_list() == [] and rim.get_all_cluster_info() == {
        "brokerAddrTable": {},
        "clusterAddrTable": {},
    }


def test_channel_destroy_removes_the_brokers_of_that_connection():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4), channel=7)
    register(rim, "broker-b", "b:1", TopicConfig("T", 4, 4), channel=8)
    assert [r.broker_addr for r in rim.on_channel_destroy(7)] == ["a:1"]
    assert rim.broker_addrs() == ["b:1"]
    assert rim.on_channel_destroy(99) == []


def test_delete_topic_everywhere_or_in_one_cluster():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4), TopicConfig("U", 4, 4), cluster="C1")
    register(rim, "broker-b", "b:1", TopicConfig("T", 4, 4), TopicConfig("U", 4, 4), cluster="C2")
    assert rim.delete_topic("T", "C1") is True
    assert [q["brokerName"] for q in rim.pickup_topic_route_data("T")["queueDatas"]] == ["broker-b"]
    assert rim.get_topics_by_cluster("C1") == ["U"] and rim.get_topics_by_cluster("C2") == ["T", "U"]
    assert rim.delete_topic("U") is True and rim.delete_topic("U") is False
    assert rim.get_all_topic_list() == ["T"]
    assert rim.get_topics_by_cluster("nope") == []


def test_wipe_and_add_write_perm():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4), TopicConfig("U", 4, 4, perm=7))
    register(rim, "broker-b", "b:1", TopicConfig("T", 4, 4))
    assert rim.wipe_write_perm_of_broker("broker-a") == 2
    assert {q["brokerName"]: q["perm"] for q in rim.pickup_topic_route_data("T")["queueDatas"]} == {
        "broker-a": 4,
        "broker-b": 6,
    }
    assert rim.pickup_topic_route_data("U")["queueDatas"][0]["perm"] == 5
    assert rim.add_write_perm_of_broker("broker-a") == 2
    assert rim.pickup_topic_route_data("U")["queueDatas"][0]["perm"] == PERM_RW
    assert rim.wipe_write_perm_of_broker("nobody") == 0


def test_route_needs_broker_data():
    rim = RouteInfoManager()
    register(rim, "broker-a", "a:1", TopicConfig("T", 4, 4))
    del rim.broker_addr_table["broker-a"]
    assert rim.pickup_topic_route_data("T") is None
