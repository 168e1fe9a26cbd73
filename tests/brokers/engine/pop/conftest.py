"""A real broker on loopback (the broker tests' Cluster) and the three POP requests as Apache's
5.x client and proxy send them: POP_MESSAGE, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from brokers.engine.common.message import MessageExt
from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.broker.conftest import Cluster, run  # noqa: F401 (run re-exported for the tests)


@dataclass
class Popped:
    """One popped message with the handle the 5.x client builds (ExtraInfoUtil.buildExtraInfo + offset)."""

    msg: MessageExt
    handle: str


def handles(response: RemotingCommand, broker_name: str) -> list[Popped]:
    """Decode a POP_MESSAGE answer as ``MQClientAPIImpl.processPopResponse`` does."""
    msgs = decode_records(response.body)
    starts = {}
    for one in response.ext("startOffsetInfo").split(";"):
        retry, qid, start = one.split(" ")
        starts[(retry, int(qid))] = int(start)
    out = []
    for m in msgs:
        ck = starts[("0", m.queue_id)]
        handle = " ".join(
            str(x)
            for x in (
                ck,
                response.ext("popTime"),
                response.ext("invisibleTime"),
                response.ext("reviveQid"),
                "0",
                broker_name,
                m.queue_id,
                m.queue_offset,
            )
        )
        out.append(Popped(m, handle))
    return out


async def pop(
    c: Cluster,
    topic: str,
    *,
    group: str = "cg",
    queue_id: int = -1,
    max_nums: int = 32,
    invisible_ms: int = 60_000,
    poll_ms: int = 0,
    order: bool = False,
    exp: str = "*",
    exp_type: str = "TAG",
    init_mode: int = 0,
    timeout: float = 5.0,
    broker: str | None = None,
) -> RemotingCommand:
    ext = {
        "consumerGroup": group,
        "topic": topic,
        "queueId": queue_id,
        "maxMsgNums": max_nums,
        "invisibleTime": invisible_ms,
        "pollTime": poll_ms,
        "bornTime": 0,
        "initMode": init_mode,
        "expType": exp_type,
        "exp": exp,
        "order": "true" if order else "false",
    }
    return await c.call(RequestCode.POP_MESSAGE, ext, timeout=timeout, broker=broker)


async def ack(c: Cluster, topic: str, p: Popped, *, group: str = "cg", handle: str | None = None) -> RemotingCommand:
    ext = {
        "consumerGroup": group,
        "topic": topic,
        "queueId": p.msg.queue_id,
        "offset": p.msg.queue_offset,
        "extraInfo": handle if handle is not None else p.handle,
    }
    return await c.call(RequestCode.ACK_MESSAGE, ext)


async def change(c: Cluster, topic: str, p: Popped, invisible_ms: int, *, group: str = "cg") -> RemotingCommand:
    ext = {
        "consumerGroup": group,
        "topic": topic,
        "queueId": p.msg.queue_id,
        "offset": p.msg.queue_offset,
        "extraInfo": p.handle,
        "invisibleTime": invisible_ms,
    }
    return await c.call(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, ext)


def changed_handle(response: RemotingCommand, p: Popped, topic: str, broker_name: str) -> str:
    """The handle the 5.x client builds from a CHANGE_MESSAGE_INVISIBLETIME answer (the offset as batch start)."""
    off = p.msg.queue_offset
    return " ".join(
        str(x)
        for x in (
            off,
            response.ext("popTime"),
            response.ext("invisibleTime"),
            response.ext("reviveQid"),
            "0",
            broker_name,
            p.msg.queue_id,
            off,
        )
    )


@pytest.fixture
def pop_cluster(tmp_path):
    """A fresh in-process name server and broker on this test's tmp_path: ``async with pop_cluster(**overrides)``."""

    def make(broker_names=("broker-a",), **overrides) -> Cluster:
        return Cluster(tmp_path, broker_names, **overrides)

    return make
