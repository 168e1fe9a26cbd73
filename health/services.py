"""Alert rules and events as the console and the API change them: create, update, delete, silence,
acknowledge (operator; audited). Every refusal names the field and changes nothing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.conf import settings
from django.core.validators import validate_email
from django.utils import timezone
from django.utils.module_loading import import_string

from brokers.engine.common.topic_validator import InvalidNameError, validate_group, validate_topic
from brokers.gateway import namesrv_sets
from brokers.gateway.errors import RemotingError
from console.actor import Actor
from console.audit import audited
from console.errors import InvalidInput, NotFound, ServiceError, Unavailable
from console.roles import Role
from health.delivery import webhook_url_check
from health.models import (
    BROKER_EXPIRED,
    DISK_ABOVE,
    DLQ_GROWING,
    FIRING,
    KINDS,
    LAG_ABOVE,
    LAG_GROWING,
    NO_CONSUMER_ONLINE,
    SLAVE_DISCONNECTED,
    TOPIC_LAG_ABOVE,
    TOPIC_NO_CONSUMER_ONLINE,
    AlertEvent,
    AlertRule,
)

GROUP_KINDS = (LAG_ABOVE, LAG_GROWING, NO_CONSUMER_ONLINE, DLQ_GROWING)
EVERY_GROUP_KINDS = (LAG_GROWING, NO_CONSUMER_ONLINE)  # an empty target watches every user group
TOPIC_KINDS = (TOPIC_LAG_ABOVE, TOPIC_NO_CONSUMER_ONLINE)
BROKER_KINDS = (BROKER_EXPIRED, SLAVE_DISCONNECTED, DISK_ABOVE)
MAX_FOR_MINUTES = 10080  # a week
MAX_GROWING_MINUTES = 60  # lag_growing's window: the health scans kept cover an hour (health.scan.HISTORY_MINUTES)
MAX_SILENCE_MINUTES = 43200  # thirty days
MAX_EMAILS = 20
MAX_THRESHOLD = 1e12
# What a new rule's form proposes (and what an empty threshold or "for minutes" means): never "0 messages for 0 minutes".
DEFAULT_THRESHOLDS = {
    LAG_ABOVE: 1000.0,
    LAG_GROWING: 100.0,
    NO_CONSUMER_ONLINE: 0.0,
    DLQ_GROWING: 0.0,
    TOPIC_LAG_ABOVE: 1000.0,
    TOPIC_NO_CONSUMER_ONLINE: 0.0,
    BROKER_EXPIRED: 0.0,
    SLAVE_DISCONNECTED: 0.0,
    DISK_ABOVE: 0.85,
}
DEFAULT_FOR_MINUTES = 5


@dataclass(frozen=True)
class RuleInput:
    name: str
    kind: str
    target: str = ""
    threshold: float = 0.0
    for_minutes: int = 0
    webhook_url: str = ""
    emails: tuple[str, ...] = ()
    enabled: bool = True
    namesrv_set: str | None = None  # the set whose scan evaluates it; None: the request's current set


def rule_snapshot(rule: AlertRule) -> dict:
    return {
        "name": rule.name,
        "namesrv_set": rule.namesrv_set,
        "kind": rule.kind,
        "target": rule.target,
        "threshold": rule.threshold,
        "for_minutes": rule.for_minutes,
        "webhook_url": rule.webhook_url,
        "emails": list(rule.emails),
        "enabled": rule.enabled,
        "silenced_until": rule.silenced_until.isoformat() if rule.silenced_until else None,
    }


def _refusal(errors: dict[str, list[str]]) -> InvalidInput:
    """One InvalidInput carrying every field's reasons (a form shows them all at once)."""
    field, [reason, *_] = next(iter(errors.items()))
    exc = InvalidInput(field, reason)
    exc.fields = errors
    return exc


