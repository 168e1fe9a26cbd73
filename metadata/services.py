"""The import: apply a dry run's plan (operator role), audited as one ``metadata.import`` entry.

The apply step names the dry run it follows (``plan_id``): the plan is computed again from the
document and the brokers' state now, and refused with 409 when it differs (the cluster changed,
or no dry run came first), so what the operator saw is what is written. Topics are written with
UPDATE_AND_CREATE_TOPIC, groups with UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, one master at a time;
nothing is deleted. The audit entry holds each written object's state before and after, by broker.
"""

from __future__ import annotations

from typing import Any

from brokers.engine.common.subscription_group_config import SubscriptionGroupConfig
from brokers.gateway.subscription_groups import subscription_group_write
from brokers.gateway.topics import create_or_update_topic
from console.actor import Actor
from console.audit import audited
from console.errors import Conflict
from console.roles import Role
from metadata.document import MetadataDocument
from metadata.selectors import CREATE, UPDATE, ImportPlan, Scope, metadata_plan


def _state(plan: ImportPlan, side: str) -> dict[str, Any]:
    """The audit form: kind:name -> broker -> {property: value} of each object the plan writes."""
    out: dict[str, Any] = {}
    for o in plan.objects:
        if o.action in (CREATE, UPDATE):
            for c in o.changes:
                out.setdefault(f"{o.kind}:{o.name}", {}).setdefault(c.broker, {})[c.field] = getattr(c, side)
    return out


def metadata_import(*, actor: Actor, document: MetadataDocument, scope: Scope, plan_id: str) -> ImportPlan:
    """Write the plan's creates and updates; Conflict (409) when the plan is not the dry run's ``plan_id``."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="metadata.import", target_type="cluster", target=scope.label) as note:
        plan = metadata_plan(document=document, scope=scope)
        note.before = {"plan_id": plan_id, "objects": _state(plan, "before")}
        if plan.plan_id != plan_id:
            raise Conflict(
                "the brokers' state or the document differs from the dry run it names; run the dry run again"
            )
        done: list[str] = []
        for o in plan.objects:
            for w in o.writes:
                if isinstance(w.config, SubscriptionGroupConfig):
                    subscription_group_write(w.addr, w.config)
                else:
                    create_or_update_topic(w.addr, w.config)
                done.append(f"{o.kind}:{o.name}@{w.broker}")
            note.after = {"written": list(done)}
        note.after = {
            "objects": _state(plan, "after"),
            "created": plan.count(CREATE),
            "updated": plan.count(UPDATE),
            "unchanged": plan.count("unchanged"),
            "skipped": [f"{s.kind}:{s.name}" for s in plan.skipped],
        }
        note.reason = f"{plan.count(CREATE)} created, {plan.count(UPDATE)} updated, {plan.count('unchanged')} unchanged"
    return plan
