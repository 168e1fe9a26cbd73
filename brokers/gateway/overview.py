"""The cluster overview: name server and broker state for the overview page, /api/v1/{clusters,brokers}
and the health scan's broker alerts.

One overview costs: one GET_BROKER_CLUSTER_INFO per name server (all at once), one
GET_BROKER_RUNTIME_INFO per broker (all at once), and one GET_ALL_TOPIC_CONFIG per broker for
the topic and queue counts, kept TOPIC_COUNT_TTL_S in the cache because topic tables are large
and change rarely.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from brokers.engine.client.admin import ClusterInfo
from brokers.engine.common.mq_version import version_desc
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway import namesrv_sets
from brokers.gateway.client import get_admin_client
from brokers.gateway.cluster import cluster_info, namesrv_survey, runtime_infos
from brokers.gateway.replication import BrokerGroup, HAState, group_members, ha_state
from brokers.gateway.store_disk import StoreDisk, format_bytes, store_disk
from brokers.gateway.topics import all_topic_configs
from brokers.models import BrokerSighting
from console.errors import NotFound, ServiceError

log = logging.getLogger(__name__)

TOPIC_COUNT_TTL_S = 15  # topic/queue counts per broker: refreshed at most this often
GONE_ALERT_WINDOW = timedelta(hours=24)  # a broker seen in this window and gone now raises an alert

LIVE, NOT_ANSWERING, EXPIRED = "live", "not answering", "expired"
STORE_ALERT_KINDS = ("disk_full", "store_unhealthy")


@dataclass(frozen=True)
class NamesrvRow:
    addr: str
    live: bool
    version: str
    error: str = ""


@dataclass(frozen=True)
class BrokerRow:
    cluster: str
    broker_name: str
    broker_id: int
    addr: str
    status: str  # live, not answering, expired
    version: str = ""
    last_seen: datetime | None = None
    topics: int | None = None
    queues: int | None = None  # read queues over all its topics
    tps_in: float | None = None  # putTps, last 10 s
    tps_out: float | None = None  # getTransferedTps, last 10 s
    msg_put_total_today: str = ""
    msg_get_total_today: str = ""
    commit_log_disk_ratio: str = ""  # "12.5 %"
    disk_ratio: float | None = None
    boot_timestamp: str = ""
    error: str = ""
    ha: HAState | None = None  # role, epoch, HA link and lag (None: not answering)
    disk: StoreDisk | None = None  # disk usage, retention, oldest message, refusals (None: not answering)


@dataclass(frozen=True)
class ClusterRow:
    name: str
    broker_names: tuple[str, ...]


@dataclass(frozen=True)
class Alert:
    level: str  # error, warning
    kind: str  # namesrv_down, broker_not_answering, broker_expired, disk_full, store_unhealthy (and other apps' kinds)
    target: str
    message: str


OK, WARNING, ERROR, UNKNOWN = "ok", "warning", "error", "unknown"


@dataclass(frozen=True)
class HealthLine:
    """One line of the overview's health summary: what (brokers, replication, groups, disk), how bad, and who."""

    subject: str
    level: str  # ok, warning, error, unknown
    summary: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class BrokerOverview:
    namesrv_addr: str
    namesrvs: tuple[NamesrvRow, ...]
    clusters: tuple[ClusterRow, ...]
    brokers: tuple[BrokerRow, ...]
    alerts: tuple[Alert, ...]
    error: str = ""
    other_health: tuple[HealthLine, ...] = ()  # lines of other apps (settings.GANTRY_HEALTH_SOURCES): consumer groups

    @property
    def health(self) -> tuple[HealthLine, ...]:
        """What an operator reads first: brokers up or down, replication, consumer groups (other apps' lines), disks."""
        return (_brokers_line(self), _replication_line(self.groups), *self.other_health, _disk_line(self.brokers))

    @property
    def store_alerts(self) -> tuple[Alert, ...]:
        """The alerts of brokers' stores (sends refused, disk filling up, unhealthy): the overview's banner, errors first."""
        found = [a for a in self.alerts if a.kind in STORE_ALERT_KINDS]
        return tuple(sorted(found, key=lambda a: a.level != "error"))

    @property
    def groups(self) -> tuple[BrokerGroup[BrokerRow], ...]:
        """The brokers as broker groups (master and slaves of each broker name)."""
        return group_members(self.brokers)


