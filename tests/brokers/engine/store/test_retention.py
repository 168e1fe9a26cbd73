"""Retention (store/retention.py and its clean services) with small segments, a manual clock and a
pretended disk: hours pass in milliseconds, any disk ratio is one lambda away."""

from __future__ import annotations

import math
import os

import pytest

from brokers.engine.common.clock import ManualClock
from brokers.engine.common.message_codec import decode_records
from brokers.engine.store import DefaultMessageStore, StoreConfig
from brokers.engine.store.delete_when import _local_ms, is_time_to_delete, parse_delete_when
from brokers.engine.store.disk_usage import DiskUsage, capacity_text, disk_util_text
from brokers.engine.store.results import GetMessageStatus, PutMessageStatus
from tests.brokers.engine.store._support import inner, make_config

HOUR_S = 3600
TOPIC = "TopicTest"


def pretend(ratio: float):
    """A disk-usage function that says the disk is ``ratio`` used (a 1000-byte disk)."""
    used = int(ratio * 1000)
    return lambda path: DiskUsage(1000, used, 1000 - used)


@pytest.fixture
def store_at(tmp_path):
    """Open a store whose clock starts at a local wall-clock time: ``store_at((y, m, d, h), **config)``."""
    opened: list[DefaultMessageStore] = []

    def factory(when=(2024, 3, 4, 10), ratio: float = 0.10, **overrides) -> tuple[DefaultMessageStore, ManualClock]:
        clock = ManualClock(_local_ms(*when))
        store = DefaultMessageStore(make_config(tmp_path / "store", **overrides), clock=clock)
        store.retention.disk_usage = pretend(ratio)
        store.open()
        opened.append(store)
        return store, clock

    yield factory
    for store in opened:
        if store.running:
            store.close()


def fill(
    store: DefaultMessageStore,
    clock: ManualClock,
    count: int,
    *,
    every_s: float = 60,
    queue_id: int = 0,
    body: bytes = b"x" * 200,
    key_prefix: str = "k",
) -> list[int]:
    """Put ``count`` messages ``every_s`` apart; return their queue offsets."""
    offsets = []
    for i in range(count):
        result = store.put_message_sync(inner(queue_id=queue_id, body=body, keys=f"{key_prefix}{i}"))
        assert result.ok, result
        offsets.append(result.queue_offset)
        clock.advance(every_s)
    return offsets


def segment_files(store: DefaultMessageStore) -> list[str]:
    return sorted(os.listdir(store.config.commitlog_dir))


