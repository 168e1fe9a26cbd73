"""BrokerOuterAPI: the broker's calls to the name servers (REGISTER_BROKER, UNREGISTER_BROKER).

Registration goes to **every** name server concurrently and independently: one that is down or
slow delays nobody else and fails alone (protocol reference §2.5, §7.2). The body is the
RegisterBrokerBody JSON (§4.4) with its masked CRC32 in the ``bodyCrc32`` header, plus Gantry's
``gantryEpoch`` (the broker's group epoch). A name server that refuses the registration because
the epoch is stale (it answers ``gantrySlaveId`` with the refusal) gives a result with
``stale`` set, the new master's addresses and the id to rejoin with.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.register_body import body_crc32, encode_register_body
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers.namesrv import (
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    UnRegisterBrokerRequestHeader,
)

log = logging.getLogger("brokers.engine.broker")


@dataclass(frozen=True, slots=True)
class RegisterResult:
    namesrv_addr: str
    ok: bool
    detail: str = ""  # remark or error text when not ok; masterAddr when ok
    master_addr: str = ""  # the answer's masterAddr (a slave learns its master here)
    ha_server_addr: str = ""  # the answer's haServerAddr: the master's HA address
    epoch: int = 0  # the answer's gantryEpoch: the group's highest epoch the name server knows
    stale: bool = False  # refused: this broker registered as master with a stale epoch
    slave_id: int = 0  # with stale: the broker id to rejoin the group with


@dataclass(frozen=True, slots=True)
class BrokerIdentity:
    cluster_name: str
    broker_name: str
    broker_addr: str
    broker_id: int
    ha_server_addr: str
    epoch: int = 0


class BrokerOuterAPI:
    def __init__(self, namesrv_addrs: tuple[str, ...], client: RemotingClient | None = None) -> None:
        self.namesrv_addrs = namesrv_addrs
        self.client = client or RemotingClient(name="broker-outer")

    async def close(self) -> None:
        await self.client.close()

    async def register_broker_all(
        self, identity: BrokerIdentity, topic_wrapper: dict[str, Any], *, timeout_s: float = 6.0, oneway: bool = False
    ) -> list[RegisterResult]:
        """Register with every name server at once; one result per name server."""
        configs = [TopicConfig.from_json(v) for v in topic_wrapper["topicConfigTable"].values()]
        body = encode_register_body(configs, topic_wrapper["dataVersion"], [])
        header = RegisterBrokerRequestHeader(
            broker_name=identity.broker_name,
            broker_addr=identity.broker_addr,
            cluster_name=identity.cluster_name,
            ha_server_addr=identity.ha_server_addr,
            broker_id=identity.broker_id,
            gantry_epoch=identity.epoch,
            compressed=False,
            body_crc32=body_crc32(body),
        ).encode()
        calls = [self._register_one(addr, header, body, timeout_s, oneway) for addr in self.namesrv_addrs]
        return list(await asyncio.gather(*calls))

    async def _register_one(
        self, addr: str, header: dict[str, str], body: bytes, timeout_s: float, oneway: bool
    ) -> RegisterResult:
        request = RemotingCommand.request(RequestCode.REGISTER_BROKER, header, body)
        try:
            if oneway:
                await self.client.invoke_oneway(addr, request, timeout_s)
                return RegisterResult(addr, True)
            response = await self.client.invoke(addr, request, timeout_s)
        except Exception as exc:
            log.warning("register broker to name server %s failed: %s", addr, exc)
            return RegisterResult(addr, False, str(exc) or type(exc).__name__)
        answer = _register_answer(response)
        epoch, slave_id = answer.gantry_epoch, answer.gantry_slave_id or 0
        master, ha_addr = answer.master_addr or "", answer.ha_server_addr or ""
        if response.code != ResponseCode.SUCCESS:
            log.warning("name server %s refused registration: code %s %s", addr, response.code, response.remark)
            return RegisterResult(
                addr,
                False,
                f"code {response.code}: {response.remark or ''}",
                master,
                ha_addr,
                epoch,
                stale=slave_id > 0,
                slave_id=slave_id,
            )
        log.debug("registered with name server %s", addr)
        return RegisterResult(addr, True, master, master, ha_addr, epoch)

    async def unregister_broker_all(self, identity: BrokerIdentity, *, timeout_s: float = 3.0) -> list[RegisterResult]:
        header = UnRegisterBrokerRequestHeader(
            broker_name=identity.broker_name,
            broker_addr=identity.broker_addr,
            cluster_name=identity.cluster_name,
            broker_id=identity.broker_id,
        ).encode()

        async def one(addr: str) -> RegisterResult:
            try:
                response = await self.client.invoke(
                    addr, RemotingCommand.request(RequestCode.UNREGISTER_BROKER, header), timeout_s
                )
            except Exception as exc:
                log.warning("unregister broker from name server %s failed: %s", addr, exc)
                return RegisterResult(addr, False, str(exc))
            ok = response.code == ResponseCode.SUCCESS
            return RegisterResult(addr, ok, "" if ok else f"code {response.code}: {response.remark or ''}")

        return list(await asyncio.gather(*(one(a) for a in self.namesrv_addrs)))


def _register_answer(response: RemotingCommand) -> RegisterBrokerResponseHeader:
    """The registration answer's header; a Gantry field that is not a number (a foreign name server's)
    reads as absent, and the addresses are still taken."""
    try:
        return RegisterBrokerResponseHeader.decode(response)
    except RemotingCommandError:
        ext = {k: v for k, v in response.ext_fields.items() if not k.startswith("gantry")}
        return RegisterBrokerResponseHeader.decode(ext)
