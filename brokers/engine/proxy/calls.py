"""Each 5.x call as the broker's remoting requests (the translation RocketMQ 5's proxy makes).

:func:`dispatch` runs one request through the ACL check for the caller's account and then the
broker's processor for its code, on the caller's LocalChannel; the functions below build the
requests and read the answers. A refusal or bad input raises :class:`ProxyError` with the 5.x code.
"""

from __future__ import annotations

import itertools
import json
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb

from brokers.engine.broker.processors.pop import POLLING_FULL, POLLING_TIMEOUT
from brokers.engine.broker.pop.extra_info import ExtraInfo, ExtraInfoError, parse_extra_info
from brokers.engine.client.admin_bodies import parse_topic_route
from brokers.engine.common.message import PROPERTY_PRODUCER_GROUP
from brokers.engine.common.message_codec import RecordFormatError, decode_records
from brokers.engine.common.topic_message_type import (
    DELAY,
    TRANSACTION,
    accepted_message_types,
    message_type_conflict,
    message_type_of,
    topic_message_type,
)
from brokers.engine.common.topic_validator import InvalidNameError, validate_group, validate_topic
from brokers.engine.proxy import routes
from brokers.engine.proxy.auth import authorize
from brokers.engine.proxy.backend import Backend, NotServed
from brokers.engine.proxy.convert import (
    PROPERTY_POP_CK,
    ProxyError,
    encoded_properties,
    send_properties,
    to_grpc_message,
)
from brokers.engine.proxy.sessions import ClientCall, Sessions, parse_version
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError, RemotingTimeoutError
from brokers.engine.remoting.headers.brokers import UnregisterClientRequestHeader
from brokers.engine.remoting.headers.consume import (
    AckMessageRequestHeader,
    ChangeInvisibleTimeRequestHeader,
    ConsumerSendMsgBackRequestHeader,
    PopMessageRequestHeader,
)
from brokers.engine.remoting.headers.topics import GetRouteInfoRequestHeader

if TYPE_CHECKING:
    from brokers.engine.acl.acl_guard import AclGuard
    from brokers.engine.client.admin_types import TopicRouteData

Message = Any  # a generated protobuf message (no types here: pyproject.toml [tool.mypy])


class Endpoint(Protocol):
    """What the calls use of a GrpcEndpoint (endpoint.py imports this module through service.py)."""

    @property
    def backend(self) -> Backend: ...
    @property
    def guard(self) -> AclGuard | None: ...
    @property
    def sessions(self) -> Sessions: ...


CALL_TIMEOUT_S = 5.0
MAX_SEND_BATCH = 1024  # messages in one SendMessage
HEARTBEAT_MIN_INTERVAL_S = 1.0  # Apache's 5.x clients heartbeat every 10 s
MAX_ACK_ENTRIES = 1024  # entries in one AckMessage
MAX_RECEIVE_BATCH = 32  # PopMessageProcessor's cap
MIN_INVISIBLE_MS = 1_000
MAX_INVISIBLE_MS = 12 * 3600 * 1000  # RocketMQ's maxInvisibleTimeMills
MIN_POLL_MS, MAX_POLL_MS = 0, 20_000
_round_robin = itertools.count()

_SEND_CODES: dict[int, int] = {
    ResponseCode.TOPIC_NOT_EXIST: pb.TOPIC_NOT_FOUND,
    ResponseCode.NO_PERMISSION: pb.FORBIDDEN,
    ResponseCode.MESSAGE_ILLEGAL: pb.BAD_REQUEST,
    ResponseCode.FLUSH_DISK_TIMEOUT: pb.MASTER_PERSISTENCE_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: pb.SLAVE_PERSISTENCE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: pb.HA_NOT_AVAILABLE,
    ResponseCode.SYSTEM_BUSY: pb.TOO_MANY_REQUESTS,
    ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: pb.CONSUMER_GROUP_NOT_FOUND,
}


def _fail(response: RemotingCommand, default: int = pb.INTERNAL_SERVER_ERROR) -> ProxyError:
    return ProxyError(
        _SEND_CODES.get(response.code, default), response.remark or f"the broker answered code {response.code}"
    )


