"""Apache's official 5.x Python client on Gantry's gRPC endpoint with the ACL on and with TLS on.

ACL: the client signs every call (``authorization: MQv2-HMAC-SHA1 ...``); an account with the right secret
sends and consumes, a wrong secret is refused (UnauthorizedException, 40100) and changes nothing, an
account without PUB may not send (ForbiddenException, 40300). TLS: the endpoint speaks TLS with the
broker's certificate; the client, trusting the test CA (gRPC's GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, in a
process of its own), sends and receives; a plain-text client gets no route."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.proxy.endpoint import STREAM_WINDOW
from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, SUB_ONLY, acl_text, write_acl
from tests.brokers.engine.proxy._h2 import Request
from tests.interop._grpc_clients import create_topic, start_grpc_cluster, unique
from tests.interop._python_grpc import PythonClients, message, receive_until


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("py-grpc-acl")
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
def signed(acl_cluster):
    made: list[PythonClients] = []

    def make(account: tuple[str, str]) -> PythonClients:
        made.append(
            PythonClients(acl_cluster.brokers["broker-a"].grpc_addr, access_key=account[0], secret_key=account[1])
        )
        return made[-1]

    yield make
    for clients in made:
        clients.close()


def test_signed_clients_send_and_consume(acl_cluster, acl_admin, signed):
    topic, group = unique("py_acl"), unique("py_acl_group")
    create_topic(acl_admin, acl_cluster, topic, queues=2)
    clients = signed(DEMO)
    producer = clients.producer(topic)
    for i in range(3):
        producer.send(message(topic, f"signed-{i}"))
    consumer = clients.simple(group, topic)
    got = receive_until(consumer, 3)
    assert sorted(m.body for m in got) == [b"signed-0", b"signed-1", b"signed-2"]
    for m in got:
        consumer.ack(m)


def test_a_wrong_secret_is_refused_and_sends_nothing(acl_cluster, acl_admin, signed):
    topic = unique("py_acl")
    create_topic(acl_admin, acl_cluster, topic, queues=2)
    clients = signed((DEMO[0], "not-the-secret"))
    with pytest.raises(Exception, match="40100|signature mismatch|failed to fetch topic"):  # the route is refused first
        producer = clients.producer(topic)
        producer.send(message(topic, "forged"))
    assert acl_admin.examine_topic_stats(topic).total_messages == 0  # the refused client stored nothing
    signed(DEMO).producer(topic).send(message(topic, "after"))
    assert acl_admin.examine_topic_stats(topic).total_messages == 1


def test_an_account_without_pub_may_not_send(acl_cluster, acl_admin, signed):
    topic = unique("py_acl")
    create_topic(acl_admin, acl_cluster, topic, queues=2)
    producer = signed(SUB_ONLY).producer(topic)
    with pytest.raises(Exception, match="40300|no permission to PUB"):
        producer.send(message(topic, "not allowed"))


_TLS_CLIENT = textwrap.dedent("""
    import sys
    from rocketmq import ClientConfiguration, Credentials, FilterExpression, Message, Producer, SimpleConsumer
    endpoints, topic, group = sys.argv[1:4]
    config = ClientConfiguration(endpoints, Credentials(), request_timeout=10)
    producer = Producer(config, (topic,), tls_enable=True)
    producer.startup()
    msg = Message(); msg.topic = topic; msg.body = b"over-tls"
    producer.send(msg)
    producer.shutdown()
    consumer = SimpleConsumer(config, group, {topic: FilterExpression("*")}, await_duration=2, tls_enable=True)
    consumer.startup()
    got = []
    for _ in range(10):
        got.extend(consumer.receive(16, 30) or ())
        if got:
            break
    for m in got:
        consumer.ack(m)
    consumer.shutdown()
    print("received", *[m.body.decode() for m in got])
""")


def test_tls_endpoint_with_a_trusting_client(tmp_path_factory, tls_certs):
    tls = TlsConfig(
        mode="enforcing", cert_file=tls_certs.server_cert, key_file=tls_certs.server_key, ca_file=tls_certs.ca
    )
    cluster = start_grpc_cluster(tmp_path_factory.mktemp("py-grpc-tls"), tls=tls, namesrv_options={"tls": tls})
    try:
        client_tls = TlsConfig(
            mode="enforcing", cert_file=tls_certs.client_cert, key_file=tls_certs.client_key, ca_file=tls_certs.ca
        )
        with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=5.0, tls=client_tls) as admin:
            topic = unique("py_tls")
            create_topic(admin, cluster, topic, queues=2)
        env = {**os.environ, "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": tls_certs.ca}
        run = subprocess.run(
            [sys.executable, "-c", _TLS_CLIENT, cluster.brokers["broker-a"].grpc_addr, topic, unique("py_tls_group")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.split() == ["received", "over-tls"]
        plain = PythonClients(cluster.brokers["broker-a"].grpc_addr)
        try:
            with pytest.raises(Exception, match="route|UNAVAILABLE|failed"):
                plain.producer(topic).send(message(topic, "plain text"))
        finally:
            plain.close()
    finally:
        cluster.stop()


def test_a_client_id_in_use_by_one_account_is_refused_to_another(acl_cluster, acl_admin):
    """A client id belongs to the account that first signed for it: another account can neither use it nor
    end it (NotifyClientTermination would drop the owner from its groups)."""
    import grpc

    from brokers.engine.proxy.stubs import definition_pb2 as pb
    from brokers.engine.proxy.stubs import service_pb2 as spb
    from brokers.engine.proxy.stubs import service_pb2_grpc
    from rocketmq.v5.util.signature import Signature

    def signed(account, client_id):
        config = type(
            "C", (), {"credentials": type("K", (), {"ak": account[0], "sk": account[1]})(), "namespace": ""}
        )()
        return [(k, v) for k, v in Signature.metadata(config, client_id) if k != "x-mq-client-id"] + [
            ("x-mq-client-id", client_id)
        ]

    with grpc.insecure_channel(acl_cluster.brokers["broker-a"].grpc_addr) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        heartbeat = spb.HeartbeatRequest(group=pb.Resource(name="owned_group"), client_type=pb.SIMPLE_CONSUMER)
        assert stub.Heartbeat(heartbeat, metadata=signed(DEMO, "owned-client"), timeout=10).status.code == pb.OK
        other = stub.NotifyClientTermination(
            spb.NotifyClientTerminationRequest(group=pb.Resource(name="owned_group")),
            metadata=signed(SUB_ONLY, "owned-client"),
            timeout=10,
        )
        assert other.status.code == pb.UNAUTHORIZED and "another account" in other.status.message
        assert stub.Heartbeat(heartbeat, metadata=signed(DEMO, "owned-client"), timeout=10).status.code == pb.OK


def test_an_unsigned_request_is_refused_before_its_message_is_read(acl_cluster):
    """A call the ACL refuses is answered from its metadata: the port takes no more of its request than
    the call's window, however large a message its prefix announces."""
    request = Request(
        acl_cluster.brokers["broker-a"].grpc_addr,
        "/apache.rocketmq.v2.MessagingService/SendMessage",
        1_000_000,
        metadata=(("x-mq-client-id", "unsigned-big"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2")),
    )
    try:
        assert request.pump(5.0) == "trailers", request.outcome()
    finally:
        request.close()
    assert request.sent <= STREAM_WINDOW
    answer = spb.SendMessageResponse.FromString(request.response[5:])
    assert answer.status.code == pb.UNAUTHORIZED, answer
