"""Resend dead letters: copies of messages of ``%DLQ%<group>`` go to ``%RETRY%<group>``.

Why the group's retry topic and not the original topic: a message reaches the DLQ because one
group failed it; its other groups consumed it long ago. ``%RETRY%<group>`` is subscribed by that
group only (every clustering member subscribes it with ``*``), so only the failing group gets the
message again, as rocketmq-dashboard's resend gives it to that group only. Its members see the
original topic (RETRY_TOPIC, kept), body, keys, tags and user properties; the copy is a new message
(a new UNIQ_KEY) whose reconsume count starts again at 0, ORIGIN_MESSAGE_ID still names the
original, and DLQ_RESENT_FROM names the dead letter it copies. The dead letter itself stays in the
DLQ (RocketMQ has no per-message delete; the DLQ ages out with the commit log).

Every id is checked before anything is sent: at most MAX_RESEND, no repeats, each an offset
message id of a message of this group's DLQ (InvalidInput on ``msg_ids`` naming the bad ones).
Then each is sent on its own; one failing does not stop the others, and the answer (and the one
audit entry of the batch) lists what became of each.
"""

from __future__ import annotations

from brokers.engine.common.message import (
    PROPERTY_CONSUME_START_TIMESTAMP,
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_MAX_OFFSET,
    PROPERTY_MAX_RECONSUME_TIMES,
    PROPERTY_MIN_OFFSET,
    PROPERTY_ORIGIN_MESSAGE_ID,
    PROPERTY_REAL_QUEUE_ID,
    PROPERTY_REAL_TOPIC,
    PROPERTY_RECONSUME_TIME,
    PROPERTY_TRANSACTION_PREPARED,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    PROPERTY_WAIT_STORE_MSG_OK,
    Message,
    MessageExt,
)
from brokers.gateway.cluster import broker_names_by_addr
from brokers.gateway.console_producer import console_producer
from brokers.gateway.errors import MQBrokerError, MQClientError, RemotingError
from brokers.gateway.message_ids import MessageIdNotInCluster, resolve_offset_msg_id, view_message_in_cluster
from console.actor import Actor
from console.audit import audited
from console.errors import InvalidInput
from console.roles import Role
from topics import selectors
from topics.dead_letters.selectors import checked_group
from topics.dead_letters.types import (
    MAX_RESEND,
    PROPERTY_DLQ_RESENT_FROM,
    DeadLetterResend,
    ResendResult,
    dlq_topic,
    retry_topic,
)
from topics.services import CONSOLE_PRODUCER_GROUP

# What the broker or a former delivery put on the dead letter; the copy is a new message, sent now.
_NOT_COPIED = frozenset(
    {
        PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
        PROPERTY_DELAY_TIME_LEVEL,
        PROPERTY_WAIT_STORE_MSG_OK,
        PROPERTY_MIN_OFFSET,
        PROPERTY_MAX_OFFSET,
        PROPERTY_RECONSUME_TIME,
        PROPERTY_MAX_RECONSUME_TIMES,
        PROPERTY_REAL_TOPIC,
        PROPERTY_REAL_QUEUE_ID,
        PROPERTY_TRANSACTION_PREPARED,
        PROPERTY_CONSUME_START_TIMESTAMP,
    }
)


def _checked_ids(msg_ids: object) -> list[str]:
    if not isinstance(msg_ids, (list, tuple)) or not msg_ids:
        raise InvalidInput("msg_ids", "give a list of one or more message ids of the group's dead letters.")
    if len(msg_ids) > MAX_RESEND:
        raise InvalidInput("msg_ids", f"at most {MAX_RESEND} dead letters at once; {len(msg_ids)} given.")
    ids = [m.strip() if isinstance(m, str) else m for m in msg_ids]
    bad = [f"[{i}]" for i, m in enumerate(ids) if not isinstance(m, str) or not m]
    if bad:
        raise InvalidInput("msg_ids", f"{', '.join(bad)}: not a message id (a string of 32 hexadecimal digits).")
    repeated = sorted({m for m in ids if ids.count(m) > 1})
    if repeated:
        raise InvalidInput("msg_ids", f"listed more than once: {', '.join(repeated)}.")
    return ids


def _dead_letters(group: str, ids: list[str]) -> dict[str, MessageExt]:
    """Each id's dead letter, read from its broker; InvalidInput naming every id that is none of this group's."""
    names, found, problems = broker_names_by_addr(selectors.cluster_info()), {}, []
    for i, msg_id in enumerate(ids):
        try:
            msg = view_message_in_cluster(resolve_offset_msg_id(msg_id, names))
        except MessageIdNotInCluster:
            problems.append(f"[{i}] {msg_id}: no such message in this cluster")
            continue
        except MQBrokerError:
            problems.append(f"[{i}] {msg_id}: no such message in this cluster")
            continue
        except MQClientError:
            problems.append(f"[{i}] {msg_id}: not an offset message id (the id the DLQ list shows)")
            continue
        if msg.topic != dlq_topic(group):
            problems.append(f"[{i}] {msg_id}: a message of {msg.topic}, not a dead letter of {group}")
            continue
        found[msg_id] = msg
    if problems:
        raise InvalidInput("msg_ids", "; ".join(problems) + ". Nothing was resent.")
    return found


def resent_copy(group: str, msg_id: str, msg: MessageExt) -> Message:
    """The message to send again: the dead letter's body, flag and properties (tags, keys, user
    properties, RETRY_TOPIC), less what belonged to its former delivery, plus where it came from."""
    props = {k: v for k, v in msg.properties.items() if k not in _NOT_COPIED}
    props.setdefault(PROPERTY_ORIGIN_MESSAGE_ID, msg.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or msg_id)
    props[PROPERTY_DLQ_RESENT_FROM] = msg_id
    return Message(retry_topic(group), bytes(msg.body), properties=props, flag=msg.flag)


def dead_letter_resend(*, actor: Actor, group: str, msg_ids: object) -> DeadLetterResend:
    """Send copies of the named dead letters to ``%RETRY%<group>`` (see the module docstring)."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="group.dlq_resend", target_type="group", target=str(group)) as note:
        group = checked_group(group)
        ids = _checked_ids(msg_ids)
        note.before = {"dlq_topic": dlq_topic(group), "msg_ids": ids}
        letters = _dead_letters(group, ids)
        producer = console_producer(CONSOLE_PRODUCER_GROUP)
        results = []
        try:
            for msg_id in ids:
                try:
                    sent = producer.send(resent_copy(group, msg_id, letters[msg_id]))
                except (MQClientError, RemotingError) as exc:
                    results.append(ResendResult(msg_id, False, error=str(exc) or type(exc).__name__))
                else:
                    results.append(ResendResult(msg_id, True, new_msg_id=sent.msg_id))
        finally:
            producer.close()
        resend = DeadLetterResend(group, retry_topic(group), tuple(results))
        note.after = {
            "topic": resend.topic,
            "resent": resend.resent,
            "failed": resend.failed,
            "results": resend.results,
        }
        if resend.failed:
            note.reason = f"{resend.failed} of {len(results)} dead letters were not resent"
    return resend
