"""Promoting a slave to its group's master: Gantry's GANTRY_PROMOTE_SLAVE (request code 10004), as a plan.

The request goes to the candidate slave itself (the promotion contract, shared by the engine, the
clients and the console: docs/broker-group-promotion.md). Its ext fields are strings, as every
RocketMQ ext field: ``brokerName``, ``brokerId`` (both must be the candidate's own), ``force`` and
``dryRun`` ("true" | "false"), and an optional ``role`` (SYNC_MASTER | ASYNC_MASTER; default the
role the group's master had). A SUCCESS answer carries a JSON body — the plan of a dry run, the
result of a real run — read into :class:`PromotionResult`. A dry run always answers SUCCESS, with
``refused`` saying why the real run would be refused; a refused real run answers SYSTEM_ERROR with a
remark saying what would be lost, and changes nothing.

Every caller goes through the one plan, :func:`promote_slave`: the console's gateway and mqadmin
run it on the shared blocking admin client; engine tests and benches await
:func:`promote_slave_async` (an asyncio driver of its own, or the given RemotingClient).

A broker that does not know the request (an Apache RocketMQ broker, or a Gantry broker older
than promotion) answers REQUEST_CODE_NOT_SUPPORTED: :func:`promote_slave` raises
:class:`PromotionNotSupported` then, an MQBrokerError whose text says so and what RocketMQ 4.x
does instead (restart the slave with brokerId 0 and a master role).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.driver import AsyncDriver
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.plan import Call, Plan
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.headers.replication import PromoteSlaveRequestHeader

__all__ = [
    "PROMOTION_ROLES",
    "PromotionNotSupported",
    "PromotionRefusedError",
    "PromotionResult",
    "parse_promotion_result",
    "promote_slave",
    "promote_slave_async",
    "promotion_ext",
    "promotion_result_from_json",
]

PROMOTION_ROLES = ("SYNC_MASTER", "ASYNC_MASTER")  # what a promoted slave may become
PROMOTE_TIMEOUT_S = (
    30.0  # a real promotion truncates and re-opens the store's tail: more than an admin call's usual 3 s
)


class PromotionNotSupported(MQBrokerError):
    """The candidate does not know GANTRY_PROMOTE_SLAVE (REQUEST_CODE_NOT_SUPPORTED)."""

    def _describe(self) -> str:
        where = f"broker {self.addr}" if self.addr else "the broker"
        return (
            f"{where} does not support promotion (GANTRY_PROMOTE_SLAVE, request code {RequestCode.GANTRY_PROMOTE_SLAVE}): "
            "an Apache RocketMQ broker, or a Gantry broker older than online promotion; "
            "RocketMQ 4.x promotes a slave by restarting it with brokerId 0 and brokerRole SYNC_MASTER or ASYNC_MASTER"
        )


class PromotionRefusedError(MQBrokerError):
    """The candidate refused the promotion and changed nothing: the remark says why (and what would
    be lost); ``promotion`` is the plan when the broker sent one with its refusal."""

    def __init__(
        self, code: int, remark: str | None, *, addr: str | None = None, promotion: PromotionResult | None = None
    ) -> None:
        super().__init__(code, remark, request_code=RequestCode.GANTRY_PROMOTE_SLAVE, addr=addr)
        self.promotion = promotion


@dataclass(frozen=True, slots=True)
class PromotionResult:
    """The candidate's answer: the plan of a dry run, or what a real promotion did."""

    broker_name: str
    broker_id: int
    from_role: str
    to_role: str
    dry_run: bool
    promoted: bool
    epoch: int  # the group epoch the candidate knows now
    new_epoch: int  # the epoch the promotion raises (or raised) it to
    max_phy_offset: int  # the candidate's commit log end
    known_master_max_offset: int  # the master's end, as far as the candidate heard
    acked_offset: int  # the highest offset the group acknowledged to producers, as far as the candidate knows
    missing_acked_bytes: int  # acknowledged bytes the candidate lacks (lost if it is promoted)
    missing_bytes: int  # bytes the master had that the candidate lacks (acknowledged or not)
    master_reachable: bool
    would_lose: str  # a sentence
    refused: str  # empty unless the real run would be (or was) refused
    registered_with: tuple[str, ...] = ()  # name servers that confirmed the new master (a real run)

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON keys (what the console stores and the API shows)."""
        return {
            "brokerName": self.broker_name,
            "brokerId": self.broker_id,
            "fromRole": self.from_role,
            "toRole": self.to_role,
            "dryRun": self.dry_run,
            "promoted": self.promoted,
            "epoch": self.epoch,
            "newEpoch": self.new_epoch,
            "maxPhyOffset": self.max_phy_offset,
            "knownMasterMaxOffset": self.known_master_max_offset,
            "ackedOffset": self.acked_offset,
            "missingAckedBytes": self.missing_acked_bytes,
            "missingBytes": self.missing_bytes,
            "masterReachable": self.master_reachable,
            "wouldLose": self.would_lose,
            "refused": self.refused,
            "registeredWith": list(self.registered_with),
        }


def _int(value: object, default: int = 0) -> int:
    try:
        number: int = int(value)  # type: ignore[call-overload]  # whatever the JSON held; refusals caught below
        return number
    except (TypeError, ValueError):
        return default


def _bool(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def parse_promotion_result(body: bytes) -> PromotionResult:
    """The JSON body of a SUCCESS answer to GANTRY_PROMOTE_SLAVE (missing fields read as 0 / "" / false)."""
    return promotion_result_from_json(load_object(body))


def promotion_result_from_json(obj: dict[str, Any]) -> PromotionResult:
    """The contract's JSON object (as :meth:`PromotionResult.to_json` writes it) back into a result."""
    return PromotionResult(
        broker_name=str(obj.get("brokerName", "")),
        broker_id=_int(obj.get("brokerId")),
        from_role=str(obj.get("fromRole", "")),
        to_role=str(obj.get("toRole", "")),
        dry_run=_bool(obj.get("dryRun")),
        promoted=_bool(obj.get("promoted")),
        epoch=_int(obj.get("epoch")),
        new_epoch=_int(obj.get("newEpoch")),
        max_phy_offset=_int(obj.get("maxPhyOffset")),
        known_master_max_offset=_int(obj.get("knownMasterMaxOffset")),
        acked_offset=_int(obj.get("ackedOffset")),
        missing_acked_bytes=_int(obj.get("missingAckedBytes")),
        missing_bytes=_int(obj.get("missingBytes")),
        master_reachable=_bool(obj.get("masterReachable")),
        would_lose=str(obj.get("wouldLose") or ""),
        refused=str(obj.get("refused") or ""),
        registered_with=tuple(
            str(a) for a in (obj.get("registeredWith") or ()) if isinstance(obj.get("registeredWith"), list)
        ),
    )


