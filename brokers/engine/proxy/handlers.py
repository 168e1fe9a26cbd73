"""The gRPC method table of MessagingService, built from the service's descriptor.

Differences from the generated ``add_MessagingServiceServicer_to_server``:

- a request that does not parse as its protobuf reaches no handler: the call ends with
  INVALID_ARGUMENT naming the message type and the parser's complaint (grpc's own handling answers
  UNKNOWN and logs a traceback per malformed frame, which an attacker could use to flood the log);
- a request larger than its method takes (``REQUEST_CAPS``: Telemetry 128 KiB, most requests 256 KiB;
  SendMessage the port's cap) is refused the same way, unparsed;
- an RPC the endpoint does not serve answers its response with the 5.x status NOT_IMPLEMENTED and
  its name, instead of grpc's bare UNIMPLEMENTED;
- every call is counted by method and the 5.x status it answered (``counts``: ``gantry_grpc_calls_total``;
  a stream by its first status frame, a malformed request as INVALID_ARGUMENT);
- a call's request message is read by the handler itself, not by grpc before it: the servicer's
  ``admission`` says first whether the caller is an established client (or refuses an unsigned call
  under the ACL, its request unread), then the servicer's ``intake`` (:mod:`.intake`) reads it holding
  a read slot. grpc therefore serves every method with a request stream; the wire is the same, and
  Apache's clients call them as the unary methods they are. A Telemetry stream's messages are read
  through the intake too, one at a time and not between the client's settings (:mod:`.intake`);
- a refused call of a client not established (unsigned, malformed), and any call whose request is
  larger than its method takes or (on a Telemetry stream) malformed, is answered after its connection's
  refusal hold (:class:`~.intake.RefusalHold`): a loop on such requests gets a handful answered, then one
  a second per connection.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, overload

import grpc
from google.protobuf.message import DecodeError

from brokers.engine.proxy.convert import ProxyError
from brokers.engine.proxy.intake import ReadRefused, RefusalHold, RequestIntake
from brokers.engine.proxy.sessions import MAX_SETTINGS_BYTES
from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb

# grpc and the generated protobuf modules carry no types here (pyproject.toml [tool.mypy]): their values are Any.
Message = Any  # a generated protobuf message
Context = Any  # grpc.aio.ServicerContext
Counts = Counter[tuple[str, str]]  # (method, 5.x status) -> calls
UnaryMethod = Callable[[Any, Context], Awaitable[Message]]
StreamMethod = Callable[[Any, Context], AsyncIterator[Message]]
Admission = Callable[[Context], bool]  # True: an established client's call; raises ProxyError to refuse it unread

SERVICE = "apache.rocketmq.v2.MessagingService"
SERVED = (
    "QueryRoute",
    "Heartbeat",
    "SendMessage",
    "QueryAssignment",
    "ReceiveMessage",
    "AckMessage",
    "ForwardMessageToDeadLetterQueue",
    "EndTransaction",
    "Telemetry",
    "NotifyClientTermination",
    "ChangeInvisibleDuration",
)


@dataclass(frozen=True, slots=True)
class Malformed:
    type_name: str
    error: str
    oversized: bool = False

    @property
    def text(self) -> str:
        if self.oversized:
            return f"the {self.type_name} request takes {self.error}"
        return f"the request is not a valid {self.type_name} protobuf: {self.error[:200]}"


# The most a request of each method may take, checked before it is parsed (parsing holds the event loop:
# 11 ms for 5 MB of settings naming 200,000 topics). None: the port's request cap (SendMessage carries bodies).
REQUEST_CAPS: dict[str, int | None] = {
    "SendMessage": None,
    "AckMessage": 1 << 20,  # 1,024 entries with their receipt handles
    "Telemetry": 2 * MAX_SETTINGS_BYTES,  # a client's settings: up to twice what is kept, to refuse by its status
}
REQUEST_CAP = 256 * 1024  # every other request: names, a receipt handle, a filter expression


def _parser(cls: Any, cap: int | None) -> Callable[[bytes], Message | Malformed]:
    def parse(data: bytes) -> Message | Malformed:
        if cap is not None and len(data) > cap:
            return Malformed(cls.DESCRIPTOR.full_name, f"{len(data)} bytes, more than the {cap} it may", oversized=True)
        try:
            return cls.FromString(data)
        except DecodeError as exc:
            return Malformed(cls.DESCRIPTOR.full_name, str(exc))

    return parse


_CODE_NAMES: dict[int, str] = {}  # status code -> its name: protobuf's Code.values() builds a list per call


def _status_name(message: Message) -> str | None:
    if message.HasField("status") if "status" in message.DESCRIPTOR.fields_by_name else False:
        code: int = message.status.code
        name = _CODE_NAMES.get(code)
        if name is None:
            if not _CODE_NAMES:
                _CODE_NAMES.update((number, label) for label, number in pb.Code.items())
            name = _CODE_NAMES.get(code) or str(code)
        return name
    return None


@dataclass(frozen=True, slots=True)
class _Reader:
    """How the handlers of one servicer read a call's request."""

    admission: Admission
    intake: RequestIntake
    counts: Counts
    hold: RefusalHold

    async def request(self, name: str, context: Context) -> Message:
        """The call's request, read through the intake; ProxyError if the call is refused unread (after the
        connection's refusal hold). A call whose request does not arrive, or does not parse, is aborted (one
        that does not parse after the hold, unless an established client's)."""
        try:
            established = self.admission(context)
        except ProxyError:
            await self.hold.wait(context.peer())
            raise
        try:
            request = await self.intake.read(context, established)
        except ReadRefused as exc:  # ended at once: grpc frees what the call held
            self.counts[(name, "RESOURCE_EXHAUSTED")] += 1
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        if request is grpc.aio.EOF:
            self.counts[(name, "INVALID_ARGUMENT")] += 1
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call ended without a request message")
        if isinstance(request, Malformed):
            self.counts[(name, "INVALID_ARGUMENT")] += 1
            if request.oversized or not established:  # no client of Apache's sends either
                await self.hold.wait(context.peer())
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.text)
        return request

    def refused(self, name: str, response_cls: Any, exc: ProxyError) -> Message:
        response = response_cls(status=pb.Status(code=exc.code, message=exc.message))
        self.counts[(name, _status_name(response) or "OK")] += 1
        return response


