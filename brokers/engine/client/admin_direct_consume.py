"""CONSUME_MESSAGE_DIRECTLY (309): an operator has one online client of a group consume one stored message again.

The request goes to the broker that stores the message (the address an offset message id names), with
``consumerGroup``, ``clientId``, ``msgId`` (the offset message id) and, as RocketMQ 5's admin sends them,
``topic`` and ``brokerName``. The broker reads the record at the id's commit-log offset and forwards it to the
client over the client's own connection; the client runs its listener on it once (no offset moves, nothing is
sent back) and answers RocketMQ's ConsumeMessageDirectlyResult::

    {"order": false, "autoCommit": true, "consumeResult": "CR_SUCCESS", "remark": "", "spentTimeMills": 3}

``consumeResult`` is one of CR_SUCCESS, CR_LATER (the listener asked to reconsume), CR_ROLLBACK, CR_COMMIT
(orderly, deprecated answers), CR_THROW_EXCEPTION (remark: the exception), CR_RETURN_NULL. A client that
does not consume the group by push answers SYSTEM_ERROR ("The Consumer Group <g> not exist in this
consumer"); the broker answers SYSTEM_ERROR for a client it does not know and CONSUME_MSG_TIMEOUT when the
client does not answer in time.
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.plan import Call, Plan, check
from brokers.engine.common.topic_validator import validate_group
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.pushes import ConsumeMessageDirectlyResultRequestHeader

__all__ = [
    "CONSUME_RESULTS",
    "ConsumeMessageDirectlyResult",
    "consume_message_directly",
    "parse_consume_message_directly_result",
]

CONSUME_RESULTS = ("CR_SUCCESS", "CR_LATER", "CR_ROLLBACK", "CR_COMMIT", "CR_THROW_EXCEPTION", "CR_RETURN_NULL")
TIMEOUT_S = 12.0  # the broker waits up to 10 s for the client (client_forward_timeout_s)


@dataclass(frozen=True, slots=True)
class ConsumeMessageDirectlyResult:
    consume_result: str  # one of CONSUME_RESULTS ("" when the body named none)
    remark: str
    spent_ms: int
    order: bool
    auto_commit: bool

    @property
    def ok(self) -> bool:
        return self.consume_result == "CR_SUCCESS"


def parse_consume_message_directly_result(body: bytes | None) -> ConsumeMessageDirectlyResult:
    data = load_object(body or b"{}")
    return ConsumeMessageDirectlyResult(
        consume_result=str(data.get("consumeResult") or ""),
        remark=str(data.get("remark") or ""),
        spent_ms=int(data.get("spentTimeMills") or 0),
        order=bool(data.get("order")),
        auto_commit=bool(data.get("autoCommit", True)),
    )


def consume_message_directly(
    addr: str, group: str, client_id: str, msg_id: str, *, topic: str = "", broker_name: str = ""
) -> Plan[ConsumeMessageDirectlyResult]:
    """Ask the broker at ``addr`` (which stores ``msg_id``) to have ``client_id`` of ``group`` consume it."""
    validate_group(group)
    ext = ConsumeMessageDirectlyResultRequestHeader(
        consumer_group=group, client_id=client_id, msg_id=msg_id, topic=topic or None, broker_name=broker_name or None
    ).encode()
    reply = yield Call(RequestCode.CONSUME_MESSAGE_DIRECTLY, ext, addr=addr, timeout_s=TIMEOUT_S)
    check(reply, request_code=RequestCode.CONSUME_MESSAGE_DIRECTLY)
    return parse_consume_message_directly_result(reply.body)
