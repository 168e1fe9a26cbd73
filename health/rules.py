"""Evaluating the alert rules at each health scan, and notifying when one starts firing or resolves.

The scan hands over what it already read (:class:`ScanFacts`: every group's backlog, the overview's
broker rows with their disk ratio and expired brokers, the masters); only rules that need more ask for
it, once per scan for all such rules: the consumer connections of the watched groups
(``no_consumer_online``; for ``topic_no_consumer_online`` those of the groups consuming the topic,
read in the same way) and the DLQ topics' offsets (``dlq_growing``, one GANTRY_GET_QUEUE_STATS per
master). A reading that could not be made leaves the rule as it was. ``lag_growing`` compares the group's
lag with the earlier scans' (the scan hands them over), ``slave_disconnected`` reads the scan's
replication alerts; with an empty target ``lag_growing`` and ``no_consumer_online`` watch every user
group (the latter those with a backlog above the threshold), as the default rules do
(health.defaults).

State per rule (health.models.AlertRule): the condition holds since ``pending_since``; once it
held ``for_minutes`` the rule fires (one ``firing`` event, notified); when it stops holding the rule
resolves (one ``resolved`` event, notified). A silenced rule still records its events but sends
nothing. While a rule fires, a reminder goes out every ``GANTRY_ALERT_REPEAT_MINUTES`` (default 60,
0 = never) until its event is acknowledged or the rule silenced. ``dlq_growing`` compares the DLQ's
message count with the count ``for_minutes`` ago (0: the previous scan) and fires at once.

Each rule belongs to one name-server set (``namesrv_set``): the scan of that set evaluates it, its
notifications name the set. A scan first decides every rule's step, then sends all notifications at once (DELIVERY_THREADS; no
database work in those threads), then records the events with what each channel answered.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX
from brokers.gateway.connections import consumer_connections
from brokers.gateway.errors import RemotingError
from brokers.gateway.overview import EXPIRED, LIVE, Alert, BrokerRow
from brokers.gateway.stats import broker_stats
from console import namesrv_scope
from console.errors import ServiceError
from health.delivery import Notice, deliver
from health.models import (
    BROKER_EXPIRED,
    DISK_ABOVE,
    DLQ_GROWING,
    FIRING,
    LAG_ABOVE,
    LAG_GROWING,
    NO_CONSUMER_ONLINE,
    RESOLVED,
    SLAVE_DISCONNECTED,
    TOPIC_LAG_ABOVE,
    TOPIC_NO_CONSUMER_ONLINE,
    AlertEvent,
    AlertRule,
)

log = logging.getLogger(__name__)
DEFAULT_REPEAT_MINUTES = 60
MAX_SAMPLES = 200
SHOWN_GROUPS = 5  # groups named in one message of an every-group rule
DELIVERY_THREADS = (
    8  # notifications sent at once: with 3 s timeouts, two tries, a scan's deliveries stay well inside its limit
)


@dataclass(frozen=True)
class ScanFacts:
    """What one health scan read; ``None`` where the scan could not read it."""

    backlog: dict[str, int] | None = None  # group -> total lag
    topic_backlog: dict[str, dict[str, int]] | None = None  # topic -> group consuming it -> its lag there
    brokers: tuple[BrokerRow, ...] | None = None
    masters: dict[str, str] | None = None  # broker name -> master address
    online: dict[str, int] | None = None  # group -> members online, for the groups with a backlog (read by the scan)
    replication: tuple[Alert, ...] | None = None  # the scan's slave_disconnected / slave_lagging alerts
    backlog_history: tuple[tuple[datetime, dict[str, int]], ...] = ()  # earlier scans' backlog, oldest first


@dataclass(frozen=True)
class Reading:
    holds: bool
    value: float | None
    message: str


@dataclass
class _Extra:
    """Reads made for the rules that need them, once per scan (None: failed)."""

    online: dict[str, int] | None = None
    topic_online: dict[str, list[str]] | None = None  # topic -> groups with an online member subscribed to it
    dlq: dict[str, int] | None = None
    asked: set = field(default_factory=set)


def _online_counts(groups: list[str], facts: ScanFacts) -> dict[str, int] | None:
    """Members online per group: the scan's own reading, and one batched read for the watched groups it lacks."""
    known = dict(facts.online or {})
    missing = [g for g in groups if g not in known]
    if not missing:
        return known
    if facts.masters is None:
        return None
    try:
        conns = consumer_connections(missing, list(facts.masters.values()))
    except (RemotingError, ServiceError) as exc:
        log.warning("alert rules: consumer connections: %s", exc)
        return None
    return {**known, **{g: len(conns[g].connections) if g in conns else 0 for g in missing}}


