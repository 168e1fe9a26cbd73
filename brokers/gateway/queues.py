"""Per-queue admin calls the engine's client lacks, batched: every queue of a request at once.

Offsets (by time, min, max, committed; commits of a group), the broker-side reset by time, and
reading messages without consuming them (PULL_MESSAGE with no offset committed). Each function
sends one Fanout, whatever the number of queues, on the shared admin client's driver (see
:mod:`brokers.gateway.client`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from brokers.engine.client.admin_bodies import inflate_bodies, parse_offset_table
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, first_error
from brokers.engine.common import message_codec
from brokers.engine.common.message import MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.consume import PullMessageRequestHeader
from brokers.engine.remoting.headers.offsets import (
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    QueryConsumerOffsetRequestHeader,
    QueueFields,
    QueueRequestHeader,
    ResetOffsetRequestHeader,
    SearchOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
    queue_fields,
)
from brokers.gateway.client import answered, run


# -- offsets --------------------------------------------------------------------------------------


QueueHeader = Callable[[QueueFields], QueueRequestHeader]  # the header of one queue's request


def _queue_fanout(
    code: int, queues: dict[MessageQueue, str], header: QueueHeader
) -> Plan[dict[MessageQueue, Reply | RemotingError]]:
    mqs = sorted(queues)
    calls = tuple(Call(code, header(queue_fields(mq)).encode(), addr=queues[mq]) for mq in mqs)
    replies = (yield Fanout(calls)) if calls else []
    return dict(zip(mqs, replies))


def _queue_values(
    code: int, queues: dict[MessageQueue, str], header: QueueHeader, field: str
) -> dict[MessageQueue, int]:
    out = {}
    for mq, reply in run(_queue_fanout(code, queues, header)).items():
        answer = answered(reply, code)
        if isinstance(answer, RemotingError):
            raise answer
        out[mq] = int(answer.ext.get(field, 0) or 0)
    return out


def search_offsets(queues: dict[MessageQueue, str], timestamp_ms: int) -> dict[MessageQueue, int]:
    """The offset of the message stored at (or nearest to) ``timestamp_ms`` in each queue (queue -> broker address)."""
    return _queue_values(
        RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
        queues,
        lambda q: SearchOffsetRequestHeader(**q, timestamp=timestamp_ms),
        "offset",
    )


def max_offsets(queues: dict[MessageQueue, str]) -> dict[MessageQueue, int]:
    return _queue_values(RequestCode.GET_MAX_OFFSET, queues, lambda q: GetMaxOffsetRequestHeader(**q), "offset")


def min_offsets(queues: dict[MessageQueue, str]) -> dict[MessageQueue, int]:
    return _queue_values(RequestCode.GET_MIN_OFFSET, queues, lambda q: GetMinOffsetRequestHeader(**q), "offset")


def committed_offsets(group: str, queues: dict[MessageQueue, str]) -> dict[MessageQueue, int]:
    """The group's committed offset of each queue; -1 where it has none (QUERY_NOT_FOUND)."""
    out = {}

    def header(q: QueueFields) -> QueueRequestHeader:
        return QueryConsumerOffsetRequestHeader(**q, consumer_group=group)

    for mq, reply in run(_queue_fanout(RequestCode.QUERY_CONSUMER_OFFSET, queues, header)).items():
        if isinstance(reply, Reply) and reply.code == ResponseCode.QUERY_NOT_FOUND:
            out[mq] = -1
            continue
        answer = answered(reply, RequestCode.QUERY_CONSUMER_OFFSET)
        if isinstance(answer, RemotingError):
            raise answer
        out[mq] = int(answer.ext.get("offset", -1))
    return out


