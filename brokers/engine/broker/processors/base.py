"""Helpers shared by the processors: header parsing with named errors, name checks, replies."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from brokers.engine.common.topic_validator import InvalidNameError, validate_group, validate_new_topic, validate_topic
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.channel import Handler
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

_Self = TypeVar("_Self")
_Ctx = TypeVar("_Ctx")
HandlerMethod = Callable[[_Self, _Ctx, RemotingCommand], Awaitable["RemotingCommand | None"]]


class ProcessorRegistry(Protocol):
    """Where a processor registers its handlers: the remoting server, or a test's stand-in."""

    def register_processor(self, code: int, handler: Handler) -> None: ...

    def limit_body(self, code: int, max_bytes: int, setting: str) -> None: ...


class RequestError(Exception):
    """Answer the request with ``code`` and ``remark`` (raised inside handlers)."""

    def __init__(self, code: int, remark: str) -> None:
        super().__init__(remark)
        self.code = int(code)
        self.remark = remark


def checked_topic(topic: str, code: int = ResponseCode.SYSTEM_ERROR) -> str:
    """Return ``topic`` if it follows the naming rule, else raise RequestError naming the problem."""
    try:
        return validate_topic(topic)
    except InvalidNameError as exc:
        raise RequestError(code, f"topic name is illegal: {exc}") from None


def checked_new_topic(topic: str, broker_topics: Iterable[str] = ()) -> str:
    """Return ``topic`` if an admin may create or delete it (updateTopic's rule), else raise RequestError."""
    try:
        return validate_new_topic(topic, broker_topics)
    except InvalidNameError as exc:
        raise RequestError(ResponseCode.SYSTEM_ERROR, f"topic name is illegal: {exc}") from None


def checked_group(group: str, code: int = ResponseCode.SYSTEM_ERROR) -> str:
    """Return ``group`` if it follows the naming rule, else raise RequestError naming the problem."""
    try:
        return validate_group(group)
    except InvalidNameError as exc:
        raise RequestError(code, f"group name is illegal: {exc}") from None


def checked_queue_id(queue_id: int) -> int:
    if queue_id < 0:
        raise RequestError(ResponseCode.SYSTEM_ERROR, f"queueId {queue_id} is negative")
    return queue_id


def error_response(
    request: RemotingCommand, exc: RequestError, ext_fields: dict[str, Any] | None = None
) -> RemotingCommand:
    return request.response(exc.code, exc.remark, ext_fields)


class Processor:
    """Base: keeps the broker context (never the controller itself); subclasses define ``register``."""

    def __init__(self, broker: BrokerContext) -> None:
        self.broker = broker

    def reply(
        self,
        request: RemotingCommand,
        code: int = ResponseCode.SUCCESS,
        remark: str | None = None,
        ext_fields: dict[str, Any] | None = None,
        body: bytes = b"",
    ) -> RemotingCommand:
        return request.response(code, remark, ext_fields, body)


def guarded(handler: HandlerMethod[_Self, _Ctx]) -> HandlerMethod[_Self, _Ctx]:
    """Turn a RequestError raised by ``handler`` into its response (none for oneway requests), and a
    RemotingCommandError (a request header's ``decode`` naming a missing or bad field) into SYSTEM_ERROR."""

    @functools.wraps(handler)
    async def wrapper(self: _Self, ctx: _Ctx, request: RemotingCommand) -> RemotingCommand | None:
        try:
            return await handler(self, ctx, request)
        except RequestError as exc:
            return None if request.is_oneway else request.response(exc.code, exc.remark)
        except RemotingCommandError as exc:
            return None if request.is_oneway else request.response(ResponseCode.SYSTEM_ERROR, str(exc))

    return wrapper