def rule_input_check(data: RuleInput) -> RuleInput:
    """The input, normalised; InvalidInput naming every field that is wrong (all of them, not the first)."""
    errors: dict[str, list[str]] = {}

    def refuse(field: str, reason: str) -> None:
        errors.setdefault(field, []).append(reason)

    name = data.name.strip()
    if not name or len(name) > 100:
        refuse("name", "must be 1 to 100 characters.")
    if data.kind not in KINDS:
        refuse("kind", f"must be one of {', '.join(KINDS)}.")
    target = data.target.strip()
    if data.kind in GROUP_KINDS and not (target == "" and data.kind in EVERY_GROUP_KINDS):
        try:
            validate_group(target)
        except InvalidNameError as exc:
            every = " (empty: every group)" if data.kind in EVERY_GROUP_KINDS else ""
            refuse("target", f"a consumer group is needed{every}: {exc}.")
    elif data.kind in TOPIC_KINDS:
        try:
            validate_topic(target)
        except InvalidNameError as exc:
            refuse("target", f"a topic is needed: {exc}.")
    elif target:
        try:
            validate_group(target)  # a broker name follows the same characters
        except InvalidNameError as exc:
            refuse("target", f"a broker name, or empty for every broker: {str(exc).replace('group', 'broker')}.")
    threshold = float(data.threshold)
    if data.kind == DISK_ABOVE and not 0 < threshold < 1:
        refuse("threshold", "the disk ratio must be between 0 and 1 (0.85 = 85 % used).")
    if data.kind != DISK_ABOVE and not 0 <= threshold <= MAX_THRESHOLD:
        refuse("threshold", f"must be a number of messages from 0 to {MAX_THRESHOLD:.0e}.")
    if data.kind == LAG_GROWING and not 1 <= data.for_minutes <= MAX_GROWING_MINUTES:
        refuse(
            "for_minutes",
            f"the window of lag growing is 1 to {MAX_GROWING_MINUTES} minutes (the health scans kept cover an hour).",
        )
    elif not 0 <= data.for_minutes <= MAX_FOR_MINUTES:
        refuse("for_minutes", f"must be from 0 to {MAX_FOR_MINUTES} minutes.")
    try:
        url = webhook_url_check(data.webhook_url)
    except InvalidInput as exc:
        url = ""
        for field, reasons in exc.fields.items():
            errors.setdefault(field, []).extend(reasons)
    emails = tuple(dict.fromkeys(e.strip() for e in data.emails if e.strip()))
    if len(emails) > MAX_EMAILS:
        refuse("emails", f"at most {MAX_EMAILS} addresses.")
    for address in emails:
        try:
            validate_email(address)
        except ValidationError:
            refuse("emails", f"{address!r} is not an e-mail address.")
    tier = namesrv_sets.current_name() if data.namesrv_set is None else data.namesrv_set
    if namesrv_sets.lookup(tier) is None:
        refuse("namesrv_set", f"{tier!r} is not a configured name-server set (see /api/v1/namesrv-sets).")
    if errors:
        raise _refusal(errors)
    return RuleInput(
        name=name,
        kind=data.kind,
        target=target,
        threshold=threshold,
        for_minutes=data.for_minutes,
        webhook_url=url,
        emails=emails,
        enabled=data.enabled,
        namesrv_set=tier,
    )


def rule_target_check(data: RuleInput) -> None:
    """Refuse a group rule naming a group no broker of the rule's cluster knows (a typo would never fire).

    A group that is to appear later is created first (Subscription groups, or ``mqadmin updateSubGroup``);
    InvalidInput naming ``target``; Unavailable when the cluster cannot be asked.
    """
    if data.kind not in GROUP_KINDS or not data.target:
        return
    target = namesrv_sets.lookup(data.namesrv_set or namesrv_sets.current_name())
    try:
        with namesrv_sets.scope(target):
            known = import_string(settings.GANTRY_GROUP_KNOWN)(name=data.target)
    except (RemotingError, ServiceError) as exc:
        raise Unavailable(
            f"target: could not check that consumer group {data.target} exists in cluster {data.namesrv_set}: "
            f"{getattr(exc, 'message', exc)}"
        ) from None
    if not known:
        raise InvalidInput(
            "target",
            f"consumer group {data.target} does not exist in cluster {data.namesrv_set}: no broker "
            "knows it and no member is online. Check the name, or create the group first "
            "(Subscription groups) when its consumers are to come later.",
        )


def alert_rule_get(*, rule_id: int) -> AlertRule:
    try:
        return AlertRule.objects.get(pk=rule_id)
    except AlertRule.DoesNotExist:
        raise NotFound(f"alert rule {rule_id} does not exist") from None


def alert_rule_save(*, actor: Actor, data: RuleInput, rule_id: int | None = None) -> AlertRule:
    """Create (rule_id None) or replace a rule. A changed condition starts its evaluation afresh."""
    actor.require(Role.OPERATOR)
    rule = alert_rule_get(rule_id=rule_id) if rule_id is not None else None
    action = "alert_rule.create" if rule is None else "alert_rule.update"
    with audited(
        actor=actor,
        action=action,
        target_type="alert_rule",
        target=data.name,
        before=rule_snapshot(rule) if rule else None,
    ) as note:
        if rule is not None and data.namesrv_set is None:  # an edit that does not name a set keeps the rule's
            data = replace(data, namesrv_set=rule.namesrv_set)
        data = rule_input_check(data)
        if rule is None or (rule.namesrv_set, rule.kind, rule.target) != (data.namesrv_set, data.kind, data.target):
            rule_target_check(data)
        fields = {
            "name": data.name,
            "namesrv_set": data.namesrv_set,
            "kind": data.kind,
            "target": data.target,
            "threshold": data.threshold,
            "for_minutes": data.for_minutes,
            "webhook_url": data.webhook_url,
            "emails": list(data.emails),
            "enabled": data.enabled,
            "updated_at": timezone.now(),
        }
        if rule is None:
            rule = AlertRule.objects.create(created_by=actor.username, **fields)
        else:
            condition = (rule.namesrv_set, rule.kind, rule.target, rule.threshold) != (
                data.namesrv_set,
                data.kind,
                data.target,
                data.threshold,
            )
            for key, value in fields.items():
                setattr(rule, key, value)
            if condition:  # evaluated afresh; a firing alert of the old condition is left in the history
                rule.pending_since, rule.firing, rule.samples = None, False, []
            rule.save()
        note.after = rule_snapshot(rule)
    return rule


