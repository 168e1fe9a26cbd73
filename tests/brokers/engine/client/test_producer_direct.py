"""Producer.send / send_batch from the caller's thread (direct connections) against the loop path they replace.

Each scenario runs with ``direct_send=True`` (the default) and ``direct_send=False`` (the client
instance's loop, as before), on real brokers over real sockets, and the two must give the same
results and the same errors.
"""

from __future__ import annotations

import concurrent.futures
import re

import pytest

from brokers.engine.client import ClientConfig, Message, MessageQueue, Producer, ProducerConfig, SendStatus
from brokers.engine.client.errors import MQClientError
from brokers.engine.client.admin_errors import BrokerSystemError, NoPermission
from brokers.engine.common.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingError
from tests.brokers.engine.client._cluster import create_topic, wait_for_route
from tests.brokers.engine.client.test_producer import _pull_all

PATHS = pytest.mark.parametrize("direct", [True, False], ids=["direct", "loop"])


def _producer(cluster, group: str, direct: bool, **config) -> Producer:
    return Producer(group, cluster.namesrv_addr, config=ProducerConfig(direct_send=direct, **config)).start()


def _shape(result) -> tuple:
    """What a SendResult says, minus what differs from send to send (ids, offsets)."""
    return (
        result.status,
        result.message_queue.topic,
        bool(result.msg_id),
        bool(result.offset_msg_id),
        result.region_id,
    )


def _error(call) -> tuple:
    try:
        call()
    except RemotingError as exc:
        return (
            type(exc),
            getattr(exc, "code", None),
            re.sub(r"producer: [0-9.:]+", "producer: <addr>", str(exc)),
        )  # our port differs
    raise AssertionError("no error")


@PATHS
def test_results_and_stored_messages_are_those_of_the_loop_path(module_cluster, module_admin, topic_name, direct):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    producer = _producer(module_cluster, f"direct_same_{direct}", direct)
    try:
        big = bytes(range(256)) * 40  # 10 KiB: compressed on the wire, whole again when pulled
        singles = [
            producer.send(Message(topic_name, f"s{i}".encode(), tags="T", keys=["k1", "k2"], properties={"p": "v"}))
            for i in range(8)
        ]
        own_id = producer.send(
            Message(topic_name, b"own", properties={PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "MY-ID-1"})
        )
        compressed = producer.send(Message(topic_name, big))
        to_queue = producer.send(Message(topic_name, b"q"), mq=MessageQueue(topic_name, "broker-b", 1))
        batch = producer.send_batch([Message(topic_name, f"b{i}".encode(), tags="B") for i in range(5)])
    finally:
        producer.shutdown()
    results = [*singles, own_id, compressed, to_queue, batch]
    assert {_shape(r) for r in results} == {(SendStatus.SEND_OK, topic_name, True, True, "DefaultRegion")}
    assert {r.message_queue.broker_name for r in singles} == {"broker-a", "broker-b"}  # round robin over both brokers
    assert own_id.msg_id == "MY-ID-1"
    assert to_queue.message_queue == MessageQueue(topic_name, "broker-b", 1)
    assert len(batch.msg_id.split(",")) == 5
    stored = {m.uniq_key: (mq, m) for mq, m in _pull_all(module_cluster, topic_name)}
    for r in (*singles, own_id, compressed, to_queue):
        mq, m = stored[r.msg_id]
        assert (mq, m.queue_offset) == (r.message_queue, r.queue_offset)
    assert stored[compressed.msg_id][1].body == big
    first = stored[singles[0].msg_id][1]
    assert (first.body, first.properties["TAGS"], first.properties["KEYS"], first.properties["p"]) == (
        b"s0",
        "T",
        "k1 k2",
        "v",
    )
    offsets = sorted(stored[i][1].queue_offset for i in batch.msg_id.split(","))
    assert offsets == list(range(batch.queue_offset, batch.queue_offset + 5))  # one queue, consecutive