async def dispatch(
    endpoint: Endpoint,
    session: ClientCall,
    request: RemotingCommand,
    timeout_s: float = CALL_TIMEOUT_S,
    broker_name: str | None = None,
) -> RemotingCommand:
    """Run ``request`` as the caller: its ACL check, then the backend runs it (on broker ``broker_name``
    in cluster mode; a broker's own endpoint runs everything on its broker)."""
    remark = authorize(endpoint.guard, session.caller, request)
    if remark is not None:
        raise ProxyError(pb.FORBIDDEN, remark)
    request.language = session.caller.language
    request.version = parse_version(session.caller.version)
    try:
        return await endpoint.backend.invoke(session, request, broker_name, timeout_s)
    except NotServed as exc:
        raise ProxyError(pb.NOT_IMPLEMENTED, str(exc)) from None
    except RemotingError as exc:
        raise ProxyError(
            pb.PROXY_TIMEOUT if isinstance(exc, RemotingTimeoutError) else pb.INTERNAL_SERVER_ERROR,
            f"broker {broker_name or ''} did not answer: {exc}",
        ) from None


def _topic(resource: pb.Resource) -> str:
    try:
        return validate_topic(resource.name)
    except InvalidNameError as exc:
        raise ProxyError(pb.ILLEGAL_TOPIC, f"topic name is illegal: {exc}") from None


def _group(resource: pb.Resource) -> str:
    try:
        return validate_group(resource.name)
    except InvalidNameError as exc:
        raise ProxyError(pb.ILLEGAL_CONSUMER_GROUP, f"consumer group name is illegal: {exc}") from None


# -- routes ----------------------------------------------------------------------------------------


async def _route(endpoint: Endpoint, session: ClientCall, topic: str) -> tuple[TopicRouteData, dict[str, str]]:
    request = RemotingCommand.request(
        RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic).encode()
    )
    remark = authorize(endpoint.guard, session.caller, request)
    if remark is not None:
        raise ProxyError(pb.FORBIDDEN, remark)
    try:
        reply = await endpoint.backend.namesrv_call(request)
    except Exception as exc:
        raise ProxyError(pb.INTERNAL_SERVER_ERROR, f"no name server answered: {exc}") from None
    if reply.code == ResponseCode.TOPIC_NOT_EXIST:
        raise ProxyError(pb.TOPIC_NOT_FOUND, f"topic {topic} has no route on the name servers")
    if reply.code != ResponseCode.SUCCESS:
        raise _fail(reply)
    route = parse_topic_route(topic, reply.body)
    grpc_addrs: dict[str, str] = {}
    for bd in route.broker_datas:
        addr = bd.broker_addrs.get(routes.MASTER_ID)
        if addr is not None:
            grpc_addrs[bd.broker_name] = await endpoint.backend.grpc_addr_of(bd.broker_name, addr)
    return route, grpc_addrs


async def query_route(endpoint: Endpoint, session: ClientCall, request: Message) -> list[pb.MessageQueue]:
    topic = _topic(request.topic)
    route, grpc_addrs = await _route(endpoint, session, topic)
    tc = await endpoint.backend.topic_config(session, topic)
    accept = accepted_message_types(topic_message_type(tc) if tc is not None else "NORMAL")
    return routes.message_queues(route, request.topic, grpc_addrs, accept)


async def query_assignment(endpoint: Endpoint, session: ClientCall, request: Message) -> list[pb.Assignment]:
    topic, group = _topic(request.topic), _group(request.group)
    route, grpc_addrs = await _route(endpoint, session, topic)
    fifo, _ = await endpoint.backend.group_policy(session, group)
    return routes.assignments(route, request.topic, grpc_addrs, fifo)


# -- clients ---------------------------------------------------------------------------------------


async def heartbeat(endpoint: Endpoint, session: ClientCall, request: Message) -> None:
    """Register the client in its groups on the brokers its heartbeats go to. A heartbeat saying what the
    client's last one said within ``HEARTBEAT_MIN_INTERVAL_S`` is answered without going to them: a client
    looping on heartbeats (each carries its settings' subscriptions) costs the brokers one a second."""
    settings = session.settings
    said = (request.client_type, request.group.name, settings)
    now = endpoint.backend.clock.monotonic()
    last = session.session.last_heartbeat
    if last is not None and now - last[0] < HEARTBEAT_MIN_INTERVAL_S and _same(last[1], said):
        return
    await _heartbeat(endpoint, session, request)
    session.session.last_heartbeat = (now, said)


