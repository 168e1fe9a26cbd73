"""The 5.x port reads request messages through its intake: a request stalled halfway holds a read slot
only until a newer call of its pool needs one, and the rest of the stalled calls hold no more than
their HTTP/2 window; refused calls of a connection are answered ever later. The first tests drive
RequestIntake with a stand-in for grpc's context (only ``read()``) and RefusalHold with a clock of
their own; the last a broker's endpoint, with a bare HTTP/2 client and with grpc's."""

from __future__ import annotations

import asyncio
import queue
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


def test_the_budget_makes_the_slots_a_quarter_for_newcomers_and_a_quarter_for_streams():
    assert RequestIntake.for_budget(128 << 20, 9 << 20).capacity == (8, 3, 3)
    assert RequestIntake.for_budget(1, 9 << 20).capacity == (1, 1, 1)
    with pytest.raises(ValueError, match="at least 3"):
        RequestIntake(slots=2)


def test_a_full_pool_gives_its_oldest_read_slot_to_the_newest_call_and_leaves_the_other_pool_alone():
    async def scenario() -> None:
        intake = RequestIntake(slots=5)  # 3 for established clients, 1 for newcomers, 1 for streams
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
        intake = RequestIntake(slots=3, read_timeout_s=0.05)
        with pytest.raises(ReadRefused, match="did not arrive within"):
            await intake.read(Arriving(), established=True)
        assert intake.timed_out == 1 and intake.reading(True) == 0

    asyncio.run(scenario())


def test_a_first_stream_read_takes_the_permit_of_the_newest_silent_read_and_a_later_one_waits_its_turn():
    async def scenario() -> None:
        intake = RequestIntake(slots=8, silent_s=0.05)  # 2 permits for streams
        first = [Arriving() for _ in range(2)]
        reads = [asyncio.ensure_future(intake.read_stream(first[0], first=True))]
        await asyncio.sleep(0.02)
        reads.append(asyncio.ensure_future(intake.read_stream(first[1], first=True)))
        later = Arriving()
        waiting = asyncio.ensure_future(intake.read_stream(later, first=False))
        await asyncio.sleep(0)
        assert intake.streams_reading == (2, 1)
        later.arrive(b"already in its window")  # not read: it has no permit yet
        newest = Arriving()
        newest_read = asyncio.ensure_future(intake.read_stream(newest, first=True))
        await asyncio.sleep(0.04)  # read 0 silent by now, read 1 not yet
        assert not any(r.done() for r in (*reads, waiting, newest_read))
        with pytest.raises(ReadRefused, match="newer stream took the read permit"):
            await reads[1]  # silent too now: the newest read gives its permit to the new stream
        assert intake.displaced == 1 and not reads[0].done() and not waiting.done()
        first[0].arrive(b"settings at its tick")
        assert await reads[0] == b"settings at its tick"
        assert await waiting == b"already in its window"  # the permit read 0 gave back, in turn
        newest.arrive(b"new settings")
        assert await newest_read == b"new settings"
        assert intake.streams_reading == (0, 0) and (intake.reading(True), intake.reading(False)) == (0, 0)

    asyncio.run(scenario())


def test_a_first_stream_read_takes_a_silent_first_reads_permit_before_a_later_reads():
    async def scenario() -> None:
        intake = RequestIntake(slots=8, silent_s=0.02)  # 2 permits for streams
        silent_first = asyncio.ensure_future(intake.read_stream(Arriving(), first=True))
        await asyncio.sleep(0.01)
        waiting_later = asyncio.ensure_future(intake.read_stream(Arriving(), first=False))  # newer, and silent too
        await asyncio.sleep(0.05)
        arriving = Arriving()
        arriving.arrive(b"settings")
        assert await intake.read_stream(arriving, first=True) == b"settings"
        with pytest.raises(ReadRefused):
            await silent_first
        assert not waiting_later.done()
        waiting_later.cancel()
        await asyncio.sleep(0)

    asyncio.run(scenario())


def test_a_first_stream_read_waits_for_a_permit_given_back_and_ends_a_later_read_only_once_it_is_overdue():
    async def scenario() -> None:
        intake = RequestIntake(slots=8, lead_s=0.05)  # 2 permits; a later read is overdue after 2 x 0.05 s
        a, b = Arriving(), Arriving()
        later = [asyncio.ensure_future(intake.read_stream(call, first=False)) for call in (a, b)]
        in_turn = Arriving()
        queued = asyncio.ensure_future(intake.read_stream(in_turn, first=False))
        arriving = Arriving()
        arriving.arrive(b"settings")
        first_read = asyncio.ensure_future(intake.read_stream(arriving, first=True))
        await asyncio.sleep(0.02)
        assert not first_read.done() and intake.streams_reading == (2, 2)  # neither later read is overdue
        a.arrive(b"a's next settings")
        assert await later[0] == b"a's next settings"
        assert await first_read == b"settings"  # the permit given back, ahead of the later read in turn
        await asyncio.sleep(0)
        assert intake.streams_reading == (2, 0)  # b's read and the one that was in turn
        second = Arriving()
        second.arrive(b"more settings")
        started = asyncio.get_running_loop().time()
        assert await intake.read_stream(second, first=True) == b"more settings"
        assert asyncio.get_running_loop().time() - started >= 0.05  # it waited for the newest later read to be overdue
        with pytest.raises(ReadRefused, match="newer stream took the read permit"):
            await queued
        assert not later[1].done()
        later[1].cancel()
        await asyncio.sleep(0)

    asyncio.run(scenario())


