"""A broker's runtime status as rocketmq-dashboard's ``brokerStatus`` shows it: the figures an operator
reads first from GET_BROKER_RUNTIME_INFO's KVTable, parsed into typed fields.

Keys read (as Gantry's broker emits them, RocketMQ's names): ``putTps``, ``getTransferedTps`` (first
figure of each triple: the last 10 s), ``commitLogDiskRatio``, ``pageCacheLockTimeMills``,
``remainHowManyDataToFlush``, ``brokerVersionDesc``, ``bootTimestamp`` (uptime),
``msgPutTotalTodayNow`` / ``msgGetTotalTodayNow`` and their ``…TodayMorning`` (today's counts).

Thread pools: Gantry's broker has none (requests run on its asyncio event loop) and answers
``sendThreadPoolQueueSize`` / ``pullThreadPoolQueueSize`` with fixed zeros for the Java tools' sake;
those zeros are not figures, so :class:`RuntimeStatus` does not carry them and the page says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.gateway.cluster import runtime_infos

NO_THREAD_POOL = "no thread pool: requests run on the event loop"


@dataclass(frozen=True)
class RuntimeStatus:
    put_tps: float | None  # messages stored per second, last 10 s
    get_tps: float | None  # messages transferred to consumers per second, last 10 s
    commit_log_disk_ratio: float | None  # used fraction of the commit log's disk, 0..1
    page_cache_lock_ms: int | None  # how long the current put has held the commit log lock
    remain_to_flush_bytes: int | None  # bytes written but not yet flushed to disk
    version: str
    boot_timestamp_ms: int | None
    uptime_s: int | None
    msg_put_total: int | None  # msgPutTotalTodayNow: messages put since the broker started
    msg_get_total: int | None  # msgGetTotalTodayNow
    msg_put_today: int | None  # since midnight (TodayNow - TodayMorning), as the dashboard shows
    msg_get_today: int | None

    @property
    def uptime(self) -> str:
        """Uptime as HH:MM:SS (hours past 24 keep counting), "" when unknown."""
        if self.uptime_s is None:
            return ""
        s = self.uptime_s
        return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"

    @property
    def booted_at(self) -> datetime | None:
        if self.boot_timestamp_ms is None:
            return None
        return datetime.fromtimestamp(self.boot_timestamp_ms / 1000, tz=timezone.utc)

    @property
    def commit_log_disk_percent(self) -> float | None:
        return None if self.commit_log_disk_ratio is None else self.commit_log_disk_ratio * 100


@dataclass(frozen=True)
class MemberRuntime:
    """One member's runtime status, or why it is unavailable."""

    broker_id: int
    addr: str
    status: RuntimeStatus | None
    error: str = ""


def _int(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _float(value: str | None) -> float | None:
    try:
        return float(str(value).split()[0])
    except (TypeError, ValueError, IndexError):
        return None


def _since(now: int | None, morning: int | None) -> int | None:
    return None if now is None or morning is None else max(0, now - morning)


def runtime_status(table: Mapping[str, str], now_ms: int) -> RuntimeStatus:
    """Parse one KVTable; a key the broker left out is None (shown as "—")."""
    boot = _int(table.get("bootTimestamp"))
    put_now, get_now = _int(table.get("msgPutTotalTodayNow")), _int(table.get("msgGetTotalTodayNow"))
    return RuntimeStatus(
        put_tps=_float(table.get("putTps")),
        get_tps=_float(table.get("getTransferedTps")),
        commit_log_disk_ratio=_float(table.get("commitLogDiskRatio")),
        page_cache_lock_ms=_int(table.get("pageCacheLockTimeMills")),
        remain_to_flush_bytes=_int(table.get("remainHowManyDataToFlush")),
        version=table.get("brokerVersionDesc", ""),
        boot_timestamp_ms=boot or None,
        uptime_s=max(0, (now_ms - boot) // 1000) if boot else None,
        msg_put_total=put_now,
        msg_get_total=get_now,
        msg_put_today=_since(put_now, _int(table.get("msgPutTotalTodayMorning"))),
        msg_get_today=_since(get_now, _int(table.get("msgGetTotalTodayMorning"))),
    )


def member_runtimes(members: Iterable[tuple[int, str]], now_ms: int) -> tuple[MemberRuntime, ...]:
    """Each (broker id, address)'s runtime status, all queried at once; a member that does not answer
    gets the error instead (never raises for one broker)."""
    members = tuple(members)
    infos = runtime_infos([addr for _id, addr in members])
    out = []
    for broker_id, addr in members:
        info = infos.get(addr)
        if isinstance(info, dict):
            out.append(MemberRuntime(broker_id, addr, runtime_status(info, now_ms)))
        else:
            out.append(MemberRuntime(broker_id, addr, None, str(info) if info is not None else "no answer"))
    return tuple(out)
