"""Gantry's own admin requests (no RocketMQ 4.x counterpart; an Apache broker answers them
REQUEST_CODE_NOT_SUPPORTED). See docs/protocol.md, "Gantry extensions".

GANTRY_GET_QUEUE_STATS (10002), no header fields. The metrics sampler's one call per broker:
every queue of every topic config with its offsets and the record bytes put to it since the
store opened, and every committed offset of every group, read at one instant::

    {"brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911", "timestamp": 1763820000000,
     "queues": [{"topic": "orders", "queueId": 0, "minOffset": 0, "maxOffset": 120, "putBytes": 24000}],
     "offsets": [{"group": "billing", "topic": "orders", "queueId": 0, "offset": 118, "maxOffset": 120}],
     "offsetMoved": [{"group": "billing", "topic": "orders", "queueId": 0, "times": 1, "skippedMessages": 40}]}

``putBytes`` counts whole stored records (the commitlog record size, RocketMQ's
``TOPIC_PUT_SIZE`` measure) and restarts at 0 when the broker restarts. ``offsetMoved`` is the
group's stats of pulls whose offset retention had deleted (below the queue's min offset, answered
PULL_OFFSET_MOVED to the min offset) since the broker started.

GANTRY_NOTIFY_CONSUMER_IDS_CHANGED (10003), header ``consumerGroup``: send
NOTIFY_CONSUMER_IDS_CHANGED to every member of the group connected to this broker now, even
when the group or broker disables those notifications (an operator asked for it). The body is
``{"consumerGroup": g, "notified": [client ids]}``; a group with no member here notifies nobody.

GANTRY_GET_MASTERLESS_OFFSETS (10005), no header fields: the consumer offsets this broker took
while it was a slave with no connected master, ``{"offsetTable": {"topic@group": {queueId:
offset}}}`` (empty when there are none); its master asks for them when it returns (see
``broker/masterless_offsets.py``).

GANTRY_SUBSCRIBE_CONFIG (10007), header ``slaveAddr``: a slave of this master asks for its topic
and group changes to be pushed on this connection (``broker/config_push.py``); a broker that is not
a master answers SYSTEM_ERROR saying so.
"""

from __future__ import annotations

from brokers.engine.broker.consumer_offset_manager import ConsumerOffsetManager
from brokers.engine.broker.processors.admin import _json_body
from brokers.engine.broker.processors.base import Processor, ProcessorRegistry, checked_group, guarded
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.replication import (
    GantryNotifyConsumerIdsChangedRequestHeader,
    SubscribeConfigRequestHeader,
)
from brokers.engine.store.ha.ha_config import SLAVE


class GantryExtensionProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.GANTRY_GET_QUEUE_STATS, self.get_queue_stats)
        server.register_processor(RequestCode.GANTRY_NOTIFY_CONSUMER_IDS_CHANGED, self.notify_consumer_ids_changed)
        server.register_processor(RequestCode.GANTRY_GET_MASTERLESS_OFFSETS, self.get_masterless_offsets)
        server.register_processor(RequestCode.GANTRY_SUBSCRIBE_CONFIG, self.subscribe_config)

    @guarded
    async def subscribe_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        slave_addr = SubscribeConfigRequestHeader.decode(request).slave_addr
        if self.broker.config.broker_role == SLAVE:
            return request.response(
                ResponseCode.SYSTEM_ERROR,
                f"broker {self.broker.config.broker_name} at "
                f"{self.broker.addr} is a slave: it pushes no config changes",
            )
        self.broker.config_push.subscribe(slave_addr, ctx)
        return request.response(ResponseCode.SUCCESS)

    @guarded
    async def get_queue_stats(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker = self.broker
        store = broker.store
        put_bytes = store.queue_put_bytes
        queues = []
        max_offsets: dict[tuple[str, int], int] = {}
        for topic, cfg in sorted(broker.topic_config_manager.topic_config_table.items()):
            for queue_id in range(max(cfg.read_queue_nums, cfg.write_queue_nums)):
                max_offset = store.get_max_offset_in_queue(topic, queue_id)
                max_offsets[(topic, queue_id)] = max_offset
                queues.append(
                    {
                        "topic": topic,
                        "queueId": queue_id,
                        "minOffset": store.get_min_offset_in_queue(topic, queue_id),
                        "maxOffset": max_offset,
                        "putBytes": put_bytes.get((topic, queue_id), 0),
                    }
                )
        offsets = []
        for key, table in sorted(broker.consumer_offset_manager.offset_table.items()):
            topic, group = ConsumerOffsetManager.split_key(key)
            for queue_id, offset in sorted(table.items()):
                queue_max = max_offsets.get((topic, queue_id))
                if queue_max is None:  # offsets of a deleted topic: nothing to measure them against
                    continue
                offsets.append(
                    {"group": group, "topic": topic, "queueId": queue_id, "offset": offset, "maxOffset": queue_max}
                )
        moved = [
            {"group": g, "topic": t, "queueId": q, "times": m.times, "skippedMessages": m.skipped}
            for (g, t, q), m in sorted(broker.broker_stats.offset_moved.items())
        ]
        body = {
            "brokerName": broker.config.broker_name,
            "brokerAddr": broker.addr,
            "timestamp": broker.clock.now_ms(),
            "queues": queues,
            "offsets": offsets,
            "offsetMoved": moved,
        }
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(body))

    @guarded
    async def notify_consumer_ids_changed(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        group = checked_group(GantryNotifyConsumerIdsChangedRequestHeader.decode(request).consumer_group)
        notified = self.broker.client_manager.notify_group_now(group)
        body = {"consumerGroup": group, "notified": notified}
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(body))

    @guarded
    async def get_masterless_offsets(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        body = self.broker.consumer_offset_manager.masterless.encode()
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(body))
