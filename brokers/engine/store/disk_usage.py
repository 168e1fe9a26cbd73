"""Disk usage of the filesystem holding a store directory, behind one small function.

The clean service asks ``DiskUsageFn(path)`` how full the commit log's (and the consume queues')
filesystem is; production uses :func:`os_disk_usage` (``statvfs``), tests pass a function that
pretends any figure. The ratio is RocketMQ's ``UtilAll.getDiskPartitionSpaceUsedPercent``:
``(total - free) / total`` with the blocks free to root, as a fraction 0..1.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DiskUsage:
    """One filesystem's size in bytes: ``total``, ``used`` and ``free`` (what unprivileged writers get)."""

    total: int
    used: int
    free: int

    @property
    def ratio(self) -> float:
        """Used fraction of the filesystem, 0..1 (-1.0 when its size is unknown)."""
        return self.used / self.total if self.total > 0 else -1.0


DiskUsageFn = Callable[[str], DiskUsage]
UNKNOWN_USAGE = DiskUsage(0, 0, 0)


def os_disk_usage(path: str) -> DiskUsage:
    """The filesystem holding ``path`` (UNKNOWN_USAGE when it cannot be read)."""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return UNKNOWN_USAGE
    return DiskUsage(usage.total, usage.used, usage.free)


def human_readable_byte_count(count: int) -> str:
    """Bytes as RocketMQ's ``MixAll.humanReadableByteCount(bytes, false)`` prints them.

    >>> human_readable_byte_count(270582939648)
    '252.0 GiB'
    >>> human_readable_byte_count(512)
    '512 B'
    """
    if count < 1024:
        return f"{count} B"
    exp = 0
    value = float(count)
    while value >= 1024 and exp < 6:
        value /= 1024
        exp += 1
    return f"{value:.1f} {'KMGTPE'[exp - 1]}iB"


def capacity_text(usage: DiskUsage) -> str:
    """RocketMQ's ``commitLogDirCapacity``: ``"Total : 252.0 GiB, Free : 59.0 GiB."``."""
    return f"Total : {human_readable_byte_count(usage.total)}, Free : {human_readable_byte_count(usage.free)}."


def disk_util_text(commitlog: DiskUsage, consume_queue: DiskUsage, index: DiskUsage) -> str:
    """SendMessageProcessor's ``diskUtil()``: ``"CL:  0.95 CQ:  0.95 INDEX:  0.95"``."""
    return f"CL: {commitlog.ratio:5.2f} CQ: {consume_queue.ratio:5.2f} INDEX: {index.ratio:5.2f}"
