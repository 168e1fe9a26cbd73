"""Retention through a real broker: requests 329 and 306, the disk-full refusal with RocketMQ's
remark, a lagging consumer moved to the new min offset and counted in its group's stats, the
runtime info and config keys, and the broker's retention flags."""

from __future__ import annotations

import asyncio

from brokers.engine.broker.startup import EXIT_USAGE, main
from brokers.engine.common import json_compat
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.disk_usage import DiskUsage


def run(coro, timeout: float = 60.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def pretend(ratio: float):
    used = int(ratio * 1000)
    return lambda path: DiskUsage(1000, used, 1000 - used)


SMALL_STORE = dict(
    commitlog_file_size=64 << 10, consume_queue_units_per_file=50, max_index_hash_slots=1000, max_index_count=4000
)


def test_delete_expired_commitlog_moves_the_min_offset_and_a_lagging_pull_goes_on(engine_cluster, tmp_path):
    async def scenario():
        async with engine_cluster(store=StoreConfig(str(tmp_path / "a"), **SMALL_STORE)) as c:
            assert (await c.create_topic("R", read=1, write=1)).code == 0
            for i in range(300):
                assert (await c.send("R", b"x" * 1000, keys=f"k{i}")).code == 0
            store = c.broker.store
            segments = len(store.commitlog.files)
            assert segments >= 5
            store.retention.disk_usage = pretend(0.88)  # above the forcible ratio: the oldest go though unexpired
            answer = await c.call(RequestCode.DELETE_EXPIRED_COMMITLOG)
            assert answer.code == ResponseCode.SUCCESS and answer.remark is None
            report = json_compat.loads(answer.body)
            assert report["deletedCommitLogFiles"] == min(10, segments - 1) and report["deletedConsumeQueueFiles"] > 0
            assert report["commitLogMinOffsetAfter"] == store.min_phy_offset > 0
            min_offset = store.get_min_offset_in_queue("R", 0)
            assert min_offset > 10

            moved = await c.pull("R", 0, 10, group="lagging")  # its offset's messages are gone
            assert moved.code == ResponseCode.PULL_OFFSET_MOVED
            assert int(moved.ext("nextBeginOffset")) == int(moved.ext("minOffset")) == min_offset
            msgs = await c.pull_messages("R", 0, int(moved.ext("nextBeginOffset")), group="lagging")
            assert msgs[0].queue_offset == min_offset

            stats = json_compat.loads((await c.call(RequestCode.GANTRY_GET_QUEUE_STATS)).body)
            assert {
                "group": "lagging",
                "topic": "R",
                "queueId": 0,
                "times": 1,
                "skippedMessages": min_offset - 10,
            } in stats["offsetMoved"]
            assert {"topic": "R", "queueId": 0, "minOffset": min_offset}.items() <= next(
                q for q in stats["queues"] if q["topic"] == "R"
            ).items()

            info = store.runtime_info()
            assert (
                info["cleanedFilesTotal"] == str(report["deletedCommitLogFiles"]) and info["lastCleanTimeStamp"] != "0"
            )
            cq = await c.call(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE)
            assert cq.code == ResponseCode.SUCCESS and "deletedConsumeQueueFiles" in json_compat.loads(cq.body)

    run(scenario())


def test_a_full_disk_refuses_sends_with_rocketmqs_remark_and_takes_them_again(engine_cluster, tmp_path):
    async def scenario():
        async with engine_cluster(store=StoreConfig(str(tmp_path / "a"), **SMALL_STORE)) as c:
            assert (await c.create_topic("D", read=1, write=1)).code == 0
            assert (await c.send("D", b"before")).code == 0
            retention = c.broker.store.retention
            retention.disk_usage = pretend(0.95)
            await asyncio.to_thread(retention.run_pass)
            refused = await c.send("D", b"refused")
            assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
            assert refused.remark == (
                "service not available now. It may be caused by one of the following reasons: the "
                "broker's disk is full [CL:  0.95 CQ:  0.95 INDEX:  0.95], messages are put to the "
                "slave, message store has been shut down, etc."
            )
            runtime = await c.call(RequestCode.GET_BROKER_RUNTIME_INFO)
            table = json_compat.loads(runtime.body)["table"]
            assert table["diskFull"] == "true" and table["commitLogDiskRatio"] == "0.95"
            assert [m.body for m in await c.pull_messages("D", 0, 0)] == [b"before"]  # reads go on
            retention.disk_usage = pretend(0.40)
            await asyncio.to_thread(retention.run_pass)
            taken = await c.send("D", b"after")
            assert taken.code == ResponseCode.SUCCESS and taken.ext("queueOffset") == "1"
            table = json_compat.loads((await c.call(RequestCode.GET_BROKER_RUNTIME_INFO)).body)["table"]
            assert table["diskFull"] == "false"

    run(scenario())


def test_the_broker_config_lists_the_retention_settings_rocketmqs_way(engine_cluster, tmp_path):
    async def scenario():
        store = StoreConfig(str(tmp_path / "a"), delete_when="03;04", disk_max_used_space_ratio=0.7, **SMALL_STORE)
        async with engine_cluster(store=store) as c:
            props = c.broker.config_properties()
            assert {
                k: props[k]
                for k in (
                    "fileReservedTime",
                    "deleteWhen",
                    "diskMaxUsedSpaceRatio",
                    "diskSpaceCleanForciblyRatio",
                    "diskSpaceWarningLevelRatio",
                    "cleanResourceInterval",
                    "deleteFileBatchMax",
                )
            } == {
                "fileReservedTime": "72",
                "deleteWhen": "03;04",
                "diskMaxUsedSpaceRatio": "70",
                "diskSpaceCleanForciblyRatio": "85",
                "diskSpaceWarningLevelRatio": "90",
                "cleanResourceInterval": "10000",
                "deleteFileBatchMax": "10",
            }

    run(scenario())


def test_bad_retention_flags_are_refused_at_start_naming_the_flag(tmp_path, capsys):
    base = ["--name", "broker-x", "--store-dir", str(tmp_path / "x")]
    for flags, named in (
        (["--disk-max-used-space-ratio", "1.2"], "--disk-max-used-space-ratio: diskMaxUsedSpaceRatio"),
        (
            ["--disk-space-clean-forcibly-ratio", "-0.1"],
            "--disk-space-clean-forcibly-ratio: diskSpaceCleanForciblyRatio",
        ),
        (["--disk-space-warning-level-ratio", "90"], "--disk-space-warning-level-ratio: diskSpaceWarningLevelRatio"),
        (["--delete-when", "4am"], "--delete-when: deleteWhen"),
        (["--delete-when", "03;24"], "--delete-when: deleteWhen"),
        (["--file-reserved-time", "0"], "--file-reserved-time: fileReservedTime"),
        (["--delete-files-batch-max", "0"], "--delete-files-batch-max: deleteFileBatchMax"),
    ):
        assert main(base + flags) == EXIT_USAGE
        assert named in capsys.readouterr().err
    assert not (tmp_path / "x").exists()  # refused before anything was created
