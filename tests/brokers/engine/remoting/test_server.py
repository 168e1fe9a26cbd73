"""RemotingServer over real TCP on loopback: dispatch, concurrency, bad input, server->client calls."""

from __future__ import annotations

import asyncio
import json

import pytest

from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import FLAG_ONEWAY, SERIALIZE_ROCKETMQ, RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError, RemotingTimeoutError
from brokers.engine.remoting.server import RemotingServer
from tests.fixtures.waiting import eventually

ECHO = 1001
SLOW = 1002
FAIL = 1003
LATER = 1004


def run(coro, timeout: float = 20.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def frame(header: bytes, body: bytes = b"", serialize_type: int = 0, total: int | None = None) -> bytes:
    total = 4 + len(header) + len(body) if total is None else total
    return total.to_bytes(4, "big") + ((serialize_type << 24) | len(header)).to_bytes(4, "big") + header + body


def json_header(code: int, opaque: int, flag: int = 0, **ext) -> bytes:
    return json.dumps(
        {"code": code, "opaque": opaque, "flag": flag, "language": "JAVA", "version": 409, "extFields": ext}
    ).encode()


async def read_frame(reader: asyncio.StreamReader, timeout: float = 5.0) -> RemotingCommand:
    prefix = await asyncio.wait_for(reader.readexactly(4), timeout)
    data = await asyncio.wait_for(reader.readexactly(int.from_bytes(prefix, "big")), timeout)
    return RemotingCommand.decode(data)


async def close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except (ConnectionError, OSError):
        pass


async def assert_still_serving(rec) -> None:
    """A fresh connection to the recorder's server still gets answers."""
    client = RemotingClient()
    try:
        assert (await client.invoke(rec.addr, RemotingCommand.request(ECHO))).code == 0
    finally:
        await client.close()


class Recorder:
    """A server with a few handlers that record what they saw."""

    def __init__(self, **server_kwargs):
        self.server = RemotingServer(name="test", **server_kwargs)
        self.seen: list[RemotingCommand] = []
        self.closed: list[object] = []
        self.contexts: list[object] = []
        self.server.register_processor(ECHO, self.echo)
        self.server.register_processor(SLOW, self.slow)
        self.server.register_processor(FAIL, self.fail)
        self.server.register_processor(LATER, self.later)
        self.server.add_close_listener(self.closed.append)

    async def echo(self, ctx, request):
        self.seen.append(request)
        self.contexts.append(ctx)
        return request.response(ResponseCode.SUCCESS, request.ext("remark"), {"echo": request.ext("v")}, request.body)

    async def slow(self, ctx, request):
        await asyncio.sleep(float(request.ext("delay", "0")))
        return request.response(ResponseCode.SUCCESS, ext_fields={"v": request.ext("v")})

    async def fail(self, ctx, request):
        raise RuntimeError("boom: disk on fire")

    async def later(self, ctx, request):
        async def answer():
            await asyncio.sleep(0.05)
            await ctx.write_response(request.response(ResponseCode.SUCCESS, "answered later"))

        asyncio.get_running_loop().create_task(answer())
        return None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    async def __aenter__(self):
        await self.server.start()
        return self

    async def __aexit__(self, *exc):
        await self.server.stop()


def test_round_trip_and_version_language_in_response():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                response = await client.invoke(rec.addr, RemotingCommand.request(ECHO, {"v": 5}, b"payload"))
            finally:
                await client.close()
            assert response.code == 0 and response.ext_fields == {"echo": "5"} and response.body == b"payload"
            assert response.version == 409 and response.is_response
            assert rec.seen[0].ext_fields == {"v": "5"}

    run(scenario())


def test_concurrent_requests_on_one_connection_matched_by_opaque():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                # Earlier requests take longer, so responses come back in reverse order.
                requests = [RemotingCommand.request(SLOW, {"v": i, "delay": (20 - i) * 0.01}) for i in range(20)]
                responses = await asyncio.gather(*(client.invoke(rec.addr, r, 5.0) for r in requests))
                assert [r.ext("v") for r in responses] == [str(i) for i in range(20)]
                assert len(rec.server.channels) == 1
            finally:
                await client.close()

    run(scenario())


def test_slow_handler_does_not_block_the_connection():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                slow = asyncio.ensure_future(
                    client.invoke(rec.addr, RemotingCommand.request(SLOW, {"delay": 1.0}), 5.0)
                )
                await asyncio.sleep(0.05)
                fast = await client.invoke(rec.addr, RemotingCommand.request(ECHO, {"v": 1}), 5.0)
                assert fast.code == 0
                assert not slow.done()  # answered while the slow one still waits (latency: bench/latency_bench.py)
                assert (await slow).code == 0
            finally:
                await client.close()

    run(scenario())


def test_oneway_request_is_handled_without_reply():
    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            writer.write(frame(json_header(ECHO, 1, FLAG_ONEWAY, v="one")))
            writer.write(frame(json_header(999, 3, FLAG_ONEWAY)))  # unknown and oneway: still silent
            writer.write(frame(json_header(FAIL, 4, FLAG_ONEWAY)))  # failing and oneway: still silent
            writer.write(frame(json_header(ECHO, 2, 0, v="two")))
            await writer.drain()
            first = await read_frame(reader)
            assert first.opaque == 2 and first.ext("echo") == "two"
            assert [c.ext("v") for c in rec.seen] == ["one", "two"]
            await close_writer(writer)

    run(scenario())


def test_unknown_code_answered_request_code_not_supported():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                response = await client.invoke(rec.addr, RemotingCommand.request(999))
            finally:
                await client.close()
            assert response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED == 3
            assert response.remark == " request type 999 not supported"

    run(scenario())


def test_default_processor_takes_unregistered_codes():
    async def scenario():
        server = RemotingServer()

        async def default(ctx, request):
            return request.response(ResponseCode.SUCCESS, f"default {request.code}")

        server.register_default_processor(default)
        await server.start()
        client = RemotingClient()
        try:
            response = await client.invoke(f"127.0.0.1:{server.port}", RemotingCommand.request(777))
            assert response.code == 0 and response.remark == "default 777"
        finally:
            await client.close()
            await server.stop()

    run(scenario())


def test_handler_exception_becomes_system_error_with_its_text():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                response = await client.invoke(rec.addr, RemotingCommand.request(FAIL))
                assert response.code == ResponseCode.SYSTEM_ERROR and response.remark == "boom: disk on fire"
                # The connection keeps serving.
                assert (await client.invoke(rec.addr, RemotingCommand.request(ECHO))).code == 0
            finally:
                await client.close()

    run(scenario())


def test_long_polling_style_late_response():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                response = await client.invoke(rec.addr, RemotingCommand.request(LATER), 3.0)
                assert response.code == 0 and response.remark == "answered later"
            finally:
                await client.close()

    run(scenario())


def test_timeout_removes_pending_entry_and_connection_survives():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                with pytest.raises(RemotingTimeoutError):
                    await client.invoke(rec.addr, RemotingCommand.request(SLOW, {"delay": 0.5}), 0.1)
                ctx = await client.get_channel(rec.addr)
                assert ctx._pending == {}
                assert (await client.invoke(rec.addr, RemotingCommand.request(ECHO))).code == 0
                await asyncio.sleep(0.6)  # the late response is dropped quietly
                assert (await client.invoke(rec.addr, RemotingCommand.request(ECHO))).code == 0
            finally:
                await client.close()

    run(scenario())


def test_oversize_frame_answered_and_connection_keeps_serving():
    async def scenario():
        async with Recorder(max_frame_size=1024) as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            big = frame(json_header(ECHO, 77), b"x" * 5000)
            writer.write(big)
            writer.write(frame(json_header(ECHO, 78, v="after")))
            await writer.drain()
            error = await read_frame(reader)
            assert error.opaque == 77 and error.code == ResponseCode.SYSTEM_ERROR
            assert error.remark == f"frame of {len(big) - 4} bytes exceeds the 1024-byte limit"
            ok = await read_frame(reader)
            assert ok.opaque == 78 and ok.ext("echo") == "after"
            assert [c.ext("v") for c in rec.seen] == ["after"]  # the oversize request never ran
            await close_writer(writer)

    run(scenario())


def test_oversize_frame_at_the_default_16_mib_limit():
    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            header = json_header(ECHO, 5)
            body_len = 16 * 1024 * 1024 - 4 - len(header) + 1  # one byte over
            writer.write(frame(header, b"", total=4 + len(header) + body_len))
            chunk = b"\0" * (1 << 20)
            remaining = body_len
            while remaining:
                writer.write(chunk[: min(len(chunk), remaining)])
                remaining -= min(len(chunk), remaining)
                await writer.drain()
            writer.write(frame(json_header(ECHO, 6, v="next")))
            await writer.drain()
            error = await read_frame(reader, 20)
            assert (
                error.opaque == 5
                and error.code == 1
                and "16777217 bytes exceeds the 16777216-byte limit" in error.remark
            )
            assert (await read_frame(reader)).opaque == 6
            await close_writer(writer)

    run(scenario(), timeout=60)


def test_malformed_json_header_answered_and_connection_keeps_serving():
    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            writer.write(frame(b'{"code":1001,"opaque":31,"flag":0,"extFields":{"v":'))
            writer.write(frame(b"\xff\xfe not json at all"))
            writer.write(frame(json_header(ECHO, 32, v="fine")))
            await writer.drain()
            first = await read_frame(reader)
            assert (
                first.opaque == 31
                and first.code == ResponseCode.SYSTEM_ERROR
                and "malformed JSON header" in first.remark
            )
            second = await read_frame(reader)
            assert second.opaque == 0 and second.code == ResponseCode.SYSTEM_ERROR
            third = await read_frame(reader)
            assert third.opaque == 32 and third.code == 0
            assert [c.ext("v") for c in rec.seen] == ["fine"]
            await close_writer(writer)

    run(scenario())


def test_header_length_beyond_frame_answered_then_connection_closed():
    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            writer.write((12).to_bytes(4, "big") + (500).to_bytes(4, "big") + b"{}{}{}{}")
            await writer.drain()
            error = await read_frame(reader)
            assert error.code == ResponseCode.SYSTEM_ERROR and "header length 500" in error.remark
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the server
            await close_writer(writer)
            await eventually(lambda: not rec.server.channels)
            assert rec.closed == []  # it never got a request through: nothing for close listeners
            # Other connections are unaffected.
            await assert_still_serving(rec)

    run(scenario())


def test_truncated_frame_then_close_dispatches_nothing():
    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            whole = frame(json_header(ECHO, 9, v="never"), b"body")
            writer.write(whole[:-3])
            await writer.drain()
            writer.close()
            await writer.wait_closed()
            await eventually(lambda: not rec.server.channels)
            assert rec.seen == [] and rec.closed == []
            await assert_still_serving(rec)

    run(scenario())


def test_binary_header_request_answered_in_binary():
    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            request = RemotingCommand(
                code=ECHO,
                language="JAVA",
                opaque=11,
                ext_fields={"v": "bin"},
                body=b"b",
                serialize_type=SERIALIZE_ROCKETMQ,
            )
            writer.write(request.encode())
            writer.write(RemotingCommand(code=999, opaque=12, serialize_type=SERIALIZE_ROCKETMQ).encode())
            await writer.drain()
            prefix = await reader.readexactly(8)
            assert prefix[4] == SERIALIZE_ROCKETMQ  # type byte of the header word
            rest = await reader.readexactly(int.from_bytes(prefix[:4], "big") - 4)
            response = RemotingCommand.decode(prefix[4:] + rest)
            assert response.serialize_type == SERIALIZE_ROCKETMQ and response.opaque == 11
            assert response.ext_fields == {"echo": "bin"} and response.body == b"b" and response.version == 409
            unknown = await read_frame(reader)
            assert unknown.opaque == 12 and unknown.code == 3 and unknown.serialize_type == SERIALIZE_ROCKETMQ
            await close_writer(writer)

    run(scenario())


def test_server_to_client_invoke_and_oneway_on_the_same_connection():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            notified: list[RemotingCommand] = []

            async def running_info(ctx, request):
                return request.response(ResponseCode.SUCCESS, body=b'{"properties":{}}')

            async def notify(ctx, request):
                notified.append(request)
                return None

            client.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, running_info)
            client.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, notify)
            try:
                await client.invoke(rec.addr, RemotingCommand.request(ECHO))
                ctx = rec.contexts[0]
                response = await ctx.invoke(
                    RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO, {"consumerGroup": "g"}), 3.0
                )
                assert response.code == 0 and response.body == b'{"properties":{}}'
                unknown = await ctx.invoke(RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY), 3.0)
                assert unknown.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
                await ctx.invoke_oneway(
                    RemotingCommand.request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": "g"})
                )
                for _ in range(100):
                    if notified:
                        break
                    await asyncio.sleep(0.01)
                assert notified[0].ext("consumerGroup") == "g" and notified[0].is_oneway
            finally:
                await client.close()

    run(scenario())


