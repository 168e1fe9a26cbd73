"""A broker store's disk and retention state, read from its runtime info (GET_BROKER_RUNTIME_INFO).

The keys and their forms are RocketMQ's (values are strings):

- ``diskTotalBytes``, ``diskUsedBytes``: the commit log's filesystem, in bytes; an older broker
  reports only ``commitLogDirCapacity`` ("Total : 252 GiB, Free : 59 GiB.") and
  ``commitLogDiskRatio`` (a fraction, "0.43"), from which the figures are worked out;
- ``fileReservedTime`` (hours), ``deleteWhen`` ("04", "03;04"), ``diskMaxUsedSpaceRatio``,
  ``diskSpaceCleanForciblyRatio``, ``diskSpaceWarningLevelRatio`` (fractions 0..1): retention;
- ``earliestMessageTimeStamp`` (ms; 0 when the store holds no message);
- ``diskFull`` ("true": usage at or above the warning ratio, the broker refuses sends),
  ``storeWritable`` ("true" or "false: <reason>", the I/O-error latch);
- ``lastCleanTimeStamp`` (ms, 0 = never), ``cleanedFilesTotal`` (commit log files deleted since start).

A key the broker does not report reads as None (the page prints "—"). The state a row is in, from
worst to best: refusing sends (``diskFull`` or not writable), forcible cleaning (usage at or above
diskSpaceCleanForciblyRatio: the oldest files go even if not expired), cleaning (at or above
diskMaxUsedSpaceRatio: expired files go at any hour, not only at deleteWhen), high (a broker that
reports no retention settings, at or above FALLBACK_WARN_RATIO: nothing is cleaned), ok.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

# Without the broker's own ratios (a broker from before retention) the overview warns here, as it always has.
FALLBACK_WARN_RATIO = 0.85

OK, HIGH, CLEANING, CLEANING_FORCIBLY, REFUSING_SENDS = "ok", "high", "cleaning", "cleaning forcibly", "refusing sends"
STATES = (OK, HIGH, CLEANING, CLEANING_FORCIBLY, REFUSING_SENDS)

_CAPACITY_RE = re.compile(r"Total\s*:\s*([0-9.]+)\s*GiB\s*,\s*Free\s*:\s*([0-9.]+)\s*GiB", re.I)
_GIB = 1 << 30
_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


@dataclass(frozen=True)
class RetentionSettings:
    """The broker's retention settings under RocketMQ's names (None: not reported)."""

    file_reserved_time_hours: float | None = None
    delete_when: str | None = None
    disk_max_used_space_ratio: float | None = None
    disk_space_clean_forcibly_ratio: float | None = None
    disk_space_warning_level_ratio: float | None = None

    @property
    def reported(self) -> bool:
        return any(
            v is not None
            for v in (
                self.file_reserved_time_hours,
                self.delete_when,
                self.disk_max_used_space_ratio,
                self.disk_space_clean_forcibly_ratio,
                self.disk_space_warning_level_ratio,
            )
        )


@dataclass(frozen=True)
class StoreDisk:
    """What a broker says of its store's disk: usage, retention, oldest message, refusals."""

    total_bytes: int | None = None
    used_bytes: int | None = None
    ratio: float | None = None  # used / total, 0..1
    capacity: str = ""  # commitLogDirCapacity as the broker prints it
    retention: RetentionSettings = RetentionSettings()
    earliest_message_timestamp: int | None = None  # ms; None: no message stored, or not reported
    disk_full: bool | None = None  # None: not reported (a broker without retention)
    store_writable: bool | None = None  # None: not reported
    not_writable_reason: str = ""
    last_clean_timestamp: int | None = None  # ms; None: never cleaned, or not reported
    cleaned_files_total: int | None = None

    @property
    def refusing_sends(self) -> bool:
        return bool(self.disk_full) or self.store_writable is False

    @property
    def state(self) -> str:
        """ok, high, cleaning, cleaning forcibly or refusing sends (see the module's docstring)."""
        if self.refusing_sends:
            return REFUSING_SENDS
        if self.ratio is None:
            return OK
        forcibly = self.retention.disk_space_clean_forcibly_ratio
        if forcibly is not None and self.ratio >= forcibly:
            return CLEANING_FORCIBLY
        if self.ratio >= self.warn_ratio:
            return HIGH if self.retention.disk_max_used_space_ratio is None else CLEANING
        return OK

    @property
    def warn_ratio(self) -> float:
        """The usage at which the overview warns: the broker's diskMaxUsedSpaceRatio, else FALLBACK_WARN_RATIO."""
        configured = self.retention.disk_max_used_space_ratio
        return FALLBACK_WARN_RATIO if configured is None else configured

    @property
    def not_writable_text(self) -> str:
        """ "refusing sends: store not writable (<reason>)" when the I/O-error latch is set, else ""."""
        if self.store_writable is not False:
            return ""
        return f"refusing sends: store not writable ({self.not_writable_reason or 'no reason given'})"

    @property
    def used_text(self) -> str:
        """ "44.0 GiB / 252.0 GiB", or "" when the broker reports no size."""
        if self.total_bytes is None or self.used_bytes is None:
            return ""
        return f"{format_bytes(self.used_bytes)} / {format_bytes(self.total_bytes)}"

    @property
    def ratio_text(self) -> str:
        return format_ratio(self.ratio)

    @property
    def earliest_message(self) -> datetime | None:
        return ms_to_datetime(self.earliest_message_timestamp)

    @property
    def last_clean(self) -> datetime | None:
        return ms_to_datetime(self.last_clean_timestamp)

    def problem(self) -> tuple[str, str] | None:
        """(level, what is wrong with the disk) for the overview's alert, or None when the disk is fine.
        A store that is not writable is :attr:`not_writable_text`'s alert, not this one."""
        r = self.retention
        if self.disk_full:
            limit = (
                f", diskSpaceWarningLevelRatio {format_ratio(r.disk_space_warning_level_ratio)}"
                if r.disk_space_warning_level_ratio is not None
                else ""
            )
            return "error", f"refusing sends: disk full ({self.ratio_text or 'usage not reported'} used{limit})"
        refuse_at = (
            f"; sends are refused at {format_ratio(r.disk_space_warning_level_ratio)}"
            if r.disk_space_warning_level_ratio is not None
            else ""
        )
        if self.state == CLEANING_FORCIBLY:
            return "warning", (
                f"disk {self.ratio_text} used, at or above diskSpaceCleanForciblyRatio "
                f"{format_ratio(r.disk_space_clean_forcibly_ratio)}: the oldest files are deleted even if not expired{refuse_at}"
            )
        if self.state == HIGH:
            return "warning", f"commit log disk is {self.ratio_text} used"
        if self.state == CLEANING:
            return "warning", (
                f"disk {self.ratio_text} used, at or above diskMaxUsedSpaceRatio {format_ratio(r.disk_max_used_space_ratio)}: "
                f"expired files are deleted at any hour{refuse_at}"
            )
        return None


