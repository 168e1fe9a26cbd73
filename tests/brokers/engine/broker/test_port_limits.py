"""Limits on the broker's port (docs/security.md): a real broker on loopback, attacked with raw sockets,
while a producer on its own connection keeps sending. Behaviour is asserted (closed, refused,
answered, still serving), never a duration."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import struct

from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.limits import ConnectionLimits
from tests.brokers.engine.broker.conftest import run


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(field)


async def _closed_by_peer(reader: asyncio.StreamReader, within_s: float = 10.0) -> bool:
    """True when the peer closed the connection (EOF or reset) before ``within_s``."""
    try:
        while True:
            if not await asyncio.wait_for(reader.read(65536), within_s):
                return True
    except TimeoutError:  # before OSError, of which it is a subclass
        return False
    except (ConnectionError, OSError):
        return True


async def _send_ok(c, n: int = 3) -> None:
    for i in range(n):
        response = await c.send("L", f"m{i}".encode())
        assert response.code == ResponseCode.SUCCESS, response


def _frame(header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">ii", 4 + len(header) + len(body), len(header)) + header + body


def test_at_the_cap_the_oldest_unauthenticated_connections_make_room_and_fds_stay_bounded(engine_cluster):
    # defer_accept_s=0: silent sockets reach the broker at once (as they do past the kernel's deferral)
    async def scenario():
        async with engine_cluster(
            limits=ConnectionLimits(max_connections=20, max_connections_per_address=20, defer_accept_s=0)
        ) as c:
            await c.create_topic("L", read=1, write=1)
            await _send_ok(c)  # the producer's connection: 1 of 20, authenticated by its requests
            baseline = _fd_count()
            kept = [await asyncio.open_connection("127.0.0.1", c.broker.server.port) for _ in range(19)]
            flood = [await asyncio.open_connection("127.0.0.1", c.broker.server.port) for _ in range(50)]
            await c.eventually(lambda: len(c.broker.server.channels) == 20)
            closed = await asyncio.gather(*(_closed_by_peer(r, 2.0) for r, _ in kept + flood))
            # the oldest 50 silent sockets made room for the newest, which are the ones left open
            assert closed == [True] * 50 + [False] * 19, closed
            for _, w in kept + flood[:31]:
                w.close()
            await asyncio.gather(*(w.wait_closed() for _, w in kept + flood[:31]), return_exceptions=True)
            assert _fd_count() <= baseline + 2 * 19 + 5  # the open ones, both ends; nothing of the others
            await _send_ok(c)  # the producer was never closed
            for _, w in flood[31:]:
                w.close()
            await c.eventually(lambda: len(c.broker.server.channels) == 1)

    run(scenario(), timeout=60)


def test_a_new_connection_is_refused_only_when_every_connection_has_authenticated(engine_cluster):
    async def scenario():
        async with engine_cluster(limits=ConnectionLimits(max_connections=3, defer_accept_s=0)) as c:
            await c.create_topic("L", read=1, write=1)
            await _send_ok(c)  # the test's own client connection
            peers = [await asyncio.open_connection("127.0.0.1", c.broker.server.port) for _ in range(2)]
            get = _frame(
                json.dumps(
                    {
                        "code": RequestCode.GET_MAX_OFFSET,
                        "opaque": 1,
                        "flag": 0,
                        "language": "JAVA",
                        "version": 0,
                        "extFields": {"topic": "L", "queueId": "0"},
                    }
                ).encode()
            )
            for reader, writer in peers:  # each authenticates with a request (no ACL: any decoded request)
                writer.write(get)
                await writer.drain()
                await reader.readexactly(4)
            await c.eventually(lambda: all(ch.established for ch in c.broker.server.channels))
            reader, writer = await asyncio.open_connection("127.0.0.1", c.broker.server.port)
            assert await _closed_by_peer(reader, 5.0)  # every one of the 3 authenticated: refused
            assert not any([await _closed_by_peer(r, 0.5) for r, _ in peers])
            await _send_ok(c)
            for _, w in peers + [(reader, writer)]:
                w.close()

    run(scenario(), timeout=60)


def test_a_frame_trickling_in_is_closed_at_the_deadline(engine_cluster, caplog):
    async def scenario():
        async with engine_cluster(limits=ConnectionLimits(frame_receive_deadline_s=2.0)) as c:
            await c.create_topic("L", read=1, write=1)
            reader, writer = await asyncio.open_connection("127.0.0.1", c.broker.server.port)
            frame = _frame(
                json.dumps(
                    {
                        "code": RequestCode.GET_MAX_OFFSET,
                        "opaque": 1,
                        "flag": 0,
                        "language": "JAVA",
                        "version": 0,
                        "extFields": {"topic": "L", "queueId": "0"},
                    }
                ).encode()
            )
            sent = 0
            closed = False
            while sent < len(frame):  # one byte a second, as a slow-loris client would
                try:
                    writer.write(frame[sent : sent + 1])
                    await writer.drain()
                except (ConnectionError, OSError):
                    closed = True
                    break
                sent += 1
                await _send_ok(c, 1)  # the broker keeps serving the producer meanwhile
                if await _closed_by_peer(reader, within_s=1.0):
                    closed = True
                    break
            assert closed and sent < len(frame), f"connection still open after {sent} of {len(frame)} bytes"
            writer.close()
            await _send_ok(c)
        assert any("frame-deadline" in r.getMessage() for r in caplog.records)

    run(scenario(), timeout=120)


def test_idle_between_frames_is_not_the_frame_deadline(engine_cluster):
    async def scenario():
        async with engine_cluster(limits=ConnectionLimits(frame_receive_deadline_s=0.5)) as c:
            await c.create_topic("L", read=1, write=1)
            await _send_ok(c)
            await asyncio.sleep(1.5)  # idle three deadlines long: no frame started, nothing closed
            await _send_ok(c)

    run(scenario())


def test_pipelined_reads_never_read_are_bounded_and_closed(engine_cluster, caplog):
    async def scenario():
        async with engine_cluster() as c:  # the default limits
            await c.create_topic("L", read=1, write=1)
            body = os.urandom(2048)
            for _ in range(32):
                assert (await c.send("L", body)).code == ResponseCode.SUCCESS
            pull = RemotingCommand.request(
                RequestCode.PULL_MESSAGE,
                {
                    "consumerGroup": "cg",
                    "topic": "L",
                    "queueId": 0,
                    "queueOffset": 0,
                    "maxMsgNums": 32,
                    "sysFlag": 4,
                    "commitOffset": 0,
                    "suspendTimeoutMillis": 0,
                    "subVersion": 0,
                    "subscription": "*",
                    "expressionType": "TAG",
                },
            ).encode()
            # one 64 KiB answer each: 10k of them unread would be 650 MiB of queued responses
            reader, writer = await asyncio.open_connection("127.0.0.1", c.broker.server.port, limit=1 << 16)
            writer.transport.pause_reading()  # never read a byte of the answers
            rss_before = _status_kib("VmRSS")
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset VmHWM, the peak RSS, to now
            for _ in range(10_000):
                writer.write(pull)

            def closed() -> bool:  # the reader was closed for its queued answers
                return any("queued-bytes" in r.getMessage() for r in caplog.records)

            await c.eventually(closed, timeout=60)
            await c.eventually(lambda: len(c.broker.server.channels) == 1)
            growth_mib = (_status_kib("VmHWM") - rss_before) / 1024
            assert growth_mib < 64, f"peak RSS grew {growth_mib:.0f} MiB"
            writer.transport.abort()
            await _send_ok(c)

    run(scenario(), timeout=120)


def test_deep_huge_and_overflowing_headers_get_an_error_and_no_traceback(engine_cluster, caplog):
    caplog.set_level(logging.DEBUG, logger="brokers.engine")

    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("L", read=1, write=1)
            reader, writer = await asyncio.open_connection("127.0.0.1", c.broker.server.port)

            async def answer() -> RemotingCommand:
                (total,) = struct.unpack(">i", await reader.readexactly(4))
                return RemotingCommand.decode(await reader.readexactly(total))

            deep = b'{"code":30,"opaque":71,"flag":0,"extFields":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
            shallow_but_deep = (
                b'{"code":30,"opaque":72,"flag":0,"extFields":{"a":' + b"[" * 30_000 + b"]" * 30_000 + b"}}"
            )
            deep_body = json.dumps({"code": RequestCode.HEART_BEAT, "opaque": 73, "flag": 0}).encode()
            overflow = b'{"code":30,"flag":0,"opaque":1e999}'
            for header, body, opaque in (
                (deep, b"", 71),
                (shallow_but_deep, b"", 72),
                (deep_body, b"[" * 100_000, 73),
                (overflow, b"", None),
            ):
                writer.write(_frame(header, body))
                response = await answer()
                assert response.is_response and opaque in (None, response.opaque), response
                assert response.code == ResponseCode.SYSTEM_ERROR, response
                await _send_ok(c, 1)
            # the connection still serves a good request after the bad ones
            writer.write(
                RemotingCommand(
                    code=RequestCode.GET_MAX_OFFSET, opaque=74, ext_fields={"topic": "L", "queueId": "0"}
                ).encode()
            )
            good = await answer()
            assert good.opaque == 74 and good.code == ResponseCode.SUCCESS, good
            writer.close()
        tracebacks = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
        assert not tracebacks, [r.getMessage() for r in tracebacks]

    run(scenario(), timeout=60)


def test_a_pull_or_heartbeat_naming_too_many_tags_is_refused(engine_cluster):
    async def scenario():
        async with engine_cluster(
            max_heartbeat_bytes=8 << 20
        ) as c:  # the tag limits, not the body size, are under test
            await c.create_topic("L", read=1, write=1)
            many = " || ".join(f"t{i}" for i in range(5000))  # 34 KB: under the header cap
            response = await c.pull("L", sub=many)
            assert response.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED and "limit of 1024" in response.remark
            huge = " || ".join(f"tag{i}" for i in range(100_000))  # 1 MB: over the header cap
            response = await c.pull("L", sub=huge)
            assert response.code == ResponseCode.SYSTEM_ERROR and "exceeds the 65536-byte limit" in response.remark
            beat = await c.heartbeat(c.client, "cid", "G", {"L": huge})  # in the body: counted before parsing
            assert beat.code == ResponseCode.SYSTEM_ERROR and "more than 16384 tags in all" in beat.remark
            beat = await c.heartbeat(c.client, "cid", "G", {"L": many})
            assert beat.code == ResponseCode.SYSTEM_ERROR and "5000 tags, more than the limit of 1024" in beat.remark
            assert (await c.heartbeat(c.client, "cid", "G", {"L": "a || b"})).code == ResponseCode.SUCCESS
            await _send_ok(c)

    run(scenario(), timeout=60)


def test_a_large_heartbeat_read_off_the_event_loop_registers_all_it_names(engine_cluster):
    """A heartbeat body past 16 KiB is read on a worker thread (HEARTBEAT_INLINE_BYTES): what it names is
    registered all the same, and one past its limits is refused by name."""

    async def scenario():
        async with engine_cluster(max_heartbeat_bytes=8 << 20) as c:  # the count limit, not the body size
            topics = [f"Big{i}" for i in range(600)]
            for topic in topics:
                await c.create_topic(topic, read=1, write=1)
            beat = await c.heartbeat(c.client, "cid", "BigGroup", {t: "a || b || c" for t in topics})
            assert beat.code == ResponseCode.SUCCESS
            table = c.broker.client_manager.get_consumer_group_info("BigGroup").subscription_table
            assert set(table) == set(topics) and set(table["Big599"].tags_set) == {"a", "b", "c"}
            many = {f"Big{i % 600}x{i}": "*" for i in range(10_001)}
            refused = await c.heartbeat(c.client, "cid", "BigGroup", many)
            assert refused.code == ResponseCode.SYSTEM_ERROR and "(max_heartbeat_subscriptions)" in refused.remark

    run(scenario(), timeout=120)


def test_auto_created_groups_are_capped_per_heartbeat_and_in_total(engine_cluster):
    async def scenario():
        async with engine_cluster(max_auto_create_groups_per_heartbeat=4, max_subscription_groups=12) as c:
            sgm = c.broker.subscription_group_manager
            body = {
                "clientID": "cid",
                "producerDataSet": [],
                "consumerDataSet": [{"groupName": f"g{i}", "subscriptionDataSet": []} for i in range(5)],
            }
            refused = await c.call(RequestCode.HEART_BEAT, None, json.dumps(body).encode())
            assert refused.code == ResponseCode.SYSTEM_ERROR and "more than the limit of 4" in refused.remark
            assert not {f"g{i}" for i in range(5)} & sgm.subscription_group_table.keys()
            for start in range(0, 12, 4):
                body["consumerDataSet"] = [
                    {"groupName": f"g{i}", "subscriptionDataSet": []} for i in range(start, start + 4)
                ]
                assert (
                    await c.call(RequestCode.HEART_BEAT, None, json.dumps(body).encode())
                ).code == ResponseCode.SUCCESS
            assert len(sgm.subscription_group_table) == 12  # 7 built-in groups, then 5 auto-created
            await sgm.flusher.wait_idle()
            stored = json.loads((sgm.path).read_text())["subscriptionGroupTable"]
            assert set(stored) == set(sgm.subscription_group_table)  # written, coalesced
            assert sgm.flusher.writes < 5

    run(scenario(), timeout=60)


def test_transaction_sends_are_refused_not_stored(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("TX", read=1, write=1)
            for sys_flag in (0x4, 0xC):  # TRANSACTION_PREPARED_TYPE, TRANSACTION_ROLLBACK_TYPE
                response = await c.send("TX", b"half", extra={"sysFlag": sys_flag})
                assert response.code == ResponseCode.NO_PERMISSION, response
                assert response.remark == "the broker[127.0.0.1] sending transaction message is forbidden"
            response = await c.send("TX", b"half", props={"TRAN_MSG": "true"})
            assert (
                response.code == ResponseCode.NO_PERMISSION
                and "sending transaction message is forbidden" in response.remark
            )
            assert await c.max_offset("TX") == 0
            assert (await c.send("TX", b"plain")).code == ResponseCode.SUCCESS
            assert [m.body for m in await c.pull_messages("TX")] == [b"plain"]

    run(scenario())


def test_a_heartbeat_naming_too_many_groups_or_bytes_is_refused_by_name_and_registers_nothing(engine_cluster):
    async def scenario():
        async with engine_cluster(max_heartbeat_groups=100, max_heartbeat_subscriptions=50) as c:
            await c.create_topic("L", read=1, write=1)

            async def beat(body: dict) -> RemotingCommand:
                return await c.call(RequestCode.HEART_BEAT, body=json.dumps(body).encode())

            producers = {"clientID": "flood", "producerDataSet": [{"groupName": f"pg{i}"} for i in range(101)]}
            answer = await beat(producers)
            assert answer.code == ResponseCode.SYSTEM_ERROR
            assert "101 producer groups, more than the limit of 100 (max_heartbeat_groups)" in answer.remark
            subs = {
                "clientID": "flood",
                "consumerDataSet": [
                    {"groupName": f"g{g}", "subscriptionDataSet": [{"topic": "L", "subString": "*"} for _ in range(10)]}
                    for g in range(6)
                ],
            }
            answer = await beat(subs)
            assert "60 subscriptions, more than the limit of 50 (max_heartbeat_subscriptions)" in answer.remark
            manager = c.broker.client_manager
            assert not manager.producer_connections("pg0") and manager.get_consumer_group_info("g0") is None
            assert (
                await beat({"clientID": "ok", "producerDataSet": [{"groupName": f"pg{i}"} for i in range(100)]})
            ).code == 0
            assert manager.producer_connections("pg99")  # at the limit: registered, in slices
            huge = {"clientID": "flood", "producerDataSet": [{"groupName": "p" * 200}] * 6000}  # ~1.3 MB
            answer = await beat(huge)  # refused from its header; the connection is closed after the answer
            assert "exceeds the limit of 1048576 (max_heartbeat_bytes)" in answer.remark
            assert not manager.producer_connections("p" * 200)

    run(scenario())


def test_a_heartbeat_declaring_a_body_over_its_limit_is_answered_from_its_header_and_closed(engine_cluster):
    """The broker refuses an oversized HEART_BEAT before reading its body: the answer comes while the
    declared 5 MB have not been sent (so a peer looping on such frames costs a header each, not 5 MB);
    the connection is closed and a new one is served."""

    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("L", read=1, write=1)
            reader, writer = await asyncio.open_connection("127.0.0.1", c.broker.server.port)
            header = json.dumps({"code": RequestCode.HEART_BEAT, "flag": 0, "opaque": 77, "language": "JAVA"}).encode()
            declared = 5 * 1024 * 1024
            writer.write(struct.pack(">ii", 4 + len(header) + declared, len(header)) + header + b"{")
            await writer.drain()
            (length,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 10))
            answer = RemotingCommand.decode(await reader.readexactly(length))
            assert answer.is_response and answer.opaque == 77 and answer.code == ResponseCode.SYSTEM_ERROR
            assert f"body of {declared} bytes exceeds the limit of 1048576 (max_heartbeat_bytes)" in answer.remark
            assert await _closed_by_peer(reader)
            writer.close()
            beat = await c.heartbeat(
                c.client, "cid", "G", {"L": "*"}
            )  # a heartbeat within the limit, another connection
            assert beat.code == ResponseCode.SUCCESS, beat
            await _send_ok(c)

    run(scenario(), timeout=60)