def test_close_listener_fires_when_client_disconnects():
    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            await client.invoke(rec.addr, RemotingCommand.request(ECHO))
            ctx = rec.contexts[0]
            await client.close()
            for _ in range(100):
                if rec.closed:
                    break
                await asyncio.sleep(0.01)
            assert rec.closed == [ctx] and ctx.closed
            assert rec.server.channels == []

    run(scenario())


def test_idle_connections_are_closed():
    async def scenario():
        async with Recorder(idle_close_s=0.2) as rec:
            client = RemotingClient()
            try:
                await client.invoke(rec.addr, RemotingCommand.request(ECHO))
                await asyncio.sleep(0.7)
                assert len(rec.closed) == 1 and client.addresses == []
                # The client reconnects on its own.
                assert (await client.invoke(rec.addr, RemotingCommand.request(ECHO))).code == 0
            finally:
                await client.close()

    run(scenario())


def test_stop_closes_connections_and_fails_waiting_calls():
    async def scenario():
        rec = Recorder()
        await rec.server.start()
        client = RemotingClient()
        try:
            waiting = asyncio.ensure_future(client.invoke(rec.addr, RemotingCommand.request(SLOW, {"delay": 30}), 10.0))
            await asyncio.sleep(0.1)
            await rec.server.stop()
            with pytest.raises(RemotingConnectError, match="closed"):
                await waiting
        finally:
            await client.close()

    run(scenario())


