"""A broker process whose disk is filled from outside: an error answer, never a dead broker.

A real ``python -m brokers.engine broker`` (and name server) keeps its store on a small real tmpfs.
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

The broker's clean pass runs once at start only here (``--clean-resource-interval`` of an hour),
so it is the store's ENOSPC path that answers; with RocketMQ's 10 s the ratio refusal below
would answer too once a pass ran. :func:`test_disk_above_the_warning_ratio_refuses_sends` runs
the pass every 200 ms and checks that refusal (diskSpaceWarningLevelRatio, 0.90: SERVICE_NOT_AVAILABLE
"disk is full") and that sends are taken again, without a restart, once usage drops.

Needs root to mount a tmpfs; skipped with the reason otherwise.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from brokers.engine.client.admin import MQAdminClient
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.puller import AsyncPullClient, PullStatus
from brokers.engine.client.simple_producer import AsyncSimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import ResponseCode
from tests.fixtures.disk_volume import SmallVolume, fill_disk
from tests.fixtures.ports import free_ports

REPO = Path(__file__).resolve().parents[4]
VOLUME_BYTES = 8 << 20
BROKER = "broker-full"
TOPIC = "FillTopic"
FRESH_TOPIC = "FreshTopic"
SEGMENT = 256 << 10  # commit log segment, allocated whole when created: a roll needs new blocks
CREATE_FAILED = "create mapped file failed, server is busy or broken."
DISK_FULL = "the broker's disk is full [CL: "

Acked = dict[tuple[str, int], list[bytes]]  # (topic, queue id) -> bodies acknowledged, in order


def _start(args: list[str], pattern: str, lines: list[str]) -> subprocess.Popen:
    """Start ``python -m brokers.engine ARGS``; once a line matches ``pattern``, a thread keeps
    reading its output (stdout and stderr) into ``lines``, so the pipe never fills."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "brokers.engine", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    out = proc.stdout
    assert out is not None
    deadline = time.monotonic() + 20
    first = len(lines)
    while time.monotonic() < deadline:
        line = out.readline()
        if not line:
            break
        lines.append(line)
        if re.search(pattern, line):
            threading.Thread(target=lambda: lines.extend(out), daemon=True).start()
            return proc
    proc.kill()
    raise AssertionError(f"no ready line from {args}: {''.join(lines[first:])}{out.read()}")


@pytest.fixture(scope="module")
def namesrv():
    (port,) = free_ports(1)
    proc = _start(["namesrv", "--port", str(port)], r"ready on", [])
    yield f"127.0.0.1:{port}"
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)


@pytest.fixture
def volume(tmp_path):
    vol = SmallVolume(tmp_path / "vol", VOLUME_BYTES)
    vol.mount()
    try:
        yield vol
    finally:
        vol.unmount()


class BrokerProcess:
    """One broker process on a fixed port, restartable on the same store; ``log`` is the output
    of every run."""

    def __init__(self, namesrv: str, store: Path, *extra: str) -> None:
        (self.port,) = free_ports(1)
        self.addr = f"127.0.0.1:{self.port}"
        self.args = [
            "broker",
            "--name",
            BROKER,
            "--port",
            str(self.port),
            "--namesrv",
            namesrv,
            "--store-dir",
            str(store),
            "--auto-create-topic",
            "--commitlog-file-size",
            str(SEGMENT),
            "--consume-queue-units-per-file",
            "1000",
            "--max-index-hash-slots",
            "64",
            *extra,
        ]
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def logged(self, text: str, timeout: float = 5.0) -> bool:
        """Whether the output holds ``text`` (a thread reads it: waits up to ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while text not in self.log and time.monotonic() < deadline:
            time.sleep(0.02)
        return text in self.log

    def start(self) -> None:
        self.proc = _start(self.args, r"ready at", self.lines)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM: the broker must stop cleanly (exit code 0)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(20) == 0, self.log

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)


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
def test_a_disk_filled_from_outside_gives_an_error_answer_not_a_dead_broker(namesrv, volume, kind):
    index_count, _ = CASES[kind]
    broker = BrokerProcess(
        namesrv, volume.path / "store", "--max-index-count", str(index_count), "--clean-resource-interval", "3600000"
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


def test_disk_above_the_warning_ratio_refuses_sends(namesrv, volume):
    broker = BrokerProcess(
        namesrv, volume.path / "store", "--max-index-count", "1000", "--clean-resource-interval", "200"
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
