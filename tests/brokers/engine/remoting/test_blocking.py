"""BlockingRemotingClient: a server on its own loop thread, callers on plain threads."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError, RemotingTimeoutError
from brokers.engine.remoting.server import RemotingServer

ECHO, SLOW, PUSH = 3001, 3002, 3003


class ServerThread:
    """A RemotingServer running on an event loop in a background thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = RemotingServer()
        self.contexts = []

        async def echo(ctx, request):
            self.contexts.append(ctx)
            return request.response(ResponseCode.SUCCESS, ext_fields={"v": request.ext("v")})

        async def slow(ctx, request):
            await asyncio.sleep(float(request.ext("delay")))
            return request.response(ResponseCode.SUCCESS)

        async def push(ctx, request):
            reply = await ctx.invoke(RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO), 3.0)
            return request.response(ResponseCode.SUCCESS, body=reply.body)

        self.server.register_processor(ECHO, echo)
        self.server.register_processor(SLOW, slow)
        self.server.register_processor(PUSH, push)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(5)
        self.addr = f"127.0.0.1:{self.server.port}"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def server():
    srv = ServerThread()
    yield srv
    srv.stop()


def test_invoke_from_many_threads(server):
    with BlockingRemotingClient() as client:

        def call(i: int) -> str:
            return client.invoke(server.addr, RemotingCommand.request(ECHO, {"v": i}), 5.0).ext("v")

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(call, range(64)))
        assert results == [str(i) for i in range(64)]


def test_timeout_never_hangs_the_caller(server):
    with BlockingRemotingClient() as client:
        with pytest.raises(RemotingTimeoutError):  # the handler answers after 5 s (time taken: bench/latency_bench.py)
            client.invoke(server.addr, RemotingCommand.request(SLOW, {"delay": 5}), 0.3)
        assert client.invoke(server.addr, RemotingCommand.request(ECHO, {"v": "ok"}), 5.0).ext("v") == "ok"


def test_connect_error_and_oneway(server):
    with BlockingRemotingClient() as client:
        with pytest.raises(RemotingConnectError):
            client.invoke("127.0.0.1:1", RemotingCommand.request(ECHO), 2.0)
        client.invoke_oneway(server.addr, RemotingCommand.request(ECHO, {"v": "x"}))
        deadline = time.monotonic() + 5
        while not server.contexts and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.contexts


def test_server_to_client_request_through_the_facade(server):
    with BlockingRemotingClient() as client:

        async def running_info(ctx, request):
            return request.response(ResponseCode.SUCCESS, body=b"info")

        client.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, running_info)
        assert client.invoke(server.addr, RemotingCommand.request(PUSH), 5.0).body == b"info"


def test_closed_client_raises_and_close_is_idempotent(server):
    client = BlockingRemotingClient()
    assert client.invoke(server.addr, RemotingCommand.request(ECHO), 5.0).code == 0
    thread = client._thread
    client.close()
    client.close()
    assert thread is not None and not thread.is_alive()
    with pytest.raises(RemotingError):
        client.invoke(server.addr, RemotingCommand.request(ECHO), 5.0)
