"""BrokerConfig, atomic config files, and the managers' files (Java-written ones included)."""

from __future__ import annotations

import json
import os

import pytest

from brokers.engine.broker.config import BrokerConfig, BrokerConfigError
from brokers.engine.broker.config_file import read_json, write_json_atomic
from brokers.engine.broker.consumer_offset_manager import ConsumerOffsetManager
from brokers.engine.broker.subscription_group_manager import SubscriptionGroupManager
from brokers.engine.broker.topic_config_manager import TopicConfigManager
from brokers.engine.common.clock import ManualClock
from brokers.engine.store.config import StoreConfig


def test_broker_config_from_dict(tmp_path):
    cfg = BrokerConfig.from_dict(
        {
            "broker_name": "broker-a",
            "store_dir": str(tmp_path),
            "flush_disk_type": "SYNC_FLUSH",
            "namesrv_addr": "127.0.0.1:9876;10.0.0.1:9876",
            "listen_port": 10921,
        }
    )
    assert cfg.namesrv_addrs == ("127.0.0.1:9876", "10.0.0.1:9876")
    assert cfg.store.flush_disk_type == "SYNC_FLUSH" and cfg.store.store_dir == str(tmp_path)
    assert cfg.cluster_name == "DefaultCluster" and cfg.auto_create_topic_enable is False
    assert cfg.advertised_ip == "127.0.0.1"
    cfg2 = BrokerConfig.from_dict({"broker_name": "b", "store": {"store_dir": str(tmp_path)}, "broker_ip": "10.1.2.3"})
    assert cfg2.advertised_ip == "10.1.2.3"
    with pytest.raises(BrokerConfigError, match="unknown broker settings: colour"):
        BrokerConfig.from_dict({"broker_name": "b", "store_dir": str(tmp_path), "colour": 1})
    with pytest.raises(BrokerConfigError, match="store_dir"):
        BrokerConfig.from_dict({"broker_name": "b"})
    with pytest.raises(BrokerConfigError, match="^the broker name contains '/' at position 2"):
        BrokerConfig(broker_name="a/b", store=StoreConfig(str(tmp_path)))
    with pytest.raises(BrokerConfigError, match="^the cluster name contains a space at position 8"):
        BrokerConfig(broker_name="b", cluster_name="Default Cluster", store=StoreConfig(str(tmp_path)))
    with pytest.raises(BrokerConfigError, match="listen port"):
        BrokerConfig(broker_name="b", store=StoreConfig(str(tmp_path)), listen_port=-1)


def test_atomic_write_keeps_backup_and_leaves_no_temp(tmp_path):
    path = tmp_path / "config" / "x.json"
    write_json_atomic(path, {"a": 1})
    write_json_atomic(path, {"a": 2})
    assert read_json(path) == {"a": 2}
    assert json.loads((tmp_path / "config" / "x.json.bak").read_text()) == {"a": 1}
    assert sorted(os.listdir(path.parent)) == ["x.json", "x.json.bak"]
    path.write_text('{"a": 3')  # torn by someone else: the backup is used
    assert read_json(path) == {"a": 1}
    assert read_json(tmp_path / "missing.json") is None


def test_reads_java_written_files(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "consumerOffset.json").write_text(
        '{\n\t"offsetTable":{\n\t\t"TopicTest@g1":{0:250,1:248,2:-1},\n\t\t"%RETRY%g1@g1":{0:0}\n\t}\n}'
    )
    com = ConsumerOffsetManager(config)
    com.load()
    assert com.query_offset("g1", "TopicTest", 1) == 248
    assert com.query_offset("g1", "TopicTest", 2) == -1  # negative = no offset
    assert com.query_offset("g1", "%RETRY%g1", 0) == 0
    assert com.persist() is False  # nothing changed
    com.commit_offset("127.0.0.1:1", "g1", "TopicTest", 3, 7)
    assert com.persist() is True
    assert "3:7" in (config / "consumerOffset.json").read_text()

    (config / "subscriptionGroup.json").write_text(
        json.dumps(
            {
                "dataVersion": {"counter": 3, "timestamp": 1},
                "subscriptionGroupTable": {
                    "g1": {"groupName": "g1", "retryMaxTimes": 3, "consumeEnable": True},
                    "bad/name": {"groupName": "bad/name"},
                },
            }
        )
    )
    sgm = SubscriptionGroupManager(config, ManualClock())
    sgm.load()
    assert sgm.subscription_group_table["g1"].retry_max_times == 3
    assert "bad/name" not in sgm.subscription_group_table
    assert "TOOLS_CONSUMER" in sgm.subscription_group_table


def test_topic_manager_skips_bad_entries_and_drops_leftover_template(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "topics.json").write_text(
        json.dumps(
            {
                "dataVersion": {"counter": 5, "timestamp": 1},
                "topicConfigTable": {
                    "TopicTest": {"topicName": "TopicTest", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6},
                    "../evil": {"topicName": "../evil", "readQueueNums": 1, "writeQueueNums": 1, "perm": 6},
                    "BadPerm": {"topicName": "BadPerm", "perm": 9},
                    "TBW102": {"topicName": "TBW102", "readQueueNums": 8, "writeQueueNums": 8, "perm": 7},
                },
            }
        )
    )
    store = StoreConfig(str(tmp_path))
    tcm = TopicConfigManager(BrokerConfig(broker_name="b", store=store), config, ManualClock())
    tcm.load()
    assert tcm.select_topic_config("TopicTest").read_queue_nums == 4
    assert tcm.select_topic_config("../evil") is None and tcm.select_topic_config("BadPerm") is None
    assert tcm.select_topic_config("TBW102").perm == 6  # no INHERIT while auto-create is off
    assert tcm.data_version.counter == 6
    assert tcm.create_topic_in_send_message_method("New", "TBW102", 4) is None
    on = TopicConfigManager(
        BrokerConfig(broker_name="b", store=store, auto_create_topic_enable=True), config, ManualClock()
    )
    on.load()
    assert on.select_topic_config("TBW102").perm == 7
    created = on.create_topic_in_send_message_method("New", "TBW102", 4)
    assert (created.read_queue_nums, created.perm) == (4, 6)