def test_client_and_broker_errors_are_those_of_the_loop_path(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    module_admin.create_or_update_topic_in_cluster(
        module_cluster.cluster, TopicConfig(topic_name + "_ro", 2, 2, perm=4)
    )  # read only
    wait_for_route(module_admin, topic_name + "_ro", 2)
    errors = {}
    for direct in (True, False):
        producer = _producer(module_cluster, f"direct_errors_{direct}", direct, retry_times_when_send_failed=1)
        try:
            errors[direct] = [
                _error(
                    lambda: producer.send(Message("SCHEDULE_TOPIC_XXXX", b"x"))
                ),  # a topic producers may not send to
                _error(lambda: producer.send(Message(topic_name, b""))),  # empty body
                _error(lambda: producer.send_batch([])),
                _error(lambda: producer.send_batch([Message(topic_name, b"1"), Message(topic_name + "x", b"2")])),
                _error(
                    lambda: producer.send(Message(topic_name, b"x"), mq=MessageQueue(topic_name, "broker-c", 0))
                ),  # no such broker
                _error(lambda: producer.send(Message(topic_name + "_ro", b"x"))),  # read only: no writable queue
                _error(
                    lambda: producer.send(Message(topic_name, b"x"), mq=MessageQueue(topic_name, "broker-a", 50))
                ),  # the broker refuses
                _error(
                    lambda: producer.send_batch(
                        [Message(topic_name, b"x")], mq=MessageQueue(topic_name, "broker-b", 50)
                    )
                ),
            ]
        finally:
            producer.shutdown()
    assert errors[True] == errors[False]
    kinds = [(kind, code) for kind, code, _ in errors[True]]
    assert kinds[:6] == [(MQClientError, kinds[0][1])] * 6
    assert kinds[6:] == [(BrokerSystemError, ResponseCode.SYSTEM_ERROR)] * 2  # the typed MQBrokerError of the code


@PATHS
def test_a_stopped_broker_is_retried_on_the_other_one(tmp_path, direct):
    from brokers.engine.client.admin import BlockingMQAdminClient
    from tests.brokers.engine.client._cluster import EmbeddedCluster

    cluster = EmbeddedCluster(tmp_path).start()
    try:
        with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
            create_topic(admin, cluster, "DirectStop", queues=2)
        producer = Producer(
            "direct_stop",
            cluster.namesrv_addr,
            client_config=ClientConfig(poll_name_server_interval_s=60),
            config=ProducerConfig(direct_send=direct, send_timeout_s=2.0),
        ).start()
        try:
            assert {producer.send(Message("DirectStop", b"before")).message_queue.broker_name for _ in range(4)} == {
                "broker-a",
                "broker-b",
            }
            batch_before = {
                producer.send_batch([Message("DirectStop", b"b")]).message_queue.broker_name for _ in range(4)
            }
            assert batch_before == {"broker-a", "broker-b"}
            cluster.run(cluster.brokers["broker-a"].stop())  # its connections (pooled ones included) drop
            results = [producer.send(Message("DirectStop", f"after{i}".encode())) for i in range(10)]
            results += [producer.send_batch([Message("DirectStop", f"batch{i}".encode())]) for i in range(4)]
            assert all(r.status is SendStatus.SEND_OK and r.message_queue.broker_name == "broker-b" for r in results)
            with pytest.raises(RemotingError):  # to a given queue: one attempt, no retry
                producer.send(Message("DirectStop", b"x"), mq=MessageQueue("DirectStop", "broker-a", 0))
        finally:
            producer.shutdown()
    finally:
        cluster.stop()


def test_threads_send_at_once_and_shutdown_closes_the_connections(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=4)
    producer = _producer(module_cluster, "direct_threads", True)
    direct = producer._direct
    assert direct is not None
    try:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda i: producer.send(Message(topic_name, f"t{i}".encode())), range(120)))
            batches = list(pool.map(lambda i: producer.send_batch([Message(topic_name, b"x")] * 3), range(12)))
        assert all(r.status is SendStatus.SEND_OK for r in results + batches)
        assert len({r.msg_id for r in results}) == 120
        assert len({(r.message_queue, r.queue_offset) for r in results}) == 120  # no two answers mixed up
        idle = [c for conns in direct._idle.values() for c in conns]
        assert idle and len(idle) <= 2 * direct.max_idle_per_addr
    finally:
        producer.shutdown()
    assert all(c.sock.fileno() == -1 for c in idle)  # closed
    with pytest.raises(MQClientError, match="not started"):
        producer.send(Message(topic_name, b"late"))
    with pytest.raises(MQClientError, match="not started"):
        producer.send_batch([Message(topic_name, b"late")])


def test_sends_from_the_instance_loop_thread_still_refuse(module_cluster, module_admin, topic_name):
    """A send from the loop's own thread (a misuse) is refused as before, not run on a blocking socket there."""
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    producer = _producer(module_cluster, "direct_loop_thread", True)
    try:
        instance = producer._running()

        async def from_loop() -> str:
            try:
                producer.send(Message(topic_name, b"x"))
            except RuntimeError as exc:
                return str(exc)
            return "sent"

        assert "deadlock" in instance.call(from_loop())
    finally:
        producer.shutdown()


