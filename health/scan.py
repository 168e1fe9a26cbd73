"""The periodic health scan (Celery beat, "health-scan") and the overview alerts it stores.

One scan:

1. fails rebalance jobs whose worker is gone (expired lease) or that no worker took
   (``settings.GANTRY_HEALTH_SCAN_SWEEPS``: :func:`consumers.rebalance.jobs.rebalance_jobs_sweep_set`);
2. groups with queues held by nobody or by two members: the live check of every online
   clustering group (``settings.GANTRY_HEALTH_SCAN_ALERTS``: :func:`consumers.alerts.unowned_queue_alerts`,
   whose cache the overview's fallback shares: a page load never repeats a scan);
3. brokers: the overview's own reading (:func:`brokers.gateway.overview.broker_overview`, which only
   reads); the scan records the brokers that answered
   (:func:`brokers.gateway.sightings.broker_sightings_record`), so a broker that vanishes while
   nobody has the console open still shows as expired; its broker alerts are kept in the scan record;
4. broker groups: a live slave whose HA link is not connected, a SYNC_MASTER with no slave
   connected ("slave_disconnected"), a slave behind its master by more than
   ``GANTRY_HA_LAG_ALERT_BYTES`` or ``GANTRY_HA_LAG_ALERT_S`` ("slave_lagging"), from the same
   reading of the overview (:func:`ha_alerts`);
5. backlog: every group's total lag (one GET_BROKER_CONSUME_STATS per master, all at once),
   kept per scan; a group whose backlog rose at each of the last BACKLOG_SCANS scans by at
   least BACKLOG_RISE_MIN messages in all raises "group_backlog_rising";
6. which groups with a backlog have no consumer online (one batched connections read), kept per scan
   for the overview's health summary;
7. the operators' alert rules (health.rules) are evaluated over what the scan read, after the
   set's default rules are made sure of (health.defaults).

Beat runs :func:`health_scan_all`: one scan per configured name-server set (``default`` first), each
inside that set's scope (docs/clusters.md), so its reads go to that tier and its rows (the scan, the
sightings) carry the set's name; a set whose scan fails does not stop the others. The overview of a
set reads that set's scans only.

:func:`health_scan_alerts` is the overview's alert source (``settings.GANTRY_ALERT_SOURCES``):
the group, broker-group and backlog alerts of the newest fresh scan. Broker alerts are left out
there: the overview computes them itself at every load. With no fresh scan (beat not running) it
falls back to the live check, cached; replication alerts then wait for the next scan (the alert
source is handed the cluster info, not the overview's runtime reading, and asking every broker
again at each page load is what the scan is there to avoid).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import asdict
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from brokers.engine.common.subscription_group_config import is_system_group
from brokers.gateway import namesrv_sets
from brokers.gateway.cluster import cluster_info, readable_by_addr
from brokers.gateway.connections import consumer_connections
from brokers.gateway.errors import RemotingError
from brokers.gateway.groups import group_survey
from brokers.gateway.overview import ERROR, LIVE, OK, UNKNOWN, WARNING, Alert, BrokerRow, HealthLine, broker_overview
from brokers.gateway.replication import BrokerGroup
from brokers.gateway.sightings import broker_sightings_record
from brokers.gateway.types import ClusterInfo
from console.errors import ServiceError
from health import rules as alert_rules
from health.defaults import alert_rules_ensure_defaults
from health.models import AlertRule, HealthScan

log = logging.getLogger(__name__)

SCANS_KEPT = 20  # rows kept at least: enough for the backlog trend and a look back
HISTORY_MINUTES = (
    60  # ... and the rows of the longest lag_growing window, an hour at most (alert_services.MAX_GROWING_MINUTES)
)
BROKER_KINDS = ("namesrv_down", "broker_not_answering", "broker_expired", "disk_full", "store_unhealthy")
BACKLOG_RISING = "group_backlog_rising"
SLAVE_DISCONNECTED, SLAVE_LAGGING = "slave_disconnected", "slave_lagging"
DEFAULT_HA_LAG_ALERT_BYTES = 64 << 20  # settings.GANTRY_HA_LAG_ALERT_BYTES (its comment says why)
DEFAULT_HA_LAG_ALERT_S = 10.0  # settings.GANTRY_HA_LAG_ALERT_S
DEFAULTS = {
    "BACKLOG_SCANS": 3,  # rising = grew at each of this many consecutive scans ...
    "BACKLOG_RISE_MIN": 1000,  # ... by at least this many messages in all (a busy group's noise stays below)
    "FRESH_SCANS": 3,  # the overview trusts a scan this many scan periods old, then falls back to the live check
}


def _config(name: str) -> int:
    return int(getattr(settings, "GANTRY_HEALTH", {}).get(name, DEFAULTS[name]))


def _hooks(setting: str) -> list:
    """The callables a setting names by dotted path: the other apps' parts of the scan."""
    return [import_string(path) for path in getattr(settings, setting, ())]


