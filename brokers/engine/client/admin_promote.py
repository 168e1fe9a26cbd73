"""The admin call that promotes a slave to its broker group's master: GANTRY_PROMOTE_SLAVE (10004).

Sent to the slave itself (its broker address, as the route's ``brokerAddrs`` lists it). The
wire contract is /work/wt/PROMOTE_CONTRACT.md (and the broker's ``processors/promote.py``):

* :func:`promote_request` builds the request; :func:`parse_promotion` reads the answer into a
  :class:`Promotion` (the plan or the result) or raises :class:`PromotionRefusedError` (the
  broker refused and changed nothing; ``.promotion`` holds the plan when the broker sent one);
* :func:`promote_slave` sends it on an asyncio loop (an own RemotingClient, or the one given);
* :func:`promote_slave_blocking` runs that on a private loop, for threads (Celery, mqadmin).

A dry run (``dry_run=True``) always answers a plan, with ``refused`` saying why the real run
would be refused. Pass ``force=True`` to promote even when the candidate lacks data or the
master looks alive.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from brokers.engine.client.errors import MQBrokerError
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

DEFAULT_PROMOTE_TIMEOUT_S = 15.0  # a real promotion waits for the name servers' answers


@dataclass(frozen=True, slots=True)
class Promotion:
    """The body of the answer: a plan (dry run) or what was done."""

    broker_name: str
    broker_id: int
    from_role: str
    to_role: str
    dry_run: bool
    promoted: bool
    epoch: int
    new_epoch: int
    max_phy_offset: int
    known_master_max_offset: int
    acked_offset: int
    missing_acked_bytes: int
    missing_bytes: int
    master_reachable: bool
    would_lose: str
    refused: str
    registered_with: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict) -> Promotion:
        return cls(
            broker_name=str(data.get("brokerName", "")), broker_id=int(data.get("brokerId", 0)),
            from_role=str(data.get("fromRole", "")), to_role=str(data.get("toRole", "")),
            dry_run=bool(data.get("dryRun", False)), promoted=bool(data.get("promoted", False)),
            epoch=int(data.get("epoch", 0)), new_epoch=int(data.get("newEpoch", 0)),
            max_phy_offset=int(data.get("maxPhyOffset", 0)),
            known_master_max_offset=int(data.get("knownMasterMaxOffset", 0)),
            acked_offset=int(data.get("ackedOffset", 0)), missing_acked_bytes=int(data.get("missingAckedBytes", 0)),
            missing_bytes=int(data.get("missingBytes", 0)), master_reachable=bool(data.get("masterReachable", False)),
            would_lose=str(data.get("wouldLose", "")), refused=str(data.get("refused", "")),
            registered_with=tuple(data.get("registeredWith") or ()))

    def to_json(self) -> dict:
        return {"brokerName": self.broker_name, "brokerId": self.broker_id, "fromRole": self.from_role,
                "toRole": self.to_role, "dryRun": self.dry_run, "promoted": self.promoted, "epoch": self.epoch,
                "newEpoch": self.new_epoch, "maxPhyOffset": self.max_phy_offset,
                "knownMasterMaxOffset": self.known_master_max_offset, "ackedOffset": self.acked_offset,
                "missingAckedBytes": self.missing_acked_bytes, "missingBytes": self.missing_bytes,
                "masterReachable": self.master_reachable, "wouldLose": self.would_lose, "refused": self.refused,
                "registeredWith": list(self.registered_with)}


class PromotionRefusedError(MQBrokerError):
    """The broker refused the promotion and changed nothing; the remark says why (and what
    would be lost); ``promotion`` is the plan when the broker sent one."""

    def __init__(self, code: int, remark: str | None, *, addr: str | None = None,
                 promotion: Promotion | None = None) -> None:
        super().__init__(code, remark, request_code=RequestCode.GANTRY_PROMOTE_SLAVE, addr=addr)
        self.promotion = promotion


def promote_request(broker_name: str, broker_id: int, *, force: bool = False, dry_run: bool = False,
                    role: str | None = None) -> RemotingCommand:
    ext = {"brokerName": broker_name, "brokerId": str(int(broker_id)), "force": "true" if force else "false",
           "dryRun": "true" if dry_run else "false"}
    if role:
        ext["role"] = role
    return RemotingCommand.request(RequestCode.GANTRY_PROMOTE_SLAVE, ext)


def parse_promotion(response: RemotingCommand, addr: str | None = None) -> Promotion:
    """The answer's :class:`Promotion`; PromotionRefusedError for any other code than SUCCESS."""
    promotion = None
    if response.body:
        try:
            promotion = Promotion.from_json(json.loads(response.body))
        except (ValueError, TypeError, AttributeError):
            promotion = None
    if response.code != ResponseCode.SUCCESS:
        raise PromotionRefusedError(response.code, response.remark, addr=addr, promotion=promotion)
    if promotion is None:
        raise PromotionRefusedError(ResponseCode.SYSTEM_ERROR, "the broker answered no promotion body", addr=addr)
    return promotion


async def promote_slave(addr: str, broker_name: str, broker_id: int, *, force: bool = False, dry_run: bool = False,
                        role: str | None = None, client: RemotingClient | None = None,
                        timeout_s: float = DEFAULT_PROMOTE_TIMEOUT_S) -> Promotion:
    """Send GANTRY_PROMOTE_SLAVE to the slave at ``addr``; the plan or the result, or raise
    PromotionRefusedError (nothing changed) / a RemotingError (not reached; unknown outcome)."""
    own = client is None
    client = client or RemotingClient(name="admin-promote")
    try:
        response = await client.invoke(addr, promote_request(broker_name, broker_id, force=force, dry_run=dry_run,
                                                             role=role), timeout_s)
    finally:
        if own:
            await client.close()
    return parse_promotion(response, addr)


def promote_slave_blocking(addr: str, broker_name: str, broker_id: int, *, force: bool = False,
                           dry_run: bool = False, role: str | None = None,
                           timeout_s: float = DEFAULT_PROMOTE_TIMEOUT_S) -> Promotion:
    """:func:`promote_slave` for a thread without a running loop."""
    return asyncio.run(promote_slave(addr, broker_name, broker_id, force=force, dry_run=dry_run, role=role,
                                     timeout_s=timeout_s))
