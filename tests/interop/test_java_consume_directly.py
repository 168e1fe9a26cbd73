"""CONSUME_MESSAGE_DIRECTLY (309) through Gantry's broker to Apache's Java push consumers (4.9.8 and 5.5.0), unmodified:
the broker forwards the stored record to the client, whose listener consumes it once more, and the answer is
RocketMQ's ConsumeMessageDirectlyResult, read by the engine's plan (brokers/engine/client/admin_direct_consume.py),
the one the console's resend runs. A client the broker does not know is refused with SYSTEM_ERROR."""

from __future__ import annotations

import pytest

from brokers.engine.client import Message, Producer
from brokers.engine.client.admin_bodies import decode_offset_msg_id
from brokers.engine.client.admin_direct_consume import consume_message_directly
from brokers.engine.client.errors import MQBrokerError
from tests.interop._java_clients import CLIENTS, JavaClients, create_topic, unique, wait_until


@pytest.fixture
def java(module_java_drivers, module_cluster):
    clients = JavaClients(module_java_drivers, module_cluster.namesrv_addr)
    yield clients
    clients.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_java_push_consumer_consumes_a_stored_message_directly(
    client, java, module_cluster, module_admin, topic_name
) -> None:
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = unique("g_direct")
    name = java.push(client, group, topic_name)
    wait_until(
        lambda: {q for q in java.queues(name) if q[0] == topic_name}, 20, "the Java consumer holds the topic's queues"
    )
    with Producer(unique("pg_direct"), module_cluster.namesrv_addr, instance_name=unique("direct")) as producer:
        sent = producer.send(Message(topic_name, b"again", tags="TagA", keys="k-again"))
    first = java.received(name, count=1, timeout_s=20)
    assert [m["body"] for m in first] == ["again"]
    client_id = wait_until(
        lambda: [c.client_id for c in module_admin.examine_consumer_connection_info(group).connections],
        20,
        "the consumer's connection",
    )[0]
    addr, _ = decode_offset_msg_id(sent.offset_msg_id)
    result = module_admin.driver.run(
        consume_message_directly(
            addr, group, client_id, sent.offset_msg_id, topic=topic_name, broker_name=sent.message_queue.broker_name
        )
    )
    assert result.consume_result == "CR_SUCCESS" and result.ok and not result.order and result.spent_ms >= 0
    again = java.received(name, count=2, timeout_s=20)
    assert [m["body"] for m in again] == ["again", "again"] and again[1]["keys"] == "k-again"
    with pytest.raises(MQBrokerError) as refused:
        module_admin.driver.run(
            consume_message_directly(addr, group, "127.0.0.1@nobody", sent.offset_msg_id, topic=topic_name)
        )
    assert refused.value.code != 0
    java.shutdown(name)
