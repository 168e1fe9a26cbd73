"""Offsets committed on a slave while its master is away go back to the master when it returns.

The rule (broker/masterless_offsets.py): a slave records the commits consumers make on it; the
returning master asks for them (GANTRY_GET_MASTERLESS_OFFSETS) and keeps
max(master, slave) per queue; the slave forgets an entry once the master has reached it, or
the master reset it backwards. Real in-process master and slave, real files.
"""

from __future__ import annotations

from brokers.engine.broker.masterless_offsets import MasterlessOffsets, merge_masterless, parse_offset_table
from brokers.engine.common import json_compat
from brokers.engine.remoting.codes import RequestCode

from .conftest import run
from .test_broker_group import SLAVE_KEY, produce, start_slave, wait_caught_up, wait_connected

GROUP = "cg"


def test_merge_keeps_the_higher_offset_per_queue_and_adds_missing_ones():
    master = {"T@cg": {0: 10, 1: 50}}
    taken = merge_masterless(master, {"T@cg": {0: 30, 1: 40, 2: 7}, "U@cg": {0: 3}})
    assert master == {"T@cg": {0: 30, 1: 50, 2: 7}, "U@cg": {0: 3}}
    assert taken == [("T@cg", 0, 10, 30), ("T@cg", 2, -1, 7), ("U@cg", 0, -1, 3)]


def test_slave_records_while_a_slave_and_forgets_what_the_master_reached(tmp_path):
    masterless = [True]
    table = MasterlessOffsets(tmp_path, lambda: masterless[0])
    table.record("T@cg", 0, 30)
    table.record("T@cg", 1, 40)
    masterless[0] = False
    table.record("T@cg", 2, 99)  # no longer a slave (promoted): its own table is the master's
    assert table.table == {"T@cg": {0: 30, 1: 40}}
    assert table.persist()
    reloaded = MasterlessOffsets(tmp_path)
    reloaded.load()
    assert reloaded.table == table.table  # a slave restart does not forget
    assert table.forget_confirmed({"T@cg": {0: 30, 1: 20}}) == 1  # queue 0 reached; queue 1 not yet
    assert table.table == {"T@cg": {1: 40}}
    assert table.forget_confirmed({"T@cg": {0: 30, 1: 5}}) == 1  # the master reset queue 1 backwards: it wins
    assert table.table == {}
    assert parse_offset_table({"offsetTable": {"bad": {0: 1}, "T@g": {"x": 1, 1: -1, 2: "3"}}}) == {"T@g": {2: 3}}


async def _commit(c, broker: str, queue_id: int, offset: int) -> None:
    reply = await c.call(
        RequestCode.UPDATE_CONSUMER_OFFSET,
        {"consumerGroup": GROUP, "topic": "T", "queueId": queue_id, "commitOffset": offset},
        broker=broker,
    )
    assert reply.code == 0, reply


async def _query(c, broker: str, queue_id: int) -> int:
    reply = await c.call(
        RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": GROUP, "topic": "T", "queueId": queue_id}, broker=broker
    )
    return int(reply.ext("offset")) if reply.code == 0 else -1


def test_returning_master_takes_back_the_offsets_committed_on_its_slave(engine_cluster, caplog):
    async def scenario():
        async with engine_cluster(slave_synchronize_interval_s=0.2) as c:
            await c.create_topic("T", read=2, write=2)
            slave = await start_slave(c, slave_synchronize_interval_s=0.2)
            await wait_connected(c)
            await produce(c, "T", 40)
            await wait_caught_up(c)
            await _commit(c, "broker-a", 0, 5)
            await _commit(c, "broker-a", 1, 15)
            await c.eventually(lambda: slave.consumer_offset_manager.query_offset(GROUP, "T", 1) == 15, timeout=10)
            await _commit(c, SLAVE_KEY, 0, 6)  # a consumer that could not reach the master (master alive): recorded
            master = c.brokers.pop("broker-a")
            port, ha_port = master.port, master.store.ha_port
            await master.stop()
            await c.eventually(lambda: slave.store.ha_client.state != "CONNECTED", timeout=10)
            await _commit(c, SLAVE_KEY, 0, 12)  # consumers go on from the slave
            await _commit(c, SLAVE_KEY, 1, 18)
            answer = await c.call(RequestCode.GANTRY_GET_MASTERLESS_OFFSETS, broker=SLAVE_KEY)
            assert answer.code == 0 and parse_offset_table(json_compat.loads(answer.body)) == {"T@cg": {0: 12, 1: 18}}

            caplog.set_level("INFO", logger="brokers.engine.broker")
            returned = await c.start_broker("broker-a", listen_port=port, ha_listen_port=ha_port)
            # taken at start, before the master registered: no consumer ever reads 5 / 15 from it
            assert returned.consumer_offset_manager.query_offset(GROUP, "T", 0) == 12
            assert await _query(c, "broker-a", 1) == 18
            assert any("took 2 consumer offset(s) committed on slave" in r.getMessage() for r in caplog.records)
            await wait_connected(c)
            # the slave's sync sees the master hold them and forgets its record; its offsets stay
            await c.eventually(lambda: slave.consumer_offset_manager.masterless.table == {}, timeout=10)
            assert await _query(c, SLAVE_KEY, 0) == 12 and await _query(c, SLAVE_KEY, 1) == 18
            await _commit(c, "broker-a", 1, 25)  # consumers are back on the master; the slave follows
            await c.eventually(lambda: slave.consumer_offset_manager.query_offset(GROUP, "T", 1) == 25, timeout=10)

    run(scenario(), timeout=60)


def test_a_slave_that_reconnects_hands_its_masterless_offsets_over_by_ha(engine_cluster, caplog):
    async def scenario():
        async with engine_cluster(slave_synchronize_interval_s=0.2) as c:
            await c.create_topic("T", read=2, write=2)
            slave = await start_slave(c, slave_synchronize_interval_s=0.2)
            await wait_connected(c)
            await produce(c, "T", 10)
            await wait_caught_up(c)
            await c.eventually(lambda: slave.topic_config_manager.select_topic_config("T") is not None, timeout=10)
            await slave.store.ha_client.stop()  # the link is cut while the master lives on (a partition)
            await _commit(c, SLAVE_KEY, 1, 4)
            assert slave.consumer_offset_manager.masterless.table == {"T@cg": {1: 4}}
            caplog.set_level("INFO", logger="brokers.engine.broker")
            slave.store.ha_client.start()
            await c.eventually(
                lambda: c.brokers["broker-a"].consumer_offset_manager.query_offset(GROUP, "T", 1) == 4, timeout=15
            )
            assert any(
                "slave" in r.getMessage() and "connected by HA" in r.getMessage() and "took 1" in r.getMessage()
                for r in caplog.records
            )

    run(scenario(), timeout=60)