def lag_growth(
    history: tuple[tuple[datetime, dict[str, int]], ...], backlog: dict[str, int], now: datetime, minutes: int
) -> dict[str, tuple[int, int]] | None:
    """Group -> (lag ``minutes`` ago, lag now) for the groups whose lag never fell over the window; None while
    the scans kept do not reach back that far yet.

    The window starts at the newest scan at least ``minutes`` old. Example, 5 minutes, scans every 30 s: a group at
    100, 150, 150, ..., 900 grew by 800; one at 100, 400, 300, ..., 900 fell once and is left out.
    """
    cutoff = now - timedelta(minutes=minutes)
    older = [i for i, (at, _) in enumerate(history) if at <= cutoff]
    if not older:
        return None
    window = [h for _, h in history[older[-1] :]] + [backlog]
    out = {}
    for group, lag in backlog.items():
        found = [h.get(group) for h in window]
        values = [v for v in found if v is not None]
        if len(values) < len(found):  # the group was missing from a scan
            continue
        if all(b >= a for a, b in zip(values, values[1:])):
            out[group] = (values[0], lag)
    return out


def _topic_online(topics: list[str], facts: ScanFacts) -> dict[str, list[str]] | None:
    """Topic -> the groups with an online member subscribed to it, over every user group the scan saw
    (a new group may have no committed offset yet) -- one batched connections read for all of them."""
    if facts.masters is None or facts.topic_backlog is None or facts.backlog is None:
        return None
    groups = sorted({*facts.backlog, *(g for t in topics for g in facts.topic_backlog.get(t, {}))})
    try:
        conns = consumer_connections(groups, list(facts.masters.values())) if groups else {}
    except (RemotingError, ServiceError) as exc:
        log.warning("alert rules: consumer connections: %s", exc)
        return None
    return {
        t: [g for g in groups if g in conns and conns[g].online and t in conns[g].subscription_table] for t in topics
    }


def _dlq_counts(facts: ScanFacts) -> dict[str, int] | None:
    """DLQ topic -> messages ever put (the sum of its queues' max offsets over the masters that answered)."""
    if facts.masters is None:
        return None
    try:
        stats = broker_stats(facts.masters)
    except (RemotingError, ServiceError) as exc:
        log.warning("alert rules: queue stats: %s", exc)
        return None
    counts: dict[str, int] = {}
    for reply in stats.values():
        if isinstance(reply, RemotingError):
            return None  # a broker missing would read as a fall, then a rise
        for q in reply.queues:
            if q.topic.startswith(DLQ_GROUP_TOPIC_PREFIX):
                counts[q.topic] = counts.get(q.topic, 0) + q.max_offset
    return counts


def _brokers(rule: AlertRule, facts: ScanFacts) -> list[BrokerRow]:
    return [b for b in facts.brokers or () if not rule.target or b.broker_name == rule.target]