def test_direct_sends_are_signed_and_refusals_match_the_loop_path(tmp_path):
    from brokers.engine.client.admin import BlockingMQAdminClient
    from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, SUB_ONLY, acl_text, start_acl_cluster, write_acl

    cluster = start_acl_cluster(tmp_path / "stores", write_acl(tmp_path / "plain_acl.yml", acl_text()))
    try:
        with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig("DirectAcl", 2, 2))
            wait_for_route(admin, "DirectAcl", 1)
        refusals = {}
        for direct in (True, False):
            with Producer(
                f"direct_acl_{direct}",
                cluster.namesrv_addr,
                config=ProducerConfig(direct_send=direct),
                access_key=DEMO[0],
                secret_key=DEMO[1],
            ) as producer:
                assert producer.send(Message("DirectAcl", b"signed")).status is SendStatus.SEND_OK
                assert producer.send_batch([Message("DirectAcl", b"signed")] * 2).status is SendStatus.SEND_OK
            with Producer(
                f"direct_acl_sub_{direct}",
                cluster.namesrv_addr,
                config=ProducerConfig(direct_send=direct),
                access_key=SUB_ONLY[0],
                secret_key=SUB_ONLY[1],
            ) as producer:
                refusals[direct] = [
                    _error(lambda: producer.send(Message("DirectAcl", b"x"))),
                    _error(lambda: producer.send_batch([Message("DirectAcl", b"x")])),
                ]
        assert refusals[True] == refusals[False]
        assert [(kind, code) for kind, code, _ in refusals[True]] == [(NoPermission, ResponseCode.NO_PERMISSION)] * 2
    finally:
        cluster.stop()


def test_direct_connections_speak_tls_and_fail_as_the_asyncio_client_does(tmp_path, tls_certs, topic_name):
    from brokers.engine.client.direct_connection import DirectConnections
    from brokers.engine.remoting.blocking import BlockingRemotingClient
    from brokers.engine.remoting.codes import RequestCode
    from brokers.engine.remoting.command import RemotingCommand
    from brokers.engine.remoting.tls import TlsConfig
    from tests.brokers.engine.client._cluster import EmbeddedCluster

    server = TlsConfig(
        mode="enforcing", cert_file=tls_certs.server_cert, key_file=tls_certs.server_key, ca_file=tls_certs.ca
    )
    cluster = EmbeddedCluster(tmp_path, ("broker-a",), namesrv_options={"tls": server}, tls=server).start()
    try:
        addr = cluster.broker_addr("broker-a")
        trusted, other = TlsConfig.client(ca_file=tls_certs.ca), TlsConfig.client(ca_file=tls_certs.other_ca)
        direct = DirectConnections(tls=trusted)
        try:
            reply = direct.invoke(addr, RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO), 5.0)
            assert reply.code == ResponseCode.SUCCESS and reply.body
        finally:
            direct.close()
        for tls in (other, None):  # a CA that did not sign the broker's certificate; plain TCP to a TLS-only broker
            errors = []
            for client in (DirectConnections(tls=tls), BlockingRemotingClient(tls=tls)):
                try:
                    with pytest.raises(RemotingError) as caught:
                        client.invoke(addr, RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO), 3.0)
                    errors.append(caught.value)
                finally:
                    client.close()
            assert type(errors[0]) is type(errors[1])
            if tls is other:
                assert str(errors[0]) == str(errors[1]) and "failed verification" in str(errors[0])
    finally:
        cluster.stop()


def test_a_pooled_connection_the_broker_closed_costs_no_failed_attempt(module_cluster, module_admin, topic_name):
    """Brokers close idle connections (two minutes); the next send opens a new one, even a one-attempt send to a queue."""
    import time

    create_topic(module_admin, module_cluster, topic_name, queues=2)
    producer = _producer(module_cluster, "direct_idle_closed", True, retry_times_when_send_failed=0)
    try:
        mq = MessageQueue(topic_name, "broker-a", 0)
        assert producer.send(Message(topic_name, b"first"), mq=mq).status is SendStatus.SEND_OK
        direct = producer._direct
        assert direct is not None
        pooled = [c for c in direct._idle[module_cluster.broker_addr("broker-a")]]
        ours = {"%s:%d" % c.sock.getsockname()[:2] for c in pooled}
        server = module_cluster.brokers["broker-a"].server

        async def close_ours() -> int:
            victims = [ctx for ctx in server.channels if ctx.remote_addr in ours]
            for ctx in victims:
                ctx.close()
            return len(victims)

        assert module_cluster.run(close_ours()) == len(pooled) >= 1
        deadline = time.monotonic() + 5
        while not all(c.closed_by_peer() for c in pooled) and time.monotonic() < deadline:
            time.sleep(0.01)
        second = producer.send(Message(topic_name, b"second"), mq=mq)
        batch = producer.send_batch([Message(topic_name, b"third")], mq=mq)
        assert (second.status, batch.status) == (SendStatus.SEND_OK, SendStatus.SEND_OK)
        assert all(c.sock.fileno() == -1 for c in pooled)  # dropped, not reused
    finally:
        producer.shutdown()