def _same(a: tuple[int, str, Any], b: tuple[int, str, Any]) -> bool:
    return a[0] == b[0] and a[1] == b[1] and a[2] is b[2]  # the same settings object: none read since


async def _heartbeat(endpoint: Endpoint, session: ClientCall, request: Message) -> None:
    settings = session.settings
    client_type = request.client_type or session.client_type
    body: dict[str, Any] = {"clientID": session.client_id, "producerDataSet": [], "consumerDataSet": []}
    if client_type == pb.PRODUCER:
        topics = [t.name for t in settings.publishing.topics] if settings is not None else []
        body["producerDataSet"] = [
            {"groupName": t} for t in topics[:64] if t
        ]  # the proxy's producer group is the topic
    elif client_type in (pb.PUSH_CONSUMER, pb.SIMPLE_CONSUMER):
        group = _group(request.group if request.HasField("group") else settings.subscription.group)
        subs = []
        if settings is not None:
            for entry in settings.subscription.subscriptions:
                kind = "SQL92" if entry.expression.type == pb.SQL else "TAG"
                subs.append(
                    {
                        "topic": entry.topic.name,
                        "subString": entry.expression.expression or "*",
                        "expressionType": kind,
                        "subVersion": int(time.time() * 1000),
                    }
                )
        body["consumerDataSet"] = [
            {
                "groupName": group,
                "consumeType": "CONSUME_PASSIVELY" if client_type == pb.PUSH_CONSUMER else "CONSUME_ACTIVELY",
                "messageModel": "CLUSTERING",
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                "subscriptionDataSet": subs,
                "unitMode": False,
            }
        ]
        session.groups.add(group)
    else:
        raise ProxyError(pb.UNRECOGNIZED_CLIENT_TYPE, f"client type {client_type} cannot heartbeat")
    encoded = json.dumps(body).encode()
    for reply in await _to_each(
        endpoint, session, lambda: RemotingCommand.request(RequestCode.HEART_BEAT, None, encoded)
    ):
        if reply.code != ResponseCode.SUCCESS:
            raise _fail(reply, pb.BAD_REQUEST)


async def _to_each(
    endpoint: Endpoint, session: ClientCall, make: Callable[[], RemotingCommand]
) -> list[RemotingCommand]:
    """A request made by ``make()`` sent to each broker the client's heartbeats go to (one in local mode,
    every master in cluster mode); the answers of those that answered. A broker that is down is
    skipped as a 4.x client's heartbeat skips it; none answering is an error."""
    targets = await endpoint.backend.heartbeat_targets(session)
    replies, failures = [], []
    for target in targets:
        try:
            replies.append(await dispatch(endpoint, session, make(), broker_name=target))
        except ProxyError as exc:
            if exc.code == pb.FORBIDDEN:
                raise
            failures.append(exc)
    if failures and not replies:
        raise failures[0]
    return replies


async def unregister(endpoint: Endpoint, session: ClientCall, request: Message) -> None:
    group = _group(request.group) if request.HasField("group") and request.group.name else None
    fields = UnregisterClientRequestHeader(client_id=session.client_id, consumer_group=group).encode()
    await _to_each(endpoint, session, lambda: RemotingCommand.request(RequestCode.UNREGISTER_CLIENT, fields))


# -- send ------------------------------------------------------------------------------------------