def _brokers_line(overview: BrokerOverview) -> HealthLine:
    if overview.error and not overview.brokers:
        return HealthLine("brokers", ERROR, _("no broker known: %(error)s") % {"error": overview.error})
    down = [b for b in overview.brokers if b.status != LIVE]
    up = len(overview.brokers) - len(down)
    summary = _("%(up)d of %(total)d brokers up") % {"up": up, "total": len(overview.brokers)}
    details = tuple(f"{b.broker_name} id {b.broker_id} ({b.addr}): {b.status}" for b in down)
    return HealthLine("brokers", ERROR if down or not overview.brokers else OK, summary, details)


def _replication_line(groups: tuple[BrokerGroup[BrokerRow], ...]) -> HealthLine:
    slaves = [m for g in groups for m in g.members if m.broker_id != 0]
    if not slaves:
        return HealthLine("replication", OK, _("no slaves: nothing replicates"))
    connected = [m for m in slaves if m.status == LIVE and m.ha is not None and m.ha.connected]
    details = tuple(
        f"{m.broker_name} id {m.broker_id} ({m.addr}): "
        + (
            m.status
            if m.status != LIVE
            else _("HA link %(state)s") % {"state": (m.ha.connection if m.ha else "") or "unknown"}
        )
        for m in slaves
        if m not in connected
    )
    lag_bytes = max((m.ha.lag_bytes or 0 for m in connected if m.ha is not None), default=0)
    lag_s = max((m.ha.lag_s or 0.0 for m in connected if m.ha is not None), default=0.0)
    summary = _("%(connected)d of %(total)d slaves connected; largest lag %(bytes)s, %(seconds).1f s") % {
        "connected": len(connected),
        "total": len(slaves),
        "bytes": format_bytes(lag_bytes),
        "seconds": lag_s,
    }
    return HealthLine("replication", ERROR if details else OK, summary, details)


def _disk_line(brokers: tuple[BrokerRow, ...]) -> HealthLine:
    live = [(b, b.disk) for b in brokers if b.status == LIVE and b.disk is not None]
    problems = [(b, p) for b, disk in live if (p := disk.problem()) is not None]
    details = tuple(f"{b.broker_name} id {b.broker_id} ({b.addr}): {p[1]}" for b, p in problems)
    top = max((disk.ratio for _, disk in live if disk.ratio is not None), default=None)
    if not problems:
        summary = _("every disk below its warning ratio") + (
            _(" (fullest %(ratio).0f %%)") % {"ratio": top * 100} if top is not None else ""
        )
        return HealthLine("disk", OK, summary)
    level = ERROR if any(p[0] == "error" for b, p in problems) else WARNING
    summary = ngettext(
        "%(count)d broker's disk above its warning ratio",
        "%(count)d brokers' disks above their warning ratio",
        len(problems),
    ) % {"count": len(problems)}
    return HealthLine("disk", level, summary, details)


def _percent(ratio: str) -> str:
    """Render a 0..1 ratio string as a percentage; pass anything else through."""
    try:
        return f"{float(ratio) * 100:.1f} %"
    except ValueError:
        return ratio