def read(rule: AlertRule, facts: ScanFacts, extra: _Extra, now: datetime) -> Reading | None:
    """The rule's condition now, or None when the scan could not tell."""
    t, n = rule.target, rule.threshold
    if rule.kind == LAG_ABOVE:
        if facts.backlog is None:
            return None
        lag = facts.backlog.get(t, 0)
        return Reading(lag > n, lag, f"consumer group {t}: lag {lag:,} messages (alert above {n:,.0f})")
    if rule.kind == LAG_GROWING:
        if facts.backlog is None:
            return None
        growth = lag_growth(facts.backlog_history, facts.backlog, now, rule.for_minutes)
        if growth is None:
            return None
        rising = {g: v for g, v in growth.items() if (not t or g == t) and v[1] - v[0] > n}
        shown = ", ".join(
            f"{g} {a:,} → {b:,} (+{b - a:,})"
            for g, (a, b) in sorted(rising.items(), key=lambda kv: (kv[1][0] - kv[1][1], kv[0]))[:SHOWN_GROUPS]
        )
        more = f" and {len(rising) - SHOWN_GROUPS} more" if len(rising) > SHOWN_GROUPS else ""
        who = f"consumer group {t}" if t else "consumer groups"
        if rising:
            return Reading(
                True,
                len(rising) if not t else rising[t][1] - rising[t][0],
                f"{who}: lag grew over the last {rule.for_minutes} min: {shown}{more} (alert above +{n:,.0f})",
            )
        return Reading(False, 0, f"{who}: lag not growing over the last {rule.for_minutes} min")
    if rule.kind == NO_CONSUMER_ONLINE:
        if not t:  # every user group with a backlog above the threshold
            backlog, online_counts = facts.backlog, facts.online
            if backlog is None or online_counts is None:
                return None
            offline = sorted(
                (g for g, lag in backlog.items() if lag > n and online_counts.get(g) == 0),
                key=lambda g: (-backlog[g], g),
            )  # the largest backlogs named first
            shown = ", ".join(f"{g} (backlog {backlog[g]:,})" for g in offline[:SHOWN_GROUPS])
            more = f" and {len(offline) - SHOWN_GROUPS} more" if len(offline) > SHOWN_GROUPS else ""
            return Reading(
                bool(offline),
                len(offline),
                f"no consumer online for {shown}{more}"
                if offline
                else "every consumer group with a backlog has a consumer online",
            )
        online = None if extra.online is None else extra.online.get(t)
        if online is None:
            return None
        return Reading(
            online == 0,
            online,
            f"consumer group {t}: " + ("no consumer online" if online == 0 else f"{online} consumer(s) online"),
        )
    if rule.kind == SLAVE_DISCONNECTED:
        if facts.replication is None or facts.brokers is None:
            return None
        names = {b.addr: b.broker_name for b in facts.brokers}
        down = [a for a in facts.replication if a.kind == SLAVE_DISCONNECTED and (not t or names.get(a.target) == t)]
        return Reading(
            bool(down),
            len(down),
            "; ".join(a.message for a in down) if down else f"broker {t or 'every broker group'}: slaves replicating",
        )
    if rule.kind == TOPIC_LAG_ABOVE:
        if facts.topic_backlog is None:
            return None
        per_group = facts.topic_backlog.get(t, {})
        lag = sum(per_group.values())
        worst = ", ".join(f"{g} {v:,}" for g, v in sorted(per_group.items(), key=lambda kv: -kv[1])[:3] if v)
        return Reading(
            lag > n,
            lag,
            f"topic {t}: consumers are {lag:,} messages behind"
            + (f" ({worst})" if worst else "")
            + f" (alert above {n:,.0f})",
        )
    if rule.kind == TOPIC_NO_CONSUMER_ONLINE:
        members = None if extra.topic_online is None else extra.topic_online.get(t)
        if members is None:
            return None
        return Reading(
            not members,
            len(members),
            f"topic {t}: "
            + (f"consumed online by {', '.join(members)}" if members else "no consumer online subscribes to it"),
        )
    if rule.kind == DLQ_GROWING:
        if extra.dlq is None:
            return None
        count = extra.dlq.get(DLQ_GROUP_TOPIC_PREFIX + t, 0)
        window_s = rule.for_minutes * 60
        samples = [s for s in rule.samples if now.timestamp() - s[0] <= window_s] if window_s else rule.samples[-1:]
        base = samples[0][1] if samples else count
        rise = count - base
        span = f"in the last {rule.for_minutes} min" if window_s else "since the previous scan"
        return Reading(
            rise > n,
            rise,
            f"consumer group {t}: DLQ {DLQ_GROUP_TOPIC_PREFIX}{t} grew by {rise:,} messages {span} "
            f"(now {count:,}; alert above +{n:,.0f})",
        )
    if rule.kind == BROKER_EXPIRED:
        if facts.brokers is None:
            return None
        gone = [b for b in _brokers(rule, facts) if b.status == EXPIRED]
        gone_names = ", ".join(f"{b.broker_name} ({b.addr})" for b in gone)
        return Reading(
            bool(gone),
            len(gone),
            f"broker(s) gone from the name server: {gone_names}"
            if gone
            else f"broker {t or 'every broker'}: registered",
        )
    if rule.kind == DISK_ABOVE:
        if facts.brokers is None:
            return None
        rows = [b for b in _brokers(rule, facts) if b.status == LIVE and b.disk_ratio is not None]
        if not rows:
            return None
        top = max(rows, key=lambda b: b.disk_ratio or 0.0)
        ratio = top.disk_ratio or 0.0
        return Reading(
            ratio > n, ratio, f"broker {top.broker_name} ({top.addr}): disk {ratio:.1%} used (alert above {n:.1%})"
        )
    return None


