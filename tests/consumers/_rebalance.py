"""Helpers of the rebalance tests: real PushConsumers (AVG) that only rebalance when told,
the group's notifications switched off, and waiting for what they hold."""

from __future__ import annotations

import json

from brokers.engine.client import ClientConfig, ConsumeConcurrentlyStatus, PushConsumer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.client.allocation import allocate_all, get_strategy
from tests.fixtures.waiting import wait_until

# Rebalance only when a broker says so (or at start): the periodic rebalance is 10 minutes away, and
# so is the route refresh (a member rebalances at once when a route it uses changes, e.g. when the
# group's %RETRY% topic reaches its second broker).
QUIET = ClientConfig(
    rebalance_interval_s=600,
    poll_name_server_interval_s=600,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=1.0,
)


def push_consumer(cluster, group: str, topic: str, instance: str) -> PushConsumer:
    c = PushConsumer(
        group,
        cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name=instance,
        client_config=QUIET,
    )
    c.subscribe(topic, "*")
    c.register_listener(lambda msgs: ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
    return c.start()


def set_notify(cluster, group: str, enabled: bool) -> None:
    """Write the group's subscription config on every broker with notifyConsumerIdsChangedEnable = ``enabled``."""
    body = json.dumps({"groupName": group, "notifyConsumerIdsChangedEnable": enabled}).encode()
    client = BlockingRemotingClient()
    try:
        for name in cluster.broker_names:
            reply = client.invoke(
                cluster.broker_addr(name),
                RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, body=body),
                5.0,
            )
            assert reply.code == 0, reply.remark
    finally:
        client.close()


def topic_queues(cluster, topic: str) -> list[MessageQueue]:
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        return list(admin.examine_topic_route_info(topic).subscribe_queues())


def avg(queues, cids) -> dict[str, set[MessageQueue]]:
    return {cid: set(qs) for cid, qs in allocate_all(get_strategy("AVG"), queues, cids).items()}


def held(consumers: list[PushConsumer], topic: str) -> dict[str, set[MessageQueue]]:
    return {c.client_id: {q for q in c.assigned_queues() if q.topic == topic} for c in consumers}


def moved_between(before: dict[str, set], after: dict[str, set]) -> int:
    """Queues whose holders differ between two assignments (cid -> queues)."""

    def owners(assignment):
        out: dict = {}
        for cid, qs in assignment.items():
            for q in qs:
                out.setdefault(q, set()).add(cid)
        return out

    b, a = owners(before), owners(after)
    return sum(1 for q in set(b) | set(a) if b.get(q, set()) != a.get(q, set()))


def balanced_group(
    cluster, group: str, topic: str, n: int, prefix: str = "c"
) -> tuple[list[PushConsumer], list[MessageQueue]]:
    """``n`` members holding AVG's allocation (notifications on while they join), then notifications off."""
    queues = topic_queues(cluster, topic)
    members = []
    for i in range(1, n + 1):
        members.append(push_consumer(cluster, group, topic, f"{prefix}{i}"))
    wait_until(
        lambda: held(members, topic) == avg(queues, [m.client_id for m in members]), what=f"{n} members balanced"
    )
    set_notify(cluster, group, False)
    return members, queues
