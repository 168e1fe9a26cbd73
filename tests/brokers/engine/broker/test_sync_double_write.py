"""Synchronous double write under SYNC_FLUSH on real in-process brokers: the master's group
commit syncs a record while its send waits for the slave, and the answer still waits for both;
a batch is answered once the slave holds all of it."""

from __future__ import annotations

import asyncio

from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import encode_batch_body
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.store.config import SYNC_FLUSH, StoreConfig

from .conftest import run
from .test_broker_group import start_slave, wait_caught_up, wait_connected


def _store(tmp_path, name: str) -> StoreConfig:
    return StoreConfig(
        str(tmp_path / name),
        commitlog_file_size=1 << 20,
        consume_queue_units_per_file=1000,
        max_index_hash_slots=1000,
        max_index_count=4000,
        flush_disk_type=SYNC_FLUSH,
        sync_flush_timeout_ms=10_000,
    )


def test_sync_flush_master_flushes_while_it_waits_for_the_slave_and_answers_after_both(engine_cluster, tmp_path):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER", store=_store(tmp_path, "broker-a")) as c:
            await c.create_topic("T", read=1, write=1)
            slave = await start_slave(c, store=_store(tmp_path, "broker-a-slave"))
            await wait_connected(c)
            assert (await c.send("T", b"before")).code == ResponseCode.SUCCESS
            master = c.brokers["broker-a"].store
            slave.store.ha_client.pause()
            pending = asyncio.ensure_future(c.send("T", b"waits for the slave"))
            # the record is on the master's disk while its send still waits for the slave
            await c.eventually(
                lambda: (
                    master.max_phy_offset > master.ha_service.group_transfer.acked
                    and master.commitlog.flushed_where == master.max_phy_offset
                )
            )
            await asyncio.sleep(0.1)
            assert not pending.done()
            slave.store.ha_client.resume()
            assert (await pending).code == ResponseCode.SUCCESS
            assert master.ha_service.group_transfer.acked == master.max_phy_offset
            await wait_caught_up(c)

    run(scenario())


def test_a_batch_is_answered_once_the_slave_holds_all_of_it(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            await c.create_topic("T", read=1, write=1)
            slave = await start_slave(c)
            await wait_connected(c)
            body = encode_batch_body([Message("T", bytes([i]) * 3000, keys=f"k{i}") for i in range(40)])  # > 32 KiB
            master = c.brokers["broker-a"].store
            for _ in range(3):
                reply = await c.send("T", body, code=RequestCode.SEND_BATCH_MESSAGE, extra={"m": True})
                assert reply.code == ResponseCode.SUCCESS, reply
                # answered only once the slave acknowledged every byte of the batch
                assert slave.store.ha_client.reported_offset >= master.max_phy_offset
            await wait_caught_up(c)
            await c.eventually(lambda: slave.store.get_max_offset_in_queue("T", 0) == 120)
            assert (
                slave.store.get_message("g", "T", 0, 0, 200).records == master.get_message("g", "T", 0, 0, 200).records
            )
            found = slave.store.query_message("T", "k7", 10, 0, 1 << 62)
            assert len(found) == 3 and found == master.query_message("T", "k7", 10, 0, 1 << 62)

    run(scenario())