def _ratio(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _first_tps(value: str | None) -> float | None:
    """The first figure of a TPS triple ("12.00 10.50 9.80": last 10 s, 1 min, 10 min)."""
    try:
        return float((value or "").split()[0])
    except (IndexError, ValueError):
        return None


def _version_name(version: int | None) -> str:
    return "" if version is None else version_desc(version)


def _topic_counts(addrs: list[str]) -> dict[str, tuple[int, int]]:
    """(topics, read queues) per broker address, from the cache or one batched call."""
    keys = {addr: f"gantry:broker-topic-counts:{addr}" for addr in addrs}
    cached = cache.get_many(list(keys.values()))
    out = {addr: tuple(cached[key]) for addr, key in keys.items() if key in cached}
    missing = [addr for addr in addrs if addr not in out]
    if missing:
        fresh = {}
        for addr, table in all_topic_configs(missing).items():
            if isinstance(table, dict):
                fresh[addr] = (len(table), sum(tc.read_queue_nums for tc in table.values()))
        cache.set_many({keys[a]: list(v) for a, v in fresh.items()}, TOPIC_COUNT_TTL_S)
        out.update(fresh)
    return out


def _registered_rows(info: ClusterInfo) -> list[BrokerRow]:
    addrs = [b.addr for b in info.brokers]
    runtime = runtime_infos(addrs)
    counts = _topic_counts([a for a in addrs if isinstance(runtime.get(a), dict)])
    rows = []
    for b in sorted(info.brokers, key=lambda b: (b.cluster, b.broker_name, b.broker_id)):
        rt = runtime.get(b.addr)
        if not isinstance(rt, dict):
            rows.append(BrokerRow(b.cluster, b.broker_name, b.broker_id, b.addr, NOT_ANSWERING, error=str(rt)))
            continue
        topics, queues = counts.get(b.addr, (None, None))
        store_healthy = rt.get("storeHealthy", "true")
        rows.append(
            BrokerRow(
                cluster=b.cluster,
                broker_name=b.broker_name,
                broker_id=b.broker_id,
                addr=b.addr,
                status=LIVE,
                version=rt.get("brokerVersionDesc", ""),
                topics=topics,
                queues=queues,
                tps_in=_first_tps(rt.get("putTps")),
                tps_out=_first_tps(rt.get("getTransferedTps")),
                msg_put_total_today=rt.get("msgPutTotalTodayNow", ""),
                msg_get_total_today=rt.get("msgGetTotalTodayNow", ""),
                commit_log_disk_ratio=_percent(rt.get("commitLogDiskRatio", "")),
                disk_ratio=_ratio(rt.get("commitLogDiskRatio", "")),
                boot_timestamp=rt.get("bootTimestamp", ""),
                error="" if store_healthy == "true" else store_healthy,
                ha=ha_state(rt, b.broker_id),
                disk=store_disk(rt),
            )
        )
    return rows


def _alerts(namesrvs: list[NamesrvRow], rows: list[BrokerRow]) -> list[Alert]:
    alerts = [
        Alert("error", "namesrv_down", n.addr, f"name server {n.addr} does not answer: {n.error}")
        for n in namesrvs
        if not n.live
    ]
    for row in rows:
        where = f"{row.cluster}/{row.broker_name} ({row.addr})"
        if row.status == NOT_ANSWERING:
            alerts.append(
                Alert(
                    "error",
                    "broker_not_answering",
                    row.addr,
                    f"broker {where} is registered with the name server but does not answer: {row.error}",
                )
            )
        elif row.status == EXPIRED:
            seen = f" (last seen {row.last_seen:%Y-%m-%d %H:%M:%S} UTC)" if row.last_seen else ""
            alerts.append(
                Alert(
                    "error",
                    "broker_expired",
                    row.addr,
                    f"broker {where} was registered before and is gone from the name server{seen}",
                )
            )
        else:
            alerts.extend(broker_store_alerts(row))
    return alerts


def broker_store_alerts(row: BrokerRow) -> list[Alert]:
    """A live broker's store alerts: unhealthy, not writable (sends refused), disk full or filling up."""
    where = f"{row.cluster}/{row.broker_name} ({row.addr})"
    alerts = []
    disk = row.disk
    not_writable = disk.not_writable_text if disk else ""
    same_reason = (
        disk is not None
        and bool(not_writable)
        and bool(disk.not_writable_reason)
        and disk.not_writable_reason in row.error
    )
    if row.error and not same_reason:  # storeHealthy false (said once when storeWritable gives the same reason)
        alerts.append(Alert("error", "store_unhealthy", row.addr, f"broker {where} store: {row.error}"))
    if not_writable:
        alerts.append(Alert("error", "store_unhealthy", row.addr, f"broker {where} {not_writable}"))
    problem = row.disk.problem() if row.disk else None
    if problem is not None:
        alerts.append(Alert(problem[0], "disk_full", row.addr, f"broker {where} {problem[1]}"))
    return alerts


def broker_overview() -> BrokerOverview:
    """Name servers, clusters and brokers (registered, answering or not, and recently gone), with alerts.

    A name server that does not answer is listed down; when none answers, the overview holds no
    broker and an error. A broker the name server lists that does not answer its runtime query
    appears "not answering"; a broker the console saw within GONE_ALERT_WINDOW that the name
    server no longer lists appears "expired". Sightings are read here and recorded by the health
    scan (:func:`brokers.gateway.sightings.broker_sightings_record`): a page load writes nothing.
    """
    try:
        client = get_admin_client()
    except ServiceError as exc:
        return BrokerOverview("", (), (), (), (Alert("error", "namesrv_down", "", exc.message),), error=exc.message)
    namesrv = client.namesrv_addr_string
    survey = namesrv_survey()
    namesrvs = [NamesrvRow(a.addr, a.live, _version_name(a.version), a.error) for a in survey.namesrvs]
    info = survey.cluster_info
    if info is None:
        error = "name server unreachable: " + "; ".join(f"{n.addr}: {n.error}" for n in namesrvs)
        log.warning("cluster info unavailable: %s", error)
        return BrokerOverview(namesrv, tuple(namesrvs), (), (), tuple(_alerts(namesrvs, [])), error=error)
    try:
        rows = _registered_rows(info)
    except RemotingError as exc:  # a transport failure of the whole fanout
        return BrokerOverview(namesrv, tuple(namesrvs), (), (), tuple(_alerts(namesrvs, [])), error=str(exc))
    rows = _with_sightings(rows, _sightings(BrokerSighting.objects.all()))
    clusters = tuple(ClusterRow(name, tuple(sorted(names))) for name, names in sorted(info.clusters.items()))
    alerts = _alerts(namesrvs, rows) + _extra_alerts(info)
    return BrokerOverview(
        namesrv, tuple(namesrvs), clusters, tuple(rows), tuple(alerts), other_health=_other_health(info)
    )


def _with_sightings(rows: list[BrokerRow], sightings) -> list[BrokerRow]:
    """Rows answering now marked seen now, plus the brokers seen within GONE_ALERT_WINDOW and gone (expired)."""
    now = timezone.now()
    listed = {r.addr for r in rows}
    rows = [replace(r, last_seen=now) if r.status == LIVE else r for r in rows]  # answering now: seen now
    for s in sightings:  # recorded by the health scan: this read writes nothing
        if s.addr not in listed and now - s.last_seen_at <= GONE_ALERT_WINDOW:
            rows.append(BrokerRow(s.cluster, s.broker_name, s.broker_id, s.addr, EXPIRED, last_seen=s.last_seen_at))
    rows.sort(key=lambda r: (r.cluster, r.broker_name, r.broker_id, r.addr))
    return rows


def _sightings(rows):
    """The sightings that belong to the current tier (the health scan records each set's under its name)."""
    return rows.filter(namesrv_set=namesrv_sets.current_name())


def broker_group(name: str) -> BrokerGroup[BrokerRow]:
    """One broker group for its page: the members the name servers list (and recently gone ones), read
    like the overview's rows (one runtime query per member). NotFound when no name server knows the name."""
    info = cluster_info()
    members = tuple(b for b in info.brokers if b.broker_name == name)
    if not members:
        raise NotFound(f"broker {name} is not known to the name servers")
    rows = _with_sightings(
        _registered_rows(replace(info, brokers=members)), _sightings(BrokerSighting.objects.filter(broker_name=name))
    )
    return group_members(rows)[0]


def _other_health(info: ClusterInfo) -> tuple[HealthLine, ...]:
    """Health lines of other apps: each dotted path in settings.GANTRY_HEALTH_SOURCES names a callable
    ``(cluster_info) -> iterable of HealthLine`` (consumer groups behind or without consumers, say)."""
    out: list[HealthLine] = []
    for path in getattr(settings, "GANTRY_HEALTH_SOURCES", ()):
        try:
            out.extend(import_string(path)(info))
        except (RemotingError, ServiceError) as exc:
            out.append(HealthLine(path, UNKNOWN, _("unavailable: %(error)s") % {"error": exc}))
    return tuple(out)


def _extra_alerts(info: ClusterInfo) -> list[Alert]:
    """Alerts of other apps: each dotted path in settings.GANTRY_ALERT_SOURCES names a callable
    ``(cluster_info) -> iterable of Alert`` (consumer groups with unowned queues, say)."""
    out: list[Alert] = []
    for path in getattr(settings, "GANTRY_ALERT_SOURCES", ()):
        try:
            out.extend(import_string(path)(info))
        except (RemotingError, ServiceError) as exc:
            out.append(Alert("warning", "alert_source_failed", path, f"alerts of {path} unavailable: {exc}"))
    return out
