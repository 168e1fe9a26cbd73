"""Runtime-info tables (GET_BROKER_RUNTIME_INFO) with the contract's key strings, for the console's store tests."""

from __future__ import annotations

GIB = 1 << 30
RETENTION = {  # the keys h14-retention adds, RocketMQ's defaults
    "fileReservedTime": "72",
    "deleteWhen": "04",
    "diskMaxUsedSpaceRatio": "0.75",
    "diskSpaceCleanForciblyRatio": "0.85",
    "diskSpaceWarningLevelRatio": "0.9",
}


def table(used_gib: float, total_gib: int = 100, **extra: str) -> dict[str, str]:
    used = int(used_gib * GIB)
    return {
        "diskTotalBytes": str(total_gib * GIB),
        "diskUsedBytes": str(used),
        "commitLogDiskRatio": repr(used / (total_gib * GIB)),
        "commitLogDirCapacity": f"Total : {total_gib} GiB, Free : {total_gib - used_gib:g} GiB.",
        "diskFull": "false",
        "storeWritable": "true",
        "storeHealthy": "true",
        "earliestMessageTimeStamp": "1714521600000",
        "lastCleanTimeStamp": "0",
        "cleanedFilesTotal": "3",
        **RETENTION,
        **extra,
    }
