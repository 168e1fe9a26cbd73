"""Promotion with fencing on real in-process brokers (loopback, real stores): the refusals of
GANTRY_PROMOTE_SLAVE (not a slave, wrong name or id, master alive, a dry run's plan), a slave
refusing a master of a lower epoch, a master refusing a hello of a higher epoch, and the whole
change of master: a slave promoted online, the other slave re-pointed to it, and the old master
restarted on its store: it takes no send, rejoins as a slave and cuts the tail nobody had."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.client.admin_promotion import PromotionRefusedError, promote_slave_async
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.store.ha import ha_protocol as hp
from brokers.engine.store.ha.epoch_file import EpochFile

from .conftest import run
from .test_broker_group import _store, produce, start_slave, wait_caught_up, wait_connected

S1, S2 = "broker-a#1", "broker-a#2"


async def raw_promote(addr: str, broker_name: str, broker_id: int) -> RemotingCommand:
    """GANTRY_PROMOTE_SLAVE as the wire carries it, without the client's own checks."""
    client = RemotingClient(name="raw-promote")
    ext = {"brokerName": broker_name, "brokerId": str(broker_id), "force": "false", "dryRun": "false"}
    try:
        return await client.invoke(addr, RemotingCommand.request(RequestCode.GANTRY_PROMOTE_SLAVE, ext), 5.0)
    finally:
        await client.close()


