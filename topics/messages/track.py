"""A message's consume state for each group of its topic (rocketmq-dashboard's "message track", RocketMQ's
``messageTrackDetail``), and the resend of the message to one online client of a group.

The state of a group, as RocketMQ's admin tells it (TrackType):

- ``NOT_ONLINE``: no member of the group is connected (the committed offset is still shown, and
  ``consumed`` says what it means);
- ``PULL``: the members pull (CONSUME_ACTIVELY): they commit offsets of their own, RocketMQ tells no state;
- ``CONSUMED``: the group's committed offset of the message's queue lies past the message's queue offset;
- ``CONSUMED_BUT_FILTERED``: consumed, but the group's subscription of the topic does not take the message's tag;
- ``NOT_CONSUME_YET``: the committed offset has not passed the message;
- ``IN_FLIGHT``: delivered and not acknowledged yet (a POP consumer's invisible message): :func:`in_flight`
  is the hook that will say so; it says no for now;
- ``UNKNOWN``: the brokers did not answer (``remark`` says why).

Costs: the message (as the message page), QUERY_TOPIC_CONSUME_BY_WHO on each broker of the topic's route,
the groups' connections (one survey per broker), and GET_CONSUME_STATS of the topic per group.
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.gateway.connections import GroupConnections, consumer_connections
from brokers.gateway.errors import MQBrokerError, RemotingError
from brokers.gateway.groups import consume_stats
from brokers.gateway.topics import topic_consumer_groups
from topics import selectors
from topics.messages import selectors as message_selectors
from topics.types import MessageView

__all__ = [
    "CONSUMED",
    "CONSUMED_BUT_FILTERED",
    "IN_FLIGHT",
    "NOT_CONSUME_YET",
    "NOT_ONLINE",
    "PULL",
    "UNKNOWN",
    "GroupTrack",
    "MessageTrack",
    "in_flight",
    "message_track",
]

CONSUMED, CONSUMED_BUT_FILTERED, NOT_CONSUME_YET = "CONSUMED", "CONSUMED_BUT_FILTERED", "NOT_CONSUME_YET"
NOT_ONLINE, PULL, IN_FLIGHT, UNKNOWN = "NOT_ONLINE", "PULL", "IN_FLIGHT", "UNKNOWN"
CONSUME_PASSIVELY = "CONSUME_PASSIVELY"  # push consumers


@dataclass(frozen=True)
class GroupTrack:
    """One group's state for the message."""

    group: str
    state: str
    committed_offset: int | None  # of the message's queue (None: the group has none there, or unknown)
    consumed: bool | None  # the committed offset lies past the message (None unknown)
    clients: tuple[str, ...] = ()  # online client ids (a push group's are offered for the resend)
    consume_type: str | None = None  # CONSUME_PASSIVELY (push), CONSUME_ACTIVELY (pull)
    remark: str = ""

    @property
    def can_resend(self) -> bool:
        return bool(self.clients) and self.consume_type == CONSUME_PASSIVELY


@dataclass(frozen=True)
class MessageTrack:
    message: MessageView
    groups: tuple[GroupTrack, ...]
    errors: tuple[str, ...] = ()


def in_flight(group: str, message: MessageView) -> bool:
    """Whether ``group`` holds ``message`` delivered and not acknowledged (POP's invisible time). The hook for
    POP consumers: until the broker's POP state can be asked, nothing is in flight."""
    return False


def _filtered(conns: GroupConnections, message: MessageView) -> bool:
    sub = conns.subscription_table.get(message.topic)
    if sub is None or sub.matches_all or sub.expression_type != "TAG":
        return False
    return (message.tags or "") not in sub.tags_set


def _track(group: str, conns: GroupConnections | None, message: MessageView) -> GroupTrack:
    live = conns if conns is not None and conns.online else None
    online = live is not None
    clients = tuple(c.client_id for c in live.connections) if live is not None else ()
    consume_type = live.consume_type if live is not None else None
    try:
        stats = consume_stats(group, message.topic)
    except (MQBrokerError, RemotingError) as exc:
        return GroupTrack(
            group, NOT_ONLINE if not online else UNKNOWN, None, None, clients, consume_type, f"no progress: {exc}"
        )
    committed = next(
        (
            w.consumer_offset
            for mq, w in stats.items()
            if mq.broker_name == message.broker_name and mq.queue_id == message.queue_id
        ),
        None,
    )
    consumed = None if committed is None else committed > message.queue_offset
    if not online:
        state = NOT_ONLINE
    elif consume_type != CONSUME_PASSIVELY:
        state = PULL
    elif consumed:
        state = CONSUMED_BUT_FILTERED if live is not None and _filtered(live, message) else CONSUMED
    elif in_flight(group, message):
        state = IN_FLIGHT
    else:
        state = NOT_CONSUME_YET
    return GroupTrack(group, state, committed, consumed, clients, consume_type)


def message_track(*, msg_id: str, topic: str | None = None) -> MessageTrack:
    """The message (as :func:`topics.messages.selectors.message_detail` finds it) and each group's state for it."""
    message = message_selectors.message_detail(msg_id=msg_id, topic=topic)
    route = selectors.topic_route_data(message.topic)
    addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
    groups, errors = topic_consumer_groups(message.topic, addrs)
    if message.topic.startswith((RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX)):
        groups = [g for g in groups if message.topic.endswith(g)]
    conns = consumer_connections(groups, addrs) if groups else {}
    return MessageTrack(message, tuple(_track(g, conns.get(g), message) for g in groups), tuple(errors))