def store_disk(rt: dict[str, str]) -> StoreDisk:
    """Read a runtime-info table (see the module's docstring for the keys)."""
    total, used = _int(rt.get("diskTotalBytes")), _int(rt.get("diskUsedBytes"))
    ratio = used / total if total and used is not None else _fraction(rt.get("commitLogDiskRatio"))
    capacity = rt.get("commitLogDirCapacity", "")
    if total is None and ratio is not None:  # an older broker: total from the capacity line, used from the ratio
        match = _CAPACITY_RE.search(capacity)
        if match and float(match.group(1)) > 0:
            total = int(float(match.group(1)) * _GIB)
            used = int(total * ratio)
    writable, reason = _flag(rt.get("storeWritable"))
    earliest = _int(rt.get("earliestMessageTimeStamp"))
    last_clean = _int(rt.get("lastCleanTimeStamp"))
    return StoreDisk(
        total_bytes=total,
        used_bytes=used if total is not None else None,
        ratio=ratio,
        capacity=capacity,
        retention=retention_settings(rt),
        earliest_message_timestamp=earliest if earliest and earliest > 0 else None,
        disk_full=_flag(rt.get("diskFull"))[0],
        store_writable=writable,
        not_writable_reason=reason,
        last_clean_timestamp=last_clean if last_clean and last_clean > 0 else None,
        cleaned_files_total=_int(rt.get("cleanedFilesTotal")),
    )


def retention_settings(rt: dict[str, str]) -> RetentionSettings:
    delete_when = (rt.get("deleteWhen") or "").strip()
    return RetentionSettings(
        file_reserved_time_hours=_number(rt.get("fileReservedTime")),
        delete_when=delete_when or None,
        disk_max_used_space_ratio=_fraction(rt.get("diskMaxUsedSpaceRatio")),
        disk_space_clean_forcibly_ratio=_fraction(rt.get("diskSpaceCleanForciblyRatio")),
        disk_space_warning_level_ratio=_fraction(rt.get("diskSpaceWarningLevelRatio")),
    )


def format_bytes(n: int) -> str:
    """Powers of 1024: 512 B, 1.5 KiB, 44.0 GiB."""
    value = float(n)
    for unit in _BYTE_UNITS:
        if abs(value) < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_ratio(ratio: float | None) -> str:
    """0.875 -> "87.5 %"; None -> ""."""
    return "" if ratio is None else f"{ratio * 100:.1f} %"


def ms_to_datetime(ms: int | None) -> datetime | None:
    return None if not ms else datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def _int(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _number(value: str | None) -> float | None:
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None


def _fraction(value: str | None) -> float | None:
    """A 0..1 ratio; RocketMQ's broker.conf percentages ("75") are read as fractions too; -1 and junk are None."""
    number = _number(value)
    if number is None or number < 0:
        return None
    return number / 100 if number > 1 else number


def _flag(value: str | None) -> tuple[bool | None, str]:
    """ "true" -> (True, ""); "false: EIO on fsync" -> (False, "EIO on fsync"); absent -> (None, "")."""
    if value is None or not value.strip():
        return None, ""
    head, _, reason = value.strip().partition(":")
    return head.strip().lower() == "true", reason.strip()
