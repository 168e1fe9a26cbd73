"""TLS on a remoting port, RocketMQ's modes, over real TCP with certificates made by the tls_certs fixture.

- enforcing: a TLS client is served; a plain client's connection is closed and its request never
  reaches a handler; the refusal is logged;
- permissive: a TLS client and a plain client are both served on one port;
- disabled: as before (a TLS client is closed with a clear error);
- client certificates (require): a client without one is refused, one with it served;
- a client trusting another CA fails with an error naming the certificate check;
- the flags and settings build the TlsConfig they say.
"""

from __future__ import annotations

import argparse
import asyncio
import logging

import pytest

from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError
from brokers.engine.remoting.server import RemotingServer
from brokers.engine.remoting.tls import (
    TlsConfig,
    TlsConfigError,
    add_tls_arguments,
    tls_config_from_args,
    tls_config_from_settings,
)

ECHO = 1001


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def server_tls(certs, mode: str, **kwargs) -> TlsConfig:
    return TlsConfig(mode=mode, cert_file=certs.server_cert, key_file=certs.server_key, ca_file=certs.ca, **kwargs)


class Echo:
    """A server answering ECHO with the request's body, counting what reached the handler."""

    def __init__(self, tls: TlsConfig | None) -> None:
        self.served = 0
        self.server = RemotingServer(tls=tls, name="tls-test")
        self.server.register_processor(ECHO, self._echo)

    async def _echo(self, ctx, request: RemotingCommand) -> RemotingCommand:
        self.served += 1
        return request.response(0, body=request.body)

    async def __aenter__(self) -> Echo:
        await self.server.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.server.stop()

    @property
    def addr(self) -> str:
        return self.server.address


async def echo(addr: str, tls: TlsConfig | None, body: bytes = b"hi") -> bytes:
    client = RemotingClient(tls=tls, connect_timeout_s=5.0)
    try:
        response = await client.invoke(addr, RemotingCommand.request(ECHO, body=body), timeout_s=5.0)
        assert response.code == 0
        return response.body
    finally:
        await client.close()


def test_enforcing_serves_tls_and_refuses_plain(tls_certs, caplog):
    async def scenario():
        async with Echo(server_tls(tls_certs, "enforcing")) as srv:
            assert await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.ca), b"secret") == b"secret"
            assert srv.served == 1
            with caplog.at_level(logging.WARNING, logger="brokers.engine.remoting.tls"):
                with pytest.raises(RemotingConnectError):
                    await echo(srv.addr, None)
            assert srv.served == 1  # the plain request reached no handler
            assert "plain connection from 127.0.0.1" in caplog.text and "TLS is enforced" in caplog.text
            # the port still serves TLS after refusing
            assert await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.ca)) == b"hi"

    run(scenario())


def test_enforcing_closes_a_raw_plain_socket_without_an_answer(tls_certs):
    async def scenario():
        async with Echo(server_tls(tls_certs, "enforcing")) as srv:
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.server.port)
            writer.write(RemotingCommand.request(ECHO, body=b"x").encode())
            await writer.drain()
            try:  # closed (a reset: the request was never read), nothing written back
                assert await asyncio.wait_for(reader.read(), 10.0) == b""
            except ConnectionResetError:
                pass
            writer.close()
            assert srv.served == 0

    run(scenario())


def test_permissive_serves_tls_and_plain_on_one_port(tls_certs):
    async def scenario():
        async with Echo(server_tls(tls_certs, "permissive")) as srv:
            tls_client = RemotingClient(tls=TlsConfig.client(ca_file=tls_certs.ca))
            plain_client = RemotingClient()
            try:
                for i in range(3):
                    tls_reply, plain_reply = await asyncio.gather(
                        tls_client.invoke(srv.addr, RemotingCommand.request(ECHO, body=b"tls%d" % i)),
                        plain_client.invoke(srv.addr, RemotingCommand.request(ECHO, body=b"plain%d" % i)),
                    )
                    assert (tls_reply.body, plain_reply.body) == (b"tls%d" % i, b"plain%d" % i)
                assert len(srv.server.channels) == 2  # one connection each, reused
            finally:
                await tls_client.close()
                await plain_client.close()
            assert srv.served == 6

    run(scenario())