def test_a_stream_read_ends_when_nothing_comes_a_period_and_a_grace_after_and_a_cancelled_turn_is_passed_on():
    async def scenario() -> None:
        intake = RequestIntake(slots=4, period_s=0.05, lead_s=0.01, grace_s=0.05)  # 1 permit for streams
        assert intake.next_stream_read_s == pytest.approx(0.04)
        silent = asyncio.ensure_future(intake.read_stream(Arriving(), first=True))
        gone = asyncio.ensure_future(intake.read_stream(Arriving(), first=False))
        behind = Arriving()
        queued = asyncio.ensure_future(intake.read_stream(behind, first=False))
        await asyncio.sleep(0)
        gone.cancel()  # its stream ended while it waited
        with pytest.raises(ReadRefused, match="no message on the stream within 0 s"):
            await silent
        assert intake.timed_out == 1
        behind.arrive(b"next")
        assert await queued == b"next"
        assert intake.streams_reading == (0, 0)

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
        grpc_request_budget=5 * MAX_REQUEST,  # 3 read slots for established clients, 1 for newcomers, 1 for streams
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


TELEMETRY = "/apache.rocketmq.v2.MessagingService/Telemetry"


def settings(*topics: str) -> spb.TelemetryCommand:
    command = spb.TelemetryCommand()
    command.settings.client_type = pb.PRODUCER
    for topic in topics:
        command.settings.publishing.topics.add(name=topic)
    return command


def test_telemetry_streams_are_not_read_between_settings_so_a_stalled_message_holds_about_its_window(cluster):
    """Each stream sends its settings (answered), then announces 1 MB and stalls after 600 kB: had the port
    kept a read waiting on every stream, as grpc's stream handlers do, each would hold its 600 kB."""
    addr = cluster.brokers["broker-a"].grpc_addr
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        create_topic(admin, cluster, "TelemetryTopic", queues=1)
    lead = settings("TelemetryTopic").SerializeToString()
    streams: list[Request] = []
    try:
        for i in range(20):
            streams.append(Request(addr, TELEMETRY, 1_000_000, send=600_000, metadata=meta(f"tm-{i}"), lead=lead))
            answered_by = time.monotonic() + 10
            while not streams[-1].response and streams[-1].answer is None and time.monotonic() < answered_by:
                streams[-1].pump(0.05)  # its settings answered before the next stream opens
        for stream in streams:
            stream.pump(0.2)
            assert stream.answer is None, stream.outcome()  # open: the client's next settings are read in time
            answered = spb.TelemetryCommand.FromString(stream.response[5:])
            assert answered.status.code == pb.OK and answered.settings.publishing.max_body_size == MAX_MESSAGE
            # one window; up to two when the stalled message came on the settings' heels, as here (grpc opens
            # the window as it reads the settings, before it sees that no read waits for the next message)
            assert stream.sent - stream.lead <= 2 * STREAM_WINDOW, [s.sent for s in streams]
        with grpc.insecure_channel(addr) as channel:
            assert send(service_pb2_grpc.MessagingServiceStub(channel), "TelemetryTopic", "tm-0").status.code == pb.OK
    finally:
        for stream in streams:
            stream.close()


def test_a_telemetry_streams_next_settings_are_read_a_period_after_its_last(cluster):
    """Apache's clients send their settings again every 5 minutes; the endpoint reads a stream's next
    message that long after its last (here, the endpoint's period shortened to 1 s)."""
    intake = cluster.brokers["broker-a"].grpc_endpoint.intake
    saved = intake.period_s, intake.lead_s
    intake.period_s, intake.lead_s = 1.0, 0.25
    outgoing: queue.Queue[spb.TelemetryCommand | None] = queue.Queue()
    try:
        with grpc.insecure_channel(cluster.brokers["broker-a"].grpc_addr) as channel:
            stub = service_pb2_grpc.MessagingServiceStub(channel)
            answers = stub.Telemetry(iter(outgoing.get, None), metadata=meta("tm-resend"), timeout=30)
            outgoing.put(settings("FirstTopic"))
            first = next(answers)
            answered_first = time.monotonic()
            outgoing.put(settings("FirstTopic", "SecondTopic"))  # in the stream's window at once
            second = next(answers)
            waited = time.monotonic() - answered_first
            outgoing.put(None)
            assert [t.name for t in first.settings.publishing.topics] == ["FirstTopic"]
            assert [t.name for t in second.settings.publishing.topics] == ["FirstTopic", "SecondTopic"]
            assert 0.6 <= waited < 5.0, waited
            session = cluster.brokers["broker-a"].grpc_endpoint.sessions.get("tm-resend")
            assert [t.name for t in session.settings.publishing.topics] == ["FirstTopic", "SecondTopic"]
    finally:
        intake.period_s, intake.lead_s = saved


def test_a_telemetry_stream_ends_when_its_client_says_it_terminates(cluster):
    """Java's client says NotifyClientTermination, closes its half of the stream and waits for the
    endpoint to end it: the endpoint, not reading between settings, ends it with the session."""
    outgoing: queue.Queue[spb.TelemetryCommand | None] = queue.Queue()
    with grpc.insecure_channel(cluster.brokers["broker-a"].grpc_addr) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        answers = stub.Telemetry(iter(outgoing.get, None), metadata=meta("tm-leaving"), timeout=30)
        outgoing.put(settings("LeavingTopic"))
        assert next(answers).status.code == pb.OK
        started = time.monotonic()
        assert (
            stub.NotifyClientTermination(spb.NotifyClientTerminationRequest(), metadata=meta("tm-leaving")).status.code
            == pb.OK
        )
        assert list(answers) == [] and answers.code() == grpc.StatusCode.OK
        assert time.monotonic() - started < 2.0
        outgoing.put(None)