def test_waiting_handler_runs_on_in_a_task_and_a_stop_cancels_it_at_its_await():
    """A handler is started at once; one that waits goes on in a task (counted in flight), and a
    stop's cancellation reaches it at its await, so its cleanup runs."""

    async def scenario():
        rec = Recorder()
        entered, cleaned_up = asyncio.Event(), asyncio.Event()

        async def parked(ctx, request):
            entered.set()
            try:
                await asyncio.sleep(60)
            finally:
                cleaned_up.set()

        rec.server.register_processor(LATER + 1, parked)
        await rec.server.start()
        client = RemotingClient()
        try:
            assert (await client.invoke(rec.addr, RemotingCommand.request(ECHO, {"v": 1}))).code == 0
            (ctx,) = rec.server.channels
            assert ctx.in_flight == 0  # answered without waiting: no task left behind
            waiting = asyncio.ensure_future(client.invoke(rec.addr, RemotingCommand.request(LATER + 1), 10.0))
            await asyncio.wait_for(entered.wait(), 5)
            assert ctx.in_flight == 1
            slow = await client.invoke(rec.addr, RemotingCommand.request(SLOW, {"delay": 0.05, "v": 7}), 5.0)
            assert slow.ext("v") == "7"  # a handler that slept and woke in its task still answers
            await rec.server.stop()
            assert cleaned_up.is_set()
            with pytest.raises(RemotingConnectError):
                await waiting
        finally:
            await client.close()

    run(scenario())


