"""Apache's 5.x gRPC Java client against Gantry's 5.x endpoint with the ACL on and with TLS on.

ACL: the client signs each call with StaticSessionCredentialsProvider (its documented way); an account
of tests/brokers/engine/acl/_acl_cluster.py with the right secret sends and consumes, a wrong secret is
refused (the client's UnauthorizedException, response code 40100), and an account without PUB may not
send. TLS: with the broker's TLS enforcing, a client with ``enableSsl(true)`` sends and consumes, and a
plain-text client cannot start."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.remoting.tls import TlsConfig
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, SUB_ONLY, acl_text, write_acl
from tests.fixtures.interop import JavaDriverError
from tests.interop._grpc_clients import (
    GRPC,
    GrpcClients,
    create_group,
    create_topic,
    endpoints,
    start_grpc_cluster,
    unique,
)


def keys(account: tuple[str, str]) -> dict[str, str]:
    return {"accessKey": account[0], "secretKey": account[1]}


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("grpc-acl-cluster")
    acl_file = write_acl(root / "plain_acl.yml", acl_text())
    cluster = start_grpc_cluster(root / "stores", namesrv_options={"acl_file": str(acl_file)}, acl_file=str(acl_file))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def acl_admin(acl_cluster):
    with BlockingMQAdminClient(
        acl_cluster.namesrv_addr, timeout_s=5.0, access_key=ADMIN[0], secret_key=ADMIN[1]
    ) as admin:
        yield admin


@pytest.fixture
def acl_grpc(module_java_drivers, acl_cluster):
    clients = GrpcClients(module_java_drivers[GRPC], endpoints=endpoints(acl_cluster))
    yield clients
    clients.close()


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory, tls_certs):
    tls = TlsConfig(
        mode="enforcing", cert_file=tls_certs.server_cert, key_file=tls_certs.server_key, ca_file=tls_certs.ca
    )
    cluster = start_grpc_cluster(tmp_path_factory.mktemp("grpc-tls-cluster"), tls=tls, namesrv_options={"tls": tls})
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def tls_admin(tls_cluster, tls_certs):
    tls = TlsConfig(
        mode="enforcing", cert_file=tls_certs.client_cert, key_file=tls_certs.client_key, ca_file=tls_certs.ca
    )
    with BlockingMQAdminClient(tls_cluster.namesrv_addr, timeout_s=5.0, tls=tls) as admin:
        yield admin


@pytest.fixture
def tls_grpc(module_java_drivers, tls_cluster):
    clients = GrpcClients(module_java_drivers[GRPC], endpoints=endpoints(tls_cluster), tls=True)
    yield clients
    clients.close()


def test_a_signed_producer_and_simple_consumer_send_and_consume(acl_grpc, acl_cluster, acl_admin, topic_name):
    create_topic(acl_admin, acl_cluster, topic_name, queues=2)
    group = create_group(acl_admin, acl_cluster, unique("g_acl"))
    consumer = acl_grpc.simple(group, topic_name, **keys(DEMO))
    producer = acl_grpc.producer(topic_name, **keys(DEMO))
    acl_grpc.send(producer, *[{"topic": topic_name, "body": f"s{i}", "tag": "Acl"} for i in range(3)])
    got = acl_grpc.receive_until(consumer, 3)
    assert sorted(m["body"] for m in got) == ["s0", "s1", "s2"]
    for message in got:
        acl_grpc.ack(consumer, message)


def test_a_wrong_secret_is_refused(acl_grpc, acl_cluster, acl_admin, topic_name):
    create_topic(acl_admin, acl_cluster, topic_name, queues=2)
    with pytest.raises(JavaDriverError) as refused:
        producer = acl_grpc.producer(topic_name, accessKey=DEMO[0], secretKey="not-the-secret", maxAttempts=1)
        acl_grpc.send(producer, {"topic": topic_name, "body": "forged"})
    assert "UnauthorizedException: [request-id=" in refused.value.message, refused.value  # the client's type for 40100
    assert "response-code=40100" in refused.value.message and DEMO[0] in refused.value.message, refused.value


def test_an_account_without_pub_may_not_send(acl_grpc, acl_cluster, acl_admin, topic_name):
    create_topic(acl_admin, acl_cluster, topic_name, queues=2)
    producer = acl_grpc.producer(topic_name, maxAttempts=1, **keys(SUB_ONLY))
    with pytest.raises(JavaDriverError) as refused:
        acl_grpc.send(producer, {"topic": topic_name, "body": "not allowed"})
    assert refused.value.type.endswith("ForbiddenException"), refused.value
    assert "response-code=40300" in refused.value.message, refused.value


def test_tls_clients_send_and_consume(tls_grpc, tls_cluster, tls_admin, topic_name):
    create_topic(tls_admin, tls_cluster, topic_name, queues=2)
    group = create_group(tls_admin, tls_cluster, unique("g_tls"))
    consumer = tls_grpc.simple(group, topic_name)
    producer = tls_grpc.producer(topic_name)
    receipts = tls_grpc.send(producer, *[{"topic": topic_name, "body": f"t{i}"} for i in range(3)])
    assert len(receipts) == 3
    got = tls_grpc.receive_until(consumer, 3)
    assert sorted(m["body"] for m in got) == ["t0", "t1", "t2"]
    for message in got:
        tls_grpc.ack(consumer, message)


def test_a_plain_text_client_cannot_start_against_enforced_tls(tls_grpc, tls_cluster, tls_admin, topic_name):
    create_topic(tls_admin, tls_cluster, topic_name, queues=1)
    with pytest.raises(JavaDriverError) as refused:
        tls_grpc.producer(topic_name, tls=False, requestTimeoutMs=3000)
    assert "StatusRuntimeException: UNAVAILABLE" in refused.value.message, refused.value
