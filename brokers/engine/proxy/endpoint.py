"""GrpcEndpoint: the 5.x clients' port of one broker (``--grpc-port``), a grpc.aio server on the
broker's event loop serving :class:`~.service.MessagingService` with RocketMQ 5's
``apache.rocketmq.v2`` definitions (the generated stubs Apache's official Python client ships).

Bounds: ``grpc_max_concurrent_rpcs`` calls at once on the port (grpc answers RESOURCE_EXHAUSTED
past it), ``grpc_max_clients`` client ids (:mod:`.sessions`), a request message of at most
maxMessageSize x 2 + 1 MiB (a SendMessage carries the bodies; grpc refuses a larger one unread),
at most 1,024 messages or ack entries per call, receive batches of 32, long polls of 20 s; a
receive stream the client stops reading only holds its own call (grpc's flow control) until the
client's deadline. Keepalive pings from clients are accepted every 10 s at most.

TLS: the endpoint speaks TLS with the broker's certificate whenever the remoting port offers TLS
(permissive or enforcing: a gRPC port cannot serve both on one port, so it does TLS only); a
client certificate is asked for as ``client_auth`` says. The ACL is the broker's.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from pathlib import Path

import grpc

from brokers.engine.common.cancellation import cancel_and_wait
from brokers.engine.proxy.handlers import generic_handler
from brokers.engine.proxy.routes import EndpointCache, split_addr
from brokers.engine.proxy.service import MessagingService
from brokers.engine.proxy.sessions import Sessions
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

log = logging.getLogger("brokers.engine.proxy")

SESSION_SCAN_S = 10.0
ASK_TIMEOUT_S = 2.0


class GrpcEndpoint:
    def __init__(self, broker) -> None:
        self.broker = broker  # the BrokerController (its server, store, managers, ACL guard)
        self.guard = broker.acl_guard
        cfg = broker.config
        self.sessions = Sessions(
            broker.clock,
            max_clients=cfg.grpc_max_clients,
            expire_s=cfg.client_channel_expired_s,
            on_close=broker.client_manager.do_channel_close_event,
        )
        self.endpoints = EndpointCache()
        self.call_counts: Counter[tuple[str, str]] = Counter()  # (RPC, 5.x status) -> calls: gantry_grpc_calls_total
        self._server: grpc.aio.Server | None = None
        self._port = 0
        self._timer: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def addr(self) -> str:
        return f"{self.broker.config.advertised_ip}:{self._port}"

    async def start(self) -> None:
        cfg = self.broker.config
        max_request = cfg.max_message_size * 2 + (1 << 20)
        server = grpc.aio.server(
            maximum_concurrent_rpcs=cfg.grpc_max_concurrent_rpcs,
            options=[
                ("grpc.max_receive_message_length", max_request),
                ("grpc.max_send_message_length", -1),
                ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
                ("grpc.keepalive_permit_without_calls", 1),
                ("grpc.so_reuseport", 0),
            ],
        )
        server.add_generic_rpc_handlers((generic_handler(MessagingService(self), self.call_counts),))
        bind = (
            f"[{cfg.listen_host}]:{cfg.grpc_port}" if ":" in cfg.listen_host else f"{cfg.listen_host}:{cfg.grpc_port}"
        )
        tls = cfg.tls
        if tls is not None and tls.serves_tls:
            self._port = server.add_secure_port(bind, _credentials(tls))
        else:
            self._port = server.add_insecure_port(bind)
        if not self._port:
            raise OSError(f"the gRPC endpoint could not listen on {bind}")
        await server.start()
        self._server = server
        self.broker.server.register_processor(RequestCode.GANTRY_GET_GRPC_ENDPOINT, self._answer_endpoint)
        self._timer = asyncio.get_running_loop().create_task(self._expire_sessions(), name="grpc sessions")
        log.info(
            "broker %s: 5.x gRPC endpoint at %s%s",
            cfg.broker_name,
            self.addr,
            " (TLS)" if tls is not None and tls.serves_tls else "",
        )

    async def stop(self) -> None:
        if self._timer is not None:
            await cancel_and_wait([self._timer])
            self._timer = None
        if self._server is not None:
            await self._server.stop(grace=0.5)
            self._server = None
        self.sessions.close_all()

    async def _expire_sessions(self) -> None:
        while True:
            await asyncio.sleep(SESSION_SCAN_S)
            try:
                self.sessions.expire()
            except Exception:
                log.exception("expiring gRPC sessions failed")

    # -- the broker's side ------------------------------------------------------------------------

    async def _answer_endpoint(self, ctx, request: RemotingCommand) -> RemotingCommand:
        return request.response(ResponseCode.SUCCESS, None, {"grpcAddr": self.addr})

    async def namesrv_call(self, request: RemotingCommand) -> RemotingCommand:
        """Ask the name servers in turn (the broker's own client, signed as the broker)."""
        last: Exception | None = None
        for addr in self.broker.config.namesrv_addrs:
            try:
                return await self.broker.outer_api.client.invoke(addr, request, 3.0)
            except Exception as exc:  # the next name server
                last = exc
        raise last or OSError("no name server is configured")

    async def grpc_addr_of(self, broker_addr: str) -> str:
        """A broker's gRPC address: this one's, a cached answer, the broker's own answer, or the convention."""
        if broker_addr == self.broker.addr:
            return self.addr
        known = self.endpoints.get(broker_addr)
        if known is not None:
            return known
        host, _ = split_addr(broker_addr)
        found = f"{host}:{self._port}"
        try:
            reply = await self.broker.outer_api.client.invoke(
                broker_addr, RemotingCommand.request(RequestCode.GANTRY_GET_GRPC_ENDPOINT), ASK_TIMEOUT_S
            )
            if reply.code == ResponseCode.SUCCESS and reply.ext("grpcAddr"):
                found = reply.ext("grpcAddr")
        except Exception as exc:
            log.info("broker %s did not say its gRPC endpoint (%s); assuming %s", broker_addr, exc, found)
        self.endpoints.put(broker_addr, found)
        return found


def _credentials(tls) -> grpc.ServerCredentials:
    key, cert = Path(tls.key_file).read_bytes(), Path(tls.cert_file).read_bytes()
    roots = Path(tls.ca_file).read_bytes() if tls.ca_file else None
    require = tls.client_auth == "require"
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=roots if tls.client_auth != "none" else None, require_client_auth=require
    )