def _notice(rule: AlertRule, state: str, reading: Reading, now: datetime) -> Notice:
    return Notice(
        rule=rule.name,
        kind=rule.kind,
        target=rule.target,
        state=state,
        value=reading.value,
        threshold=rule.threshold,
        message=reading.message,
        at=now.isoformat(),
        namesrv_set=rule.namesrv_set,
    )


@dataclass(frozen=True)
class Step:
    """What one reading does to one rule: the state written, and the event or reminder it sends."""

    rule: AlertRule
    reading: Reading
    changes: dict
    state: str = ""  # FIRING or RESOLVED: a new event
    reminder: AlertEvent | None = None  # the firing event a reminder goes out for
    silent: bool = False

    @property
    def sends(self) -> bool:
        return not self.silent and (bool(self.state) or self.reminder is not None)


def _reminder_due(rule: AlertRule, now: datetime) -> AlertEvent | None:
    repeat = int(getattr(settings, "GANTRY_ALERT_REPEAT_MINUTES", DEFAULT_REPEAT_MINUTES))
    event = rule.events.filter(state=FIRING).order_by("-created_at", "-id").first()
    if not repeat or event is None or event.acked_at:
        return None
    sent = [d for d in event.delivery if d.get("at")] or [{"at": event.created_at.isoformat()}]
    return event if now - datetime.fromisoformat(sent[-1]["at"]) >= timedelta(minutes=repeat) else None


def step(rule: AlertRule, reading: Reading, now: datetime) -> Step:
    """Where one reading moves the rule (nothing sent or written yet)."""
    changes: dict = {"last_value": reading.value, "last_evaluated_at": now, "last_message": reading.message}
    silent = rule.silenced(now)
    if reading.holds:
        since = rule.pending_since or now
        changes["pending_since"] = since
        due = rule.kind == DLQ_GROWING or now - since >= timedelta(minutes=rule.for_minutes)
        if not rule.firing and due:
            changes["firing"] = True
            return Step(rule, reading, changes, FIRING, silent=silent)
        if rule.firing and not silent:
            return Step(rule, reading, changes, reminder=_reminder_due(rule, now))
        return Step(rule, reading, changes)
    changes["pending_since"] = None
    if rule.firing:
        changes["firing"] = False
        return Step(rule, reading, changes, RESOLVED, silent=silent)
    return Step(rule, reading, changes)


