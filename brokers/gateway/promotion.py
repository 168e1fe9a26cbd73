"""Promoting a slave to its group's master (Gantry's GANTRY_PROMOTE_SLAVE, request code 10004).

The request is the engine's plan (:func:`brokers.engine.client.admin_promotion.promote_slave`),
run on the shared admin client. A broker that does not know the request answers
REQUEST_CODE_NOT_SUPPORTED and comes back as ``PromotionNotSupported`` (its text says what to
do instead); a promotion the candidate refuses with SYSTEM_ERROR comes back as
:class:`PromotionRefused` (a BrokerSystemError) with the broker's remark (what would be lost) and its
plan when it sent one; any other refusal as the engine's MQBrokerError.
"""

from __future__ import annotations

from brokers.engine.client.admin_promotion import (
    PROMOTION_ROLES,
    PromotionNotSupported,
    PromotionRefusedError,
    PromotionResult,
    promote_slave,
    promotion_result_from_json,
)
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.gateway.client import run
from brokers.gateway.errors import BrokerSystemError

__all__ = [
    "PROMOTION_ROLES",
    "PromotionNotSupported",
    "PromotionRefused",
    "PromotionResult",
    "promotion_result_from_json",
    "slave_promote",
]


class PromotionRefused(BrokerSystemError):
    """The candidate refused the promotion (SYSTEM_ERROR) and changed nothing: the remark says why (and
    what would be lost); ``promotion`` is its plan when it sent one."""

    def __init__(self, code: int, remark: str | None, *, addr: str | None, promotion: PromotionResult | None) -> None:
        super().__init__(code, remark, request_code=RequestCode.GANTRY_PROMOTE_SLAVE, addr=addr)
        self.promotion = promotion


def slave_promote(
    *, addr: str, broker_name: str, broker_id: int, force: bool, dry_run: bool, role: str | None = None
) -> PromotionResult:
    """Send GANTRY_PROMOTE_SLAVE to the slave at ``addr``: its plan (dry run) or what it did.

    PromotionNotSupported when the broker does not know the request, PromotionRefused when it refuses
    (SYSTEM_ERROR), MQBrokerError for any other refusal."""
    try:
        return run(promote_slave(addr, broker_name, broker_id, force=force, dry_run=dry_run, role=role))
    except PromotionRefusedError as exc:
        if exc.code != ResponseCode.SYSTEM_ERROR:
            raise
        raise PromotionRefused(exc.code, exc.remark, addr=exc.addr, promotion=exc.promotion) from exc
