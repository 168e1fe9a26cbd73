"""The 5.x port reads request messages through its intake: a request stalled halfway holds a read slot
only until a newer call of its pool needs one, and the rest of the stalled calls hold no more than
their HTTP/2 window; refused calls of a connection are answered ever later. The first tests drive
RequestIntake with a stand-in for grpc's context (only ``read()``) and RefusalHold with a clock of
their own; the last a broker's endpoint, with a bare HTTP/2 client and with grpc's."""

from __future__ import annotations

import asyncio
import socket
import time

import grpc
import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.proxy.endpoint import STREAM_WINDOW
from brokers.engine.proxy.intake import ReadRefused, RefusalHold, RequestIntake
from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb
from brokers.engine.proxy.stubs import service_pb2_grpc
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic
from tests.brokers.engine.proxy._h2 import Request

SEND = "/apache.rocketmq.v2.MessagingService/SendMessage"
MAX_MESSAGE = 64 * 1024
MAX_REQUEST = MAX_MESSAGE * 2 + (1 << 20)


class Arriving:
    """A call whose request arrives when the test says so (``arrive``), or never."""

    def __init__(self) -> None:
        self.message: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    async def read(self) -> bytes:
        return await self.message

    def arrive(self, data: bytes) -> None:
        self.message.set_result(data)


def test_the_budget_makes_the_slots_a_quarter_for_newcomers():
    assert RequestIntake.for_budget(128 << 20, 9 << 20).capacity == (11, 3)
    assert RequestIntake.for_budget(1, 9 << 20).capacity == (1, 1)
    with pytest.raises(ValueError, match="at least 2"):
        RequestIntake(slots=1)


def test_a_full_pool_gives_its_oldest_read_slot_to_the_newest_call_and_leaves_the_other_pool_alone():
    async def scenario() -> None:
        intake = RequestIntake(slots=4)  # 3 for established clients, 1 for newcomers
        stalled = asyncio.ensure_future(intake.read(Arriving(), established=False))
        established = [Arriving() for _ in range(3)]
        reads = [asyncio.ensure_future(intake.read(call, established=True)) for call in established]
        await asyncio.sleep(0)
        assert (intake.reading(False), intake.reading(True)) == (1, 3)
        newer = Arriving()
        second = asyncio.ensure_future(intake.read(newer, established=False))
        with pytest.raises(ReadRefused, match="newer call"):
            await stalled
        assert intake.displaced == 1 and not any(r.done() for r in reads)
        newer.arrive(b"small")
        assert await second == b"small"
        for i, call in enumerate(established):
            call.arrive(b"%d" % i)
        assert await asyncio.gather(*reads) == [b"0", b"1", b"2"]
        assert (intake.reading(False), intake.reading(True)) == (0, 0)

    asyncio.run(scenario())


def test_a_read_that_does_not_arrive_in_time_ends_and_frees_its_slot():
    async def scenario() -> None:
        intake = RequestIntake(slots=2, read_timeout_s=0.05)
        with pytest.raises(ReadRefused, match="did not arrive within"):
            await intake.read(Arriving(), established=True)
        assert intake.timed_out == 1 and intake.reading(True) == 0

    asyncio.run(scenario())


def test_refusals_of_a_connection_are_held_ever_longer_then_forgotten():
    hold = RefusalHold(forget_s=10.0, max_peers=2)
    holds = [hold.next("ipv4:10.0.0.1:5000", now=float(i)) for i in range(10)]
    assert holds == [0.0, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.0, 1.0]
    assert hold.next("ipv4:10.0.0.1:5001", now=10.0) == 0.0  # another connection: its own schedule
    assert hold.next("ipv4:10.0.0.1:5000", now=30.0) == 0.0  # 20 s without a refusal: starts over
    hold.next("ipv4:10.0.0.1:5002", now=31.0)  # a third connection: the least recently refused is forgotten
    assert hold.next("ipv4:10.0.0.1:5001", now=32.0) == 0.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = EmbeddedCluster(
        tmp_path_factory.mktemp("grpc-intake"),
        broker_names=("broker-a",),
        grpc_port=0,
        max_message_size=MAX_MESSAGE,
        grpc_request_budget=4 * MAX_REQUEST,  # 3 read slots for established clients, 1 for newcomers
    )
    made.start()
    yield made
    made.stop()


