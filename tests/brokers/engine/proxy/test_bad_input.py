"""Bad input on the 5.x gRPC port gets a status naming what is wrong and changes nothing: a malformed
protobuf, an unknown topic, a receipt handle of another group or forged, a batch over the cap, a request
larger than the port takes, a call without a client id, and streams left open without reading while
another client works. Each test runs against a broker's own endpoint and through the cluster-mode proxy
(``python -m brokers.engine proxy``) in front of the same cluster."""

from __future__ import annotations

import time

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.proxy.endpoint import STREAM_WINDOW
from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb
from brokers.engine.proxy.stubs import service_pb2_grpc
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic
from tests.brokers.engine.proxy._h2 import oversized_request
from tests.brokers.engine.proxy._process import start_proxy, stop_proxy

META = [("x-mq-client-id", "bad-input-client"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = EmbeddedCluster(
        tmp_path_factory.mktemp("grpc-bad-input"), broker_names=("broker-a",), grpc_port=0, max_message_size=64 * 1024
    )
    made.start()
    yield made
    made.stop()


@pytest.fixture(scope="module")
def admin(cluster):
    with BlockingMQAdminClient(cluster.namesrv_addr) as client:
        yield client


@pytest.fixture(scope="module", params=["broker", "proxy"])
def endpoint_addr(request, cluster):
    """The gRPC address under test: broker-a's own endpoint, or a proxy's in front of the cluster."""
    if request.param == "broker":
        yield cluster.brokers["broker-a"].grpc_addr
        return
    proc, addr = start_proxy(cluster.namesrv_addr, "--max-message-size", str(64 * 1024))
    yield addr
    stop_proxy(proc)


@pytest.fixture(scope="module")
def channel(endpoint_addr):
    with grpc.insecure_channel(endpoint_addr) as made:
        yield made


@pytest.fixture(scope="module")
def stub(channel):
    return service_pb2_grpc.MessagingServiceStub(channel)


def resource(name: str) -> pb.Resource:
    return pb.Resource(name=name)


def send(stub, topic: str, *bodies: bytes, meta=META, **system) -> spb.SendMessageResponse:
    request = spb.SendMessageRequest()
    for i, body in enumerate(bodies):
        msg = request.messages.add(topic=resource(topic), body=body)
        msg.system_properties.message_id = f"bad-input-{i}-{len(bodies)}-{body[:8].hex()}"
        msg.system_properties.message_type = pb.NORMAL
        for key, value in system.items():
            setattr(msg.system_properties, key, value)
    return stub.SendMessage(request, metadata=meta, timeout=10)


def receive(stub, topic: str, group: str, batch: int = 16, invisible_s: int = 30) -> tuple[pb.Status, list[pb.Message]]:
    request = spb.ReceiveMessageRequest(
        group=resource(group),
        message_queue=pb.MessageQueue(topic=resource(topic), id=-1),
        filter_expression=pb.FilterExpression(type=pb.TAG, expression="*"),
        batch_size=batch,
        invisible_duration=Duration(seconds=invisible_s),
        long_polling_timeout=Duration(seconds=1),
    )
    status, messages = None, []
    for frame in stub.ReceiveMessage(request, metadata=META, timeout=10):
        if frame.HasField("status"):
            status = frame.status
        elif frame.HasField("message"):
            messages.append(frame.message)
    return status, messages


def total(admin, topic: str) -> int:
    return admin.examine_topic_stats(topic).total_messages


def test_malformed_protobuf_is_refused_by_status(channel, stub, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    raw = channel.unary_unary(
        "/apache.rocketmq.v2.MessagingService/SendMessage", request_serializer=None, response_deserializer=None
    )
    with pytest.raises(grpc.RpcError) as refused:
        raw(b"\x0a\xff\xff\xff\xff\x0f\x00garbage", metadata=META, timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid apache.rocketmq.v2.SendMessageRequest protobuf" in refused.value.details()
    assert total(admin, topic_name) == 0
    assert send(stub, topic_name, b"still fine").status.code == pb.OK  # the port serves on


def test_an_rpc_not_served_says_so(stub):
    answer = stub.UpdateOffset(spb.UpdateOffsetRequest(group=resource("g")), metadata=META, timeout=10)
    assert answer.status.code == pb.NOT_IMPLEMENTED and "UpdateOffset" in answer.status.message


def test_unknown_topic(stub):
    route = stub.QueryRoute(spb.QueryRouteRequest(topic=resource("no_such_topic_anywhere")), metadata=META, timeout=10)
    assert route.status.code == pb.TOPIC_NOT_FOUND and "no_such_topic_anywhere" in route.status.message
    sent = send(stub, "no_such_topic_anywhere", b"x")
    assert sent.status.code == pb.TOPIC_NOT_FOUND
    bad_name = stub.QueryRoute(spb.QueryRouteRequest(topic=resource("bad topic!")), metadata=META, timeout=10)
    assert bad_name.status.code == pb.ILLEGAL_TOPIC


def test_call_without_client_id(stub, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    sent = send(stub, topic_name, b"who am i", meta=[("x-mq-language", "PYTHON")])
    assert sent.status.code == pb.CLIENT_ID_REQUIRED
    assert total(admin, topic_name) == 0


def test_batches_over_the_cap_and_requests_over_the_port_size(stub, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    many = send(stub, topic_name, *[b"m"] * 1025)
    assert many.status.code == pb.PAYLOAD_TOO_LARGE and "1024" in many.status.message
    big = send(stub, topic_name, b"x" * (64 * 1024 + 1))
    assert big.status.code == pb.MESSAGE_BODY_TOO_LARGE
    mixed = send(stub, topic_name, b"ok", b"x" * (64 * 1024 + 1))  # one bad message: none of them stored
    assert mixed.status.code == pb.MESSAGE_BODY_TOO_LARGE
    with pytest.raises(grpc.RpcError) as refused:
        send(stub, topic_name, *[b"y" * 60_000] * 20)  # 1.2 MB: more than the port takes (2 x maxMessageSize + 1 MiB)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert total(admin, topic_name) == 0


def test_an_oversized_request_is_refused_within_one_window(stub, cluster, admin, topic_name, endpoint_addr):
    """A request announcing 20 MB, sent as fast as the port's windows allow: the port refuses it after
    taking at most its fixed window (not a window grown by bandwidth probes), and serves others after."""
    create_topic(admin, cluster, topic_name, queues=1)
    for _ in range(3):
        outcome = oversized_request(endpoint_addr, "/apache.rocketmq.v2.MessagingService/SendMessage", 20 << 20)
        assert outcome.answer in ("trailers", "rst") and outcome.sent <= STREAM_WINDOW, outcome
    assert send(stub, topic_name, b"after").status.code == pb.OK
    assert total(admin, topic_name) == 1


def test_receipt_handles_of_another_group_or_forged(stub, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    assert send(stub, topic_name, b"precious").status.code == pb.OK
    status, [mine] = receive(stub, topic_name, "owner_group", invisible_s=2)
    assert status.code == pb.OK
    handle = mine.system_properties.receipt_handle

    def ack(group: str, receipt: str) -> spb.AckMessageResponse:
        entry = spb.AckMessageEntry(message_id=mine.system_properties.message_id, receipt_handle=receipt)
        return stub.AckMessage(
            spb.AckMessageRequest(group=resource(group), topic=resource(topic_name), entries=[entry]),
            metadata=META,
            timeout=10,
        )

    other = ack("another_group", handle)
    assert other.status.code == pb.INVALID_RECEIPT_HANDLE
    fields = handle.split(" ")
    forged = ack("owner_group", " ".join([*fields[:1], str(int(fields[1]) + 1), *fields[2:]]))
    assert forged.status.code == pb.INVALID_RECEIPT_HANDLE
    garbage = ack("owner_group", "not a handle at all")
    assert garbage.status.code == pb.INVALID_RECEIPT_HANDLE and "malformed" in garbage.entries[0].status.message
    elsewhere = ack("owner_group", " ".join([*fields[:5], "broker-z", *fields[6:]]))
    assert elsewhere.status.code == pb.INVALID_RECEIPT_HANDLE and "broker-z" in elsewhere.entries[0].status.message
    # none of them acked it: it comes back to its group after the 2 s
    for _ in range(10):
        status, again = receive(stub, topic_name, "owner_group")
        if again:
            break
    assert [m.body for m in again] == [b"precious"] and again[0].system_properties.delivery_attempt == 2
    assert ack("owner_group", again[0].system_properties.receipt_handle).status.code == pb.OK


def test_bad_receive_arguments(stub, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    status, _ = receive(stub, topic_name, "g_bad_args", batch=33)
    assert status.code == pb.BAD_REQUEST and "batch_size" in status.message
    status, _ = receive(stub, topic_name, "g_bad_args", invisible_s=0)
    assert status.code == pb.ILLEGAL_INVISIBLE_TIME
    status, _ = receive(stub, topic_name, "bad group!")
    assert status.code == pb.ILLEGAL_CONSUMER_GROUP


def test_streams_left_open_do_not_stop_others(cluster, admin, stub, topic_name, endpoint_addr):
    create_topic(admin, cluster, topic_name, queues=1)
    idle = [grpc.insecure_channel(endpoint_addr) for _ in range(20)]
    try:
        calls = []
        for i, ch in enumerate(idle):
            other = service_pb2_grpc.MessagingServiceStub(ch)
            telemetry = other.Telemetry(iter(()), metadata=[("x-mq-client-id", f"idle-{i}")], timeout=30)  # never read
            request = spb.ReceiveMessageRequest(
                group=resource("idle_group"),
                message_queue=pb.MessageQueue(topic=resource(topic_name), id=-1),
                batch_size=32,
                invisible_duration=Duration(seconds=30),
                long_polling_timeout=Duration(seconds=20),
            )
            calls += [telemetry, other.ReceiveMessage(request, metadata=[("x-mq-client-id", f"idle-{i}")], timeout=30)]
        assert send(stub, topic_name, b"through").status.code == pb.OK
        for call in calls:
            call.cancel()
    finally:
        for ch in idle:
            ch.close()


def test_deliveries_nobody_reads_do_not_hold_the_receive_slots(cluster, admin, stub, topic_name, endpoint_addr):
    """More receives than the endpoint's receive slots, each given messages of 60 KB (a pop answers a few
    hundred KB) that its client never reads (grpc's flow control holds the writes past 64 KB): another
    consumer still gets its messages at once."""
    from brokers.engine.proxy.service import RECEIVE_SLOTS

    create_topic(admin, cluster, topic_name, queues=1)
    for _ in range(4):
        assert send(stub, topic_name, *[b"s" * (60 * 1024)] * 8).status.code == pb.OK
    no_growth = [("grpc.http2.bdp_probe", 0)]  # the windows stay at 64 KB
    stalled = [grpc.insecure_channel(endpoint_addr, options=no_growth) for _ in range(RECEIVE_SLOTS + 2)]
    try:
        calls = []
        for i, ch in enumerate(stalled):
            request = spb.ReceiveMessageRequest(
                group=resource(f"stalled_group_{i}"),  # a group each: every one of them is given all 32
                message_queue=pb.MessageQueue(topic=resource(topic_name), id=-1),
                batch_size=32,
                invisible_duration=Duration(seconds=60),
                long_polling_timeout=Duration(seconds=1),
            )
            meta = [("x-mq-client-id", f"stalled-{i}")]
            calls.append(service_pb2_grpc.MessagingServiceStub(ch).ReceiveMessage(request, metadata=meta, timeout=60))
        time.sleep(1.0)  # their pops have run and their writes wait for the clients to read
        started = time.monotonic()
        status, messages = receive(stub, topic_name, "live_group", batch=32)
        assert status.code == pb.OK and messages
        assert time.monotonic() - started < 5.0  # the stalled calls' deadline is 60 s
        for call in calls:
            call.cancel()
    finally:
        for ch in stalled:
            ch.close()


def test_a_client_whose_channel_the_broker_expired_is_served_again(cluster, stub, endpoint_addr):
    """The broker's client scan closes a silent client's channel; the client's next call starts it over
    (a new channel the broker's groups see), keeping the settings it sent. (Through the proxy a client's
    connections are remoting connections: the broker closing one is a reconnect, as for a 4.x client.)"""
    endpoint = cluster.brokers["broker-a"].grpc_endpoint
    if endpoint_addr != endpoint.addr:
        pytest.skip("the proxy: a broker expires its remoting connections as a 4.x client's (no LocalChannel)")
    heartbeat = spb.HeartbeatRequest(group=resource("expiry_group"), client_type=pb.SIMPLE_CONSUMER)
    meta = [("x-mq-client-id", "expiring-client")]
    assert stub.Heartbeat(heartbeat, metadata=meta, timeout=10).status.code == pb.OK
    first = endpoint.sessions.get("expiring-client").channel
    cluster.run(_close(first))  # what ClientManager.scan_not_active_channel does to a silent member
    assert stub.Heartbeat(heartbeat, metadata=meta, timeout=10).status.code == pb.OK
    second = endpoint.sessions.get("expiring-client").channel
    assert second is not first and not second.closed
    members = cluster.brokers["broker-a"].client_manager.get_consumer_group_info("expiry_group")
    assert members is not None and members.find_channel("expiring-client") is not None


async def _close(channel) -> None:
    channel.close()


def test_settings_naming_too_much_are_refused_and_the_last_good_ones_kept(stub, cluster, endpoint_addr):
    """A client's settings go out with each of its heartbeats: the endpoint refuses settings naming more
    than 1,000 subscriptions or publishing topics, or larger than 64 KiB, and keeps what it had."""

    def command(topics: int, expression: str = "*") -> spb.TelemetryCommand:
        out = spb.TelemetryCommand()
        out.settings.client_type = pb.PUSH_CONSUMER
        out.settings.subscription.group.name = "settings_group"
        for i in range(topics):
            entry = out.settings.subscription.subscriptions.add()
            entry.topic.name = f"T{i}"
            entry.expression.type = pb.TAG
            entry.expression.expression = expression
        return out

    def answer(sent: spb.TelemetryCommand) -> spb.TelemetryCommand:  # each the first message of a stream, read at once
        stream = stub.Telemetry(iter([sent]), metadata=meta, timeout=10)
        try:
            return next(stream)
        finally:
            stream.cancel()

    meta = [("x-mq-client-id", "settings-client"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2")]
    assert answer(command(2)).status.code == pb.OK
    too_many = answer(command(1_001))
    assert too_many.status.code == pb.BAD_REQUEST and not too_many.HasField("settings")
    assert too_many.status.message == "the settings name 1001 subscriptions, max is 1000"
    too_large = answer(command(25, "TagA || " * 400))
    assert too_large.status.code == pb.PAYLOAD_TOO_LARGE
    assert too_large.status.message.startswith("the settings take ") and "max is 65536" in too_large.status.message
    endpoint = cluster.brokers["broker-a"].grpc_endpoint
    if endpoint_addr == endpoint.addr:  # the proxy keeps its sessions in its own process
        kept = endpoint.sessions.get("settings-client").settings
        assert [e.topic.name for e in kept.subscription.subscriptions] == ["T0", "T1"]
    assert answer(command(1_000)).status.code == pb.OK  # at the limit


def test_a_request_larger_than_its_method_takes_is_refused_unparsed(stub):
    """Parsing holds the endpoint's event loop (5 MB of settings naming 200,000 topics: 11 ms), so a
    request past what its method needs is refused by its length: settings past 128 KiB, a route query
    past 256 KiB. SendMessage takes up to the port's cap (the bodies)."""
    huge = spb.TelemetryCommand()
    huge.settings.client_type = pb.PRODUCER
    for i in range(40_000):
        huge.settings.publishing.topics.add(name=f"HugeTopic{i:08d}")
    meta = [("x-mq-client-id", "huge-settings-client")]
    with pytest.raises(grpc.RpcError) as refused:
        next(stub.Telemetry(iter([huge]), metadata=meta, timeout=10))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith(
        "the apache.rocketmq.v2.TelemetryCommand request takes 840010 bytes, more than the 131072 it may"
    )
    route = spb.QueryRouteRequest(topic=pb.Resource(name="x" * 300_000))
    with pytest.raises(grpc.RpcError) as refused:
        stub.QueryRoute(route, metadata=meta, timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "more than the 262144 it may" in refused.value.details()


def test_a_heartbeat_repeating_the_last_within_a_second_stays_at_the_endpoint(stub, cluster, endpoint_addr):
    """Each heartbeat carries the client's subscriptions to the brokers: one saying what the client's last
    said within a second is answered without going to them; new settings go at once."""
    endpoint = cluster.brokers["broker-a"].grpc_endpoint
    if endpoint_addr != endpoint.addr:
        pytest.skip("the proxy's sessions are in its own process; the rule is the same code")
    meta = [("x-mq-client-id", "looping-heartbeats")]

    def subscribe(topic: str) -> None:
        command = spb.TelemetryCommand()
        command.settings.client_type = pb.PUSH_CONSUMER
        command.settings.subscription.group.name = "looping_group"
        command.settings.subscription.subscriptions.add(
            topic=resource(topic), expression=pb.FilterExpression(type=pb.TAG, expression="*")
        )
        stream = stub.Telemetry(iter([command]), metadata=meta, timeout=10)
        assert next(stream).status.code == pb.OK
        stream.cancel()

    def beat() -> None:
        request = spb.HeartbeatRequest(group=resource("looping_group"), client_type=pb.PUSH_CONSUMER)
        assert stub.Heartbeat(request, metadata=meta, timeout=10).status.code == pb.OK

    members = cluster.brokers["broker-a"].client_manager
    subscribe("LoopTopicA")
    beat()
    first = members.find_subscription_data("looping_group", "LoopTopicA").sub_version
    time.sleep(0.01)
    beat()
    assert members.find_subscription_data("looping_group", "LoopTopicA").sub_version == first  # not sent on
    subscribe("LoopTopicB")
    beat()
    assert members.find_subscription_data("looping_group", "LoopTopicB") is not None  # new settings: sent at once
    time.sleep(1.0)
    beat()
    assert members.find_subscription_data("looping_group", "LoopTopicB").sub_version > first


def test_a_connection_looping_on_oversized_requests_gets_a_handful_answered(endpoint_addr):
    """Even a client with a session: a request past what its method takes is answered after its
    connection's refusal hold, so a loop of them gets a handful answered, then one a second."""
    meta = [("x-mq-client-id", "oversized-loop")]
    route = spb.QueryRouteRequest(topic=pb.Resource(name="x" * 300_000))
    with grpc.insecure_channel(endpoint_addr) as channel:
        own = service_pb2_grpc.MessagingServiceStub(channel)
        assert (
            own.Heartbeat(spb.HeartbeatRequest(client_type=pb.PRODUCER), metadata=meta, timeout=10).status.code == pb.OK
        )
        answered, started = 0, time.monotonic()
        while time.monotonic() - started < 1.5:
            with pytest.raises(grpc.RpcError) as refused:
                own.QueryRoute(route, metadata=meta, timeout=10)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            answered += 1
        assert 6 <= answered <= 11  # no hold: hundreds
