"""RemoteChannel: one 5.x client's own remoting connections to the brokers, in the cluster-mode proxy.

A broker keys its clients by connection (``client_manager.py``), as RocketMQ's does: a consumer is a
member of its group while its connection heartbeats, and leaves when the connection closes. So the
proxy gives each 5.x client (each session) a :class:`~brokers.engine.remoting.client.RemotingClient`
of its own, with one connection per broker it talks to: a broker sees every 5.x client behind the
proxy as it would see a 4.x client, and ending the session closes its connections, which drops the
client from its groups at once.

Requests a broker starts towards the client come in on those connections: GET_CONSUMER_RUNNING_INFO
is answered from the settings the client sent (``responder``, :func:`~.sessions.running_info`);
NOTIFY_CONSUMER_IDS_CHANGED is dropped (5.x clients ask for their assignment).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.tls import TlsConfig

log = logging.getLogger("brokers.engine.proxy")


class RemoteChannel:
    """A session's connections to the brokers (cluster mode)."""

    def __init__(self, client_id: str, remote_addr: str, local_addr: str = "", *, tls: TlsConfig | None = None) -> None:
        self.client_id = client_id
        self.remote_addr = remote_addr
        self.local_addr = local_addr
        self.closed = False
        self.responder: Callable[[RemotingCommand], RemotingCommand | None] | None = None
        self.client = RemotingClient(name=f"proxy for {client_id}", tls=tls)
        self.client.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, self._from_client)
        self.client.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self._dropped)
        self._closing: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"<RemoteChannel {self.client_id} {self.remote_addr}>"

    async def invoke(self, addr: str, request: RemotingCommand, timeout_s: float) -> RemotingCommand:
        return await self.client.invoke(addr, request, timeout_s)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._closing = asyncio.get_running_loop().create_task(self.client.close(), name=f"close {self.client_id}")

    async def _from_client(self, ctx: object, request: RemotingCommand) -> RemotingCommand:
        answer = self.responder(request) if self.responder is not None else None
        if answer is not None:
            return answer
        return request.response(ResponseCode.SYSTEM_ERROR, f"client {self.client_id} speaks gRPC (RocketMQ 5.x)")

    async def _dropped(self, ctx: object, request: RemotingCommand) -> None:
        return None