async def send(endpoint: Endpoint, session: ClientCall, request: Message) -> list[spb.SendResultEntry]:
    messages = request.messages
    if not messages:
        raise ProxyError(pb.BAD_REQUEST, "the request has no message")
    if len(messages) > MAX_SEND_BATCH:
        raise ProxyError(pb.PAYLOAD_TOO_LARGE, f"{len(messages)} messages in one request, max is {MAX_SEND_BATCH}")
    backend = endpoint.backend
    topic = _topic(messages[0].topic)
    max_size = backend.max_message_size
    tc = await backend.topic_config(session, topic)
    prepared = []
    for msg in messages:  # all checked before any is stored: a bad one changes nothing
        if msg.topic.name != topic:
            raise ProxyError(pb.MESSAGE_CORRUPTED, "the messages of one request name different topics")
        if len(msg.body) > max_size:
            raise ProxyError(
                pb.MESSAGE_BODY_TOO_LARGE, f"message body of {len(msg.body)} bytes exceeds the max {max_size}"
            )
        if not msg.body:
            raise ProxyError(pb.MESSAGE_BODY_EMPTY, "message body is empty")
        props, sys_flag = send_properties(msg, session.channel.remote_addr)
        kind = message_type_of(props)
        if kind in (DELAY, TRANSACTION):
            raise ProxyError(pb.UNSUPPORTED, f"{kind} messages are not served by this endpoint yet")
        if tc is not None:
            conflict = message_type_conflict(topic_message_type(tc), kind)
            if conflict:
                raise ProxyError(pb.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, conflict)
        props[PROPERTY_PRODUCER_GROUP] = topic
        prepared.append((msg, props, sys_flag))
    queues = await backend.send_queues(session, topic, tc)
    if not queues:
        raise ProxyError(pb.TOPIC_NOT_FOUND, f"topic {topic} has no writable queue")
    entries = []
    for msg, props, sys_flag in prepared:
        group = msg.system_properties.message_group
        broker_name, queue_id = queues[
            zlib.crc32(group.encode()) % len(queues) if group else next(_round_robin) % len(queues)
        ]
        fields = {
            "producerGroup": topic,
            "topic": topic,
            "defaultTopic": "TBW102",
            "defaultTopicQueueNums": 4,
            "queueId": queue_id,
            "sysFlag": sys_flag,
            "bornTimestamp": int(time.time() * 1000),
            "flag": 0,
            "properties": encoded_properties(props),
            "reconsumeTimes": 0,
            "unitMode": "false",
            "batch": "false",
        }
        try:
            reply = await dispatch(
                endpoint,
                session,
                RemotingCommand.request(RequestCode.SEND_MESSAGE, fields, bytes(msg.body)),
                broker_name=broker_name,
            )
        except ProxyError as exc:
            entries.append(spb.SendResultEntry(status=pb.Status(code=exc.code, message=exc.message)))
            continue
        if reply.code == ResponseCode.SUCCESS:
            entries.append(
                spb.SendResultEntry(
                    status=pb.Status(code=pb.OK, message="OK"),
                    message_id=msg.system_properties.message_id,
                    offset=int(reply.ext("queueOffset", "0") or 0),
                )
            )
        else:
            err = _fail(reply)
            entries.append(spb.SendResultEntry(status=pb.Status(code=err.code, message=err.message)))
    return entries


# -- consume ---------------------------------------------------------------------------------------


