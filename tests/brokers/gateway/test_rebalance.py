"""Gantry's GANTRY_NOTIFY_CONSUMER_IDS_CHANGED through brokers.gateway.rebalance, against the
session cluster: each broker notifies the members of the group connected to it."""

from __future__ import annotations

from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.rebalance import notify_consumer_ids_changed
from tests.brokers.engine.client._cluster import create_topic


def test_notify_reaches_the_members_connected_to_each_broker(console_cluster, console_admin, topic_name, members):
    create_topic(console_admin, console_cluster, topic_name, queues=1)
    group = "G_" + topic_name
    one, two = members(group, topic_name, "one"), members(group, topic_name, "two")
    addrs = [console_cluster.broker_addr(n) for n in console_cluster.broker_names]
    told = notify_consumer_ids_changed(group, addrs)
    assert set(told) == set(addrs)
    for ids in told.values():
        assert sorted(ids) == sorted([one.client_id, two.client_id])
    assert notify_consumer_ids_changed("G_nobody_" + topic_name[2:], addrs) == {a: () for a in addrs}


def test_notify_with_an_illegal_group_name_is_refused_by_the_broker(console_cluster):
    told = notify_consumer_ids_changed("bad group!", [console_cluster.broker_addr("broker-a")])
    error = told[console_cluster.broker_addr("broker-a")]
    assert isinstance(error, RemotingError) and "illegal" in str(error)
