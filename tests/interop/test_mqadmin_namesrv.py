"""Apache's mqadmin 4.9.x writes to a Gantry name server: updateKvConfig / deleteKvConfig (PUT_KV_CONFIG,
DELETE_KV_CONFIG) and wipeWritePerm / addWritePerm (WIPE_WRITE_PERM_OF_BROKER, ADD_WRITE_PERM_OF_BROKER,
whose answers carry the topic count in a custom header the tool prints). Gantry's admin client reads the
effect (GET_KV_CONFIG, the route's perms)."""

from __future__ import annotations

import re

from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from tests.brokers.engine.client._cluster import create_topic
from tests.interop._mqadmin import mqadmin  # noqa: F401 (fixture)

NAMESPACE = "MQADMIN_INTEROP"


def test_kv_config_set_and_deleted_by_mqadmin_is_read_by_gantrys_admin(mqadmin, module_cluster, module_admin):  # noqa: F811
    ns = module_cluster.namesrv_addr
    put = mqadmin.run("updateKvConfig", "-s", NAMESPACE, "-k", "answer", "-v", "forty two", namesrv=ns)
    assert "success" in put.ok()
    assert module_admin.get_kv_config(NAMESPACE, "answer") == "forty two"
    deleted = mqadmin.run("deleteKvConfig", "-s", NAMESPACE, "-k", "answer", namesrv=ns)
    assert "success" in deleted.ok()
    assert module_admin.get_kv_config(NAMESPACE, "answer") is None


def test_write_perm_wiped_and_added_by_mqadmin_prints_the_count(mqadmin, module_cluster, module_admin, topic_name):  # noqa: F811
    ns = module_cluster.namesrv_addr
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    wiped = mqadmin.run("wipeWritePerm", "-b", "broker-a", namesrv=ns, retry=False)
    try:
        count = re.search(r"wipe write perm of broker\[broker-a\] in name server\[[^\]]+\] OK, (\d+)", wiped.ok())
        assert count and int(count.group(1)) >= 1, wiped.describe()
        perm = {q.broker_name: q.perm for q in module_admin.examine_topic_route_info(topic_name).queue_datas}
        assert perm["broker-a"] & PERM_WRITE == 0 and perm["broker-a"] & PERM_READ
    finally:
        added = mqadmin.run("addWritePerm", "-b", "broker-a", namesrv=ns, retry=False)
    again = re.search(r"add write perm of broker\[broker-a\] in name server\[[^\]]+\] OK, (\d+)", added.ok())
    assert again and int(again.group(1)) == int(count.group(1)), added.describe()
    route = module_admin.examine_topic_route_info(topic_name)
    assert {mq.broker_name for mq in route.publish_queues()} == {"broker-a", "broker-b"}