def _unary(name: str, method: UnaryMethod, reader: _Reader, response_cls: Any) -> UnaryMethod:
    async def handle(requests: AsyncIterator[Any], context: Context) -> Message:
        try:
            request = await reader.request(name, context)
        except ProxyError as exc:
            return reader.refused(name, response_cls, exc)
        response = await method(request, context)
        reader.counts[(name, _status_name(response) or "OK")] += 1
        return response

    return handle


def _unary_stream(name: str, method: StreamMethod, reader: _Reader, response_cls: Any) -> StreamMethod:
    async def handle(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Message]:
        try:
            request = await reader.request(name, context)
        except ProxyError as exc:
            yield reader.refused(name, response_cls, exc)
            return
        counted = False
        async for item in method(request, context):
            if not counted:
                status = _status_name(item)
                if status is not None:
                    reader.counts[(name, status)] += 1
                    counted = True
            yield item

    return handle


def _stream_stream(name: str, method: StreamMethod, reader: _Reader) -> StreamMethod:
    counts, intake = reader.counts, reader.intake

    async def handle(request_iterator: AsyncIterator[Message | Malformed], context: Context) -> AsyncIterator[Message]:
        async def requests() -> AsyncIterator[Message]:
            first = True
            while True:
                try:
                    request = await intake.read_stream(context, first)
                except ReadRefused as exc:  # ended at once: grpc frees what the stream held
                    counts[(name, "RESOURCE_EXHAUSTED")] += 1
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
                if request is grpc.aio.EOF:
                    return
                if isinstance(request, Malformed):
                    counts[(name, "INVALID_ARGUMENT")] += 1
                    await reader.hold.wait(context.peer())
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.text)
                yield request
                first = False
                await asyncio.sleep(intake.next_stream_read_s)  # unread meanwhile: the stream holds its window

        async for item in method(requests(), context):
            status = _status_name(item)
            if status is not None:
                counts[(name, status)] += 1
            yield item

    return handle


@overload
def _not_served(name: str, response_cls: Any, streaming: Literal[True]) -> StreamMethod: ...
@overload
def _not_served(name: str, response_cls: Any, streaming: Literal[False]) -> UnaryMethod: ...
def _not_served(name: str, response_cls: Any, streaming: bool) -> UnaryMethod | StreamMethod:
    status = pb.Status(code=pb.NOT_IMPLEMENTED, message=f"{name} is not served by Gantry's 5.x endpoint")
    if streaming:

        async def stream(request: Message, context: Context) -> AsyncIterator[Message]:
            yield response_cls(status=status)

        return stream

    async def unary(request: Message, context: Context) -> Message:
        return response_cls(status=status)

    return unary


def generic_handler(servicer: Any, counts: Counts | None = None) -> grpc.GenericRpcHandler:
    """Every MessagingService method: the servicer's for SERVED ones, a NOT_IMPLEMENTED answer for the rest.
    The servicer has ``admission`` and ``intake`` (the module docstring)."""
    counts = Counter() if counts is None else counts
    reader = _Reader(servicer.admission, servicer.intake, counts, RefusalHold())
    handlers: dict[str, Any] = {}
    for method in spb.DESCRIPTOR.services_by_name["MessagingService"].methods:
        request_cls = getattr(spb, method.input_type.name)
        response_cls = getattr(spb, method.output_type.name)
        parser = _parser(request_cls, REQUEST_CAPS.get(method.name, REQUEST_CAP))
        kwargs = {"request_deserializer": parser, "response_serializer": response_cls.SerializeToString}
        served = method.name in SERVED
        if method.client_streaming and method.server_streaming:
            impl = getattr(servicer, method.name) if served else _not_served(method.name, response_cls, True)
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _stream_stream(method.name, impl, reader), **kwargs
            )
        elif method.server_streaming:
            impl = getattr(servicer, method.name) if served else _not_served(method.name, response_cls, True)
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _unary_stream(method.name, impl, reader, response_cls), **kwargs
            )
        else:
            impl = getattr(servicer, method.name) if served else _not_served(method.name, response_cls, False)
            handlers[method.name] = grpc.stream_unary_rpc_method_handler(
                _unary(method.name, impl, reader, response_cls), **kwargs
            )
    return grpc.method_handlers_generic_handler(SERVICE, handlers)
