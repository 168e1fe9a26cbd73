"""Shared builders for the allocation tests (plain helpers, imported by the test modules)."""

from __future__ import annotations

from collections.abc import Sequence

from brokers.engine.common.message_queue import MessageQueue

SEED_TOPIC = "topic_demo"
SEED_BROKERS = ("broker_a", "broker_b", "broker_c")
# The seed articles' consumer ids (one article prints 192.168.0.6@15957 for the second; a typo).
SEED_CIDS = ("192.168.0.6@15956", "192.168.0.7@15957", "192.168.0.8@15958", "192.168.0.9@15959")


def seed_queues(topic: str = SEED_TOPIC) -> list[MessageQueue]:
    """Return the seed example's 9 queues, 3 per broker, sorted."""
    return [MessageQueue(topic, b, i) for b in SEED_BROKERS for i in range(3)]


def short(queues: Sequence[MessageQueue]) -> list[str]:
    """Render queues as ``a0 b2`` style labels (last letter of broker name + queue id)."""
    return [f"{mq.broker_name[-1]}{mq.queue_id}" for mq in queues]


def rocketmq_test_queues(size: int, topic: str = "topic", broker: str = "brokerName") -> list[MessageQueue]:
    """Return RocketMQ's unit-test queue list: one broker, queue ids 0..size-1."""
    return [MessageQueue(topic, broker, i) for i in range(size)]


def rocketmq_test_cids(size: int, prefix: str = "CID_PREFIX") -> list[str]:
    """Return RocketMQ's unit-test client ids: ``<prefix>0 .. <prefix>size-1``."""
    return [f"{prefix}{i}" for i in range(size)]


class DashResolver:
    """The resolver of RocketMQ's AllocateMachineRoomNearByTest: the room is the text before '-'."""

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        return mq.broker_name.split("-")[0]

    def consumer_deploy_in(self, cid: str) -> str:
        return cid.split("-")[0]


def per_cid(strategy, mq_all, cid_all, group: str = "G") -> dict[str, list[MessageQueue]]:
    """Call ``allocate`` once per distinct cid, the way each RocketMQ client does."""
    return {cid: strategy.allocate(group, cid, mq_all, cid_all) for cid in dict.fromkeys(cid_all)}


def owners(assignment) -> dict[MessageQueue, list[str]]:
    """Return queue -> the clients holding it."""
    out: dict[MessageQueue, list[str]] = {}
    for cid, queues in assignment.items():
        for mq in queues:
            out.setdefault(mq, []).append(cid)
    return out
