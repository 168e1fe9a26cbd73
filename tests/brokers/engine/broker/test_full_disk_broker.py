"""A broker process whose disk is filled from outside: an error answer, never a dead broker.

A real broker process (and name server; the cluster harness's ProcessCluster) keeps its store on a small real tmpfs.
A filler file written with plain writes until ENOSPC fills the volume at the moment one kind of
store file needs new blocks: a commit log segment roll, the first consume queue file of a queue
(and of a topic auto-created on the full disk, whose topics.json cannot be written either), an
index file; or, for the checkpoint, whose block was allocated at open, while it is rewritten.
Then, through the Python client:

* the send is answered with an error (RocketMQ's SYSTEM_ERROR "create mapped file failed, server
  is busy or broken."), not a dropped connection, and the broker process stays alive;
* pulls and key queries of messages already acknowledged go on;
* a clean stop on the full disk exits 0, and a start on it serves reads and refuses sends
  (the checkpoint case);
* once the filler is removed, sends succeed again;
* a clean stop and a SIGKILL, each followed by a restart, keep every acknowledged message.

The broker's clean pass runs once at start only here (``clean_resource_interval_ms`` of an hour),
so it is the store's ENOSPC path that answers; with RocketMQ's 10 s the ratio refusal below
would answer too once a pass ran. :func:`test_disk_above_the_warning_ratio_refuses_sends` runs
the pass every 200 ms and checks that refusal (diskSpaceWarningLevelRatio, 0.90: SERVICE_NOT_AVAILABLE
"disk is full") and that sends are taken again, without a restart, once usage drops.

Needs root to mount a tmpfs; skipped with the reason otherwise.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from brokers.engine.client.admin import MQAdminClient
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.puller import AsyncPullClient, PullStatus
from brokers.engine.client.simple_producer import AsyncSimpleProducer
from brokers.engine.cluster import ClusterSpec, GroupSpec
from brokers.engine.cluster.processes import ProcessCluster
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import ResponseCode
from tests.fixtures.disk_volume import SmallVolume, fill_disk

VOLUME_BYTES = 8 << 20
BROKER = "broker-full"
TOPIC = "FillTopic"
FRESH_TOPIC = "FreshTopic"
SEGMENT = 256 << 10  # commit log segment, allocated whole when created: a roll needs new blocks
CREATE_FAILED = "create mapped file failed, server is busy or broken."
DISK_FULL = "the broker's disk is full [CL: "

Acked = dict[tuple[str, int], list[bytes]]  # (topic, queue id) -> bodies acknowledged, in order


@pytest.fixture(scope="module")
def namesrv(tmp_path_factory):
    with ProcessCluster(ClusterSpec(str(tmp_path_factory.mktemp("full-disk-namesrv")), groups=())) as cluster:
        yield cluster.namesrv_addr


@pytest.fixture
def volume(tmp_path):
    vol = SmallVolume(tmp_path / "vol", VOLUME_BYTES)
    vol.mount()
    try:
        yield vol
    finally:
        vol.unmount()


class BrokerProcess:
    """One broker process (a ProcessCluster member) on a fixed port, restartable on the same store;
    ``log`` is the output of every run (kept off the volume: a full disk must not stop the log)."""

    def __init__(self, namesrv: str, store: Path, logs: Path, **store_fields: int) -> None:
        spec = ClusterSpec(
            str(store.parent),
            groups=(GroupSpec(BROKER),),
            namesrvs=0,
            namesrv_addrs=(namesrv,),
            broker_overrides={"auto_create_topic_enable": True},
            store_overrides={
                "store_dir": str(store),
                "commitlog_file_size": SEGMENT,
                "consume_queue_units_per_file": 1000,
                "max_index_hash_slots": 64,
                **store_fields,
            },
        )
        self.cluster = ProcessCluster(spec, log_dir=logs, log_level="INFO")
        self.started = False

    @property
    def addr(self) -> str:
        return self.cluster.addr(BROKER)

    @property
    def log(self) -> str:
        runs = sorted(self.cluster.log_dir.glob(f"{BROKER}*.log"), key=lambda p: p.stat().st_mtime_ns)
        return "".join(p.read_text(errors="replace") for p in runs)

    def logged(self, text: str, timeout: float = 5.0) -> bool:
        """Whether the output holds ``text`` (waits up to ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while text not in self.log and time.monotonic() < deadline:
            time.sleep(0.02)
        return text in self.log

    def start(self) -> None:
        """Start the broker, or start it again on its store and port."""
        if self.started:
            self.cluster.restart_broker(BROKER)
        else:
            self.cluster.start_broker(BROKER)
            self.started = True

    def alive(self) -> bool:
        return BROKER in self.cluster.brokers and self.cluster.brokers[BROKER].proc.poll() is None

    def stop(self) -> None:
        """SIGTERM: the broker must stop cleanly (exit code 0)."""
        assert self.cluster.stop_broker(BROKER) == 0, self.log

    def kill(self) -> None:
        self.cluster.kill_broker(BROKER)


class Client:
    """A producer, a pull client and an admin client; ``acked`` is shared across restarts (a new
    Client after each: the old connections died with the process)."""

    def __init__(self, namesrv: str, acked: Acked) -> None:
        self.producer = AsyncSimpleProducer(namesrv, "FullDiskProducer", retry_times=0, timeout_s=5)
        self.puller = AsyncPullClient(namesrv, "FullDiskReader", timeout_s=5)
        self.admin = MQAdminClient(namesrv, timeout_s=5)
        self.acked = acked

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.producer.close()
        await self.puller.close()
        await self.admin.close()

    async def send(self, n: int, *, topic: str = TOPIC, queue_id: int = 0, size: int = 100) -> None:
        """Send; an acknowledged body is added to ``acked`` (MQBrokerError when refused)."""
        body = f"{topic}-{queue_id}-{n}-".encode().ljust(size, b".")
        await self.producer.send(Message(topic, body, keys=f"key-{n}"), MessageQueue(topic, BROKER, queue_id))
        self.acked.setdefault((topic, queue_id), []).append(body)

    async def refused(self, n: int, **kw) -> MQBrokerError:
        with pytest.raises(MQBrokerError) as info:
            await self.send(n, **kw)
        return info.value

    async def bodies(self, topic: str, queue_id: int) -> list[bytes]:
        out: list[bytes] = []
        offset = 0
        mq = MessageQueue(topic, BROKER, queue_id)
        while True:
            result = await self.puller.pull(mq, offset, 32)
            if result.status is not PullStatus.FOUND:
                return out
            out.extend(m.body for m in result.messages)
            offset = result.next_begin_offset

    async def check_all(self) -> None:
        """Every acknowledged message is there, in order, and nothing else; a key query finds one."""
        for (topic, queue_id), expected in self.acked.items():
            assert await self.bodies(topic, queue_id) == expected, (topic, queue_id)
        found = await self.admin.query_message_by_key(TOPIC, "key-3")
        assert [m.body for m in found] == [self.acked[(TOPIC, 0)][3]]

    async def start_topic(self, broker_addr: str) -> None:
        """FillTopic with two queues; ten messages in queue 0 (queue 1 has no file yet)."""
        await self.admin.create_or_update_topic(broker_addr, TopicConfig(TOPIC, 2, 2))
        for _ in range(100):
            try:
                await self.admin.examine_topic_route_info(TOPIC)
                break
            except MQBrokerError:
                await asyncio.sleep(0.05)
        for i in range(10):
            await self.send(i)


async def _send_until_refused(client: Client, count: int, **kw) -> MQBrokerError:
    for n in range(100, 100 + count):
        try:
            await client.send(n, **kw)
        except MQBrokerError as exc:
            return exc
    raise AssertionError(f"none of {count} sends on a full disk was refused")


async def _restarts_keep_everything(namesrv: str, broker: BrokerProcess, acked: Acked) -> None:
    """A clean stop, then a SIGKILL: after each restart every acknowledged message is there."""
    for stop in (broker.stop, broker.kill):
        stop()
        broker.start()
        async with Client(namesrv, acked) as client:
            await client.check_all()
            await client.send(1000)  # and the restarted broker takes sends
    broker.stop()


# kind -> (items per index file, what the broker's log names as the file that got no blocks)
CASES = {
    "commitlog": (1000, "commit log segment"),  # 4000-byte bodies: the 256 KiB segment rolls first
    "consumequeue": (1000, f"no room in the consume queue {TOPIC}/1"),
    "index": (40, "no room in the index"),  # two items per message (KEYS and UNIQ_KEY)
    "checkpoint": (1000, None),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_a_disk_filled_from_outside_gives_an_error_answer_not_a_dead_broker(namesrv, volume, kind, tmp_path):
    index_count, _ = CASES[kind]
    broker = BrokerProcess(
        namesrv,
        volume.path / "store",
        tmp_path / "logs",
        max_index_count=index_count,
        clean_resource_interval_ms=3600000,
    )  # the ratio check runs at start only
    broker.start()
    try:
        asyncio.run(asyncio.wait_for(_fill_case(namesrv, broker, volume, kind), 50))
    finally:
        if broker.alive():
            broker.kill()


async def _fill_case(namesrv: str, broker: BrokerProcess, volume: SmallVolume, kind: str) -> None:
    acked: Acked = {}
    async with Client(namesrv, acked) as client:
        await client.start_topic(broker.addr)
        filler = fill_disk(volume.path)
        await _refused_on_the_full_disk(client, broker, volume, kind)
        assert broker.alive()
        await client.check_all()  # reads go on (the reader's group is auto-created on the full disk)
    if kind == "checkpoint":
        await _stop_and_restart_on_the_full_disk(namesrv, broker, acked)
    if kind == "consumequeue":
        assert broker.logged("subscriptionGroup.json: writing the config file failed")
    assert broker.alive()
    os.unlink(filler)
    if kind == "consumequeue":  # the failed config writes are retried (every 5 s) once there is room
        _config_files_written_again(broker, volume.path / "store" / "config")
    if kind == "checkpoint":  # the disk-full bit read at start clears at the next clean pass (an hour here)
        broker.stop()
        broker.start()
    async with Client(namesrv, acked) as client:
        await client.send(900)
        await client.send(901, queue_id=1)
        await client.send(902, topic=FRESH_TOPIC)
        await client.check_all()
    await _restarts_keep_everything(namesrv, broker, acked)


def _config_files_written_again(broker: BrokerProcess, config_dir: Path) -> None:
    assert broker.logged("topics.json written after an earlier failure", timeout=15)
    assert broker.logged("subscriptionGroup.json: written after an earlier failure", timeout=15)
    assert FRESH_TOPIC in (config_dir / "topics.json").read_text()
    assert "FullDiskReader" in (config_dir / "subscriptionGroup.json").read_text()


async def _refused_on_the_full_disk(client: Client, broker: BrokerProcess, volume: SmallVolume, kind: str) -> None:
    if kind == "commitlog":
        error = await _send_until_refused(client, SEGMENT // 4000 + 2, size=4000)  # below 4 KiB: not compressed
    elif kind == "consumequeue":  # a queue without a file yet
        error = await client.refused(100, queue_id=1)
    elif kind == "index":
        error = await _send_until_refused(client, 40)
    else:  # the checkpoint's block was allocated at open: the flushes after the fill rewrite it
        error = None
        checkpoint = volume.path / "store" / "checkpoint"
        before = checkpoint.read_bytes()
        for n in range(100, 103):
            await client.send(n)
        for _ in range(100):
            if checkpoint.read_bytes() != before:
                break
            await asyncio.sleep(0.05)
        assert checkpoint.read_bytes() != before
    if error is not None:
        assert (error.code, error.remark) == (ResponseCode.SYSTEM_ERROR, CREATE_FAILED)
        assert broker.logged(CASES[kind][1])
    # A topic auto-created on the full disk: topics.json cannot be written (logged, retried), and
    # the store answers the send (the topic's first consume queue file gets no blocks).
    fresh = await client.refused(200, topic=FRESH_TOPIC)
    assert (fresh.code, fresh.remark) == (ResponseCode.SYSTEM_ERROR, CREATE_FAILED)
    assert broker.logged("topics.json failed")


async def _stop_and_restart_on_the_full_disk(namesrv: str, broker: BrokerProcess, acked: Acked) -> None:
    """A clean stop while the disk is full (the config files cannot be written: logged), then a
    start on the full disk: the broker serves reads and refuses sends, as RocketMQ does."""
    broker.stop()
    assert broker.logged("at stop failed")
    broker.start()
    async with Client(namesrv, acked) as client:
        await client.check_all()
        refused = await client.refused(300)
        assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE and DISK_FULL in refused.remark
        assert (await client.admin.get_broker_runtime_info(broker.addr))["diskFull"] == "true"


def test_disk_above_the_warning_ratio_refuses_sends(namesrv, volume, tmp_path):
    broker = BrokerProcess(
        namesrv, volume.path / "store", tmp_path / "logs", max_index_count=1000, clean_resource_interval_ms=200
    )
    broker.start()
    try:
        asyncio.run(asyncio.wait_for(_ratio_case(namesrv, broker, volume), 50))
    finally:
        if broker.alive():
            broker.kill()


async def _ratio_case(namesrv: str, broker: BrokerProcess, volume: SmallVolume) -> None:
    acked: Acked = {}
    async with Client(namesrv, acked) as client:
        await client.start_topic(broker.addr)
        volume.fill_to(0.95)
        refused = None
        for n in range(100, 200):  # the next clean pass (every 200 ms) sets the disk-full bit
            try:
                await client.send(n)
            except MQBrokerError as exc:
                refused = exc
                break
            await asyncio.sleep(0.05)
        assert refused is not None
        assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
        assert refused.remark.startswith("service not available now.") and DISK_FULL in refused.remark
        assert (await client.admin.get_broker_runtime_info(broker.addr))["diskFull"] == "true"
        assert broker.alive()
        await client.check_all()  # reads go on
        volume.fill_to(0)
        for n in range(300, 400):  # a later pass clears the bit: sends are taken again, no restart
            try:
                await client.send(n)
                break
            except MQBrokerError as exc:
                assert exc.code == ResponseCode.SERVICE_NOT_AVAILABLE
                await asyncio.sleep(0.05)
        assert (await client.admin.get_broker_runtime_info(broker.addr))["diskFull"] == "false"
        await client.check_all()
    await _restarts_keep_everything(namesrv, broker, acked)
