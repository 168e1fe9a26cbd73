"""The queue-count advisor: what a topic's queue layout or a group's members get wrong, each finding
with the change it suggests. Pure: it reads the figures the topic and group pages already fetched.

Findings, most serious first:

- ``write-not-readable``: a broker's topic has more write queues than read queues: messages sent to the
  extra queues are stored but no consumer reads them. Raise the read queues (edit).
- ``read-not-written``: more read than write queues: the extra queues get no new messages, their consumers idle.
  Lower the read queues once they are drained (safe shrink), or raise the write queues (edit).
- ``idle-consumers``: a clustering group has more online members than the queues it reads: the extra members
  get no queue. Raise the queues to the member count (edit) or run fewer members.
- ``hot-broker``: one broker stores a much larger share of the topic's messages than its share of write queues.
- ``skewed-queues``: one queue holds far more messages than the topic's mean: producers pick queues unevenly
  (a ``MessageQueueSelector`` or hashing a few keys).
- ``unowned-queues`` (groups): an online group's queues no member holds: they are not consumed.
- ``lag-on-one-queue`` (groups): most of the group's lag sits on one queue: its owner is slow or stuck.

The thresholds below keep quiet topics quiet: skew and hot brokers need ``MIN_MESSAGES`` messages first.
"""

from __future__ import annotations

from collections import defaultdict

from brokers.engine.common.perm import is_readable, is_writeable
from console.advice import EDIT, INFO, SHRINK, WARNING, Advice
from topics.types import TopicConsumers, TopicDetail, TopicStatus

MIN_MESSAGES = 100  # below this many messages in the topic, skew and hot brokers are noise
SKEW_FACTOR = 2.0  # a queue holding more than this times the mean of the writable queues
HOT_FACTOR = 1.5  # a broker's share of the messages over its share of the write queues


def readable_queues(detail: TopicDetail) -> int:
    return sum(b.read_queue_nums for b in detail.brokers if is_readable(b.perm))


def topic_advice(detail: TopicDetail, status: TopicStatus, consumers: TopicConsumers) -> tuple[Advice, ...]:
    """Every finding about the topic's queues and the groups consuming it."""
    found: list[Advice] = []
    for b in detail.brokers:
        if b.write_queue_nums > b.read_queue_nums:
            extra = b.write_queue_nums - b.read_queue_nums
            found.append(
                Advice(
                    "write-not-readable",
                    WARNING,
                    b.broker_name,
                    f"{b.broker_name} has {b.write_queue_nums} write queues but {b.read_queue_nums} read queues: messages sent to "
                    f"the {extra} queue(s) from {b.read_queue_nums} on are stored but no consumer reads them",
                    f"raise {b.broker_name}'s read queues to {b.write_queue_nums}",
                    EDIT,
                )
            )
        elif b.read_queue_nums > b.write_queue_nums:
            extra = b.read_queue_nums - b.write_queue_nums
            found.append(
                Advice(
                    "read-not-written",
                    INFO,
                    b.broker_name,
                    f"{b.broker_name} has {b.read_queue_nums} read queues but {b.write_queue_nums} write queues: the {extra} queue(s) "
                    f"from {b.write_queue_nums} on get no new messages, and the consumers holding them idle",
                    f"lower {b.broker_name}'s read queues to {b.write_queue_nums} with a safe shrink once they are drained, "
                    f"or raise its write queues to {b.read_queue_nums}",
                    SHRINK,
                )
            )
    readable = readable_queues(detail)
    for row in consumers.rows:
        if row.members is not None and readable and row.members > readable:
            found.append(
                Advice(
                    "idle-consumers",
                    WARNING,
                    row.group,
                    f"{row.group} has {row.members} online members for {readable} readable queues: in clustering mode "
                    f"{row.members - readable} member(s) get no queue",
                    f"raise the topic's queues to at least {row.members} in all, or run {readable} members",
                    EDIT,
                )
            )
    found += _message_spread(detail, status)
    return tuple(found)


def _message_spread(detail: TopicDetail, status: TopicStatus) -> list[Advice]:
    """Hot brokers and skewed queues, from where the writable queues' messages are."""
    writable = {
        b.broker_name: b.write_queue_nums for b in detail.brokers if is_writeable(b.perm) and b.write_queue_nums
    }
    queues = [q for q in status.queues if q.broker_name in writable and q.queue_id < writable[q.broker_name]]
    total = sum(q.messages for q in queues)
    if total < MIN_MESSAGES or not queues:
        return []
    found: list[Advice] = []
    if len(writable) > 1:
        per_broker: dict[str, int] = defaultdict(int)
        for q in queues:
            per_broker[q.broker_name] += q.messages
        all_queues = sum(writable.values())
        for broker, messages in sorted(per_broker.items()):
            share, queue_share = messages / total, writable[broker] / all_queues
            if share > HOT_FACTOR * queue_share:
                found.append(
                    Advice(
                        "hot-broker",
                        INFO,
                        broker,
                        f"{broker} holds {share:.0%} of the topic's messages with {queue_share:.0%} of its write queues",
                        "check the producers' queue selection (a selector or a few hashed keys send most messages here) "
                        "or give the other brokers more write queues",
                        EDIT,
                    )
                )
    mean = total / len(queues)
    worst = max(queues, key=lambda q: (q.messages, q.broker_name, -q.queue_id))
    if len(queues) > 1 and worst.messages > SKEW_FACTOR * mean:
        found.append(
            Advice(
                "skewed-queues",
                INFO,
                f"{worst.broker_name}:{worst.queue_id}",
                f"queue {worst.queue_id} on {worst.broker_name} holds {worst.messages:,} messages, {worst.messages / mean:.1f}× "
                f"the mean of the topic's {len(queues)} writable queues ({mean:,.0f})",
                "producers pick queues unevenly (a MessageQueueSelector or a few hashed keys): spread the keys, "
                "or send without a selector",
            )
        )
    return found
