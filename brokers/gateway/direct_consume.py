"""Resending one stored message to one online client of a group (CONSUME_MESSAGE_DIRECTLY, 309), through the broker
that stores it: the engine's plan (:mod:`brokers.engine.client.admin_direct_consume`) run on the shared admin client,
addressed to the cluster member the offset message id names (never another address). The client's answer comes back
typed; a refusal (the broker does not know the client, the client does not push-consume the group, no answer in
time) is MQBrokerError with the remark."""

from __future__ import annotations

from brokers.engine.client.admin_direct_consume import ConsumeMessageDirectlyResult, consume_message_directly
from brokers.gateway.client import run
from brokers.gateway.message_ids import resolve_offset_msg_id

__all__ = ["ConsumeMessageDirectlyResult", "message_consume_directly"]


def message_consume_directly(
    *, msg_id: str, topic: str, group: str, client_id: str, names: dict[str, str] | None = None
) -> ConsumeMessageDirectlyResult:
    """Have ``client_id`` of ``group`` consume the message with offset id ``msg_id`` once; its answer."""
    resolved = resolve_offset_msg_id(msg_id, names)
    return run(
        consume_message_directly(
            resolved.broker_addr, group, client_id, resolved.msg_id, topic=topic, broker_name=resolved.broker_name
        )
    )
