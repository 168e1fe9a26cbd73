"""SlaveWriteGuard: what a slave refuses, with RocketMQ's answers, in front of the processors.

* sends (SEND_MESSAGE 10, SEND_MESSAGE_V2 310, SEND_BATCH_MESSAGE 320) and CONSUMER_SEND_MSG_BACK
  (36): SERVICE_NOT_AVAILABLE (14) with SendMessageProcessor's remark for a store that refuses
  puts ("... messages are put to the slave ..."), before a topic could be auto-created here;
* topic and subscription group changes (UPDATE_AND_CREATE_TOPIC 17, DELETE_TOPIC_IN_BROKER 215,
  UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200, DELETE_SUBSCRIPTIONGROUP 207): SYSTEM_ERROR with
  AdminBrokerProcessor.validateSlave's remark.

The role is read on every request (``store.broker_role``), so a broker whose role changes
online answers by its new role; while it is not a slave the original handler runs. The guard is
installed on every group member: a master's sends are refused too (SERVICE_NOT_AVAILABLE with
the reason) while ``master_refusal()`` says why (not yet confirmed by a name server, or fenced
as a stale master; ``group_member.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from brokers.engine.remoting.channel import ChannelContext, Handler
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.store.ha.ha_config import SLAVE

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext
    from brokers.engine.remoting.server import RemotingServer

log = logging.getLogger("brokers.engine.broker")

SEND_CODES = (
    RequestCode.SEND_MESSAGE,
    RequestCode.SEND_MESSAGE_V2,
    RequestCode.SEND_BATCH_MESSAGE,
    RequestCode.CONSUMER_SEND_MSG_BACK,
)
CONFIG_WRITE_CODES = (
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    RequestCode.DELETE_TOPIC_IN_BROKER,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    RequestCode.DELETE_SUBSCRIPTIONGROUP,
)
SLAVE_SEND_REMARK = (
    "service not available now. It may be caused by one of the following reasons: the broker's "
    "disk is full, messages are put to the slave, message store has been shut down, etc."
)
SLAVE_CONFIG_REMARK = (
    "Can't modify topic or subscription group from slave broker, please execute it from master broker."
)


class SlaveWriteGuard:
    def __init__(self, broker: BrokerContext, master_refusal: Callable[[], str | None] = lambda: None) -> None:
        self.broker = broker
        self.master_refusal = master_refusal
        self.refused = 0

    def install(self, server: RemotingServer) -> None:
        """Put the guard in front of the handlers already registered for the guarded codes."""
        for codes, code_to_answer, remark in (
            (SEND_CODES, ResponseCode.SERVICE_NOT_AVAILABLE, SLAVE_SEND_REMARK),
            (CONFIG_WRITE_CODES, ResponseCode.SYSTEM_ERROR, SLAVE_CONFIG_REMARK),
        ):
            for code in codes:
                server.register_processor(code, self._guarded(server.processor_for(code), code_to_answer, remark))

    def _guarded(self, handler: Handler | None, answer_code: int, remark: str) -> Handler:
        async def guard(ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
            if answer_code == ResponseCode.SERVICE_NOT_AVAILABLE and handler is not None:
                why = self.master_refusal()
                if why:
                    self.refused += 1
                    return None if request.is_oneway else request.response(answer_code, why, self._ext())
            if handler is None and self.broker.store.broker_role != SLAVE:
                return request.response(
                    ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {request.code} not supported"
                )
            if handler is None or self.broker.store.broker_role == SLAVE:
                self.refused += 1
                log.debug("slave refused request %s from %s", request.code, ctx.remote_addr)
                if request.is_oneway:
                    return None
                return request.response(
                    answer_code, remark, self._ext() if answer_code == ResponseCode.SERVICE_NOT_AVAILABLE else None
                )
            return await handler(ctx, request)

        return guard

    def _ext(self) -> dict[str, str]:
        cfg = self.broker.config
        return {"MSG_REGION": cfg.region_id, "TRACE_ON": "true" if cfg.trace_on else "false"}
