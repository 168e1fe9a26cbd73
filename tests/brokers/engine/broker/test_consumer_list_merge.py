"""A client's view of its group's members is the union of what the master and its slaves know.

A master that has just come back knows only the consumers that have heartbeated it since; its
slave kept every consumer through the outage. Rebalancing on the master's list alone gives a
queue to two consumers (seen in the failover drill: the group's committed offset of a queue went
backwards and forwards while a consumer not yet back on the master and one that was both held it).
Real in-process master and slave.
"""

from __future__ import annotations

import asyncio
import dataclasses

from brokers.engine.client.client_config import ClientConfig
from brokers.engine.client.loop_client_instance import LoopClientInstance
from brokers.engine.common.route import BrokerData
from brokers.engine.remoting.client import RemotingClient

from .conftest import run
from .test_broker_group import SLAVE_KEY, start_slave, wait_connected


async def _heartbeat(c, client: RemotingClient, client_id: str, broker: str) -> None:
    reply = await c.heartbeat(client, client_id, "G", {"T": "*"}, broker=broker)
    assert reply.code == 0, reply


def test_the_consumer_list_merges_the_master_and_its_slave(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T", read=4, write=4)
            await start_slave(c)
            await wait_connected(c)
            back, not_back = RemotingClient(), RemotingClient()
            try:
                for broker in ("broker-a", SLAVE_KEY):
                    await _heartbeat(c, back, "10.0.0.1@back", broker)
                await _heartbeat(
                    c, not_back, "10.0.0.2@not-back-yet", SLAVE_KEY
                )  # the master has not heard from it (yet)
                instance = LoopClientInstance(c.namesrv_addr, "merge-test")
                await instance.start()
                try:
                    route = await instance.update_topic_route("T")
                    assert route is not None and len(route.broker_datas[0].broker_addrs) == 2  # master and slave
                    assert await instance.find_consumer_id_list("T", "G") == ["10.0.0.1@back", "10.0.0.2@not-back-yet"]
                    assert await instance.find_consumer_id_list("T", "nobody") is None
                finally:
                    await instance.stop()
            finally:
                await back.close()
                await not_back.close()

    run(scenario(), timeout=60)


def test_a_slave_that_never_answers_does_not_hold_up_the_master_s_list(engine_cluster):
    """A hung slave (accepts, never answers) is left out after a short wait, not the request timeout."""

    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T", read=4, write=4)
            member = RemotingClient()
            silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)  # reads nothing, answers nothing
            instance = LoopClientInstance(c.namesrv_addr, "hung-slave-test", ClientConfig(api_timeout_s=120.0))
            try:
                await _heartbeat(c, member, "10.0.0.1@a", "broker-a")
                await instance.start()
                route = await instance.update_topic_route("T")
                hung = f"127.0.0.1:{silent.sockets[0].getsockname()[1]}"
                [data] = route.broker_datas
                instance.routes["T"] = dataclasses.replace(
                    route, broker_datas=(BrokerData(data.cluster, data.broker_name, {**data.broker_addrs, 1: hung}),)
                )
                assert await instance.find_consumer_id_list("T", "G") == ["10.0.0.1@a"]
            finally:
                await instance.stop()
                silent.close()
                await member.close()

    run(scenario(), timeout=30)  # with the request timeout (120 s) for the slave too, this would not finish
