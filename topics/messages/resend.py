"""Resend a stored message to one online client of a group (CONSUME_MESSAGE_DIRECTLY), as rocketmq-dashboard's
"resend message" does: an operator's action, audited (``message.resend``), that moves no offset.

The group must consume the message's topic and be a push group with the client online (refused naming the field
otherwise, nothing sent); the client's answer (CR_SUCCESS, CR_LATER, ...) is the result, recorded in the audit
entry. A client that cannot be reached or refuses is Unavailable with the broker's remark (audited as failed).
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.gateway.direct_consume import message_consume_directly
from brokers.gateway.errors import MQBrokerError, RemotingError
from console.actor import Actor
from console.audit import audited
from console.errors import InvalidInput, Unavailable
from console.roles import Role
from topics.messages.track import message_track

__all__ = ["ResendResult", "message_resend"]


@dataclass(frozen=True)
class ResendResult:
    msg_id: str  # the offset message id resent
    topic: str
    group: str
    client_id: str
    consume_result: str  # CR_SUCCESS, CR_LATER, CR_RETURN_NULL, CR_THROW_EXCEPTION, ...
    remark: str
    spent_ms: int

    @property
    def ok(self) -> bool:
        return self.consume_result == "CR_SUCCESS"


def message_resend(*, actor: Actor, msg_id: str, group: str, client_id: str, topic: str | None = None) -> ResendResult:
    """Have ``client_id`` of ``group`` consume the message ``msg_id`` (offset id, or UNIQ_KEY with ``topic``) once."""
    actor.require(Role.OPERATOR)
    group, client_id = (group or "").strip(), (client_id or "").strip()
    with audited(actor=actor, action="message.resend", target_type="message", target=msg_id) as note:
        note.before = {"topic": topic, "group": group, "client_id": client_id}
        if not group:
            raise InvalidInput("group", "name the consumer group to resend the message to.")
        if not client_id:
            raise InvalidInput("client_id", "name the online client of the group that consumes the message.")
        track = message_track(msg_id=msg_id, topic=topic)
        row = next((g for g in track.groups if g.group == group), None)
        if row is None:
            raise InvalidInput("group", f"{group} does not consume topic {track.message.topic}.")
        if not row.clients:
            raise InvalidInput("group", f"no client of {group} is online: a resend needs one.")
        if not row.can_resend:
            raise InvalidInput(
                "group", f"{group} pulls (CONSUME_ACTIVELY): only a push consumer consumes a message sent to it."
            )
        if client_id not in row.clients:
            raise InvalidInput(
                "client_id", f"{client_id} is not an online client of {group} (online: {', '.join(row.clients)})."
            )
        message = track.message
        note.before = {
            "topic": message.topic,
            "group": group,
            "client_id": client_id,
            "queue": f"{message.broker_name}:{message.queue_id}",
            "queue_offset": message.queue_offset,
            "state": row.state,
        }
        try:
            answer = message_consume_directly(
                msg_id=message.msg_id, topic=message.topic, group=group, client_id=client_id
            )
        except MQBrokerError as exc:
            raise Unavailable(f"{client_id} did not consume the message: {exc.remark or exc}") from None
        except RemotingError as exc:
            raise Unavailable(f"the broker {message.broker_name} did not answer: {exc}") from None
        result = ResendResult(
            message.msg_id, message.topic, group, client_id, answer.consume_result, answer.remark, answer.spent_ms
        )
        note.after = {"consume_result": result.consume_result, "remark": result.remark, "spent_ms": result.spent_ms}
    return result