def alert_rule_delete(*, actor: Actor, rule_id: int) -> AlertRule:
    """Delete a rule (its events stay); a default rule is refused: disable or silence it instead (it would come back)."""
    actor.require(Role.OPERATOR)
    rule = alert_rule_get(rule_id=rule_id)
    if rule.builtin:
        raise InvalidInput(
            "id", f"{rule.name} is a default rule: edit it, silence it or untick Enabled instead of deleting it."
        )
    with audited(
        actor=actor, action="alert_rule.delete", target_type="alert_rule", target=rule.name, before=rule_snapshot(rule)
    ):
        rule.delete()
    rule.id = rule_id
    return rule


def alert_rule_silence(*, actor: Actor, rule_id: int, minutes: int) -> AlertRule:
    """Silence a rule for ``minutes`` (0 ends a silence): its events are still recorded, nothing is sent."""
    actor.require(Role.OPERATOR)
    if not 0 <= minutes <= MAX_SILENCE_MINUTES:
        raise InvalidInput("minutes", f"must be from 0 (end the silence) to {MAX_SILENCE_MINUTES} (thirty days).")
    rule = alert_rule_get(rule_id=rule_id)
    with audited(
        actor=actor,
        action="alert_rule.silence",
        target_type="alert_rule",
        target=rule.name,
        before={"silenced_until": rule.silenced_until},
    ) as note:
        until: datetime | None = timezone.now() + timedelta(minutes=minutes) if minutes else None
        rule.silenced_until, rule.silenced_by = until, actor.username if until else ""
        rule.save(update_fields=["silenced_until", "silenced_by"])
        note.after = {"silenced_until": until}
    return rule


def alert_rule_enable(*, actor: Actor, rule_id: int, enabled: bool) -> AlertRule:
    """Enable or disable a rule (a disabled rule is not evaluated; a firing one is left as it was, off the overview)."""
    actor.require(Role.OPERATOR)
    rule = alert_rule_get(rule_id=rule_id)
    with audited(
        actor=actor,
        action="alert_rule.update",
        target_type="alert_rule",
        target=rule.name,
        before={"enabled": rule.enabled},
    ) as note:
        rule.enabled, rule.updated_at = enabled, timezone.now()
        if not enabled:  # evaluated afresh when enabled again
            rule.pending_since, rule.firing = None, False
        rule.save(update_fields=["enabled", "updated_at", "pending_since", "firing"])
        note.after = {"enabled": enabled}
    return rule


def alert_event_get(*, event_id: int) -> AlertEvent:
    try:
        return AlertEvent.objects.get(pk=event_id)
    except AlertEvent.DoesNotExist:
        raise NotFound(f"alert event {event_id} does not exist") from None


def alert_event_acknowledge(*, actor: Actor, event_id: int) -> AlertEvent:
    """Acknowledge a firing event: someone is on it, no reminders. Acknowledging twice keeps the first."""
    actor.require(Role.OPERATOR)
    event = alert_event_get(event_id=event_id)
    if event.state != FIRING:
        raise InvalidInput("id", f"event {event_id} is a {event.state} event; only a firing one is acknowledged.")
    with audited(
        actor=actor,
        action="alert_event.acknowledge",
        target_type="alert_event",
        target=f"{event.rule_name} #{event.pk}",
        before={"acked_by": event.acked_by},
    ) as note:
        if not event.acked_at:
            event.acked_by, event.acked_at = actor.username, timezone.now()
            event.save(update_fields=["acked_by", "acked_at"])
        note.after = {"acked_by": event.acked_by, "acked_at": event.acked_at}
    return event


def alert_event_list(*, rule_id: int | None = None, state: str = "") -> list[AlertEvent]:
    events = AlertEvent.objects.all()
    if rule_id is not None:
        events = events.filter(rule_id=rule_id)
    if state:
        events = events.filter(state=state)
    return list(events[:1000])