async def receive(
    endpoint: Endpoint, session: ClientCall, request: Message, time_remaining: float | None
) -> list[pb.Message]:
    group, topic = _group(request.group), _topic(request.message_queue.topic)
    batch = request.batch_size
    if not 0 < batch <= MAX_RECEIVE_BATCH:
        raise ProxyError(pb.BAD_REQUEST, f"batch_size must be within 1..{MAX_RECEIVE_BATCH}, got {batch}")
    invisible = request.invisible_duration.ToMilliseconds() if request.HasField("invisible_duration") else 30_000
    if not MIN_INVISIBLE_MS <= invisible <= MAX_INVISIBLE_MS:
        raise ProxyError(
            pb.ILLEGAL_INVISIBLE_TIME,
            f"invisible_duration must be within {MIN_INVISIBLE_MS} ms..12 h, got {invisible} ms",
        )
    remaining_ms = int((time_remaining if time_remaining is not None else 30.0) * 1000)
    if request.HasField("long_polling_timeout"):
        poll = request.long_polling_timeout.ToMilliseconds()
    else:
        poll = remaining_ms - 1_500
    poll = max(MIN_POLL_MS, min(poll, MAX_POLL_MS, remaining_ms - 500))
    if remaining_ms < 500:
        raise ProxyError(pb.ILLEGAL_POLLING_TIME, "the deadline leaves no time to poll, check the client's timeout")
    expression = request.filter_expression
    fifo, _ = await endpoint.backend.group_policy(session, group)
    queue_id = request.message_queue.id if fifo and request.message_queue.id >= 0 else -1
    fields = PopMessageRequestHeader(
        consumer_group=group,
        topic=topic,
        queue_id=queue_id,
        max_msg_nums=batch,
        invisible_time=invisible,
        poll_time=poll,
        born_time=int(time.time() * 1000),
        init_mode=1,
        exp_type="SQL92" if expression.type == pb.SQL else "TAG",
        exp=expression.expression or "*",
        order=fifo,
        attempt_id=request.attempt_id[:64] if request.HasField("attempt_id") else None,
    ).encode()
    try:
        name = await endpoint.backend.served_broker(request.message_queue.broker.name, topic)
    except NotServed as exc:
        raise ProxyError(pb.TOPIC_NOT_FOUND, str(exc)) from None
    reply = await dispatch(
        endpoint, session, RemotingCommand.request(RequestCode.POP_MESSAGE, fields), poll / 1000 + 3.0, name
    )
    if reply.code in (ResponseCode.PULL_NOT_FOUND, ResponseCode.NO_MESSAGE, POLLING_TIMEOUT):
        return []
    if reply.code == POLLING_FULL:
        raise ProxyError(pb.TOO_MANY_REQUESTS, reply.remark or "polling full")
    if reply.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED:
        raise ProxyError(pb.ILLEGAL_FILTER_EXPRESSION, reply.remark or "the filter expression does not parse")
    if reply.code != ResponseCode.SUCCESS:
        raise _fail(reply)
    try:
        found = decode_records(reply.body)
    except RecordFormatError as exc:
        raise ProxyError(pb.INTERNAL_SERVER_ERROR, f"the broker's POP answer does not decode: {exc}") from None
    out = []
    pop_time, invisible_time = (
        int(reply.ext("popTime", "0") or 0),
        int(reply.ext("invisibleTime", str(invisible)) or invisible),
    )
    revive = int(reply.ext("reviveQid", "0") or 0)
    starts = _start_offsets(reply.ext("startOffsetInfo") or "")
    for ext in found:
        if not ext.properties.get(PROPERTY_POP_CK):  # built as the 5.x clients build it from the answer's header
            ck = starts.get(ext.queue_id, ext.queue_offset)
            ext.properties[PROPERTY_POP_CK] = ExtraInfo(
                ck, pop_time, invisible_time, revive, "0", name, ext.queue_id, ext.queue_offset
            ).text()
        out.append(to_grpc_message(ext, topic, request.message_queue.topic.resource_namespace))
    return out


def _start_offsets(text: str) -> dict[int, int]:
    """queue id -> the first offset the pop took from it, from a POP answer's startOffsetInfo
    (``retry queueId offset`` entries joined by ``;``)."""
    out = {}
    for entry in filter(None, text.split(";")):
        parts = entry.split(" ")
        if len(parts) == 3 and parts[1].lstrip("-").isdigit() and parts[2].lstrip("-").isdigit():
            out[int(parts[1])] = int(parts[2])
    return out


def _handle(endpoint: Endpoint, text: str) -> ExtraInfo:
    try:
        info = parse_extra_info(text)
    except ExtraInfoError as exc:
        raise ProxyError(pb.INVALID_RECEIPT_HANDLE, f"receipt handle is malformed: {exc}") from None
    if info.queue_offset is None:
        raise ProxyError(pb.INVALID_RECEIPT_HANDLE, "receipt handle has no message offset")
    refusal = endpoint.backend.handle_refusal(info.broker_name)
    if refusal is not None:
        raise ProxyError(pb.INVALID_RECEIPT_HANDLE, refusal)
    return info


async def _ack_one(endpoint: Endpoint, session: ClientCall, group: str, topic: str, text: str) -> None:
    info = _handle(endpoint, text)
    assert info.queue_offset is not None  # _handle refuses a handle without one
    fields = AckMessageRequestHeader(
        consumer_group=group, topic=topic, queue_id=info.queue_id, extra_info=text, offset=info.queue_offset
    ).encode()
    reply = await dispatch(
        endpoint, session, RemotingCommand.request(RequestCode.ACK_MESSAGE, fields), broker_name=info.broker_name
    )
    if reply.code != ResponseCode.SUCCESS:
        raise ProxyError(
            pb.INVALID_RECEIPT_HANDLE if reply.code != ResponseCode.NO_PERMISSION else pb.FORBIDDEN,
            reply.remark or "the receipt handle is expired or unknown",
        )


