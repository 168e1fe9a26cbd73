"""A broker store's disk and retention state read from runtime-info tables with the contract's key
strings (GET_BROKER_RUNTIME_INFO; values are strings), and the overview's alerts from it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from brokers.gateway.store_disk import (
    CLEANING,
    CLEANING_FORCIBLY,
    HIGH,
    OK,
    REFUSING_SENDS,
    RetentionSettings,
    format_bytes,
    format_ratio,
    store_disk,
)
from tests.brokers.gateway._runtime_tables import GIB, table


def test_every_contract_key_is_read() -> None:
    disk = store_disk(table(43, lastCleanTimeStamp="1714525200000"))
    assert (disk.total_bytes, disk.used_bytes) == (100 * GIB, 43 * GIB)
    assert (
        disk.ratio == pytest.approx(0.43) and disk.ratio_text == "43.0 %" and disk.used_text == "43.0 GiB / 100.0 GiB"
    )
    assert disk.retention == RetentionSettings(72.0, "04", 0.75, 0.85, 0.9)
    assert disk.earliest_message == datetime(2024, 5, 1, tzinfo=timezone.utc)
    assert disk.last_clean == datetime(2024, 5, 1, 1, tzinfo=timezone.utc) and disk.cleaned_files_total == 3
    assert disk.disk_full is False and disk.store_writable is True and not disk.refusing_sends
    assert disk.state == OK and disk.problem() is None and disk.not_writable_text == ""


def test_a_broker_without_the_new_keys_reads_as_not_reported() -> None:
    """A broker from before retention: sizes from commitLogDirCapacity and commitLogDiskRatio, the rest None ("—")."""
    disk = store_disk(
        {
            "commitLogDiskRatio": "0.25",
            "commitLogDirCapacity": "Total : 252.00 GiB, Free : 59.00 GiB.",
            "earliestMessageTimeStamp": "0",
            "storeHealthy": "true",
        }
    )
    assert disk.total_bytes == 252 * GIB and disk.used_bytes == 63 * GIB and disk.ratio == 0.25
    assert disk.retention == RetentionSettings() and not disk.retention.reported
    assert disk.earliest_message is None and disk.last_clean is None and disk.cleaned_files_total is None
    assert disk.disk_full is None and disk.store_writable is None and disk.state == OK
    assert store_disk({}) == store_disk({"commitLogDiskRatio": "-1"})  # nothing known
    assert store_disk({}).used_text == "" and store_disk({}).ratio_text == ""


@pytest.mark.parametrize(
    ("used_gib", "state", "level", "words"),
    [
        (74, OK, None, None),
        (
            75,
            CLEANING,
            "warning",
            "at or above diskMaxUsedSpaceRatio 75.0 %: expired files are deleted at any hour; sends are refused at 90.0 %",
        ),
        (
            86,
            CLEANING_FORCIBLY,
            "warning",
            "at or above diskSpaceCleanForciblyRatio 85.0 %: the oldest files are deleted even if not expired",
        ),
    ],
)
def test_the_alert_comes_before_the_warning_ratio(used_gib, state, level, words) -> None:
    disk = store_disk(table(used_gib))
    assert disk.state == state and not disk.refusing_sends
    if level is None:
        assert disk.problem() is None
    else:
        assert disk.problem()[0] == level and words in disk.problem()[1]


def test_disk_full_is_refusing_sends() -> None:
    disk = store_disk(table(91, diskFull="true"))
    assert disk.state == REFUSING_SENDS and disk.refusing_sends
    assert disk.problem() == ("error", "refusing sends: disk full (91.0 % used, diskSpaceWarningLevelRatio 90.0 %)")


def test_a_store_not_writable_is_refusing_sends_with_its_reason() -> None:
    disk = store_disk(table(10, storeWritable="false: fdatasync failed: [Errno 5] EIO"))
    assert disk.store_writable is False and disk.not_writable_reason == "fdatasync failed: [Errno 5] EIO"
    assert disk.state == REFUSING_SENDS and disk.problem() is None
    assert disk.not_writable_text == "refusing sends: store not writable (fdatasync failed: [Errno 5] EIO)"


def test_broker_conf_percentages_and_odd_values() -> None:
    """RocketMQ's broker.conf keeps ratios as percentages ("75"): read as fractions; junk reads as not reported."""
    disk = store_disk(
        {
            "diskMaxUsedSpaceRatio": "75",
            "diskSpaceCleanForciblyRatio": "85",
            "diskSpaceWarningLevelRatio": "x",
            "deleteWhen": "03;04",
            "fileReservedTime": "48",
            "diskTotalBytes": "0",
            "diskUsedBytes": "0",
        }
    )
    assert disk.retention == RetentionSettings(48.0, "03;04", 0.75, 0.85, None)
    assert disk.ratio is None and disk.state == OK


def test_without_the_brokers_ratios_the_old_threshold_warns() -> None:
    disk = store_disk({"commitLogDiskRatio": "0.86"})
    assert disk.state == HIGH and disk.problem() == ("warning", "commit log disk is 86.0 % used")
    assert store_disk({"commitLogDiskRatio": "0.84"}).problem() is None


def test_formats() -> None:
    assert [format_bytes(n) for n in (0, 512, 1536, 8 << 20, 252 * GIB, 3 << 50)] == [
        "0 B",
        "512 B",
        "1.5 KiB",
        "8.0 MiB",
        "252.0 GiB",
        "3.0 PiB",
    ]
    assert (format_ratio(0.875), format_ratio(None), format_ratio(1.0)) == ("87.5 %", "", "100.0 %")
