"""Apache's Java clients (4.9.8 and 5.5.0) signing with Apache's own ACL hook
(``AclClientRPCHook(new SessionCredentials(ak, sk))``) against Gantry's ACL (``acl_session_cluster``, the
accounts of tests/brokers/engine/acl/_acl_cluster.py): a signed producer and consumer work; a wrong
secret and a missing permission are refused, and the Java exception names the refusal."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, SUB_ONLY
from tests.fixtures.interop import JavaDriverError
from tests.interop._java_clients import CLIENTS, JavaClients, create_topic, message, unique, wait_until


@pytest.fixture(scope="module")
def acl_admin(acl_session_cluster):
    with BlockingMQAdminClient(acl_session_cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        yield admin


@pytest.fixture
def java(module_java_drivers, acl_session_cluster):
    clients = JavaClients(module_java_drivers, acl_session_cluster.namesrv_addr)
    yield clients
    clients.close()


def keys(account: tuple[str, str]) -> dict[str, str]:
    return {"accessKey": account[0], "secretKey": account[1]}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_signed_producer_and_push_consumer_send_and_consume(client, java, acl_session_cluster, acl_admin, topic_name):
    create_topic(acl_admin, acl_session_cluster, topic_name, queues=2)
    consumer = java.push(client, unique("g_acl"), topic_name, **keys(DEMO))
    producer = java.producer(client, **keys(DEMO))
    results = java.call(
        "send", producer, mode="sync", messages=[message(topic_name, f"s{i}", tags="Acl") for i in range(6)]
    )
    assert [r["status"] for r in results] == ["SEND_OK"] * 6
    got = java.received(consumer, count=6, timeout_s=20)
    assert sorted(m["body"] for m in got) == [f"s{i}" for i in range(6)]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_wrong_secret_is_refused_by_name(
    client, java, module_java_drivers, acl_session_cluster, acl_admin, topic_name
):
    """Gantry's name servers check signatures too: the route query is refused (16, naming the access key) and
    Apache's client, which logs a failed route update and goes on, answers the send with "No route info"."""
    create_topic(acl_admin, acl_session_cluster, topic_name, queues=2)
    producer = java.producer(client, accessKey=DEMO[0], secretKey="not-the-secret", retries=0)
    with pytest.raises(JavaDriverError) as refused:
        java.call("send", producer, mode="sync", messages=[message(topic_name, "forged")])
    assert refused.value.type.endswith("MQClientException") and "No route info of this topic" in refused.value.message
    client_log = module_java_drivers[client].client_log
    wait_until(
        lambda: f"CODE: 16  DESC: signature mismatch for accessKey {DEMO[0]}" in client_log.read_text(errors="replace"),
        10,
        "the client's log names the name server's refusal",
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_a_missing_permission_is_refused_by_name(client, java, acl_session_cluster, acl_admin, topic_name):
    create_topic(acl_admin, acl_session_cluster, topic_name, queues=2)
    producer = java.producer(client, retries=0, **keys(SUB_ONLY))  # SUB only: may not send
    with pytest.raises(JavaDriverError) as refused:
        java.call("send", producer, mode="sync", messages=[message(topic_name, "not allowed")])
    assert "MQBrokerException" in refused.value.message or "MQBrokerException" in refused.value.type, refused.value
    assert "CODE: 16 " in refused.value.message and "no permission" in refused.value.message.lower(), (
        refused.value.message
    )
