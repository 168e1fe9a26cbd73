"""Apache's Java clients (4.9.8 and 5.5.0) and a Gantry broker group run as processes (a name server, a
SYNC_MASTER and its slave): the Java producer's messages are read by a Java push consumer from the slave
after the master is SIGKILLed."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.common import json_compat
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from tests.brokers.engine._group_procs import BrokerProc, NamesrvProc, call, create_topic
from tests.interop._java_clients import CLIENTS, JavaClients, message, unique, wait_until

TOPIC = "JavaSlaveRead"


def route(namesrv: str) -> dict[int, str]:
    """The broker ids and addresses the name server routes TOPIC to."""
    reply = asyncio.run(call(namesrv, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": TOPIC}))
    if reply.code != ResponseCode.SUCCESS:
        return {}
    return {int(k): v for k, v in json_compat.loads(reply.body)["brokerDatas"][0]["brokerAddrs"].items()}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_java_consumer_drains_the_slave_after_the_master_is_killed(client, module_java_drivers, tmp_path):
    ns = NamesrvProc(tmp_path).start()
    master = BrokerProc(tmp_path, ns.addr, "broker-a", 0, "SYNC_MASTER", slave_synchronize_interval_s=1.0).start()
    slave = BrokerProc(tmp_path, ns.addr, "broker-a", 1, "SLAVE", slave_synchronize_interval_s=1.0).start()
    java = JavaClients(module_java_drivers, ns.addr)
    try:
        create_topic(master.addr, TOPIC, 2)
        wait_until(lambda: set(route(ns.addr)) == {0, 1}, 15, "the route lists the master and the slave")
        wait_until(
            lambda: TOPIC.encode() in asyncio.run(call(slave.addr, RequestCode.GET_ALL_TOPIC_CONFIG)).body,
            15,
            "the slave copied the topic",
        )
        producer = java.producer(client)
        sent = [f"s{i}" for i in range(20)]
        results = java.call("send", producer, mode="sync", messages=[message(TOPIC, body, keys=body) for body in sent])
        assert {r["status"] for r in results} == {"SEND_OK"}  # SYNC_MASTER: the slave holds each one
        java.shutdown(producer)

        master.kill()
        wait_until(lambda: set(route(ns.addr)) == {1}, 15, "the name server routes to the slave alone")
        consumer = java.push(client, unique("g_slave"), TOPIC)
        got = java.received(consumer, count=len(sent), timeout_s=30)
        assert sorted(m["body"] for m in got) == sorted(sent)
        assert all(m["keys"] == m["body"] for m in got)
        assert {m["storeHost"].rsplit(":", 1)[-1] for m in got} == {
            str(master.port)
        }  # stored by the master, read from its copy
    finally:
        java.close()
        for proc in (slave, master, ns):
            proc.kill()
