"""Promoting a slave to its group's master (Gantry's GANTRY_PROMOTE_SLAVE, request code 10004).

The request is the engine's plan (:func:`brokers.engine.client.admin_promotion.promote_slave`),
run on the shared admin client. A broker that does not know the request answers
REQUEST_CODE_NOT_SUPPORTED and comes back as ``PromotionNotSupported`` (its text says what to
do instead); a real promotion the candidate refuses comes back as MQBrokerError SYSTEM_ERROR
with the broker's remark (what would be lost).
"""

from __future__ import annotations

from brokers.engine.client.admin_promotion import (
    PROMOTION_ROLES,
    PromotionNotSupported,
    PromotionResult,
    promote_slave,
    promotion_result_from_json,
)
from brokers.gateway.client import run

__all__ = [
    "PROMOTION_ROLES",
    "PromotionNotSupported",
    "PromotionResult",
    "promotion_result_from_json",
    "slave_promote",
]


def slave_promote(
    *, addr: str, broker_name: str, broker_id: int, force: bool, dry_run: bool, role: str | None = None
) -> PromotionResult:
    """Send GANTRY_PROMOTE_SLAVE to the slave at ``addr``: its plan (dry run) or what it did."""
    return run(promote_slave(addr, broker_name, broker_id, force=force, dry_run=dry_run, role=role))
