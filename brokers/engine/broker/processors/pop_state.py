"""GANTRY_GET_POP_STATE (10010): what a consumer group has popped on this broker and not acked yet.

An operator's read of RocketMQ 5's message-level consumption (``broker/pop/``), which GET_CONSUME_STATS
reduces to one committed offset per queue. Header ``consumerGroup`` (required), ``topic``
(optional: every topic the group popped), ``maxEntries`` (optional, default
:data:`DEFAULT_MAX_ENTRIES`, at most :data:`MAX_ENTRIES`; more is capped, less than 1 refused).
Body::

    {"group": "G", "brokerName": "broker-a", "now": 1763820000000, "truncated": false,
     "queues": [{"topic": "T", "queueId": 0, "cursor": 42, "inFlight": 2,
                 "deliveries": [{"offset": 40, "popTime": 1763819990000, "invisibleUntil": 1763820020000,
                                 "attempt": 1, "msgId": "7F00000100002A9F0000000000001A2B"}, ...]}]}

Per (topic, queue) the group popped: ``cursor`` (the next offset it never popped), ``inFlight`` (its
deliveries not acked, expired ones included: they wait to be taken again) and those deliveries by
offset, ``attempt`` being the 5.x delivery attempt (reconsume times + 1) and ``msgId`` the offset
message id of the stored record. Queues come by topic and queue id; at most ``maxEntries``
deliveries are listed over all queues (``truncated`` says some were left out; ``inFlight`` still
counts them all). A group that never popped here answers no queues. Read on the event loop in one
step, so the figures are of one instant (``now``, the broker's clock). A slave holds no POP state
(it is not replicated) and answers no queues.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brokers.engine.broker.processors.admin import _json_body
from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_group,
    checked_topic,
    guarded,
)
from brokers.engine.common.message_id import create_offset_msg_id
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.replication import GetPopStateRequestHeader

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext
    from brokers.engine.broker.pop.service import PopService

DEFAULT_MAX_ENTRIES = 200  # a page's worth; the counts per queue are always whole
MAX_ENTRIES = 2_000  # bounds the answer (~200 KB of JSON) whatever the caller asks


def pop_state_body(
    service: PopService,
    *,
    group: str,
    topic: str | None,
    max_entries: int,
    broker_name: str,
    store_host: str,
    now_ms: int,
) -> dict[str, Any]:
    """The answer's body (see the module docstring), read from ``service.state`` as it is now."""
    queues = []
    room = max_entries
    truncated = False
    keys = sorted(k for k in service.state.queues if k[0] == group and (topic is None or k[1] == topic))
    for key in keys:
        qs = service.state.queues[key]
        deliveries = []
        for offset in sorted(qs.inflight):
            if room <= 0:
                truncated = True
                break
            f = qs.inflight[offset]
            deliveries.append(
                {
                    "offset": f.offset,
                    "popTime": f.pop_time,
                    "invisibleUntil": f.deadline,
                    "attempt": f.reconsume + 1,
                    "msgId": create_offset_msg_id(store_host, f.phys_offset),
                }
            )
            room -= 1
        queues.append(
            {
                "topic": key[1],
                "queueId": key[2],
                "cursor": qs.cursor,
                "inFlight": len(qs.inflight),
                "deliveries": deliveries,
            }
        )
    return {"group": group, "brokerName": broker_name, "now": now_ms, "truncated": truncated, "queues": queues}


class PopStateProcessor(Processor):
    def __init__(self, broker: BrokerContext, service: PopService) -> None:
        super().__init__(broker)
        self.service = service

    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.GANTRY_GET_POP_STATE, self.get_pop_state)

    @guarded
    async def get_pop_state(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = GetPopStateRequestHeader.decode(request)
        group, topic = checked_group(header.consumer_group), header.topic
        if topic is not None:
            checked_topic(topic)
        max_entries = DEFAULT_MAX_ENTRIES if header.max_entries is None else header.max_entries
        if max_entries < 1:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"maxEntries must be at least 1, not {max_entries}")
        broker = self.broker
        body = pop_state_body(
            self.service,
            group=group,
            topic=topic,
            max_entries=min(max_entries, MAX_ENTRIES),
            broker_name=broker.config.broker_name,
            store_host=broker.addr,
            now_ms=broker.clock.now_ms(),
        )
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(body))