async def ack(endpoint: Endpoint, session: ClientCall, request: Message) -> list[spb.AckMessageResultEntry]:
    group, topic = _group(request.group), _topic(request.topic)
    if not request.entries:
        raise ProxyError(pb.BAD_REQUEST, "the request has no entry")
    if len(request.entries) > MAX_ACK_ENTRIES:
        raise ProxyError(pb.BAD_REQUEST, f"{len(request.entries)} entries in one request, max is {MAX_ACK_ENTRIES}")
    out = []
    for entry in request.entries:
        try:
            await _ack_one(endpoint, session, group, topic, entry.receipt_handle)
            status = pb.Status(code=pb.OK, message="OK")
        except ProxyError as exc:
            status = pb.Status(code=exc.code, message=exc.message)
        out.append(
            spb.AckMessageResultEntry(message_id=entry.message_id, receipt_handle=entry.receipt_handle, status=status)
        )
    return out


async def change_invisible(endpoint: Endpoint, session: ClientCall, request: Message) -> str:
    group, topic = _group(request.group), _topic(request.topic)
    info = _handle(endpoint, request.receipt_handle)
    invisible = request.invisible_duration.ToMilliseconds()
    if not MIN_INVISIBLE_MS <= invisible <= MAX_INVISIBLE_MS:
        raise ProxyError(
            pb.ILLEGAL_INVISIBLE_TIME,
            f"invisible_duration must be within {MIN_INVISIBLE_MS} ms..12 h, got {invisible} ms",
        )
    assert info.queue_offset is not None  # _handle refuses a handle without one
    fields = ChangeInvisibleTimeRequestHeader(
        consumer_group=group,
        topic=topic,
        queue_id=info.queue_id,
        extra_info=request.receipt_handle,
        offset=info.queue_offset,
        invisible_time=invisible,
    ).encode()
    reply = await dispatch(
        endpoint,
        session,
        RemotingCommand.request(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, fields),
        broker_name=info.broker_name,
    )
    if reply.code != ResponseCode.SUCCESS:
        raise ProxyError(
            pb.INVALID_RECEIPT_HANDLE if reply.code != ResponseCode.NO_PERMISSION else pb.FORBIDDEN,
            reply.remark or "the receipt handle is expired or unknown",
        )
    assert info.queue_offset is not None  # _handle refuses a handle without one
    return ExtraInfo(
        info.queue_offset,
        int(reply.ext("popTime", "0") or 0),
        int(reply.ext("invisibleTime", str(invisible)) or invisible),
        int(reply.ext("reviveQid", str(info.revive_qid)) or 0),
        info.retry,
        info.broker_name,
        info.queue_id,
        info.queue_offset,
    ).text()


async def forward_to_dlq(endpoint: Endpoint, session: ClientCall, request: Message) -> None:
    group, topic = _group(request.group), _topic(request.topic)
    info = _handle(endpoint, request.receipt_handle)
    commit_log_offset = await endpoint.backend.commit_log_offset(session, group, topic, info)
    if commit_log_offset is None:
        raise ProxyError(
            pb.MESSAGE_NOT_FOUND, f"no message at offset {info.queue_offset} of queue {info.queue_id} of {topic}"
        )
    header = ConsumerSendMsgBackRequestHeader(
        offset=commit_log_offset,
        group=group,
        delay_level=-1,
        origin_msg_id=request.message_id[:128],
        origin_topic=topic,
        max_reconsume_times=max(request.max_delivery_attempts - 1, 0),
    )
    reply = await dispatch(
        endpoint,
        session,
        RemotingCommand.request(RequestCode.CONSUMER_SEND_MSG_BACK, header.encode()),
        broker_name=info.broker_name,
    )
    if reply.code != ResponseCode.SUCCESS:
        raise _fail(reply)
    await _ack_one(endpoint, session, group, topic, request.receipt_handle)
