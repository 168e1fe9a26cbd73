"""A master's puts reach its slave at once, not at the next heartbeat: an ASYNC_MASTER and a SLAVE
as two real HAMessageStores on one loop, replicating over a real HA connection on loopback, with a
heartbeat far longer than the test waits, so only the put's own push can deliver the bytes."""

from __future__ import annotations

import asyncio

from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import TRANSACTION_PREPARED_TYPE, encode_batch_body
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.ha.ha_config import ASYNC_MASTER, SLAVE, HAConfig
from brokers.engine.store.ha.ha_message_store import HAMessageStore
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner

HEARTBEAT_MS = 60_000  # the sender's own wake-up: longer than any wait below
WAIT_S = 10.0  # a generous bound for a push on a busy machine, still far below the heartbeat


def _store(path, ha: HAConfig) -> HAMessageStore:
    return HAMessageStore(
        StoreConfig(
            str(path),
            commitlog_file_size=1 << 20,
            consume_queue_units_per_file=100,
            max_index_hash_slots=100,
            max_index_count=400,
        ),
        ha,
    )


async def _until(predicate, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, f"not within {WAIT_S:.0f} s: {what}"
        await asyncio.sleep(0.005)


def test_every_kind_of_put_is_pushed_to_the_slave_without_waiting_for_the_heartbeat(tmp_path):
    async def scenario() -> None:
        master = _store(tmp_path / "m", HAConfig(ASYNC_MASTER, heartbeat_interval_ms=HEARTBEAT_MS))
        master.open()
        await master.start_ha()
        slave = _store(
            tmp_path / "s",
            HAConfig(SLAVE, heartbeat_interval_ms=HEARTBEAT_MS, master_address=f"127.0.0.1:{master.ha_port}"),
        )
        slave.open()
        await slave.start_ha()
        try:
            await _until(lambda: master.ha_service.connections, "the slave connects")
            batch = MessageExtBatch("T", 0, encode_batch_body([Message("T", b"b%d" % i) for i in range(8)]))
            assert (await master.put_messages(batch)).ok
            await _until(lambda: slave.max_phy_offset == master.max_phy_offset, "the batch reaches the slave")
            # a record that no consume queue takes (a prepared transaction) still grew the log
            prepared = MessageExtBrokerInner(
                topic="T", queue_id=0, body=b"half", born_host="127.0.0.1:1", sys_flag=TRANSACTION_PREPARED_TYPE
            )
            assert master.put_message_sync(prepared).ok
            await _until(lambda: slave.max_phy_offset == master.max_phy_offset, "the prepared record reaches the slave")
            single = MessageExtBrokerInner(topic="T", queue_id=1, body=b"one", born_host="127.0.0.1:1")
            assert (await master.put_message(single)).ok
            await _until(lambda: slave.max_phy_offset == master.max_phy_offset, "the single reaches the slave")
            assert slave.commitlog.read(0, master.max_phy_offset) == master.commitlog.read(0, master.max_phy_offset)
        finally:
            await slave.stop_ha()
            await master.stop_ha()
            slave.close()
            master.close()

    asyncio.run(scenario())
