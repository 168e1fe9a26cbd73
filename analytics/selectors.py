"""Analytics reads: the dashboards' JSON envelopes (docs/analytics.md section 4), the state, runs.

Everything here reads the result tables the runner wrote; nothing starts Spark or asks the
cluster. The envelopes are JSON-ready dicts (ISO 8601 UTC times ending in ``Z``, plain numbers),
the same for the API and the pages. ``range`` is anchored at now: ``hour`` is the last 60
minutes, ``day`` the last 24 hours, ``week`` the last 7 days, each from the start of the window
holding ``now - range``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

from django.utils import timezone as dj_timezone

from analytics.models import BacklogPoint, BacklogTrend, DashboardState, Ranking, RefreshRun, ThroughputPoint
from analytics.runs import RefreshRunInfo, run_info
from brokers.engine.common.topic_validator import is_system_topic
from console import namesrv_scope
from console.errors import InvalidInput, NotFound

RANGES = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(days=7)}
DEFAULT_RESOLUTION = {"hour": "1m", "day": "1h", "week": "1h"}
RESOLUTION_SECONDS = {"1m": 60, "1h": 3600}
THROUGHPUT_BY = ("topic", "broker", "queue")
BACKLOG_BY = ("group", "queue")


# -- JSON pieces ------------------------------------------------------------------------------------


def iso(value: datetime | None) -> str | None:
    """``2026-11-22T14:03:00Z`` (milliseconds when there are any); None stays None."""
    if value is None:
        return None
    value = value.astimezone(timezone.utc)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _num(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(float(value), digits)


def run_json(run: RefreshRunInfo) -> dict[str, Any]:
    """A refresh run as the API and the pages show it."""
    return {
        "id": run.id,
        "status": run.status,
        "progress": run.progress,
        "trigger": run.trigger,
        "requested_by": run.requested_by,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "heartbeat_at": iso(run.heartbeat_at),
        "error": run.error,
        "rows_read": run.rows_read,
        "window_from": iso(run.window_from),
        "window_to": iso(run.window_to),
    }


# -- state and runs ---------------------------------------------------------------------------------


def dashboard_state(*, now: datetime | None = None) -> dict[str, Any]:
    """How current the dashboards are: ``{"last_refresh_at", "data_until", "stale_since", "run"}``.

    ``run`` is the latest run (null before the first). A run that lost its worker reads as
    failed, and the dashboards as stale from its start, before anything recorded it.
    """
    now = now or dj_timezone.now()
    tier = namesrv_scope.current_name()  # every read below is the current set's (docs/clusters.md)
    state = DashboardState.objects.select_related("last_good_run").filter(namesrv_set=tier).first()
    latest = RefreshRun.objects.filter(namesrv_set=tier).order_by("-id").first()
    run = run_info(latest, now=now) if latest is not None else None
    stale_since = state.stale_since if state is not None else None
    if (
        stale_since is None
        and run is not None
        and run.status == RefreshRun.Status.FAILED
        and latest.status != run.status
    ):
        stale_since = run.started_at  # lost, not yet recorded
    last_good = state.last_good_run if state is not None else None
    return {
        "last_refresh_at": iso(last_good.finished_at) if last_good is not None else None,
        "data_until": iso(state.data_until) if state is not None else None,
        "stale_since": iso(stale_since),
        "run": run_json(run) if run is not None else None,
    }


def refresh_run(*, run_id: int) -> dict[str, Any]:
    """One refresh run as JSON; NotFound when there is no such run."""
    run = RefreshRun.objects.filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"refresh run {run_id} not found")
    return run_json(run_info(run))


# -- the envelopes ----------------------------------------------------------------------------------


def _choice(field: str, value: Any, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise InvalidInput(field, f"{value!r} is not one of {', '.join(choices)}.")
    return value


def _span(range_: Any, resolution: Any, now: datetime) -> tuple[str, datetime, datetime]:
    range_ = _choice("range", range_, RANGES)
    resolution = _choice("resolution", resolution or DEFAULT_RESOLUTION[range_], RESOLUTION_SECONDS)
    seconds = RESOLUTION_SECONDS[resolution]
    start = now - RANGES[range_]
    epoch = int(start.timestamp())
    return resolution, datetime.fromtimestamp(epoch - epoch % seconds, tz=timezone.utc), now


def _filter(field: str, value: str | None, *, by: str, allowed_by: tuple[str, ...]) -> str | None:
    if value in (None, ""):
        return None
    if by not in allowed_by:
        raise InvalidInput(field, f"filters by={' or by='.join(allowed_by)}, not by={by}.")
    return value


def coverage() -> dict[str, Any]:
    """Which tier the dashboards' figures are of: the current set's, always (every set is sampled into its
    own lake, analytics.tasks). ``{"namesrv_set": str, "covers_current_set": True, "note": ""}``, kept so
    API clients that read it go on working; the pages' note (analytics/_coverage.html) no longer shows.
    """
    return {"namesrv_set": namesrv_scope.current_name(), "covers_current_set": True, "note": ""}


def _envelope(range_: str, resolution: str, by: str, start: datetime, end: datetime, now: datetime) -> dict[str, Any]:
    return {
        "range": range_,
        "resolution": resolution,
        "by": by,
        "from": iso(start),
        "to": iso(end),
        "state": dashboard_state(now=now),
        "coverage": coverage(),
        "series": [],
    }


def _series(rows: Iterable[dict], key_fields: tuple[str, ...], label, point) -> list[dict]:
    series: dict[tuple, dict] = {}
    for row in rows:
        key = tuple(row[f] for f in key_fields)
        entry = series.get(key)
        if entry is None:
            key_json = {f: row[f] for f in key_fields}
            entry = series[key] = {"key": key_json, "label": label(key_json), "points": []}
        entry["points"].append(point(row))
    # Nulls last, whatever the database's NULL ordering (a field holds one type or null).
    return sorted(series.values(), key=lambda s: tuple((v is None, "" if v is None else v) for v in s["key"].values()))


def _ranking(kind: str, hidden: frozenset[str] = frozenset()) -> list[dict]:
    """The ranking rows with a value, internal topics left out (ranks renumbered)."""
    rows = [
        r
        for r in Ranking.objects.filter(namesrv_set=namesrv_scope.current_name(), kind=kind).order_by("rank")
        if r.value and r.name not in hidden
    ]
    return [{"rank": i, "name": r.name, "value": _num(r.value)} for i, r in enumerate(rows, 1)]


REPLY_TOPIC_SUFFIX = "_REPLY_TOPIC"  # RocketMQ makes topics <cluster> and <cluster>_REPLY_TOPIC


def internal_topics(topics: Iterable[str], brokers: Iterable[str]) -> frozenset[str]:
    """The broker's own topics among ``topics``: system topics, the topics named after a broker
    (RocketMQ's broker-name topic) and a cluster's pair ``<cluster>``/``<cluster>_REPLY_TOPIC``."""
    names = set(topics)
    hidden = {t for t in names if is_system_topic(t) or t in set(brokers)}
    for name in names:
        if name.endswith(REPLY_TOPIC_SUFFIX) and name[: -len(REPLY_TOPIC_SUFFIX)] in names:
            hidden |= {name, name[: -len(REPLY_TOPIC_SUFFIX)]}
    return frozenset(hidden)


def _quiet_internal(series: list[dict], hidden: frozenset[str], value_field: str) -> list[dict]:
    """Leave out the series of internal topics that carried nothing in the range (they would crowd
    the chart with flat lines); an internal topic with traffic (delayed messages, say) stays."""
    return [s for s in series if s["key"].get("topic") not in hidden or any(p[value_field] for p in s["points"])]


def _hidden_topics() -> frozenset[str]:
    topics = (
        ThroughputPoint.objects.filter(namesrv_set=namesrv_scope.current_name(), level="topic")
        .values_list("topic", flat=True)
        .distinct()
    )
    brokers = (
        ThroughputPoint.objects.filter(namesrv_set=namesrv_scope.current_name(), level="broker")
        .values_list("broker", flat=True)
        .distinct()
    )
    return internal_topics(topics, brokers)


def _throughput_label(key: dict) -> str:
    parts = [p for p in (key["topic"], key["broker"]) if p is not None]
    if key["queue_id"] is not None:
        parts.append(str(key["queue_id"]))
    return "/".join(parts)


def throughput_view(
    *,
    range: str,
    by: str,
    topic: str | None = None,
    broker: str | None = None,
    resolution: str | None = None,
    now: datetime | None = None,
    system: bool = False,
) -> dict[str, Any]:
    """Throughput series for ``range`` (hour, day, week) at level ``by`` (topic, broker, queue).

    ``topic`` filters by=topic and by=queue, ``broker`` by=broker and by=queue; ``resolution``
    (1m, 1h) overrides the range's default. The broker's own topics (RMQ_SYS_TRACE_TOPIC, SCHEDULE_TOPIC_XXXX,
    ...) are left out unless ``system`` (then those that carried something are shown); a topic asked for by
    name is shown whatever it is. ``top``: the busiest user topics of the last hour at the last refresh.
    """
    now = now or dj_timezone.now()
    by = _choice("by", by, THROUGHPUT_BY)
    resolution, start, end = _span(range, resolution, now)
    topic = _filter("topic", topic, by=by, allowed_by=("topic", "queue"))
    broker = _filter("broker", broker, by=by, allowed_by=("broker", "queue"))
    rows = ThroughputPoint.objects.filter(
        namesrv_set=namesrv_scope.current_name(),
        resolution=resolution,
        level=by,
        window_start__gte=start,
        window_start__lte=end,
    )
    if topic is not None:
        rows = rows.filter(topic=topic)
    if broker is not None:
        rows = rows.filter(broker=broker)
    rows = rows.order_by("topic", "broker", "queue_id", "window_start").values(
        "topic", "broker", "queue_id", "window_start", "msgs_per_s", "bytes_per_s"
    )
    envelope = _envelope(range, resolution, by, start, end, now)
    envelope["series"] = _series(
        rows,
        ("topic", "broker", "queue_id"),
        _throughput_label,
        lambda r: {
            "t": iso(r["window_start"]),
            "msgs_per_s": _num(r["msgs_per_s"]),
            "bytes_per_s": _num(r["bytes_per_s"], 1),
        },
    )
    hidden = _hidden_topics()
    if topic is None and system:  # a topic asked for by name is shown whatever it is
        envelope["series"] = _quiet_internal(envelope["series"], hidden, "msgs_per_s")
    elif (
        topic is None
    ):  # the trace topic's traffic would dwarf the user topics' (every message traced is written twice)
        envelope["series"] = [s for s in envelope["series"] if s["key"].get("topic") not in hidden]
    envelope["top"] = _ranking(Ranking.Kind.TOPICS, hidden)
    return envelope


def _backlog_label(key: dict) -> str:
    parts = [key["group"], key["topic"]] + (
        [key["broker"], str(key["queue_id"])] if key["queue_id"] is not None else []
    )
    return "/".join(p for p in parts if p is not None)


def backlog_view(
    *,
    range: str,
    by: str,
    group: str | None = None,
    topic: str | None = None,
    resolution: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Backlog series for ``range`` at level ``by`` (group, queue), optionally one group or topic.

    ``trends``: each (group, topic)'s trend at the last refresh (filtered alike); ``top``: the
    groups with the largest backlog then.
    """
    now = now or dj_timezone.now()
    by = _choice("by", by, BACKLOG_BY)
    resolution, start, end = _span(range, resolution, now)
    group = _filter("group", group, by=by, allowed_by=BACKLOG_BY)
    topic = _filter("topic", topic, by=by, allowed_by=BACKLOG_BY)
    rows = BacklogPoint.objects.filter(
        namesrv_set=namesrv_scope.current_name(),
        resolution=resolution,
        level=by,
        window_start__gte=start,
        window_start__lte=end,
    )
    trends = BacklogTrend.objects.filter(namesrv_set=namesrv_scope.current_name())
    if group is not None:
        rows, trends = rows.filter(group=group), trends.filter(group=group)
    if topic is not None:
        rows, trends = rows.filter(topic=topic), trends.filter(topic=topic)
    rows = rows.order_by("group", "topic", "broker", "queue_id", "window_start").values(
        "group", "topic", "broker", "queue_id", "window_start", "backlog", "consume_rate", "produce_rate"
    )
    envelope = _envelope(range, resolution, by, start, end, now)
    envelope["series"] = _series(
        rows,
        ("group", "topic", "broker", "queue_id"),
        _backlog_label,
        lambda r: {
            "t": iso(r["window_start"]),
            "backlog": r["backlog"],
            "consume_rate": _num(r["consume_rate"]),
            "produce_rate": _num(r["produce_rate"]),
        },
    )
    envelope["trends"] = [
        {
            "group": t.group,
            "topic": t.topic,
            "backlog": t.backlog,
            "trend": t.trend,
            "slope_per_s": _num(t.slope_per_s, 4),
            "consume_rate": _num(t.consume_rate),
            "produce_rate": _num(t.produce_rate),
            "time_to_drain_s": _num(t.time_to_drain_s, 1),
        }
        for t in trends.order_by("group", "topic")
    ]
    envelope["top"] = _ranking(Ranking.Kind.GROUPS)
    return envelope
