"""GANTRY_PROMOTE_SLAVE (10004): make this slave its broker group's master, online.

The contract (fields, body, refusals) is docs/broker-group-promotion.md, "The promotion contract".

Request header (:class:`~brokers.engine.remoting.headers.replication.PromoteSlaveRequestHeader`): ``brokerName`` and ``brokerId`` (must be this broker's, so a promotion sent
to the wrong address changes nothing), ``force`` and ``dryRun`` ("true"/"false", default
false), ``role`` (optional: SYNC_MASTER | ASYNC_MASTER; default the role the master had, else
ASYNC_MASTER). The answer's body is the :class:`PromotionPlan` JSON (``promotion_plan.py``):
for a dry run always SUCCESS, with ``refused`` saying why the real run would be refused; for a
real run SUCCESS with ``promoted`` true, or SYSTEM_ERROR with the refusal as the remark and no
change. A broker that is not a slave, or a name or id that is not this broker's, is answered
SYSTEM_ERROR saying so. RocketMQ 4.x has no such request (a slave becomes master only by a
restart with a new role); an Apache broker answers it REQUEST_CODE_NOT_SUPPORTED.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import TYPE_CHECKING, Protocol

from brokers.engine.broker.namesrv_api import RegisterResult
from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    guarded,
)
from brokers.engine.broker.promotion_plan import PromotionPlan
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.replication import PromoteSlaveRequestHeader
from brokers.engine.store.ha.ha_config import MASTER_ROLES, SLAVE

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

log = logging.getLogger("brokers.engine.broker")


class Promoter(Protocol):
    """What the processor needs of the broker's group membership (``group_member.py``)."""

    def promotion_plan(self, *, force: bool, dry_run: bool, role: str) -> PromotionPlan: ...

    async def promote(self, plan: PromotionPlan, *, force: bool = False) -> list[RegisterResult]: ...


def _body(plan: PromotionPlan, **extra: object) -> bytes:
    data = plan.to_json()
    data.update(extra)
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


class PromoteSlaveProcessor(Processor):
    def __init__(self, broker: BrokerContext, promoter: Promoter) -> None:
        super().__init__(broker)
        self.promoter = promoter

    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.GANTRY_PROMOTE_SLAVE, self.promote_slave)

    @guarded
    async def promote_slave(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = PromoteSlaveRequestHeader.decode(request)
        name, broker_id, force, dry_run = header.broker_name, header.broker_id, header.force, header.dry_run
        role = (header.role or "").strip().upper()
        cfg = self.broker.config
        if name != cfg.broker_name:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"this broker is {cfg.broker_name} id {cfg.broker_id}, not "
                f"{name}: send the promotion to a slave of {name}; nothing changed",
            )
        if broker_id != cfg.broker_id:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"this broker is {name} id {cfg.broker_id}, not id {broker_id}; nothing changed",
            )
        if cfg.broker_role != SLAVE:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"{name} id {broker_id} is not a slave (role {cfg.broker_role}); only a slave can be promoted",
            )
        if role and role not in MASTER_ROLES:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"role {role!r} is not SYNC_MASTER or ASYNC_MASTER")
        plan = self.promoter.promotion_plan(force=force, dry_run=dry_run, role=role)
        if dry_run:
            return request.response(ResponseCode.SUCCESS, None, None, _body(plan))
        if plan.refused:
            log.warning("promotion refused (nothing changed): %s", plan.refused)
            return request.response(ResponseCode.SYSTEM_ERROR, plan.refused, None, _body(plan))
        results = await self.promoter.promote(plan, force=force)
        done = dataclasses.replace(plan, promoted=True)
        registered = [r.namesrv_addr for r in results if r.ok]
        return request.response(ResponseCode.SUCCESS, None, None, _body(done, registeredWith=registered))
