"""The broker's retention flags: one per StoreConfig retention setting, RocketMQ's name in the help.

``--file-reserved-time 72 --delete-when "03;04" --disk-max-used-space-ratio 0.75
--disk-space-clean-forcibly-ratio 0.85 --disk-space-warning-level-ratio 0.90
--clean-resource-interval 10000 --delete-files-batch-max 10``. Ratios are fractions 0..1 (RocketMQ's
broker.conf holds percentages: 75 there is 0.75 here). StoreConfig checks the values; a refusal
names the flag and the setting (``--delete-when: deleteWhen (delete_when) must be hours ...``).
"""

from __future__ import annotations

import argparse

from brokers.engine.store.config import StoreConfig

# StoreConfig field -> (flag, RocketMQ name, argparse type, metavar)
RETENTION_FLAGS: dict[str, tuple[str, str, type, str]] = {
    "file_reserved_time_hours": ("--file-reserved-time", "fileReservedTime", float, "HOURS"),
    "delete_when": ("--delete-when", "deleteWhen", str, "HH[;HH...]"),
    "disk_max_used_space_ratio": ("--disk-max-used-space-ratio", "diskMaxUsedSpaceRatio", float, "FRACTION"),
    "disk_space_clean_forcibly_ratio": (
        "--disk-space-clean-forcibly-ratio",
        "diskSpaceCleanForciblyRatio",
        float,
        "FRACTION",
    ),
    "disk_space_warning_level_ratio": (
        "--disk-space-warning-level-ratio",
        "diskSpaceWarningLevelRatio",
        float,
        "FRACTION",
    ),
    "clean_resource_interval_ms": ("--clean-resource-interval", "cleanResourceInterval", int, "MS"),
    "delete_files_batch_max": ("--delete-files-batch-max", "deleteFileBatchMax", int, "N"),
}

_HELP = {
    "file_reserved_time_hours": "a commit log segment last written this many hours ago is expired",
    "delete_when": "hour(s) of the local day when expired segments are deleted, ';'-separated",
    "disk_max_used_space_ratio": "above this used fraction of the disk, expired segments go at any hour",
    "disk_space_clean_forcibly_ratio": "above this, the oldest segments go even if not expired",
    "disk_space_warning_level_ratio": "above this, sends are refused (disk full) until usage drops",
    "clean_resource_interval_ms": "milliseconds between clean passes",
    "delete_files_batch_max": "commit log segments deleted per pass, at most",
}


def add_retention_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the retention flags (defaults: StoreConfig's, i.e. RocketMQ's)."""
    group = parser.add_argument_group("retention (RocketMQ's names in brackets)")
    defaults = StoreConfig(store_dir=".")
    for name, (flag, java, kind, metavar) in RETENTION_FLAGS.items():
        group.add_argument(
            flag,
            dest=f"retention_{name}",
            type=kind,
            default=None,
            metavar=metavar,
            help=f"{_HELP[name]} [{java}] (default {getattr(defaults, name)})",
        )


def retention_kwargs(args: argparse.Namespace) -> dict[str, object]:
    """The StoreConfig keyword arguments the retention flags gave."""
    return {name: value for name in RETENTION_FLAGS if (value := getattr(args, f"retention_{name}", None)) is not None}


def flag_of_error(exc: ValueError) -> str | None:
    """The retention flag a StoreConfig refusal names (its message holds ``(field)``), or None."""
    text = str(exc)
    for name, (flag, _java, _kind, _metavar) in RETENTION_FLAGS.items():
        if f"({name})" in text:
            return flag
    return None
