"""The alert rules every cluster has without anyone writing them: a group falling behind or left without
consumers, a slave not replicating, a disk filling up.

:func:`alert_rules_ensure_defaults` creates the ones a cluster (name-server set) lacks; the health scan
calls it for its set before it evaluates the rules, so a new install, and a set added later, has them from
its first scan on. Each is keyed by ``AlertRule.builtin``: once created it is the operator's to edit
(threshold, minutes, webhook, e-mail), silence or disable, and it is never created twice; it cannot be
deleted (it would come back), only disabled. Without a webhook or e-mail a rule shows on the overview and
in the alert history, and sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from brokers.gateway.store_disk import FALLBACK_WARN_RATIO
from health.models import DISK_ABOVE, LAG_GROWING, NO_CONSUMER_ONLINE, SLAVE_DISCONNECTED, AlertRule


@dataclass(frozen=True)
class DefaultRule:
    builtin: str  # the key, unique per set
    name: str
    kind: str
    threshold: float
    for_minutes: int
    target: str = ""  # every group / every broker


DEFAULT_RULES = (
    # a rise of at most 100 messages in 5 minutes is a batch in flight, not a consumer falling behind
    DefaultRule("group-lag-growing", "Consumer group lag growing", LAG_GROWING, threshold=100, for_minutes=5),
    # a minute: a consumer restarting is back well within it; threshold 0 = any backlog (a drained, retired group stays quiet)
    DefaultRule(
        "group-no-consumer",
        "Consumer group with a backlog and no consumer online",
        NO_CONSUMER_ONLINE,
        threshold=0,
        for_minutes=1,
    ),
    # a minute: a slave restarting reconnects within seconds
    DefaultRule("slave-disconnected", "Slave disconnected", SLAVE_DISCONNECTED, threshold=0, for_minutes=1),
    # the overview's own warning ratio for disks (brokers/gateway/store_disk.py)
    DefaultRule(
        "disk-above-warning", "Disk above the warning ratio", DISK_ABOVE, threshold=FALLBACK_WARN_RATIO, for_minutes=0
    ),
)


def alert_rules_ensure_defaults(*, namesrv_set: str) -> int:
    """Create the default rules ``namesrv_set`` lacks (idempotent); the number created."""
    have = set(AlertRule.objects.filter(namesrv_set=namesrv_set).exclude(builtin="").values_list("builtin", flat=True))
    created = 0
    for d in DEFAULT_RULES:
        if d.builtin in have:
            continue
        try:
            with transaction.atomic():  # two scans of one set racing: the unique constraint keeps one
                AlertRule.objects.create(
                    builtin=d.builtin,
                    name=d.name,
                    kind=d.kind,
                    target=d.target,
                    threshold=d.threshold,
                    for_minutes=d.for_minutes,
                    namesrv_set=namesrv_set,
                    created_by="gantry",
                )
            created += 1
        except IntegrityError:
            continue
    return created
