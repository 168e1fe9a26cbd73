"""Registration with every name server, each independently; unregistration at stop."""

from __future__ import annotations

import asyncio
import socket

from brokers.engine.cluster import ClusterSpec, EngineCluster


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def _dead_addr() -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_registers_with_every_name_server_even_if_one_is_down(engine_cluster, tmp_path):
    async def scenario():
        elsewhere = await EngineCluster(ClusterSpec(str(tmp_path / "elsewhere"), groups=())).start()
        second = elsewhere.namesrvs[0]
        dead = _dead_addr()
        try:
            c = engine_cluster(broker_names=())
            async with c:
                addrs = (c.namesrv_addr, dead, elsewhere.namesrv_addr)
                broker = await c.start_broker("broker-a", namesrv_addrs=addrs)
                results = {r.namesrv_addr: r.ok for r in broker.last_register_results}
                assert results == {addrs[0]: True, dead: False, addrs[2]: True}
                assert (await c.create_topic("both")).code == 0
                for ns in (c.namesrv, second):
                    assert "both" in ns.route_info.topic_queue_table
                await broker.stop()
                for ns in (c.namesrv, second):  # UNREGISTER_BROKER at stop
                    assert "broker-a" not in ns.route_info.broker_addr_table
        finally:
            await elsewhere.stop()

    run(scenario())