def next_local(clock: ManualClock, hour: int) -> None:
    """Advance the clock to the next HH:30 local time."""
    clock.advance(60)
    while not is_time_to_delete((hour,), clock.now_ms()):
        clock.advance(600)
    clock.advance(30 * 60 - (clock.now_ms() // 1000 % 3600))


# --- the settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, java",
    [
        ("disk_max_used_space_ratio", "diskMaxUsedSpaceRatio"),
        ("disk_space_clean_forcibly_ratio", "diskSpaceCleanForciblyRatio"),
        ("disk_space_warning_level_ratio", "diskSpaceWarningLevelRatio"),
    ],
)
@pytest.mark.parametrize("value", [-0.01, 1.01, 75, math.nan, "0.5", True])
def test_a_ratio_outside_0_to_1_is_refused_naming_the_setting(tmp_path, name, java, value):
    with pytest.raises(ValueError) as exc:
        StoreConfig(store_dir=str(tmp_path), **{name: value})
    assert java in str(exc.value) and name in str(exc.value)


@pytest.mark.parametrize("text", ["", "4am", "24", "04;", ";", "4;x", "-1", "004", " "])
def test_a_malformed_delete_when_is_refused_naming_the_setting(tmp_path, text):
    with pytest.raises(ValueError, match=r"deleteWhen \(delete_when\)"):
        StoreConfig(store_dir=str(tmp_path), delete_when=text)


@pytest.mark.parametrize(
    "name, value",
    [
        ("file_reserved_time_hours", 0),
        ("file_reserved_time_hours", -1),
        ("clean_resource_interval_ms", 0),
        ("delete_files_batch_max", 0),
        ("delete_files_batch_max", 2.5),
    ],
)
def test_other_retention_settings_are_checked(tmp_path, name, value):
    with pytest.raises(ValueError, match=rf"\({name}\)"):
        StoreConfig(store_dir=str(tmp_path), **{name: value})


def test_defaults_are_rocketmqs_and_delete_when_parses_like_is_it_time_to_do():
    cfg = StoreConfig(store_dir="/x")
    assert (
        cfg.file_reserved_time_hours,
        cfg.delete_when,
        cfg.disk_max_used_space_ratio,
        cfg.disk_space_clean_forcibly_ratio,
        cfg.disk_space_warning_level_ratio,
        cfg.clean_resource_interval_ms,
        cfg.delete_files_batch_max,
    ) == (72, "04", 0.75, 0.85, 0.90, 10_000, 10)
    assert parse_delete_when("04") == (4,) and parse_delete_when("3;04;23") == (3, 4, 23)
    assert is_time_to_delete((3, 4), _local_ms(2024, 1, 2, 3, 59)) and not is_time_to_delete(
        (3, 4), _local_ms(2024, 1, 2, 5, 0)
    )


def test_disk_figures_are_printed_rocketmqs_way():
    usage = DiskUsage(252 << 30, 193 << 30, 59 << 30)
    assert capacity_text(usage) == "Total : 252.0 GiB, Free : 59.0 GiB."
    assert disk_util_text(usage, usage, usage) == "CL:  0.77 CQ:  0.77 INDEX:  0.77"


# --- when segments go -----------------------------------------------------------------------


def test_expired_segments_go_at_delete_when_and_not_before(store_at):
    store, clock = store_at((2024, 3, 4, 10), file_reserved_time_hours=72, delete_files_batch_max=100)
    fill(store, clock, 150)  # 150 minutes of traffic over several 4 KiB segments
    first = segment_files(store)
    assert len(first) >= 6
    clock.advance(73 * HOUR_S)  # expired, but it is not 4 am
    assert not is_time_to_delete((4,), clock.now_ms())
    report = store.retention.run_pass()
    assert report.commitlog.deleted == () and segment_files(store) == first
    next_local(clock, 4)  # now it is: every expired segment but the newest goes, oldest first
    report = store.retention.run_pass()
    assert len(report.commitlog.deleted) == len(first) - 1
    assert segment_files(store) == first[-1:]
    assert store.min_phy_offset == int(first[-1])
    info = store.runtime_info()
    assert info["cleanedFilesTotal"] == str(len(first) - 1) and info["lastCleanTimeStamp"] == str(clock.now_ms())
    assert info["commitLogMinOffset"] == str(int(first[-1]))


def test_at_delete_when_unexpired_segments_stay(store_at):
    store, clock = store_at((2024, 3, 4, 10), file_reserved_time_hours=72)
    fill(store, clock, 150)
    next_local(clock, 4)  # 4 am, but only ~18 hours later
    assert store.retention.run_pass().commitlog.deleted == ()
    clock.advance(24 * HOUR_S)  # 4 am a day later: ~42 h, still under 72 h
    assert store.retention.run_pass().commitlog.deleted == ()
    clock.advance(48 * HOUR_S)  # ~90 h: now they go
    assert store.retention.run_pass().commitlog.deleted != ()


def test_only_the_segments_older_than_the_reserved_time_go(store_at):
    store, clock = store_at((2024, 3, 4, 22), file_reserved_time_hours=72, delete_files_batch_max=100)
    t0 = clock.now_ms()
    fill(store, clock, 60)  # an hour of traffic from 22:00
    clock.advance(10 * HOUR_S)
    young_phys = store.put_message_sync(inner(body=b"young")).wrote_offset  # ten hours younger
    fill(store, clock, 60)
    clock.advance((t0 + 78 * HOUR_S * 1000 - clock.now_ms()) / 1000)  # 04:00, 78 h after the start
    assert is_time_to_delete((4,), clock.now_ms())
    report = store.retention.run_pass()
    assert report.commitlog.deleted
    boundary = store.commitlog.segment_start(young_phys)
    assert store.min_phy_offset in (boundary, boundary - store.commitlog.file_size)  # every older segment went
    assert store.look_message_by_offset(young_phys) is not None  # the young message stays
    young = store.commitlog.files[0]
    assert clock.now_ms() < store.commitlog.last_modified_ms(young) + 72 * HOUR_S * 1000


def test_above_the_max_used_ratio_expired_segments_go_at_any_hour(store_at):
    store, clock = store_at((2024, 3, 4, 10), file_reserved_time_hours=72, delete_files_batch_max=100)
    fill(store, clock, 150)
    before = segment_files(store)
    clock.advance(73 * HOUR_S)
    assert not is_time_to_delete((4,), clock.now_ms())
    store.retention.disk_usage = pretend(0.80)  # above diskMaxUsedSpaceRatio (0.75), below the forcible 0.85
    report = store.retention.run_pass()
    assert report.commitlog.space_to_delete and not report.commitlog.clean_immediately
    assert len(report.commitlog.deleted) == len(before) - 1
    assert store.runtime_info()["diskFull"] == "false"


def test_above_the_max_used_ratio_unexpired_segments_stay(store_at):
    store, clock = store_at((2024, 3, 4, 10))
    fill(store, clock, 150)
    store.retention.disk_usage = pretend(0.80)
    assert store.retention.run_pass().commitlog.deleted == ()


def test_above_the_forcible_ratio_the_oldest_go_unexpired_a_bounded_number_a_pass(store_at):
    store, clock = store_at((2024, 3, 4, 10), delete_files_batch_max=3)
    fill(store, clock, 150)
    before = segment_files(store)
    store.retention.disk_usage = pretend(0.88)  # above diskSpaceCleanForciblyRatio: nothing is expired, they go anyway
    report = store.retention.run_pass()
    assert report.commitlog.clean_immediately and [os.path.basename(p) for p in report.commitlog.deleted] == before[:3]
    assert store.put_message_sync(inner(body=b"still taking sends")).ok  # below the warning level
    while len(segment_files(store)) > 1:
        assert len(store.retention.run_pass().commitlog.deleted) <= 3
    assert segment_files(store) == before[-1:] or int(segment_files(store)[0]) >= int(before[-1])
    assert store.retention.run_pass().commitlog.deleted == ()  # the newest segment never goes


def test_a_manual_request_deletes_expired_segments_at_any_hour_for_twenty_passes(store_at):
    store, clock = store_at((2024, 3, 4, 10), delete_files_batch_max=1)
    fill(store, clock, 150)
    clock.advance(73 * HOUR_S)
    assert store.retention.run_pass().commitlog.deleted == ()
    assert len(store.retention.execute_delete_files_manually().commitlog.deleted) == 1
    assert store.retention.commitlog_service.manual_delete_times == 19
    assert len(store.retention.run_pass().commitlog.deleted) == 1  # the next passes go on


# --- what follows the commit log ------------------------------------------------------------


def test_consume_queues_and_index_follow_and_the_min_offset_moves(store_at):
    store, clock = store_at((2024, 3, 4, 10), delete_files_batch_max=100, max_index_count=40)
    offsets = fill(store, clock, 150)
    cq_dir = os.path.join(store.config.consume_queue_dir, TOPIC, "0")
    cq_before, index_before = sorted(os.listdir(cq_dir)), sorted(os.listdir(store.config.index_dir))
    assert store.query_message(TOPIC, "k0", 5, 0, clock.now_ms())
    store.retention.disk_usage = pretend(0.88)
    report = store.retention.run_pass()
    assert report.logics.consume_queue_files > 0 and report.logics.index_files > 0
    cq_after, index_after = sorted(os.listdir(cq_dir)), sorted(os.listdir(store.config.index_dir))
    assert cq_after == cq_before[len(cq_before) - len(cq_after) :] and len(cq_after) < len(cq_before)
    assert index_after == index_before[len(index_before) - len(index_after) :] and len(index_after) < len(index_before)
    min_offset = store.get_min_offset_in_queue(TOPIC, 0)
    assert 0 < min_offset <= offsets[-1]
    # the min offset is the first unit whose record is still in the commit log
    first = store.get_message("g", TOPIC, 0, min_offset, 1)
    assert first.status is GetMessageStatus.FOUND
    assert decode_records(first.records[0])[0].commit_log_offset >= store.min_phy_offset
    assert store.get_message_store_timestamp(TOPIC, 0, min_offset - 1) == -1
    assert store.query_message(TOPIC, "k0", 5, 0, clock.now_ms()) == []  # its record is gone
    assert store.query_message(TOPIC, "k149", 5, 0, clock.now_ms())


def test_a_lagging_consumer_continues_from_the_new_min_offset(store_at):
    store, clock = store_at((2024, 3, 4, 10))
    fill(store, clock, 150)
    store.retention.disk_usage = pretend(0.88)
    store.retention.run_pass()
    min_offset = store.get_min_offset_in_queue(TOPIC, 0)
    assert min_offset > 10
    lagging = store.get_message("g", TOPIC, 0, 10, 32)  # committed long ago, deleted since
    assert lagging.status is GetMessageStatus.OFFSET_TOO_SMALL and lagging.next_begin_offset == min_offset
    got, offset = [], lagging.next_begin_offset
    while (r := store.get_message("g", TOPIC, 0, offset, 32)).records:
        got += [m.queue_offset for m in decode_records(b"".join(r.records))]
        offset = r.next_begin_offset
    assert got == list(range(min_offset, 150))


def test_a_restart_keeps_the_moved_min_offset(tmp_path, store_at):
    store, clock = store_at((2024, 3, 4, 10))
    fill(store, clock, 150)
    store.retention.disk_usage = pretend(0.88)
    store.retention.run_pass()
    min_offset, min_phy = store.get_min_offset_in_queue(TOPIC, 0), store.min_phy_offset
    store.close()
    again = DefaultMessageStore(store.config, clock=clock)
    again.retention.disk_usage = pretend(0.10)
    again.open()
    try:
        assert again.min_phy_offset == min_phy and again.get_min_offset_in_queue(TOPIC, 0) == min_offset
        assert again.get_message("g", TOPIC, 0, min_offset, 1).status is GetMessageStatus.FOUND
        assert again.put_message_sync(inner()).queue_offset == 150
    finally:
        again.close()


def test_a_segment_being_read_is_not_unmapped_under_its_reader(store_at):
    store, clock = store_at((2024, 3, 4, 10))
    fill(store, clock, 150)
    oldest = store.commitlog.files[0]
    expected = bytes(oldest.mm[:64])
    view = memoryview(oldest.mm)[:64]  # a pull on its way to the socket
    store.retention.disk_usage = pretend(0.88)
    report = store.retention.run_pass()
    assert oldest.path in report.commitlog.deleted and not os.path.exists(oldest.path)
    clock.advance(10)
    store.retention.run_pass()
    assert bytes(view) == expected and store.retention.reaper.pending >= 1  # still mapped, still readable
    view.release()
    clock.advance(10)
    store.retention.run_pass()
    assert oldest.mm.closed


# --- a full disk ----------------------------------------------------------------------------


def test_above_the_warning_level_sends_are_refused_and_taken_again_once_usage_drops(store_at):
    store, clock = store_at((2024, 3, 4, 10))
    fill(store, clock, 5)
    store.retention.disk_usage = pretend(0.95)
    store.retention.run_pass()
    info = store.runtime_info()
    assert info["diskFull"] == "true" and info["commitLogDiskRatio"] == "0.95"
    refused = store.put_message_sync(inner(body=b"refused"))
    assert refused.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert store.get_message("g", TOPIC, 0, 0, 32).message_count == 5  # reads go on
    assert "CL:  0.95" in store.retention.disk_util()
    store.retention.disk_usage = pretend(0.50)
    store.retention.run_pass()
    assert store.runtime_info()["diskFull"] == "false"
    taken = store.put_message_sync(inner(body=b"taken"))
    assert taken.ok and taken.queue_offset == 5


def test_a_store_opened_on_a_full_disk_refuses_sends_at_once(tmp_path):
    clock = ManualClock()
    store = DefaultMessageStore(make_config(tmp_path / "s"), clock=clock)
    store.retention.disk_usage = pretend(0.99)
    store.open()
    try:
        assert store.put_message_sync(inner()).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    finally:
        store.close()


def test_the_runtime_info_carries_the_retention_settings_and_disk_figures(store_at):
    store, _ = store_at(delete_when="03;04", disk_space_warning_level_ratio=0.8, ratio=0.5)
    info = store.runtime_info()
    assert {
        k: info[k]
        for k in (
            "fileReservedTime",
            "deleteWhen",
            "diskMaxUsedSpaceRatio",
            "diskSpaceCleanForciblyRatio",
            "diskSpaceWarningLevelRatio",
            "diskFull",
            "lastCleanTimeStamp",
            "cleanedFilesTotal",
            "diskTotalBytes",
            "diskUsedBytes",
            "commitLogDirCapacity",
        )
    } == {
        "fileReservedTime": "72",
        "deleteWhen": "03;04",
        "diskMaxUsedSpaceRatio": "0.75",
        "diskSpaceCleanForciblyRatio": "0.85",
        "diskSpaceWarningLevelRatio": "0.8",
        "diskFull": "false",
        "lastCleanTimeStamp": "0",
        "cleanedFilesTotal": "0",
        "diskTotalBytes": "1000",
        "diskUsedBytes": "500",
        "commitLogDirCapacity": "Total : 1000 B, Free : 500 B.",
    }
