"""PromotionPlan: what promoting a slave to its group's master would do and lose, and whether
the promotion is refused (its wire form is the answer body of GANTRY_PROMOTE_SLAVE, 10004, in
docs/broker-group-promotion.md, "The promotion contract").

Pure: built from what the slave knows (its log end, the master's end and the group's
acknowledged offset as the master's HA frames last said, the master's role, whether its HA
link is up). The refusal rules, each lifted by ``force``:

* the master is alive (the candidate's HA link is connected): two masters would take writes;
* a ``SYNC_MASTER`` group: the candidate lacks bytes the group acknowledged to producers
  (``ackedOffset`` past its log end) — promoting it loses acknowledged messages;
* an ``ASYNC_MASTER`` group (or an unknown one): the candidate lacks bytes its master had, as
  far as it knows — the master answered those sends at once, so some were acknowledged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brokers.engine.store.ha.ha_config import ASYNC_MASTER, SYNC_MASTER


@dataclass(frozen=True, slots=True)
class PromotionPlan:
    broker_name: str
    broker_id: int
    from_role: str
    to_role: str
    dry_run: bool
    promoted: bool
    epoch: int
    new_epoch: int
    max_phy_offset: int
    known_master_max_offset: int
    acked_offset: int
    missing_acked_bytes: int
    missing_bytes: int
    master_reachable: bool
    would_lose: str
    refused: str

    def to_json(self) -> dict[str, Any]:
        return {
            "brokerName": self.broker_name,
            "brokerId": self.broker_id,
            "fromRole": self.from_role,
            "toRole": self.to_role,
            "dryRun": self.dry_run,
            "promoted": self.promoted,
            "epoch": self.epoch,
            "newEpoch": self.new_epoch,
            "maxPhyOffset": self.max_phy_offset,
            "knownMasterMaxOffset": self.known_master_max_offset,
            "ackedOffset": self.acked_offset,
            "missingAckedBytes": self.missing_acked_bytes,
            "missingBytes": self.missing_bytes,
            "masterReachable": self.master_reachable,
            "wouldLose": self.would_lose,
            "refused": self.refused,
        }


def plan_promotion(
    *,
    broker_name: str,
    broker_id: int,
    from_role: str,
    requested_role: str,
    group_role: str,
    epoch: int,
    highest_known_epoch: int,
    max_phy_offset: int,
    master_max_offset: int,
    acked_offset: int,
    master_reachable: bool,
    master_addr: str,
    force: bool,
    dry_run: bool,
) -> PromotionPlan:
    """The plan (see the module docstring); ``refused`` is empty when the real run may go ahead."""
    to_role = requested_role or group_role or ASYNC_MASTER
    missing_acked = max(0, acked_offset - max_phy_offset)
    missing = max(0, master_max_offset - max_phy_offset)
    if missing:
        lose = (
            f"{missing:,} bytes the master held (commit-log offsets {max_phy_offset}..{master_max_offset}), "
            f"{missing_acked:,} of them acknowledged by the group's slaves"
        )
    else:
        lose = "nothing the master held, as far as this slave knows"
    who = f"promotion of {broker_name} id {broker_id} refused"
    refused = ""
    if not force:
        if master_reachable:
            refused = f"the master of {broker_name} ({master_addr or 'address unknown'}) is alive; stop it first or pass force"
        elif group_role == SYNC_MASTER and missing_acked:
            refused = (
                f"{who}: it lacks {missing_acked:,} acknowledged bytes (commit-log offsets "
                f"{max_phy_offset}..{acked_offset}) of its SYNC_MASTER group; pass force to promote anyway"
            )
        elif group_role != SYNC_MASTER and missing:
            refused = (
                f"{who}: it lacks {missing:,} bytes (commit-log offsets {max_phy_offset}..{master_max_offset}) "
                f"its {group_role or 'ASYNC_MASTER (assumed)'} master had, some of them acknowledged to "
                "producers; pass force to promote anyway"
            )
    return PromotionPlan(
        broker_name,
        broker_id,
        from_role,
        to_role,
        dry_run,
        False,
        epoch,
        max(epoch, highest_known_epoch) + 1,
        max_phy_offset,
        master_max_offset,
        acked_offset,
        missing_acked,
        missing,
        master_reachable,
        lose,
        refused,
    )


__all__ = ["ASYNC_MASTER", "SYNC_MASTER", "PromotionPlan", "plan_promotion"]