def update_consumer_offsets(group: str, offsets: dict[MessageQueue, int], queues: dict[MessageQueue, str]) -> None:
    """Commit the group's offset of each queue on its broker (UPDATE_CONSUMER_OFFSET, all at once)."""

    def plan() -> Plan[list[Reply | RemotingError]]:
        mqs = sorted(offsets)
        calls = tuple(
            Call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                UpdateConsumerOffsetRequestHeader(
                    **queue_fields(mq), consumer_group=group, commit_offset=offsets[mq]
                ).encode(),
                addr=queues[mq],
            )
            for mq in mqs
        )
        return (yield Fanout(calls)) if calls else []

    first_error(run(plan()), RequestCode.UPDATE_CONSUMER_OFFSET)


def invoke_broker_to_reset_offset(
    addrs: Iterable[str],
    topic: str,
    group: str,
    timestamp_ms: int,
    force: bool = True,
    one_queue: tuple[int, int] | None = None,
) -> dict[MessageQueue, int]:
    """INVOKE_BROKER_TO_RESET_OFFSET on each broker: the broker works out each queue's offset at
    ``timestamp_ms`` (-1: the max offset), or sets ``one_queue`` = (queue id, offset) alone
    (RocketMQ 5's queueId/offset), and pushes RESET_CONSUMER_CLIENT_OFFSET to every member;
    returns the offsets."""

    def plan() -> Plan[list[Reply | RemotingError]]:
        queue_id, offset = one_queue if one_queue is not None else (-1, None)
        ext = ResetOffsetRequestHeader(
            topic=topic, group=group, timestamp=timestamp_ms, is_force=force, queue_id=queue_id, offset=offset
        ).encode()
        return (
            yield Fanout(
                tuple(Call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext, addr=a) for a in dict.fromkeys(addrs))
            )
        )

    replies = run(plan())
    first_error(replies, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET)
    out: dict[MessageQueue, int] = {}
    for reply in replies:
        if isinstance(reply, Reply):  # first_error raised for any other
            out.update(parse_offset_table(reply.body))
    return out


# -- messages ----------------------------------------------------------------------------------------

PULL_SYS_FLAG_SUBSCRIPTION = 0x4  # the subscription travels in the request: no heartbeat needed
PULL_BATCH = 32  # messages per PULL_MESSAGE (the broker's in-memory transfer limit)


def pull_messages(reads: dict[MessageQueue, tuple[str, int, int]], group: str) -> dict[MessageQueue, list[MessageExt]]:
    """Read messages without consuming: queue -> (broker address, offset, how many), at most
    PULL_BATCH each, all queues at once (PULL_MESSAGE, no offset committed)."""
    mqs = sorted(reads)

    def plan() -> Plan[list[Reply | RemotingError]]:
        calls = []
        for mq in mqs:
            addr, offset, count = reads[mq]
            calls.append(
                Call(
                    RequestCode.PULL_MESSAGE,
                    PullMessageRequestHeader(
                        **queue_fields(mq),
                        consumer_group=group,
                        queue_offset=offset,
                        max_msg_nums=min(count, PULL_BATCH),
                        sys_flag=PULL_SYS_FLAG_SUBSCRIPTION,
                        commit_offset=0,
                        suspend_timeout_millis=0,
                        subscription="*",
                        sub_version=0,
                        expression_type="TAG",
                    ).encode(),
                    addr=addr,
                )
            )
        return (yield Fanout(tuple(calls))) if calls else []

    out: dict[MessageQueue, list[MessageExt]] = {}
    for mq, reply in zip(mqs, run(plan())):
        if isinstance(reply, Reply) and reply.code in (
            ResponseCode.PULL_NOT_FOUND,
            ResponseCode.PULL_RETRY_IMMEDIATELY,
            ResponseCode.PULL_OFFSET_MOVED,
        ):
            out[mq] = []
            continue
        answer = answered(reply, RequestCode.PULL_MESSAGE)
        if isinstance(answer, RemotingError):
            raise answer
        out[mq] = inflate_bodies(message_codec.decode_records(answer.body)) if answer.body else []
    return out