def test_disabled_is_plain_and_a_tls_client_gets_a_clear_error(tls_certs):
    async def scenario():
        async with Echo(None) as srv:
            assert await echo(srv.addr, None) == b"hi"
            with pytest.raises(RemotingConnectError, match="TLS handshake with 127.0.0.1:.* failed"):
                await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.ca))
            assert srv.served == 1

    run(scenario())


def test_wrong_ca_fails_with_a_clear_error(tls_certs):
    async def scenario():
        async with Echo(server_tls(tls_certs, "enforcing")) as srv:
            with pytest.raises(RemotingConnectError, match="certificate of 127.0.0.1:.* failed verification"):
                await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.other_ca))
            assert srv.served == 0

    run(scenario())


def test_server_hostname_must_be_in_the_certificate(tls_certs):
    async def scenario():
        async with Echo(server_tls(tls_certs, "enforcing")) as srv:
            assert await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.ca, server_hostname="localhost")) == b"hi"
            with pytest.raises(RemotingConnectError, match="names broker.example"):
                await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.ca, server_hostname="broker.example"))

    run(scenario())


def test_client_auth_require(tls_certs):
    async def scenario():
        async with Echo(server_tls(tls_certs, "enforcing", client_auth="require")) as srv:
            with pytest.raises(RemotingConnectError):
                await echo(srv.addr, TlsConfig.client(ca_file=tls_certs.ca))
            assert srv.served == 0
            with_cert = TlsConfig.client(
                ca_file=tls_certs.ca, cert_file=tls_certs.client_cert, key_file=tls_certs.client_key
            )
            assert await echo(srv.addr, with_cert) == b"hi"

    run(scenario())


def test_flags_and_settings():
    parser = argparse.ArgumentParser()
    add_tls_arguments(parser)
    assert tls_config_from_args(parser.parse_args([])) is None
    with pytest.raises(TlsConfigError, match="needs a certificate"):
        tls_config_from_args(parser.parse_args(["--tls-mode", "enforcing"]))
    with pytest.raises(TlsConfigError, match="does not exist"):
        tls_config_from_args(
            parser.parse_args(["--tls-mode", "permissive", "--tls-cert", "/nope.pem", "--tls-key", "/nope.key"])
        )
    assert tls_config_from_settings("0", "/ca.pem") is None
    assert tls_config_from_settings("", None) is None


def test_flags_build_the_config(tls_certs):
    parser = argparse.ArgumentParser()
    add_tls_arguments(parser)
    args = ["--tls-cert", tls_certs.server_cert, "--tls-key", tls_certs.server_key, "--tls-ca", tls_certs.ca]
    enforcing = tls_config_from_args(
        parser.parse_args(["--tls-mode", "enforcing", *args, "--tls-client-auth", "optional"])
    )
    assert (enforcing.mode, enforcing.client_auth, enforcing.outgoing) == ("enforcing", "optional", True)
    permissive = tls_config_from_args(parser.parse_args(["--tls-mode", "permissive", *args]))
    assert (permissive.serves_plain, permissive.outgoing) == (True, False)  # RocketMQ: tls.enable follows enforcing
    assert tls_config_from_args(parser.parse_args(["--tls-mode", "permissive", *args, "--tls-outgoing", "on"])).outgoing
    client = tls_config_from_settings("true", tls_certs.ca)
    assert client.outgoing and client.ca_file == tls_certs.ca and not client.serves_tls
    with pytest.raises(TlsConfigError, match="cannot load TLS CA file"):
        TlsConfig.client(ca_file=tls_certs.server_key).client_context()
