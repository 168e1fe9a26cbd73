"""MessagingService (``apache.rocketmq.v2``) for the 5.x clients, in a broker's process or a proxy's.

Each call is checked (:mod:`.auth`), then turned into the 4.x remoting request RocketMQ 5's proxy
would send (SEND_MESSAGE, HEART_BEAT, POP_MESSAGE, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME,
CONSUMER_SEND_MSG_BACK, UNREGISTER_CLIENT) and run by the endpoint's backend: the broker's own
processor for that code on the client's :class:`~.local_channel.LocalChannel`, or the broker's over
the client's own remoting connection (:mod:`.backend`): the same validation, limits, ACL rules and
store path as a 4.x client gets. Answers carry a 5.x status; nothing raises out of a handler but
gRPC's own argument errors (a malformed protobuf never reaches it: handlers.py answers INVALID_ARGUMENT).

Served: QueryRoute, Heartbeat, Telemetry (settings), SendMessage, QueryAssignment, ReceiveMessage
(long polling; status frame, messages, delivery-timestamp frame), AckMessage,
ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue, NotifyClientTermination. EndTransaction,
delay and transactional sends answer NOT_IMPLEMENTED / UNSUPPORTED (transactions and timers come
later); PullMessage, UpdateOffset, GetOffset, QueryOffset, RecallMessage, SyncLiteSubscription are
grpc's UNIMPLEMENTED.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, overload

from google.protobuf.timestamp_pb2 import Timestamp
from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb
from brokers.engine.proxy.stubs import service_pb2_grpc

from brokers.engine.acl.remote_address import split_host
from brokers.engine.proxy import calls
from brokers.engine.proxy.auth import Caller, Unauthenticated, identify, metadata_dict
from brokers.engine.proxy.calls import Endpoint
from brokers.engine.proxy.convert import ProxyError
from brokers.engine.proxy.handlers import Context, Message
from brokers.engine.proxy.intake import RequestIntake
from brokers.engine.proxy.sessions import ClientCall, Session, TooManyClients, check_settings_size, merged_settings
from brokers.engine.proxy.slots import FairSlots, Slot

log = logging.getLogger("brokers.engine.proxy")


def _owner(caller: Caller) -> str | None:
    """The account a call signed as (a session's owner): None if unsigned (ACL off, white address)."""
    return caller.account.access_key if caller.account is not None else None


def _status(code: int = pb.OK, message: str = "OK") -> pb.Status:
    return pb.Status(code=code, message=message)


def _overall(entries: list[Message]) -> pb.Status:
    """A batch's status: its entries' one code (with the first entry's message), else MULTIPLE_RESULTS."""
    codes = {e.status.code for e in entries}
    if len(codes) == 1:
        code = codes.pop()
        return _status(code, entries[0].status.message if code != pb.OK else "OK")
    return _status(pb.MULTIPLE_RESULTS, "MULTIPLE_RESULTS")


# Receives that work at once (:mod:`.slots`): a set-up (a pop of every queue before the poll parks) and the
# delivery of what it found (a frame per message on the stream) each hold one of these slots; the others
# wait their turn, by peer, without working. Every call in progress takes one step per turn of the event
# loop, and grpc takes in one new call per turn: with 2,000 long polls opened together, or a consumer's
# polls each streaming 32 messages, the turns grew long and every other client's call waited in grpc's
# queue for seconds.
RECEIVE_SLOTS = 2
# How long a receive holds its slot for its set-up at most: a set-up takes about a millisecond, so one
# still running after this has parked (long polling) and needs no slot while it waits.
RECEIVE_SETUP_S = 0.05
# How long a delivery holds its slot at most: a client that does not read its stream (grpc's flow
# control then holds the writes) keeps only its own call waiting, not the slot.
RECEIVE_DELIVERY_S = 0.25


class MessagingService(service_pb2_grpc.MessagingServiceServicer):  # type: ignore[misc]  # generated, untyped base
    def __init__(self, endpoint: Endpoint, intake: RequestIntake) -> None:
        self.endpoint = endpoint  # endpoint.GrpcEndpoint: its backend, sessions, the ACL guard
        self.intake = intake  # how the handlers read requests (handlers.py)
        self._receive_slots = FairSlots(RECEIVE_SLOTS)

    async def _received(self, receive: Callable[[], Awaitable[list[pb.Message]]], slot: Slot) -> list[pb.Message]:
        """Run ``receive()`` holding ``slot`` until it returns or parks (RECEIVE_SETUP_S)."""
        await slot.take(RECEIVE_SETUP_S)
        task = asyncio.ensure_future(receive())
        try:
            await asyncio.wait((task,), timeout=RECEIVE_SETUP_S)
            if not task.done():
                slot.give_back()  # parked: it waits for a message without working
            return await task
        except asyncio.CancelledError:
            task.cancel()
            raise

    # -- who is calling --------------------------------------------------------------------------

    @overload
    def _session(self, context: Context) -> ClientCall: ...
    @overload
    def _session(self, context: Context, *, required: Literal[False]) -> ClientCall | None: ...
    def _session(self, context: Context, *, required: bool = True) -> ClientCall | None:
        """The caller's session, or a status raised as ProxyError."""
        caller = self._caller(context)
        if not caller.client_id:
            if required:
                raise ProxyError(pb.CLIENT_ID_REQUIRED, "the call has no x-mq-client-id metadata")
            return None
        if not self.endpoint.backend.ready:
            raise ProxyError(
                pb.INTERNAL_SERVER_ERROR, f"{self.endpoint.backend.name} is not ready yet, try again shortly"
            )
        owner = _owner(caller)
        known = self.endpoint.sessions.get(caller.client_id)
        if known is not None and known.owner != owner:  # a client id is its first signer's: no one else ends or uses it
            raise ProxyError(pb.UNAUTHORIZED, f"client id {caller.client_id[:64]} is in use by another account")
        try:
            session = self.endpoint.sessions.touch(
                caller.client_id, caller.language, caller.version, caller.remote_addr
            )
        except TooManyClients as exc:
            raise ProxyError(pb.TOO_MANY_REQUESTS, str(exc)) from None
        if known is None:
            session.owner = owner
        return ClientCall(session, caller)

    def _caller(self, context: Context) -> Caller:
        try:
            return identify(metadata_dict(context.invocation_metadata()), context.peer(), self.endpoint.guard)
        except Unauthenticated as exc:
            raise ProxyError(pb.UNAUTHORIZED, str(exc)) from None

    def admission(self, context: Context) -> bool:
        """Before a call's request is read (handlers.py): whether it comes from an established client, a
        client id with a session signed for by this call's account; ProxyError for a call the ACL refuses."""
        caller = self._caller(context)
        session = self.endpoint.sessions.get(caller.client_id) if caller.client_id else None
        return session is not None and session.owner == _owner(caller)

    # -- unary calls -----------------------------------------------------------------------------

    async def _unary(
        self, context: Context, response_type: Any, work: Callable[[ClientCall], Awaitable[Message]]
    ) -> Message:
        try:
            session = self._session(context)
            return await work(session)
        except ProxyError as exc:
            return response_type(status=_status(exc.code, exc.message))
        except Exception as exc:
            log.exception("gRPC %s failed", response_type.__name__)
            return response_type(status=_status(pb.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}"))

    async def QueryRoute(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            queues = await calls.query_route(self.endpoint, session, request)
            return spb.QueryRouteResponse(status=_status(), message_queues=queues)

        return await self._unary(context, spb.QueryRouteResponse, work)

    async def QueryAssignment(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            found = await calls.query_assignment(self.endpoint, session, request)
            if not found:
                return spb.QueryAssignmentResponse(status=_status(pb.FORBIDDEN, "no readable queue"))
            return spb.QueryAssignmentResponse(status=_status(), assignments=found)

        return await self._unary(context, spb.QueryAssignmentResponse, work)

    async def Heartbeat(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            await calls.heartbeat(self.endpoint, session, request)
            return spb.HeartbeatResponse(status=_status())

        return await self._unary(context, spb.HeartbeatResponse, work)

    async def SendMessage(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            entries = await calls.send(self.endpoint, session, request)
            return spb.SendMessageResponse(status=_overall(entries), entries=entries)

        return await self._unary(context, spb.SendMessageResponse, work)

    async def AckMessage(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            entries = await calls.ack(self.endpoint, session, request)
            return spb.AckMessageResponse(status=_overall(entries), entries=entries)

        return await self._unary(context, spb.AckMessageResponse, work)

    async def ChangeInvisibleDuration(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            handle = await calls.change_invisible(self.endpoint, session, request)
            return spb.ChangeInvisibleDurationResponse(status=_status(), receipt_handle=handle)

        return await self._unary(context, spb.ChangeInvisibleDurationResponse, work)

    async def ForwardMessageToDeadLetterQueue(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            await calls.forward_to_dlq(self.endpoint, session, request)
            return spb.ForwardMessageToDeadLetterQueueResponse(status=_status())

        return await self._unary(context, spb.ForwardMessageToDeadLetterQueueResponse, work)

    async def EndTransaction(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            return spb.EndTransactionResponse(
                status=_status(pb.NOT_IMPLEMENTED, "transactional messages are not served by this endpoint yet")
            )

        return await self._unary(context, spb.EndTransactionResponse, work)

    async def NotifyClientTermination(self, request: Message, context: Context) -> Message:
        async def work(session: ClientCall) -> Message:
            await calls.unregister(self.endpoint, session, request)
            self.endpoint.sessions.end(session.client_id, "NotifyClientTermination")
            return spb.NotifyClientTerminationResponse(status=_status())

        return await self._unary(context, spb.NotifyClientTerminationResponse, work)

    # -- streams ---------------------------------------------------------------------------------

    async def ReceiveMessage(self, request: Message, context: Context) -> AsyncIterator[spb.ReceiveMessageResponse]:
        slot = None
        try:
            session = self._session(context)
            slot = Slot(self._receive_slots, split_host(session.caller.remote_addr) or session.caller.remote_addr)
            messages = await self._received(
                lambda: calls.receive(self.endpoint, session, request, context.time_remaining()), slot
            )
            if messages:
                await slot.take(RECEIVE_DELIVERY_S)  # held already unless the receive parked or overran
                yield spb.ReceiveMessageResponse(status=_status())
                for message in messages:
                    yield spb.ReceiveMessageResponse(message=message)
            else:
                yield spb.ReceiveMessageResponse(status=_status(pb.MESSAGE_NOT_FOUND, "no new message"))
        except ProxyError as exc:
            yield spb.ReceiveMessageResponse(status=_status(exc.code, exc.message))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("gRPC ReceiveMessage failed")
            yield spb.ReceiveMessageResponse(status=_status(pb.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}"))
        finally:
            if slot is not None:
                slot.give_back()
        now = Timestamp()
        now.FromNanoseconds(time.time_ns())  # GetCurrentTime() goes through a datetime: several times slower
        yield spb.ReceiveMessageResponse(delivery_timestamp=now)

    async def Telemetry(
        self, request_iterator: AsyncIterator[Message], context: Context
    ) -> AsyncIterator[spb.TelemetryCommand]:
        try:
            session = self._session(context)
        except ProxyError as exc:
            yield spb.TelemetryCommand(status=_status(exc.code, exc.message))
            return
        ended = session.session.until_ended()
        requests = aiter(request_iterator)
        while True:
            # the client's next message, or the end of its session: Java's client says NotifyClientTermination
            # and waits for its stream to end, which the endpoint, not reading between settings, learns so
            following = asyncio.ensure_future(anext(requests))
            try:
                await asyncio.wait((following, ended), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting = not following.done()
                if waiting:  # the session ended, or the call did: stop reading
                    following.cancel()
            if waiting:
                return
            try:
                command = following.result()
            except StopAsyncIteration:
                return
            if command.HasField("settings"):
                try:
                    answered = await self._settings(session.session, command.settings)
                except ProxyError as exc:
                    yield spb.TelemetryCommand(status=_status(exc.code, exc.message))
                    continue
                yield spb.TelemetryCommand(status=_status(), settings=answered)
            # thread stack traces and verify results answer commands this endpoint never sends

    async def _settings(self, session: Session, settings: pb.Settings) -> pb.Settings:
        if settings.client_type == pb.CLIENT_TYPE_UNSPECIFIED:
            raise ProxyError(pb.UNRECOGNIZED_CLIENT_TYPE, "the settings name no client type")
        check_settings_size(settings)
        fifo, max_attempts = False, 17
        if settings.HasField("subscription"):
            group = settings.subscription.group.name
            fifo, max_attempts = await self.endpoint.backend.group_policy(None, group)
        merged = merged_settings(
            settings, max_body_size=self.endpoint.backend.max_message_size, fifo=fifo, max_attempts=max_attempts
        )
        if merged != session.settings:  # the same settings again keep their object: heartbeats see no change
            session.settings = merged
        return session.settings
