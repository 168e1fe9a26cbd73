"""Apache's Java consumers (4.9.8 and 5.5.0) filtering by message properties with SQL92
(``MessageSelector.bySql``) against Gantry brokers with ``enable_property_filter`` on."""

from __future__ import annotations

import pytest

from brokers.engine.client import Message, Producer
from tests.fixtures.interop import JavaDriverError
from tests.interop._java_clients import CLIENTS, JavaClients, create_topic, unique

SQL = "a BETWEEN 3 AND 6 AND color = 'red'"


@pytest.fixture(scope="module")
def sql_cluster(tmp_path_factory):
    """A cluster of this module's own, its brokers filtering by properties (enablePropertyFilter)."""
    from tests.brokers.engine.client._cluster import EmbeddedCluster

    cluster = EmbeddedCluster(tmp_path_factory.mktemp("sql92-cluster"), enable_property_filter=True).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def sql_admin(sql_cluster):
    from brokers.engine.client.admin import BlockingMQAdminClient

    with BlockingMQAdminClient(sql_cluster.namesrv_addr, timeout_s=3.0) as client:
        yield client


@pytest.fixture
def java(module_java_drivers, sql_cluster):
    clients = JavaClients(module_java_drivers, sql_cluster.namesrv_addr)
    yield clients
    clients.close()


def send_colours(cluster, topic: str) -> list[str]:
    """Ten messages with properties a=i and color red (even i) or blue, and one without properties; the bodies SQL selects."""
    with Producer(unique("pg"), cluster.namesrv_addr, instance_name=unique("sql-p")) as producer:
        for i in range(10):
            producer.send(
                Message(
                    topic,
                    f"m{i}".encode(),
                    tags="S",
                    properties={"a": str(i), "color": "red" if i % 2 == 0 else "blue"},
                )
            )
        producer.send(Message(topic, b"bare", tags="S"))
    return ["m4", "m6"]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_push_consumer_gets_only_what_its_sql_selects(client, java, sql_cluster, sql_admin, topic_name):
    create_topic(sql_admin, sql_cluster, topic_name, queues=1)
    name = java.push(client, unique("g_sql"), topic_name, sql=SQL)
    wanted = send_colours(sql_cluster, topic_name)
    with Producer(unique("pg"), sql_cluster.namesrv_addr, instance_name=unique("sql-last")) as producer:
        for q in range(2):  # a selected "last" on each queue, after the rest
            producer.send(
                Message(topic_name, b"last", properties={"a": "5", "color": "red"}), lambda mqs, _msg, i: mqs[i], q
            )
    got = java.received(name, count=len(wanted) + 2, timeout_s=20)
    # each queue's "last" arrived, so had everything before it: nothing unselected among them
    assert sorted(m["body"] for m in got) == sorted(wanted + ["last", "last"])
    assert all(m["props"]["color"] == "red" and 3 <= int(m["props"]["a"]) <= 6 for m in got)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_lite_pull_consumer_gets_only_what_its_sql_selects(client, java, sql_cluster, sql_admin, topic_name):
    create_topic(sql_admin, sql_cluster, topic_name, queues=1)
    wanted = send_colours(sql_cluster, topic_name)
    name = java.lite(client, unique("g_sql_lite"), topic_name, sql=SQL)
    polled = java.call("poll", name, count=len(wanted), timeoutMs=20_000, timeout_s=40)
    assert sorted(m["body"] for m in polled) == wanted
    assert java.call("poll", name, count=1, timeoutMs=1_000) == []  # and nothing more


@pytest.mark.parametrize("client", CLIENTS)
def test_a_selector_that_does_not_parse_is_refused_at_start(
    client, module_java_drivers, sql_cluster, sql_admin, topic_name
):
    create_topic(sql_admin, sql_cluster, topic_name, queues=1)
    driver = module_java_drivers[client]
    name = unique("bad_sql")
    with pytest.raises(JavaDriverError) as refused:
        driver.call(
            "push_start",
            name=name,
            group=unique("g_bad"),
            namesrv=sql_cluster.namesrv_addr,
            topic=topic_name,
            sql="a >",
        )
    assert "MQClientException" in refused.value.type
    assert "Invalid MessageSelector" in refused.value.message or "SQL92" in refused.value.message, refused.value.message