def promotion_ext(
    broker_name: str, broker_id: int, *, force: bool = False, dry_run: bool = False, role: str | None = None
) -> dict[str, object]:
    """The request's ext fields; ValueError for a role a master cannot have or a broker id that is not a slave's."""
    if broker_id < 1:
        raise ValueError(f"broker id {broker_id} is not a slave's (a slave has id >= 1)")
    if role and role not in PROMOTION_ROLES:
        raise ValueError(f"role must be one of {', '.join(PROMOTION_ROLES)}, got {role!r}")
    header = PromoteSlaveRequestHeader(
        broker_name=broker_name, broker_id=broker_id, force=force, dry_run=dry_run, role=role or None
    )
    return dict(header.encode())


def promote_slave(
    addr: str,
    broker_name: str,
    broker_id: int,
    *,
    force: bool = False,
    dry_run: bool = False,
    role: str | None = None,
    timeout_s: float = PROMOTE_TIMEOUT_S,
) -> Plan[PromotionResult]:
    """Ask the slave at ``addr`` to become its group's master (or, with ``dry_run``, what that would do).

    Raises PromotionNotSupported when the broker does not know the request, and MQBrokerError
    (SYSTEM_ERROR, the broker's remark) when it refuses a real promotion.
    """
    code = RequestCode.GANTRY_PROMOTE_SLAVE
    ext = promotion_ext(broker_name, broker_id, force=force, dry_run=dry_run, role=role)
    reply = yield Call(code, ext, addr=addr, timeout_s=timeout_s)
    where = reply.addr or addr
    if reply.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
        raise PromotionNotSupported(reply.code, reply.remark, request_code=code, addr=where)
    if reply.code != ResponseCode.SUCCESS:
        try:
            plan = parse_promotion_result(reply.body) if reply.body else None
        except ValueError:
            plan = None
        raise PromotionRefusedError(reply.code, reply.remark, addr=where, promotion=plan)
    return parse_promotion_result(reply.body)


async def promote_slave_async(
    addr: str,
    broker_name: str,
    broker_id: int,
    *,
    force: bool = False,
    dry_run: bool = False,
    role: str | None = None,
    client: RemotingClient | None = None,
    timeout_s: float = PROMOTE_TIMEOUT_S,
) -> PromotionResult:
    """:func:`promote_slave` on an asyncio loop (own connection unless ``client`` is given).

    The call is addressed to the candidate, so the driver's name server list is never used: it
    holds the candidate's address only because a driver needs one.
    """
    driver = AsyncDriver(addr, timeout_s, remoting=client)
    try:
        return await driver.run(
            promote_slave(addr, broker_name, broker_id, force=force, dry_run=dry_run, role=role, timeout_s=timeout_s)
        )
    finally:
        await driver.close()