def _deliveries(steps: list[Step], now: datetime) -> list[list[dict]]:
    """Send what the steps send, DELIVERY_THREADS at a time (a dead webhook costs its timeouts once, not per rule)."""

    def send(s: Step) -> list[dict]:
        if not s.sends:
            return []
        notice = _notice(s.rule, s.state or FIRING, s.reading, now)
        return [asdict(d) for d in deliver(notice, webhook_url=s.rule.webhook_url, emails=list(s.rule.emails))]

    with ThreadPoolExecutor(max_workers=DELIVERY_THREADS) as pool:
        return list(pool.map(send, steps))


def _record(s: Step, delivery: list[dict], now: datetime) -> AlertEvent | None:
    AlertRule.objects.filter(pk=s.rule.pk).update(**s.changes)
    if s.reminder is not None:
        done = [{**d, "at": now.isoformat(), "reminder": True} for d in delivery]
        AlertEvent.objects.filter(pk=s.reminder.pk).update(delivery=[*s.reminder.delivery, *done])
        return None
    if not s.state:
        return None
    if s.silent:
        until = s.rule.silenced_until.isoformat() if s.rule.silenced_until else ""
        delivery = [{"channel": "-", "to": "", "ok": True, "detail": f"silenced until {until}", "attempts": 0}]
    return AlertEvent.objects.create(
        rule=s.rule,
        rule_name=s.rule.name,
        kind=s.rule.kind,
        target=s.rule.target,
        state=s.state,
        value=s.reading.value,
        message=s.reading.message,
        created_at=now,
        notified=not s.silent and bool(delivery),
        delivery=delivery,
    )


def evaluate_rule(rule: AlertRule, reading: Reading, now: datetime) -> AlertEvent | None:
    """Move one rule's state on by one reading, notify, record; the event written, if any."""
    s = step(rule, reading, now)
    return _record(s, _deliveries([s], now)[0], now)


def evaluate_rules(facts: ScanFacts, now: datetime | None = None) -> int:
    """Evaluate every enabled rule of the current name-server set against its scan's facts; the number of events written."""
    now = now or timezone.now()
    rules = list(AlertRule.objects.filter(enabled=True, namesrv_set=namesrv_scope.current_name()))
    extra = _Extra()
    watched = sorted({r.target for r in rules if r.kind == NO_CONSUMER_ONLINE and r.target})
    if any(r.kind == NO_CONSUMER_ONLINE for r in rules):
        extra.online = _online_counts(watched, facts)
    watched_topics = sorted({r.target for r in rules if r.kind == TOPIC_NO_CONSUMER_ONLINE and r.target})
    if watched_topics:
        extra.topic_online = _topic_online(watched_topics, facts)
    if any(r.kind == DLQ_GROWING for r in rules):
        extra.dlq = _dlq_counts(facts)
    steps = []
    for rule in rules:
        reading = read(rule, facts, extra, now)
        if reading is None:
            continue
        if rule.kind == DLQ_GROWING and extra.dlq is not None:
            count = extra.dlq.get(DLQ_GROUP_TOPIC_PREFIX + rule.target, 0)
            keep_s = max(rule.for_minutes * 60, 1)
            samples = [s for s in rule.samples if now.timestamp() - s[0] <= keep_s] if rule.for_minutes else []
            AlertRule.objects.filter(pk=rule.pk).update(samples=[*samples, [now.timestamp(), count]][-MAX_SAMPLES:])
        steps.append(step(rule, reading, now))
    deliveries = _deliveries(steps, now) if any(s.sends for s in steps) else [[] for _ in steps]
    return sum(_record(s, d, now) is not None for s, d in zip(steps, deliveries))
