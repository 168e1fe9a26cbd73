"""GrpcEndpoint: the 5.x clients' port, a grpc.aio server serving :class:`~.service.MessagingService`
with RocketMQ 5's ``apache.rocketmq.v2`` definitions (the generated stubs Apache's official Python
client ships), in front of a :mod:`~.backend`: one broker's (``--grpc-port``, on the broker's event loop,
:func:`broker_endpoint`) or a whole cluster's (``python -m brokers.engine proxy``, ``standalone.py``).

Bounds: ``grpc_max_concurrent_rpcs`` calls at once on the port (grpc answers RESOURCE_EXHAUSTED
past it), ``grpc_max_clients`` client ids (:mod:`.sessions`), a request message of at most
maxMessageSize x 2 + 1 MiB (a SendMessage carries the bodies; grpc refuses a larger one after taking
at most one flow-control window of it: a fixed ``STREAM_WINDOW`` of 64 KiB per call, not a window grown
by bandwidth probes), request messages read a few at a time within ``grpc_request_budget`` bytes and
10 s each (:mod:`.intake`; a call holds only its window until its handler reads it),
at most 1,024 messages or ack entries per call, receive batches of 32, long polls of 20 s, 2 receives
popping or streaming at once, granted by remote host in turn (:mod:`.slots`); a receive stream the
client stops reading only holds its own call (grpc's flow control) until the client's deadline. Keepalive pings from clients are accepted every 10 s at most.

TLS: the endpoint speaks TLS with the broker's certificate whenever the remoting port offers TLS
(permissive or enforcing: a gRPC port cannot serve both on one port, so it does TLS only); a
client certificate is asked for as ``client_auth`` says. The ACL is the broker's (local mode) or the
proxy's ACL file, the brokers checking each forwarded request again (cluster mode).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from brokers.engine.common.cancellation import cancel_and_wait
from brokers.engine.proxy.backend import Backend, LocalBackend
from brokers.engine.proxy.handlers import generic_handler
from brokers.engine.proxy.intake import RequestIntake
from brokers.engine.proxy.service import MessagingService
from brokers.engine.proxy.sessions import Sessions
from brokers.engine.remoting.tls import TlsConfig, TlsConfigError

log = logging.getLogger("brokers.engine.proxy")

SESSION_SCAN_S = 10.0
# Each call's HTTP/2 receive window, fixed (no BDP probing): what a call can make the port hold before its
# handler asks for its request (intake.py), and what an oversized request costs the port before grpc refuses
# it. With probing, grpc let a 20 MB request send 4 MiB on loopback before refusing it. HTTP/2's default
# size: a request within it is in when its handler runs; grpc opens a larger one's window once it is asked for.
STREAM_WINDOW = 64 << 10
# How long a connection may take to send HTTP/2's preface (and finish TLS): grpc's default is 120 s; a
# silent socket now ends as the remoting ports' unauthenticated ones do.
HANDSHAKE_TIMEOUT_MS = 10_000


@dataclass(frozen=True, slots=True)
class EndpointSettings:
    """Where the endpoint listens and its bounds (a broker's grpc_* settings, or the proxy's flags)."""

    listen_host: str
    port: int  # 0: any free port
    advertised_ip: str
    max_message_size: int
    max_clients: int
    max_concurrent_rpcs: int
    session_expire_s: float
    tls: Any = None  # a TlsConfig; TLS is served when tls.serves_tls
    request_budget: int = 128 << 20  # bytes of request messages read at once (intake.py)

    @property
    def max_request(self) -> int:
        """The largest request message: a SendMessage carries the bodies (2 x maxMessageSize + 1 MiB)."""
        return self.max_message_size * 2 + (1 << 20)


class GrpcEndpoint:
    def __init__(self, backend: Backend, settings: EndpointSettings) -> None:
        self.backend = backend
        self.settings = settings
        self.guard = backend.guard
        self.sessions = Sessions(
            backend.clock,
            max_clients=settings.max_clients,
            expire_s=settings.session_expire_s,
            on_close=backend.channel_closed,
            new_channel=backend.new_channel,
        )
        self.intake = RequestIntake.for_budget(settings.request_budget, settings.max_request)
        self.call_counts: Counter[tuple[str, str]] = Counter()  # (RPC, 5.x status) -> calls: gantry_grpc_calls_total
        self._server: grpc.aio.Server | None = None
        self._port = 0
        self._timer: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def addr(self) -> str:
        return f"{self.settings.advertised_ip}:{self._port}"

    async def start(self) -> None:
        cfg = self.settings
        server = grpc.aio.server(
            maximum_concurrent_rpcs=cfg.max_concurrent_rpcs,
            options=[
                ("grpc.max_receive_message_length", cfg.max_request),
                ("grpc.max_send_message_length", -1),
                ("grpc.http2.bdp_probe", 0),
                ("grpc.http2.lookahead_bytes", STREAM_WINDOW),
                ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
                ("grpc.keepalive_permit_without_calls", 1),
                ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
                ("grpc.so_reuseport", 0),
            ],
        )
        server.add_generic_rpc_handlers((generic_handler(MessagingService(self, self.intake), self.call_counts),))
        bind = f"[{cfg.listen_host}]:{cfg.port}" if ":" in cfg.listen_host else f"{cfg.listen_host}:{cfg.port}"
        tls = cfg.tls
        if tls is not None and tls.serves_tls:
            self._port = server.add_secure_port(bind, _credentials(tls))
        else:
            self._port = server.add_insecure_port(bind)
        if not self._port:
            raise OSError(f"the gRPC endpoint could not listen on {bind}")
        await server.start()
        self._server = server
        self.backend.started(self.addr)
        self._timer = asyncio.get_running_loop().create_task(self._expire_sessions(), name="grpc sessions")
        log.info(
            "%s: 5.x gRPC endpoint at %s%s",
            self.backend.name,
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


def broker_endpoint(broker: Any) -> GrpcEndpoint:
    """The endpoint of a broker started with ``grpc_port`` (local mode)."""
    cfg = broker.config
    settings = EndpointSettings(
        listen_host=cfg.listen_host,
        port=cfg.grpc_port,
        advertised_ip=cfg.advertised_ip,
        max_message_size=cfg.max_message_size,
        max_clients=cfg.grpc_max_clients,
        max_concurrent_rpcs=cfg.grpc_max_concurrent_rpcs,
        session_expire_s=cfg.client_channel_expired_s,
        tls=cfg.tls,
        request_budget=cfg.grpc_request_budget,
    )
    return GrpcEndpoint(LocalBackend(broker), settings)


def _credentials(tls: TlsConfig) -> grpc.ServerCredentials:
    if tls.key_file is None or tls.cert_file is None:  # TlsConfig.check refuses serving TLS without them
        raise TlsConfigError(f"tls mode {tls.mode} needs a certificate and key (--tls-cert, --tls-key)")
    key, cert = Path(tls.key_file).read_bytes(), Path(tls.cert_file).read_bytes()
    roots = Path(tls.ca_file).read_bytes() if tls.ca_file else None
    require = tls.client_auth == "require"
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=roots if tls.client_auth != "none" else None, require_client_auth=require
    )
