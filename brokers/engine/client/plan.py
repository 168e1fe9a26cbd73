"""Plans: client operations written as generators of requests, with no I/O of their own.

A plan yields what it needs sent — a :class:`Call`, or a :class:`Fanout` of calls sent
together — and receives the answer: a :class:`Reply` for a Call (a RemotingError is thrown
into the plan instead when the call fails), a list of Reply-or-RemotingError for a Fanout, one
per call, in order. Whatever the plan returns is the operation's result. Plans build request
headers and parse bodies; a driver (:mod:`brokers.engine.client.driver`) does the sending, so
one plan serves the asyncio and the blocking client alike. For example::

    def get_broker_runtime_info(self, addr: str) -> Plan[dict[str, str]]:
        reply = check((yield Call(RequestCode.GET_BROKER_RUNTIME_INFO, addr=addr)), request_code=...)
        return parse_kv_table(reply.body)
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from brokers.engine.client.admin_errors import broker_error
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError

__all__ = ["Call", "Fanout", "Plan", "Reply", "check", "first_error"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call:
    """One request of a plan; ``addr=None`` means "the name servers, in turn"."""

    code: int
    ext_fields: Mapping[str, object] | None = None
    body: bytes = b""
    addr: str | None = None
    timeout_s: float | None = None
    oneway: bool = False


@dataclass(frozen=True, slots=True)
class Fanout:
    """Several calls sent together; the plan receives one Reply or RemotingError per call."""

    calls: tuple[Call, ...]


@dataclass(frozen=True, slots=True)
class Reply:
    """A response and the address that sent it (None for oneway calls)."""

    addr: str
    command: RemotingCommand | None

    @property
    def code(self) -> int:
        return self.command.code if self.command is not None else ResponseCode.SUCCESS

    @property
    def remark(self) -> str | None:
        return self.command.remark if self.command is not None else None

    @property
    def ext(self) -> dict[str, str]:
        return self.command.ext_fields if self.command is not None else {}

    @property
    def body(self) -> bytes:
        return self.command.body if self.command is not None else b""


Plan = Generator["Call | Fanout", Any, T]


def check(reply: Reply, *ok: int, request_code: int | None = None) -> Reply:
    """Return ``reply`` if its code is SUCCESS (or one of ``ok``), else raise MQBrokerError: the typed
    subclass of its code (:func:`~brokers.engine.client.admin_errors.broker_error`: TopicNotFound, ...)."""
    if reply.code == ResponseCode.SUCCESS or reply.code in ok:
        return reply
    raise broker_error(reply.code, reply.remark, request_code=request_code, addr=reply.addr)


def first_error(replies: list[Reply | RemotingError], request_code: int, *ok: int) -> None:
    """Raise the first failure among a Fanout's answers: a RemotingError, or a code not SUCCESS nor in ``ok``."""
    for r in replies:
        if isinstance(r, RemotingError):
            raise r
        check(r, *ok, request_code=request_code)
