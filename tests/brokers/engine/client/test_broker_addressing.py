"""Which address of a broker group a client pulls from and commits offsets to (RocketMQ's
findBrokerAddressInSubscribe / findBrokerAddressInAdmin), and addresses that just failed."""

from __future__ import annotations

from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.client.broker_addressing import (
    UnreachableAddrs,
    find_broker_address_in_admin,
    find_broker_address_in_subscribe,
)
from brokers.engine.common.route import BrokerData, QueueData

GROUP = BrokerData("c", "broker-a", {0: "m:1", 1: "s:1", 2: "s:2"})
NO_MASTER = BrokerData("c", "broker-a", {2: "s:2", 1: "s:1"})


def test_pulls_follow_the_suggestion_else_the_master_else_the_lowest_slave():
    assert find_broker_address_in_subscribe(GROUP, 1) == (1, "s:1")
    assert find_broker_address_in_subscribe(GROUP, 0) == (0, "m:1")
    assert find_broker_address_in_subscribe(GROUP, 7) == (0, "m:1")  # suggested id not listed: the master
    assert find_broker_address_in_subscribe(NO_MASTER, 0) == (1, "s:1")  # master gone: a slave
    assert find_broker_address_in_subscribe(None, 0) is None
    assert find_broker_address_in_subscribe(BrokerData("c", "broker-a", {}), 0) is None


def test_offsets_go_to_the_master_else_a_slave():
    assert find_broker_address_in_admin(GROUP) == (0, "m:1")
    assert find_broker_address_in_admin(NO_MASTER) == (1, "s:1")


def test_an_unreachable_address_is_skipped_while_another_exists_and_only_for_a_while():
    now = [100.0]
    down = UnreachableAddrs(lambda: now[0], hold_s=5.0)
    down.mark("m:1")
    assert find_broker_address_in_subscribe(GROUP, 0, down.reachable) == (1, "s:1")
    assert find_broker_address_in_admin(GROUP, down.reachable) == (1, "s:1")
    down.mark("s:1")
    down.mark("s:2")
    assert find_broker_address_in_admin(GROUP, down.reachable) == (0, "m:1")  # all down: the rule's first choice
    now[0] += 5.0
    assert find_broker_address_in_admin(GROUP, down.reachable) == (0, "m:1")
    down.mark("s:1")
    down.clear("s:1")
    assert down.reachable("s:1")


def test_producers_get_write_queues_only_of_broker_names_with_a_master():
    queues = (QueueData("broker-a", 2, 2, 6), QueueData("broker-b", 2, 2, 6))
    route = TopicRouteData("T", queues, (NO_MASTER, BrokerData("c", "broker-b", {0: "b:1"})))
    assert {mq.broker_name for mq in route.publish_queues()} == {"broker-b"}
    assert {mq.broker_name for mq in route.subscribe_queues()} == {
        "broker-a",
        "broker-b",
    }  # still readable from the slave