def _group_alerts(info: ClusterInfo) -> list[Alert]:
    """The consumer-group alerts of ``settings.GANTRY_HEALTH_SCAN_ALERTS`` (queues held by nobody or by two members)."""
    return [alert for source in _hooks("GANTRY_HEALTH_SCAN_ALERTS") for alert in source(info)]


def _period_s() -> float:
    entry = getattr(settings, "CELERY_BEAT_SCHEDULE", {}).get("health-scan", {})
    schedule = entry.get("schedule", 30.0)
    return float(schedule) if isinstance(schedule, (int, float)) else 30.0


def group_backlogs(info: ClusterInfo) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Every user group's total lag over the brokers that answered (a slave for a master that is
    down), and every topic's lag per user group consuming it (topic -> group -> lag; a group with
    committed offsets on a topic consumes it)."""
    totals: dict[str, int] = {}
    topics: dict[str, dict[str, int]] = {}
    for survey in group_survey(readable_by_addr(info)).values():
        if survey.error:
            continue
        for group, lag in survey.lag.items():
            if not is_system_group(group):
                totals[group] = totals.get(group, 0) + max(int(lag), 0)
        for (topic, group), lag in survey.topic_lag.items():
            if not is_system_group(group):
                per_group = topics.setdefault(topic, {})
                per_group[group] = per_group.get(group, 0) + max(int(lag), 0)
    return totals, topics


def rising_backlogs(
    history: list[dict[str, int]], scans: int | None = None, rise_min: int | None = None
) -> list[Alert]:
    """Alerts for groups whose backlog grew at each of the last ``scans`` scans, by ``rise_min`` in all.

    ``history`` is oldest first, the current scan last. Example, scans=3, rise_min=1000:
    [100, 400, 900, 1500] rises (+1,400); [100, 900, 800, 2000] does not (it fell once).
    """
    scans = _config("BACKLOG_SCANS") if scans is None else scans
    rise_min = _config("BACKLOG_RISE_MIN") if rise_min is None else rise_min
    if len(history) < scans + 1:
        return []
    window = history[-(scans + 1) :]
    out = []
    for group in sorted(window[-1]):
        found = [h.get(group) for h in window]
        values = [v for v in found if v is not None]
        if len(values) < len(found):  # the group was missing from a scan
            continue
        if all(b > a for a, b in zip(values, values[1:])) and values[-1] - values[0] >= rise_min:
            out.append(
                Alert(
                    "warning",
                    BACKLOG_RISING,
                    group,
                    f"consumer group {group}: backlog rose at each of the last {scans} scans, "
                    f"{values[0]:,} → {values[-1]:,} messages (+{values[-1] - values[0]:,})",
                )
            )
    return out


def ha_alerts(
    groups: tuple[BrokerGroup[BrokerRow], ...], *, lag_bytes: int | None = None, lag_s: float | None = None
) -> list[Alert]:
    """Replication alerts of the broker groups (members that answered; one that does not is the
    overview's ``broker_not_answering`` already).

    - ``slave_disconnected`` (error): a slave whose HA link is not CONNECTED (it copies nothing);
      a SYNC_MASTER with no slave connected (every send answers SLAVE_NOT_AVAILABLE);
    - ``slave_lagging`` (warning): a connected slave behind its master by more than ``lag_bytes``
      or ``lag_s`` (default the settings GANTRY_HA_LAG_ALERT_BYTES / GANTRY_HA_LAG_ALERT_S).
    """
    lag_bytes = (
        int(getattr(settings, "GANTRY_HA_LAG_ALERT_BYTES", DEFAULT_HA_LAG_ALERT_BYTES))
        if lag_bytes is None
        else lag_bytes
    )
    lag_s = float(getattr(settings, "GANTRY_HA_LAG_ALERT_S", DEFAULT_HA_LAG_ALERT_S)) if lag_s is None else lag_s
    out: list[Alert] = []
    for group in groups:
        for m in group.members:
            if m.status != LIVE or m.ha is None:
                continue
            who = f"{group.broker_name} id {m.broker_id} ({m.addr})"
            if m.ha.is_slave:
                if not m.ha.connected:
                    out.append(
                        Alert(
                            "error",
                            SLAVE_DISCONNECTED,
                            m.addr,
                            f"slave {who} is not replicating: HA link {m.ha.connection or 'unknown'}"
                            + (f" (master {m.ha.master_addr})" if m.ha.master_addr else ""),
                        )
                    )
                    continue
                behind = []
                if m.ha.lag_bytes is not None and m.ha.lag_bytes > lag_bytes:
                    behind.append(f"{m.ha.lag_bytes:,} bytes (alert above {lag_bytes:,})")
                if m.ha.lag_s is not None and m.ha.lag_s > lag_s:
                    behind.append(f"{m.ha.lag_s:.1f} s (alert above {lag_s:g} s)")
                if behind:
                    out.append(
                        Alert(
                            "warning", SLAVE_LAGGING, m.addr, f"slave {who} lags its master by {' and '.join(behind)}"
                        )
                    )
            elif m.ha.role == "SYNC_MASTER" and m.ha.connection and not m.ha.connected:
                out.append(
                    Alert(
                        "error",
                        SLAVE_DISCONNECTED,
                        m.addr,
                        f"SYNC_MASTER {who} has no slave connected ({m.ha.connection}): every send answers SLAVE_NOT_AVAILABLE",
                    )
                )
    return out


def online_counts(groups: list[str], masters: list[str]) -> dict[str, int]:
    """Members online per group (one batched connections read for all of them)."""
    conns = consumer_connections(groups, masters) if groups else {}
    return {g: len(conns[g].connections) if g in conns else 0 for g in groups}


def health_scan(*, now: datetime | None = None) -> dict:
    """Run one scan of the current set, store it, prune its old ones; a JSON-able summary.

    ``now`` (default: the clock) is when the scan happens: tests step it instead of waiting for beat.
    """
    now = now or timezone.now()
    tier = namesrv_sets.current_name()
    scan = HealthScan.objects.create(namesrv_set=tier, started_at=now)
    failed_jobs = sum(sweep(tier) for sweep in _hooks("GANTRY_HEALTH_SCAN_SWEEPS"))
    found: list[Alert] = []
    backlog: dict[str, int] = {}
    offline: dict[str, int] = {}
    error = ""
    facts = alert_rules.ScanFacts()
    try:
        info = cluster_info()
        found.extend(_group_alerts(info))
        overview = broker_overview()
        found.extend(a for a in overview.alerts if a.kind in BROKER_KINDS)
        replication = ha_alerts(overview.groups)
        found.extend(replication)
        broker_sightings_record(brokers=[b for b in overview.brokers if b.status == LIVE])
        facts = alert_rules.ScanFacts(brokers=overview.brokers, masters=info.masters(), replication=tuple(replication))
        backlog, topic_backlog = group_backlogs(info)
        online = online_counts(sorted(g for g, lag in backlog.items() if lag > 0), list(info.masters().values()))
        offline = {g: backlog[g] for g, n in online.items() if n == 0}
        history = [
            (s.started_at, s.backlog)
            for s in HealthScan.objects.filter(namesrv_set=tier, ok=True, finished_at__isnull=False)
            .exclude(pk=scan.pk)
            .filter(started_at__lt=now, started_at__gte=now - timedelta(minutes=HISTORY_MINUTES + 1))
            .order_by("started_at", "id")
        ]
        facts = dataclasses.replace(
            facts, backlog=backlog, topic_backlog=topic_backlog, online=online, backlog_history=tuple(history)
        )
        found.extend(rising_backlogs([*(h for _, h in history[-_config("BACKLOG_SCANS") :]), backlog]))
    except (RemotingError, ServiceError) as exc:
        error = getattr(exc, "message", None) or str(exc)
        log.warning("health scan %s: %s", scan.pk, error)
    HealthScan.objects.filter(pk=scan.pk).update(
        finished_at=max(now, timezone.now()),
        ok=not error,
        error=error,
        alerts=[asdict(a) for a in found],
        backlog=backlog,
        offline=offline,
        jobs_failed=failed_jobs,
    )
    kept = HealthScan.objects.filter(namesrv_set=tier).order_by("-started_at", "-id")
    window = max(
        AlertRule.objects.filter(namesrv_set=tier, enabled=True, kind="lag_growing").values_list(
            "for_minutes", flat=True
        ),
        default=0,
    )
    needed = (
        math.ceil(min(window, HISTORY_MINUTES) * 60 / _period_s()) + 2
    )  # the longest lag_growing window, and the scan before it
    stale = kept.values_list("pk", flat=True)[max(SCANS_KEPT, needed) :]
    HealthScan.objects.filter(pk__in=list(stale)).delete()
    alert_rules_ensure_defaults(namesrv_set=tier)
    events = alert_rules.evaluate_rules(facts, now=now)
    return {
        "namesrv_set": tier,
        "alert_events": events,
        "scan": scan.pk,
        "ok": not error,
        "error": error,
        "alerts": len(found),
        "groups": len(backlog),
        "jobs_failed": failed_jobs,
    }


def health_scan_all() -> list[dict]:
    """One scan per configured set, each in its scope; a set that fails is logged and reported, the others still run."""
    return namesrv_sets.each_set(health_scan, "health scan")


def latest_scan() -> HealthScan | None:
    """The current set's newest finished scan that is still fresh (FRESH_SCANS scan periods, at least 90 s)."""
    fresh_after = timezone.now() - timedelta(seconds=max(90.0, _config("FRESH_SCANS") * _period_s()))
    return (
        HealthScan.objects.filter(namesrv_set=namesrv_sets.current_name(), ok=True, finished_at__gte=fresh_after)
        .order_by("-finished_at", "-id")
        .first()
    )


def health_scan_alerts(info: ClusterInfo) -> list[Alert]:
    """The overview's consumer-group alerts: the newest fresh scan's, else the live check (cached)."""
    scan = latest_scan()
    if scan is None:
        return _group_alerts(info)
    return [Alert(**a) for a in scan.alerts if a.get("kind") not in BROKER_KINDS]


RULE_ERROR_KINDS = ("no_consumer_online", "topic_no_consumer_online", "broker_expired", "slave_disconnected")
GROUP_RULE_KINDS = ("lag_above", "lag_growing", "no_consumer_online", "dlq_growing")
SHOWN_GROUPS = 5


def _firing_rules():
    return AlertRule.objects.filter(namesrv_set=namesrv_sets.current_name(), enabled=True, firing=True)


def firing_rule_alerts(info: ClusterInfo) -> list[Alert]:
    """The overview's alerts of the rules firing now (an overview alert source): the rule's name and what its
    last evaluation read, silenced or not (a silence stops notifications, not the overview)."""
    out = []
    for rule in _firing_rules():
        silenced = f" (silenced until {rule.silenced_until:%Y-%m-%d %H:%M} UTC)" if rule.silenced() else ""
        out.append(
            Alert(
                "error" if rule.kind in RULE_ERROR_KINDS else "warning",
                "alert_rule",
                rule.target,
                f"{rule.name}: {rule.last_message or rule.kind}{silenced}",
            )
        )
    return out


def group_health(info: ClusterInfo) -> list[HealthLine]:
    """The overview's consumer-group line (a health source): the newest fresh scan's groups with a backlog and no
    consumer online, its rising backlogs, and the group rules firing now."""
    scan = latest_scan()
    if scan is None:
        return [
            HealthLine(
                "groups",
                UNKNOWN,
                _("not checked: no health scan in the last %(seconds)d s (is Celery beat running?)")
                % {"seconds": int(max(90.0, _config("FRESH_SCANS") * _period_s()))},
            )
        ]
    offline = sorted(scan.offline.items(), key=lambda kv: -kv[1])
    details = [
        _("%(group)s: no consumer online, backlog %(lag)s") % {"group": g, "lag": f"{lag:,}"}
        for g, lag in offline[:SHOWN_GROUPS]
    ]
    rising = [a["message"] for a in scan.alerts if a.get("kind") == BACKLOG_RISING]
    # a firing no_consumer_online rule says what ``offline`` says already
    rules = [
        f"{r.name}: {r.last_message}"
        for r in _firing_rules().filter(kind__in=GROUP_RULE_KINDS).exclude(kind="no_consumer_online")
    ]
    details += [*rising, *rules][:SHOWN_GROUPS]
    total = sum(scan.backlog.values())
    summary = _("%(groups)d groups, total lag %(lag)s") % {"groups": len(scan.backlog), "lag": f"{total:,}"}
    if offline:
        summary += "; " + _("%(count)d with a backlog and no consumer online") % {"count": len(offline)}
    elif rising or rules:
        summary += "; " + _("lag growing")
    else:
        summary += "; " + _("every group with a backlog has a consumer online")
    return [HealthLine("groups", ERROR if offline else WARNING if rising or rules else OK, summary, tuple(details))]
