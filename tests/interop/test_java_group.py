"""One consumer group of Apache's Java push consumers (4.9.8 and 5.5.0) and Gantry's Python PushConsumer:
the three agree on the group's allocation (AVG over the same sorted client ids), so every queue has
exactly one owner, and every message is consumed once. Gantry's admin client reads the group: its
connections, and each Java client's own running info (GET_CONSUMER_RUNNING_INFO through the broker)."""

from __future__ import annotations

import threading

from brokers.engine.client import ClientConfig, ConsumeConcurrentlyStatus, Message, MessageQueue, Producer, PushConsumer
from tests.interop._java_clients import JavaClients, create_topic, unique, wait_until

FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


def test_java_4_java_5_and_python_consumers_share_one_group(
    module_java_drivers, module_cluster, module_admin, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=4)  # 8 queues over broker-a and broker-b
    group = unique("g_mixed")
    every_queue = {MessageQueue(topic_name, b, q) for b in ("broker-a", "broker-b") for q in range(4)}
    java = JavaClients(module_java_drivers, module_cluster.namesrv_addr)
    lock = threading.Lock()
    python_got: list[str] = []

    def listener(msgs) -> ConsumeConcurrentlyStatus:
        with lock:
            python_got.extend(m.body.decode() for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    python = PushConsumer(
        group,
        module_cluster.namesrv_addr,
        client_config=FAST,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name=unique("py"),
    )
    python.subscribe(topic_name, "*")
    python.register_listener(listener)
    try:
        python.start()
        java4 = java.push("client4", group, topic_name)
        java5 = java.push("client5", group, topic_name)

        def owners() -> dict[str, set[MessageQueue]] | None:
            held = {
                name: {MessageQueue(t, b, q) for t, b, q in java.queues(name) if t == topic_name}
                for name in (java4, java5)
            }
            held["python"] = {mq for mq in python.assigned_queues() if mq.topic == topic_name}
            claimed = [mq for queues in held.values() for mq in queues]
            return (
                held
                if len(claimed) == len(set(claimed)) == 8 and set(claimed) == every_queue and all(held.values())
                else None
            )

        held = wait_until(owners, 30, "the three consumers hold the 8 queues, each queue once")
        assert sorted(len(queues) for queues in held.values()) == [2, 3, 3]  # AVG: 8 queues over 3 clients

        connection = module_admin.examine_consumer_connection_info(group)
        client_ids = {c.client_id for c in connection.connections}
        assert client_ids == {java.client_id[java4], java.client_id[java5], python.client_id}
        assert {c.language for c in connection.connections} == {"JAVA", "PYTHON"}
        for name in (java4, java5):  # the Java clients' own account, asked through the broker
            info = module_admin.get_consumer_running_info(group, java.client_id[name])
            assert {mq for mq in info.mq_table if mq.topic == topic_name} == held[name]

        sent = [f"m{i}" for i in range(40)]
        with Producer(unique("pg"), module_cluster.namesrv_addr, instance_name=unique("mixed-p")) as producer:
            for body in sent:
                producer.send(Message(topic_name, body.encode()))

        def consumed():
            with lock:
                got = list(python_got)
            got += [m["body"] for name in (java4, java5) for m in java.received(name)]
            return got if len(got) >= len(sent) else None

        got = wait_until(consumed, 30, "every message consumed")
        assert sorted(got) == sorted(sent)  # each exactly once
        assert python_got and java.received(java4) and java.received(java5)  # all three took part
    finally:
        java.close()
        python.shutdown()