@pytest.mark.parametrize(
    ("preferred", "forced", "peer_binary", "expected"),
    [
        (SERIALIZE_ROCKETMQ, None, False, 0),  # a peer that has only spoken JSON gets JSON
        (SERIALIZE_ROCKETMQ, None, True, SERIALIZE_ROCKETMQ),  # one that sent the binary header gets it back
        (SERIALIZE_ROCKETMQ, SERIALIZE_ROCKETMQ, False, SERIALIZE_ROCKETMQ),  # GANTRY_SERIALIZE_TYPE=ROCKETMQ forces it
        (0, 0, True, 0),  # GANTRY_SERIALIZE_TYPE=JSON (or the pure path): JSON
    ],
)
def test_server_requests_use_json_until_the_peer_speaks_binary(monkeypatch, preferred, forced, peer_binary, expected):
    from brokers.engine.remoting import command

    monkeypatch.setattr(command, "REQUEST_SERIALIZE_TYPE", preferred)
    monkeypatch.setattr(command, "SERIALIZE_FORCED", forced)

    async def scenario():
        async with Recorder() as rec:
            reader, writer = await asyncio.open_connection("127.0.0.1", rec.server.port)
            first = RemotingCommand(code=ECHO, opaque=1, serialize_type=SERIALIZE_ROCKETMQ if peer_binary else 0)
            writer.write(first.encode())
            await writer.drain()
            answer = await read_frame(reader)
            assert answer.opaque == 1 and answer.serialize_type == first.serialize_type  # an answer mirrors its request
            ctx = rec.contexts[0]
            assert not ctx.dialed and ctx.request_serialize_type() == expected
            await ctx.invoke_oneway(
                RemotingCommand.request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": "g"})
            )
            notify = await read_frame(reader)
            assert notify.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED and notify.serialize_type == expected
            await close_writer(writer)

    run(scenario())


def test_a_dialed_connection_uses_the_process_serialize_type(monkeypatch):
    from brokers.engine.remoting import command

    monkeypatch.setattr(command, "REQUEST_SERIALIZE_TYPE", SERIALIZE_ROCKETMQ)

    async def scenario():
        async with Recorder() as rec:
            client = RemotingClient()
            try:
                request = RemotingCommand.request(ECHO)
                await client.invoke(rec.addr, request)
                ctx = await client.get_channel(rec.addr)
                assert ctx.dialed and ctx.request_serialize_type() == SERIALIZE_ROCKETMQ
                assert rec.seen[0].serialize_type == SERIALIZE_ROCKETMQ
                assert rec.contexts[0].peer_sent_binary  # so the server may answer its own requests in binary
            finally:
                await client.close()

    run(scenario())
