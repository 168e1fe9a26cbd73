"""Consumer-group writes: reset offsets (to a time, now, earliest, latest or one queue's offset). Each checks the actor's role, refuses bad input
before anything changes on a broker, and records an audit entry.

How a reset is done (the same choice as RocketMQ's ``mqadmin resetOffsetByTime``):

- members online: INVOKE_BROKER_TO_RESET_OFFSET (forced) on every broker of the topic; each
  broker works the offsets out and pushes RESET_CONSUMER_CLIENT_OFFSET to every member, which
  takes the new position and persists it. A 4.9 broker does not write the offsets itself, so
  the console also commits them (UPDATE_CONSUMER_OFFSET), and the group's progress shows the
  reset at once. RocketMQ's broker refuses when a queue has no committed offset; the console
  refuses first (409), naming the queues.
- nobody online: the console commits each queue's offset (UPDATE_CONSUMER_OFFSET), as
  mqadmin's fallback for CONSUMER_NOT_ONLINE does; members read them when they start.
"""

from __future__ import annotations

from dataclasses import replace

from brokers.gateway.queues import committed_offsets, invoke_broker_to_reset_offset, update_consumer_offsets
from console.actor import Actor
from console.audit import audited
from console.errors import Conflict
from console.roles import Role
from consumers import selectors
from consumers.reset_target import LATEST_TIMESTAMP, ResetTarget
from consumers.rules import checked_group
from consumers.types import ONLINE, OffsetResetPlan, QueueReset


def _offsets(queues: tuple[QueueReset, ...], attr: str) -> dict[str, int]:
    return {f"{q.broker_name}:{q.queue_id}": getattr(q, attr) for q in queues}


def group_reset_offset(*, actor: Actor, group: str, topic: str, target: ResetTarget) -> OffsetResetPlan:
    """Reset the group's offsets of ``topic`` to ``target`` (consumers.reset_target); return what was done."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="group.reset_offset", target_type="group", target=group) as note:
        checked_group(group, "name")
        plan = selectors.group_offset_reset_plan(name=group, topic=topic, target=target)
        asked = {"topic": topic, **target.fields(), "target": target.label(), "mode": plan.mode}
        note.before = {**asked, "offsets": _offsets(plan.queues, "before")}
        if plan.blocked:
            raise Conflict(plan.blocked)
        queues, addrs = selectors.reset_queues(plan)
        by_key = {(mq.broker_name, mq.queue_id): mq for mq in queues}
        targets = {by_key[(q.broker_name, q.queue_id)]: q.after for q in plan.queues}
        if plan.mode == ONLINE and target.to == "offset":  # that queue's broker pushes it to the members
            pushed = invoke_broker_to_reset_offset(
                addrs, topic, group, LATEST_TIMESTAMP, force=True, one_queue=target.one_queue()[1:]
            )
            targets.update({mq: off for mq, off in pushed.items() if mq in targets})
        elif plan.mode == ONLINE:
            pushed = invoke_broker_to_reset_offset(addrs, topic, group, target.broker_timestamp, force=True)
            targets.update({mq: off for mq, off in pushed.items() if mq in targets})
        update_consumer_offsets(group, targets, queues)
        now = committed_offsets(group, queues)
        done = tuple(replace(q, after=now[by_key[(q.broker_name, q.queue_id)]]) for q in plan.queues)
        note.after = {**asked, "offsets": _offsets(done, "after")}
    return replace(plan, queues=done, applied=True)