def test_promote_refusals_and_dry_run(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            await c.create_topic("T", read=2, write=2)
            await start_slave(c)
            await wait_connected(c)
            assert {r.code for r in await produce(c, "T", 10)} == {0}
            await wait_caught_up(c)
            master, slave = c.addr("broker-a"), c.addr(S1)
            # the client refuses id 0 itself, so ask the master over a raw connection: the broker refuses too
            refused = await raw_promote(master, "broker-a", 0)
            assert refused.code == ResponseCode.SYSTEM_ERROR
            assert "broker-a id 0 is not a slave (role SYNC_MASTER)" in (refused.remark or "")
            with pytest.raises(PromotionRefusedError, match="not broker-b"):
                await promote_slave_async(slave, "broker-b", 1)
            with pytest.raises(PromotionRefusedError, match="not id 3"):
                await promote_slave_async(slave, "broker-a", 3)
            with pytest.raises(PromotionRefusedError, match="is alive; stop it first or pass force"):
                await promote_slave_async(slave, "broker-a", 1)
            plan = await promote_slave_async(slave, "broker-a", 1, dry_run=True)
            assert plan.dry_run and not plan.promoted and plan.master_reachable and "alive" in plan.refused
            assert (plan.to_role, plan.epoch, plan.new_epoch) == ("SYNC_MASTER", 0, 1)
            # the slave knows what the group acknowledged as of the master's last frame
            assert 0 < plan.acked_offset <= plan.max_phy_offset == c.brokers["broker-a"].store.max_phy_offset
            # nothing changed: the master still takes sends, the slave still refuses them
            assert (await c.send("T", b"after")).code == 0
            assert (await c.send("T", b"x", broker=S1)).code == ResponseCode.SERVICE_NOT_AVAILABLE
            assert c.brokers[S1].store.epoch == 0 and c.brokers[S1].config.broker_role == "SLAVE"
            info = await c.call(RequestCode.GET_BROKER_RUNTIME_INFO, broker=S1)
            assert b"groupEpoch" in info.body

    run(scenario())


def test_epoch_refusals_on_the_ha_port(engine_cluster, tmp_path):
    async def fake_master(reader, writer):  # a "master" of epoch 1 for a slave at epoch 3
        await reader.readexactly(hp.HELLO.size)
        writer.write(
            hp.encode_welcome(
                hp.STATUS_OK,
                max_offset=4096,
                file_size=1 << 20,
                broker_addr="x:1",
                epoch=1,
                role="ASYNC_MASTER",
                history=((0, 0), (1, 0)),
            )
        )
        writer.write(hp.encode_frame_header(0, 0, 4096, 0, 1, 0))
        await writer.drain()
        await asyncio.sleep(1)
        writer.close()

    async def scenario():
        server = await asyncio.start_server(fake_master, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        EpochFile(str(tmp_path / "stale-slave")).begin(3, 0)
        async with engine_cluster() as c:
            await c.create_topic("T", read=1, write=1)
            slave = await start_slave(c, store=_store(c, "stale-slave"), ha_master_address=f"127.0.0.1:{port}")
            await c.eventually(lambda: slave.store.ha_client.state == "REFUSED")
            assert (
                "STALE_EPOCH" in slave.store.ha_client.last_refusal
                and "epoch 1, below this slave's 3" in slave.store.ha_client.last_refusal
            )
            assert slave.store.max_phy_offset == 0 and slave.store.epoch == 3
            # a hello of a higher epoch to the real master: refused; the name server still says it
            # is the master (epoch 0 is the group's), so it keeps taking sends
            master = c.brokers["broker-a"]
            reader, writer = await asyncio.open_connection("127.0.0.1", master.store.ha_port)
            writer.write(hp.encode_hello(0, epoch=7))
            head, _n = hp.decode_welcome_head(await reader.readexactly(hp.WELCOME.size))
            assert head.status_name == "STALE_EPOCH" and head.epoch == 0
            writer.close()
            await asyncio.sleep(0.3)
            assert (await c.send("T", b"still master")).code == 0
            assert master.group_member.fenced_reason == ""
        server.close()

    run(scenario())


def test_promotion_repoints_the_other_slave_and_fences_the_returning_master(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:  # ASYNC_MASTER
            await c.create_topic("T", read=2, write=2)
            s1 = await start_slave(c)
            s2 = await start_slave(c, key=S2, store_name="broker-a-slave2", broker_id=2)
            await wait_connected(c, 2)
            assert {r.code for r in await produce(c, "T", 20)} == {0}
            await wait_caught_up(c)
            await wait_caught_up(c, S2)
            s2.store.ha_client.pause()  # S2 lags ...
            assert {r.code for r in await produce(c, "T", 5, start=20)} == {0}
            await wait_caught_up(c)
            s1.store.ha_client.pause()  # ... and S1 misses the last 4 sends: the old master's own tail
            tail = await produce(c, "T", 4, start=25)
            assert {r.code for r in tail} == {0}
            old = c.brokers.pop("broker-a")
            old_end, shared = old.store.max_phy_offset, s1.store.max_phy_offset
            await old.stop()
            plan = await promote_slave_async(c.addr(S1), "broker-a", 1, dry_run=True)
            # S1's stalled link still counts as up, and it never heard of the tail it lacks
            assert plan.master_reachable and plan.missing_bytes == 0 and "pass force" in plan.refused
            with pytest.raises(PromotionRefusedError, match="is alive"):
                await promote_slave_async(c.addr(S1), "broker-a", 1)
            done = await promote_slave_async(c.addr(S1), "broker-a", 1, force=True, role="ASYNC_MASTER")
            assert done.promoted and done.new_epoch == 1 and done.registered_with == (c.namesrv_addr,)
            assert s1.store.epoch == 1 and s1.config.broker_id == 0 and s1.store.broker_role == "ASYNC_MASTER"
            route = await c.route("T")
            assert {int(k): v for k, v in route["brokerDatas"][0]["brokerAddrs"].items()}[0] == c.addr(S1)
            assert (await c.send("T", b"on the new master", broker=S1)).code == 0
            s2.store.ha_client.resume()  # S2 finds the new master through the name server
            await c.eventually(lambda: s2.store.ha_client.connected_to.endswith(str(s1.store.ha_port)), timeout=15)
            await c.eventually(lambda: s2.store.max_phy_offset == s1.store.max_phy_offset, timeout=10)
            assert s2.store.epoch == 1 and s2.store.last_truncation is None
            # the old master comes back on its store, as master: it must not take a single send
            back = await c.start_broker("broker-a")
            refused = await c.send("T", b"to the stale master", broker="broker-a")
            assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
            await c.eventually(lambda: back.config.broker_role == "SLAVE", timeout=10)
            await c.eventually(lambda: back.store.last_truncation is not None, timeout=15)
            cut = back.store.last_truncation
            assert (cut.from_offset, cut.to_offset, cut.queue_units_removed) == (old_end, shared, 4)
            await c.eventually(lambda: back.store.max_phy_offset == s1.store.max_phy_offset, timeout=10)
            assert back.store.epoch == 1 and back.config.broker_id == 3
            assert s1.store.commitlog.read(0, shared) == back.store.commitlog.read(0, shared)

    run(scenario(), timeout=90)