def meta(client_id: str) -> tuple[tuple[str, str], ...]:
    return (("x-mq-client-id", client_id), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2"))


def send(stub, topic: str, client_id: str) -> spb.SendMessageResponse:
    request = spb.SendMessageRequest()
    msg = request.messages.add(topic=pb.Resource(name=topic), body=b"still served")
    msg.system_properties.message_id = f"intake-{time.monotonic_ns()}"
    msg.system_properties.message_type = pb.NORMAL
    return stub.SendMessage(request, metadata=meta(client_id), timeout=5)


def test_requests_stalled_halfway_hold_one_newcomer_slot_and_established_clients_are_served(cluster):
    addr = cluster.brokers["broker-a"].grpc_addr
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        create_topic(admin, cluster, "IntakeTopic", queues=1)
    with grpc.insecure_channel(addr) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        assert send(stub, "IntakeTopic", "intake-client").status.code == pb.OK  # its session: established now
        stalled: list[Request] = []
        try:
            for i in range(6):  # each announces 1 MB, sends 600 kB of it and stalls
                stalled.append(Request(addr, SEND, 1_000_000, send=600_000, metadata=meta(f"stall-{i}")))
                assert stalled[-1].pump(0.5) is None, stalled[-1].outcome()
                assert stalled[-1].sent > STREAM_WINDOW  # the newest holds the newcomers' read slot
                for earlier in stalled[:-1]:
                    earlier.pump(0.2)
                    assert earlier.answer == "trailers" and b"newer call needed its read slot" in earlier.trailers
                started = time.monotonic()
                assert send(stub, "IntakeTopic", "intake-client").status.code == pb.OK
                assert time.monotonic() - started < 1.0
            # 20 more newcomers in a row: each takes the slot from the one before, and those not reading hold their window
            waiting = [Request(addr, SEND, 1_000_000, send=600_000, metadata=meta(f"wait-{i}")) for i in range(20)]
            stalled += waiting
            for request in waiting:
                request.pump(0.05)
            held = [r.sent for r in waiting if r.answer is None]
            assert sum(1 for sent in held if sent > STREAM_WINDOW) <= 1, held
            assert send(stub, "IntakeTopic", "intake-client").status.code == pb.OK
        finally:
            for request in stalled:
                request.close()


def test_a_connection_looping_on_malformed_requests_gets_a_handful_answered_and_others_are_served(cluster):
    addr = cluster.brokers["broker-a"].grpc_addr
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        create_topic(admin, cluster, "HoldTopic", queues=1)
    with grpc.insecure_channel(addr) as bad, grpc.insecure_channel(addr) as good:
        garbage = bad.unary_unary(SEND)
        stub = service_pb2_grpc.MessagingServiceStub(good)
        answered, started = 0, time.monotonic()
        while time.monotonic() - started < 2.0:
            with pytest.raises(grpc.RpcError) as refused:
                garbage(b"\x0a\xff\xff\xff\xff\x0f\x00garbage", metadata=meta("garbage-loop"), timeout=5)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            answered += 1
            if answered == 8:  # held by now: another connection's call is served at once
                served = time.monotonic()
                assert send(stub, "HoldTopic", "hold-client").status.code == pb.OK
                assert time.monotonic() - served < 0.5
        assert 8 <= answered <= 12  # no hold: thousands


def test_silent_sockets_from_one_address_do_not_keep_a_newcomer_from_it_out(cluster):
    host, port = cluster.brokers["broker-a"].grpc_addr.rsplit(":", 1)
    silent = [socket.create_connection((host, int(port)), timeout=5) for _ in range(500)]
    try:
        with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
            create_topic(admin, cluster, "SilentTopic", queues=1)
        started = time.monotonic()
        with grpc.insecure_channel(cluster.brokers["broker-a"].grpc_addr) as channel:
            assert send(service_pb2_grpc.MessagingServiceStub(channel), "SilentTopic", "newcomer").status.code == pb.OK
        assert time.monotonic() - started < 5.0
    finally:
        for sock in silent:
            sock.close()
