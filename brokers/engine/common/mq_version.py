"""RocketMQ's MQVersion ordinals as names: the ``version`` a client reports in its heartbeat and
connection rows (409 -> ``V4_9_8``; 437 -> ``V5_1_2``, what a 5.x client on the gRPC endpoint reports), as MQVersion.getVersionDesc prints it.

Shared by the mqadmin CLI's printouts and the console's group pages.
"""

from __future__ import annotations

__all__ = ["version_desc"]

_V4_0_0_SNAPSHOT = 212  # MQVersion.Version ordinal of V4_0_0_SNAPSHOT; 4.x has 20 slots per minor
_V5_0_0_SNAPSHOT = _V4_0_0_SNAPSHOT + 200
_OLD_VERSIONS = {121: "V3_4_9"}  # the version a non-Java 4.x client reports


def version_desc(version: int) -> str:
    """Render a MQVersion ordinal like MQVersion.getVersionDesc: 409 -> ``V4_9_8``."""
    for major, first in ((4, _V4_0_0_SNAPSHOT), (5, _V5_0_0_SNAPSHOT)):
        if first <= version < first + 200:
            minor, rest = divmod(version - first, 20)
            patch, release = divmod(rest, 2)
            return f"V{major}_{minor}_{patch}" + ("" if release else "_SNAPSHOT")
    return _OLD_VERSIONS.get(version, str(version))
