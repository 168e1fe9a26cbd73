"""A broker group on loopback: a master and slaves as real in-process brokers with real stores.

Replication (byte-identical commit logs, equal consume queues), catch-up after a restart,
synchronous double write (SLAVE_NOT_AVAILABLE, FLUSH_SLAVE_TIMEOUT), a slave's refusals, its
config sync and its reads while the master is stopped, garbage on the HA port, a slave pointed
at a non-master.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from brokers.engine.broker.controller import BrokerController
from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import decode_records, encode_batch_body
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.ha import ha_protocol as hp

from .conftest import run

SLAVE_KEY = "broker-a#1"


def _store(c, name: str, **kw) -> StoreConfig:
    return StoreConfig(
        str(c.tmp_path / name),
        commitlog_file_size=1 << 20,
        consume_queue_units_per_file=1000,
        max_index_hash_slots=1000,
        max_index_count=4000,
        **kw,
    )


async def start_slave(
    c, key: str = SLAVE_KEY, store_name: str = "broker-a-slave", broker_id: int = 1, **extra
) -> BrokerController:
    extra.setdefault("store", _store(c, store_name))
    return await c.start_broker(key, broker_name="broker-a", broker_id=broker_id, broker_role="SLAVE", **extra)


async def stop_slave(c, key: str = SLAVE_KEY) -> None:
    await c.brokers.pop(key).stop()


async def wait_connected(c, slaves: int = 1) -> None:
    await c.eventually(lambda: len(c.brokers["broker-a"].store.ha_service.connections) >= slaves)


async def wait_caught_up(c, key: str = SLAVE_KEY) -> None:
    master = c.brokers["broker-a"]
    await c.eventually(lambda: c.brokers[key].store.max_phy_offset == master.store.max_phy_offset)


async def pull_from(c, key: str, topic: str, queue_id: int = 0, offset: int = 0, **kw) -> RemotingCommand:
    ext = {
        "consumerGroup": kw.pop("group", "cg"),
        "topic": topic,
        "queueId": queue_id,
        "queueOffset": offset,
        "maxMsgNums": 64,
        "sysFlag": 0x4,
        "commitOffset": 0,
        "suspendTimeoutMillis": 0,
        "subVersion": 0,
        "subscription": "*",
        "expressionType": "TAG",
    }
    ext.update(kw)
    return await c.call(RequestCode.PULL_MESSAGE, ext, broker=key)


def segments(store_dir: Path) -> dict[str, bytes]:
    out = {}
    for root, _dirs, files in os.walk(store_dir):
        for name in files:
            path = Path(root) / name
            out[str(path.relative_to(store_dir))] = path.read_bytes()
    return out


def assert_same_logs(c, slave_store: str = "broker-a-slave") -> None:
    master_dir, slave_dir = c.tmp_path / "broker-a", c.tmp_path / slave_store
    for part in ("commitlog", "consumequeue"):
        mine, theirs = segments(master_dir / part), segments(slave_dir / part)
        assert mine.keys() == theirs.keys(), part
        for name in mine:
            assert mine[name] == theirs[name], f"{part}/{name} differs"


async def produce(c, topic: str, count: int, *, start: int = 0, queues: int = 2) -> list[RemotingCommand]:
    replies = []
    for i in range(start, start + count):
        replies.append(
            await c.send(
                topic,
                f"m{i}".encode() * (1 + i % 7),
                tags=f"T{i % 3}",
                keys=f"k{i}",
                queue_id=i % queues,
                broker="broker-a",
            )
        )
    return replies


def test_sync_master_and_slave_hold_identical_logs_and_queues(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            assert (await c.create_topic("T", read=2, write=2)).code == 0
            await start_slave(c)
            await wait_connected(c)
            replies = await produce(c, "T", 60)
            assert {r.code for r in replies} == {ResponseCode.SUCCESS}
            batch = encode_batch_body([Message("T", b"b1", keys="bk1"), Message("T", b"b2", tags="TB")])
            assert (await c.send("T", batch, code=RequestCode.SEND_BATCH_MESSAGE, extra={"m": True})).code == 0
            await wait_caught_up(c)
            # route: both ids under one broker name
            route = await c.route("T")
            addrs = route["brokerDatas"][0]["brokerAddrs"]
            assert {int(k): v for k, v in addrs.items()} == {0: c.addr("broker-a"), 1: c.addr(SLAVE_KEY)}
            # the slave copied the topic from its master, then serves the same messages
            await c.eventually(
                lambda: c.brokers[SLAVE_KEY].topic_config_manager.select_topic_config("T") is not None, timeout=10
            )
            on_master = decode_records((await c.pull("T", 0, 0, max_nums=64)).body)
            on_slave = decode_records((await pull_from(c, SLAVE_KEY, "T")).body)
            assert [m.msg_id for m in on_slave] == [m.msg_id for m in on_master] and len(on_master) == 32
            info = await c.call(RequestCode.GET_BROKER_RUNTIME_INFO, broker=SLAVE_KEY)
            assert info.code == 0 and b"haReplicationLagBytes" in info.body and b"SLAVE" in info.body
            master_info = await c.call(RequestCode.GET_BROKER_RUNTIME_INFO)
            assert b"haSlaveCount" in master_info.body and b"SYNC_MASTER" in master_info.body
            await stop_slave(c)
            c.brokers["broker-a"].store.flush()
            assert_same_logs(c)

    run(scenario())


def test_slave_catches_up_after_restart_and_serves_reads_with_master_stopped(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T", read=2, write=2)
            await start_slave(c)
            await produce(c, "T", 10)
            await wait_caught_up(c)
            await stop_slave(c)
            await produce(c, "T", 50, start=10)  # ASYNC_MASTER: sends answer at once without a slave
            slave = await start_slave(c)
            await wait_caught_up(c)
            await c.eventually(lambda: slave.topic_config_manager.select_topic_config("T") is not None, timeout=10)
            await c.brokers.pop("broker-a").stop()  # the master is gone; the slave still serves
            messages = decode_records((await pull_from(c, SLAVE_KEY, "T", 1)).body)
            assert [m.body for m in messages][:2] == [b"m1" * 2, b"m3" * 4] and len(messages) == 30
            max_offset = await c.call(RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": 1}, broker=SLAVE_KEY)
            assert max_offset.code == 0 and max_offset.ext("offset") == "30"
            commit = await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "cg", "topic": "T", "queueId": 1, "commitOffset": 12},
                broker=SLAVE_KEY,
            )
            assert commit.code == 0, commit
            query = await c.call(
                RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": "cg", "topic": "T", "queueId": 1}, broker=SLAVE_KEY
            )
            assert query.code == 0 and query.ext("offset") == "12"
            # an offset past what the slave holds is not "moved": retry at the same offset
            ahead = await pull_from(c, SLAVE_KEY, "T", 1, 99)
            assert ahead.code == ResponseCode.PULL_RETRY_IMMEDIATELY and ahead.ext("nextBeginOffset") == "99"
            await stop_slave(c)
            assert_same_logs(c)

    run(scenario())


def test_sync_master_without_slave_answers_slave_not_available_and_keeps_the_message(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            await c.create_topic("T", read=1, write=1)
            reply = await c.send("T", b"alone")
            assert reply.code == ResponseCode.SLAVE_NOT_AVAILABLE, reply
            assert reply.ext("msgId") and reply.ext("queueOffset") == "0"
            assert [m.body for m in await c.pull_messages("T", 0, 0)] == [b"alone"]

    run(scenario())


def test_stalled_slave_gives_flush_slave_timeout_and_the_message_stays_on_the_master(engine_cluster, tmp_path):
    async def scenario():
        async with engine_cluster(
            broker_role="SYNC_MASTER", store=_store_cfg(tmp_path, sync_flush_timeout_ms=300)
        ) as c:
            await c.create_topic("T", read=1, write=1)
            slave = await start_slave(c)
            await wait_connected(c)
            assert (await c.send("T", b"before")).code == ResponseCode.SUCCESS
            slave.store.ha_client.pause()
            stalled = await c.send("T", b"stalled")
            assert stalled.code == ResponseCode.FLUSH_SLAVE_TIMEOUT, stalled
            assert stalled.ext("msgId") and stalled.ext("queueOffset") == "1"
            assert [m.body for m in await c.pull_messages("T", 0, 0)] == [b"before", b"stalled"]
            slave.store.ha_client.resume()
            assert (await c.send("T", b"after")).code == ResponseCode.SUCCESS
            await wait_caught_up(c)

    run(scenario())


def _store_cfg(tmp_path, **kw) -> StoreConfig:
    return StoreConfig(
        str(tmp_path / "broker-a"),
        commitlog_file_size=1 << 20,
        consume_queue_units_per_file=1000,
        max_index_hash_slots=1000,
        max_index_count=4000,
        **kw,
    )


def test_slave_refuses_sends_and_config_writes(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T", read=1, write=1)
            slave = await start_slave(c)
            await c.eventually(lambda: slave.topic_config_manager.select_topic_config("T") is not None, timeout=10)
            before = slave.store.max_phy_offset
            refused = await c.send("T", b"x", broker=SLAVE_KEY)
            assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE and "slave" in refused.remark
            topic = await c.call(
                RequestCode.UPDATE_AND_CREATE_TOPIC,
                {"topic": "U", "readQueueNums": 1, "writeQueueNums": 1, "perm": 6},
                broker=SLAVE_KEY,
            )
            assert topic.code == ResponseCode.SYSTEM_ERROR and "slave" in topic.remark
            assert slave.topic_config_manager.select_topic_config("U") is None
            assert slave.store.max_phy_offset == before

    run(scenario())


def test_garbage_on_the_ha_port_changes_nothing(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T", read=1, write=1)
            await c.send("T", b"one")
            master = c.brokers["broker-a"]
            before = master.store.max_phy_offset
            for garbage in (
                b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                hp.encode_hello(0)[:-8] + b"\xff" * 8,
                b"GTHA" + b"\x00\x01\x00\x07" + bytes(16),
            ):
                reader, writer = await asyncio.open_connection("127.0.0.1", master.store.ha_port)
                writer.write(garbage)
                await writer.drain()
                assert await asyncio.wait_for(reader.read(), 5) == b""  # closed without an answer
                writer.close()
            # a valid hello, then a report past what was sent: closed too
            reader, writer = await asyncio.open_connection("127.0.0.1", master.store.ha_port)
            writer.write(hp.encode_hello(0))
            await reader.readexactly(hp.WELCOME.size)
            writer.write(hp.encode_report(1 << 40))
            await writer.drain()
            await c.eventually(lambda: not master.store.ha_service.connections)
            writer.close()
            assert master.store.max_phy_offset == before and master.store.ha_service.refused >= 4
            assert (await c.send("T", b"two")).code == 0

    run(scenario())


def test_slave_refuses_a_stream_of_garbage_from_a_fake_master(engine_cluster):
    async def fake_master(reader, writer):
        await reader.readexactly(hp.HELLO.size)
        writer.write(
            hp.encode_welcome(hp.STATUS_OK, max_offset=4096, start_offset=0, file_size=1 << 20, broker_addr="x:1")
        )
        body = b"\x00\x00\x01\x00" + b"\xde\xad\xbe\xef" * 63  # a size, then no record
        writer.write(hp.encode_frame_header(0, len(body), 4096, 0) + body)
        await writer.drain()
        await asyncio.sleep(1)
        writer.close()

    async def scenario():
        server = await asyncio.start_server(fake_master, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with engine_cluster() as c:
            slave = await start_slave(c, ha_master_address=f"127.0.0.1:{port}")
            await c.eventually(lambda: slave.store.ha_client.sessions >= 1)
            await c.eventually(lambda: slave.store.ha_client.state != "CONNECTED")
            assert slave.store.max_phy_offset == 0 and slave.store.healthy_error is None
        server.close()

    run(scenario())


def test_a_slave_pointed_at_a_slave_is_refused(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T", read=1, write=1)
            await c.send("T", b"one")
            first = await start_slave(c)
            await wait_caught_up(c)
            second = await start_slave(
                c,
                key="broker-a#2",
                store_name="broker-a-slave2",
                broker_id=2,
                ha_master_address=f"127.0.0.1:{first.store.ha_port}",
            )
            await c.eventually(lambda: second.store.ha_client.state == "REFUSED")
            assert "NOT_MASTER" in second.store.ha_client.last_refusal
            assert second.store.max_phy_offset == 0

    run(scenario())
