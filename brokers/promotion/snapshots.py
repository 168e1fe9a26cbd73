"""A broker group as JSON (a promotion job's ``before`` and ``after``) and job rows as frozen dataclasses."""

from __future__ import annotations

from brokers.gateway.overview import EXPIRED, BrokerRow
from brokers.gateway.promotion import promotion_result_from_json
from brokers.gateway.replication import BrokerGroup
from brokers.models import PromotionJob
from brokers.promotion.types import GroupState, MemberState, PromotionJobView


def group_json(group: BrokerGroup[BrokerRow]) -> dict:
    """The group as the console sees it now: each member's role, epoch, HA link and lag, and the
    master the name servers route to."""
    master = group.master
    members = []
    for m in group.members:
        ha = m.ha
        members.append(
            {
                "broker_id": m.broker_id,
                "addr": m.addr,
                "status": m.status,
                "role": ha.role if ha else "",
                "epoch": ha.epoch if ha else None,
                "connection": ha.connection if ha else "",
                "lag_bytes": ha.lag_bytes if ha else None,
                "lag_ms": ha.lag_ms if ha else None,
                "master_addr": ha.master_addr if ha else "",
                **({"error": m.error} if m.error else {}),
            }
        )
    return {
        "broker_name": group.broker_name,
        "cluster": group.cluster,
        "epoch": group.epoch,
        "master_addr": master.addr if master is not None and master.status != EXPIRED else "",
        "members": members,
    }


def group_state(data: dict) -> GroupState:
    """A recorded group (``{}``: not recorded yet)."""
    if not data:
        return GroupState("")
    members = tuple(
        MemberState(
            broker_id=int(m.get("broker_id", 0)),
            addr=str(m.get("addr", "")),
            status=str(m.get("status", "")),
            role=str(m.get("role", "")),
            epoch=m.get("epoch"),
            connection=str(m.get("connection", "")),
            lag_bytes=m.get("lag_bytes"),
            lag_ms=m.get("lag_ms"),
            master_addr=str(m.get("master_addr", "")),
        )
        for m in data.get("members", ())
    )
    return GroupState(str(data.get("broker_name", "")), members, str(data.get("master_addr", "")), data.get("epoch"))


def job_view(row: PromotionJob) -> PromotionJobView:
    return PromotionJobView(
        id=row.pk,
        requested_by=row.requested_by,
        source=row.source,
        broker_name=row.broker_name,
        broker_id=row.broker_id,
        candidate_addr=row.candidate_addr,
        role=row.role,
        force=row.force,
        dry_run=row.dry_run,
        status=row.status,
        reason=row.reason,
        progress=row.progress,
        attempts=row.attempts,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        heartbeat_at=row.heartbeat_at,
        plan=promotion_result_from_json(row.plan) if row.plan else None,
        before=group_state(row.before),
        after=group_state(row.after),
        namesrv_set=row.namesrv_set,
    )
