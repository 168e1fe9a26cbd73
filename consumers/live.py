"""The live check: what a group's members say they hold, checked against each other.

Each member is asked for its running info (GET_CONSUMER_RUNNING_INFO, through a broker it is
connected to; all members at once). Its held queues are the keys of ``mqTable`` (queues being
dropped left out), its subscription the ``subscriptionSet`` entry of the topic, its strategy the
``allocateMessageQueueStrategy`` property (a Java client writes the strategy object there, e.g.
``org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely@6d06d69c``; a
registry name such as ``AVG`` is read as is). A member that does not answer in time is listed
as such and its queues count as unknown, not as unowned.
"""

from __future__ import annotations

from brokers.engine.common.message_queue import MessageQueue
from brokers.gateway.connections import consumer_running_infos
from brokers.gateway.errors import RemotingError
from brokers.gateway.types import ConsumerRunningInfo
from brokers.engine.client.allocation import AllocationError, get_strategy, strategy_names
from consumers.allocation import ObservedMember, check_assignment
from consumers.types import LiveCheck, MemberReport

STRATEGY_PROPERTY = (
    "allocateMessageQueueStrategy"  # RocketMQ's DefaultMQPushConsumer field, as object2Properties writes it
)
UNKNOWN = "(unknown)"
NOT_SUBSCRIBED = "(not subscribed)"
CHECKABLE = (
    "AVG",
    "AVG_BY_CIRCLE",
    "CONSISTENT_HASH",
)  # strategies the check can recompute without their configuration

_JAVA_CLASSES = {
    "AllocateMessageQueueAveragely": "AVG",
    "AllocateMessageQueueAveragelyByCircle": "AVG_BY_CIRCLE",
    "AllocateMessageQueueByConfig": "CONFIG",
    "AllocateMessageQueueByMachineRoom": "MACHINE_ROOM",
    "AllocateMachineRoomNearby": "MACHINE_ROOM_NEARBY",
    "AllocateMessageQueueConsistentHash": "CONSISTENT_HASH",
}


def reported_strategy(properties: dict[str, str]) -> str:
    """The strategy a member reports, as a registry name (UNKNOWN when it reports none we know)."""
    value = (properties.get(STRATEGY_PROPERTY) or "").strip()
    if not value:
        return UNKNOWN
    if value in strategy_names() or value.startswith("MACHINE_ROOM_NEARBY-"):
        return value
    simple = value.split("@", 1)[0].rsplit(".", 1)[-1]
    return _JAVA_CLASSES.get(simple, UNKNOWN)


def member_report(client_id: str, answer: ConsumerRunningInfo | RemotingError, topic: str) -> MemberReport:
    if not isinstance(answer, ConsumerRunningInfo):
        return MemberReport(client_id, False, UNKNOWN, UNKNOWN, (), str(answer))
    held = tuple(sorted(mq for mq, pq in answer.mq_table.items() if mq.topic == topic and not pq.droped))
    sub = next((s for s in answer.subscriptions if s.topic == topic), None)
    subscription = f"{sub.expression_type}:{sub.sub_string}" if sub else NOT_SUBSCRIBED
    return MemberReport(client_id, True, reported_strategy(answer.properties), subscription, held)


def running_infos(
    group: str, broker_addrs: dict[str, tuple[str, ...]]
) -> dict[str, ConsumerRunningInfo | RemotingError]:
    """Every member's running info (client id -> the brokers it is connected to), all at once."""
    targets = {cid: addrs[0] for cid, addrs in broker_addrs.items() if addrs}
    return consumer_running_infos(group, targets)


def live_check(
    group: str, topic: str, queues: tuple[MessageQueue, ...], reports: tuple[MemberReport, ...]
) -> LiveCheck:
    """Check the members' reports of ``topic`` (its readable ``queues``).

    The expected allocation is computed only when every member answered and they agree on a
    strategy that needs no configuration (AVG, AVG_BY_CIRCLE, CONSISTENT_HASH with its default
    10 virtual nodes): otherwise the broker's client list and the reports differ, or the
    strategy's parameters are the members' secret.
    """
    answered = [r for r in reports if r.answered]
    if not answered:
        return LiveCheck(group, topic, queues, reports, None)
    names = {r.strategy for r in answered}
    strategy = None
    if len(answered) == len(reports) and len(names) == 1 and next(iter(names)) in CHECKABLE:
        strategy = get_strategy(next(iter(names)))
    members = [ObservedMember(r.client_id, r.queues, r.strategy, r.subscription) for r in answered]
    try:
        check = check_assignment(queues=queues, members=members, strategy=strategy, consumer_group=group)
    except AllocationError:
        check = check_assignment(queues=queues, members=members, strategy=None, consumer_group=group)
    return LiveCheck(group, topic, queues, reports, check)
