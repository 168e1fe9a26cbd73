"""LocalChannel: what a broker processor sees as "the connection" of a 5.x client served by the
gRPC endpoint in the broker's own process (RocketMQ's proxy in local mode does the same with its
SimpleChannel).

The endpoint turns each gRPC call into a 4.x remoting request and hands it to the broker's
processor for that code, in process, with the client's LocalChannel as the context. Processors
read ``id``, ``remote_addr``, ``attributes`` and ``closed``; a processor that parks a request
(a long-polling POP or pull) answers later with ``write_response``, which completes the call
waiting in :meth:`LocalChannel.call`. Requests a broker starts towards a client
(NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO) have no 4.x listener behind a gRPC
client: ``invoke_oneway`` drops them (5.x clients rebalance by asking), ``invoke`` answers that
the client speaks gRPC; GET_CONSUMER_RUNNING_INFO is answered by the endpoint from the settings
the client sent (``responder``, :func:`~.sessions.running_info`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from brokers.engine.remoting import channel as _channel
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError

log = logging.getLogger("brokers.engine.proxy")


class LocalChannel:
    """One 5.x client's stand-in connection (one per client id while it heartbeats)."""

    dialed = False
    established = True
    max_frame_size = 1 << 30
    limits = None

    def __init__(self, client_id: str, remote_addr: str, local_addr: str = "") -> None:
        self.id = next(_channel._channel_ids)  # one sequence with the TCP connections: processors key tables by it
        self.client_id = client_id
        self.name = f"grpc-client {client_id}"
        self.remote_addr = remote_addr
        self.local_addr = local_addr
        self.attributes: dict[str, str] = {"clientId": client_id, "protocol": "grpc"}
        self.closed = False
        self.responder = None  # request -> answer for what the endpoint answers in the client's stead (running info)
        self._waiting: dict[int, asyncio.Future[RemotingCommand]] = {}

    def __repr__(self) -> str:
        return f"<LocalChannel {self.client_id} {self.remote_addr}>"

    def close(self) -> None:
        self.closed = True
        for future in self._waiting.values():
            if not future.done():
                future.set_result(RemotingCommand(code=ResponseCode.SYSTEM_ERROR, remark="the gRPC client went away"))
        self._waiting.clear()

    async def call(
        self,
        handler: Callable[[Any, RemotingCommand], Awaitable[RemotingCommand | None]],  # given this channel
        request: RemotingCommand,
        timeout_s: float,
    ) -> RemotingCommand:
        """Run ``handler`` on ``request`` as if it came on this connection; wait for a parked answer."""
        future: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self._waiting[request.opaque] = future
        try:
            response = await handler(self, request)
            if response is None:
                response = await asyncio.wait_for(future, timeout_s)
            return response
        finally:
            self._waiting.pop(request.opaque, None)

    async def write_response(self, response: RemotingCommand) -> bool:
        future = self._waiting.get(response.opaque)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    async def invoke(self, request: RemotingCommand, timeout_s: float = 3.0) -> RemotingCommand:
        answer = self.responder(request) if self.responder is not None else None
        if answer is not None:
            return answer
        raise RemotingConnectError(
            f"{self.client_id} is a 5.x client on the gRPC endpoint: request code {request.code} cannot be sent to it",
            self.remote_addr,
        )

    async def invoke_oneway(self, request: RemotingCommand) -> None:
        log.debug("%s: request code %s not sent (a gRPC client)", self, request.code)

    def request_serialize_type(self) -> int:
        return 0
