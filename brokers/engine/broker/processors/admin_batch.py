"""Admin reads of every consumer group at once, for consoles that list groups.

GET_BROKER_CONSUME_STATS (317) is RocketMQ's ``brokerConsumeStats`` (AdminBrokerProcessor
``fetchAllConsumeStatsInBroker`` in 4.9.x): every subscription group of the broker, each with one
ConsumeStats per topic it has committed offsets on. GANTRY_GET_ALL_CONSUMER_CONNECTIONS is a
Gantry extension (no RocketMQ 4.x counterpart): every online group's ConsumerConnection, so a
list costs one request per broker instead of one GET_CONSUMER_CONNECTION_LIST per group. The
bodies are built by the same code as GET_CONSUME_STATS and GET_CONSUMER_CONNECTION_LIST.
"""

from __future__ import annotations

from typing import Any

from brokers.engine.broker.processors.admin import (
    _json_body,
    consume_stats_json,
    consume_stats_tables,
    consumer_connection_json,
)
from brokers.engine.broker.processors.base import Processor, ProcessorRegistry, guarded
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.brokers import GetConsumeStatsInBrokerRequestHeader


class GroupBatchProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.GET_BROKER_CONSUME_STATS, self.get_broker_consume_stats)
        server.register_processor(RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS, self.get_all_consumer_connections)

    @guarded
    async def get_broker_consume_stats(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """ConsumeStatsList: ``{"brokerAddr", "consumeStatsList": [{group: [ConsumeStats, ...]}, ...], "totalDiff"}``.

        As RocketMQ: every group of the subscription group table (system groups included), the
        topics it has committed offsets on (whichTopicByConsumer) that still have a config, each
        topic's write queues; ``isOrder`` keeps ordered topics only; an online group's topics it
        no longer subscribes are left out. totalDiff sums brokerOffset - consumerOffset.
        ``timeoutMillis`` is the caller's wait and means nothing here.
        """
        broker = self.broker
        is_order = GetConsumeStatsInBrokerRequestHeader.decode(request).is_order
        topics_by_group = broker.consumer_offset_manager.topics_by_group()  # whichTopicByConsumer, one pass
        stats_list: list[dict[str, Any]] = []
        total_diff = 0
        for group in sorted(broker.subscription_group_manager.subscription_group_table):
            per_topic = []
            for topic, table in consume_stats_tables(
                broker, group, sorted(topics_by_group.get(group, ())), write_queues=True, order_only=is_order
            ):
                total_diff += sum(w["brokerOffset"] - w["consumerOffset"] for w in table.values())
                per_topic.append(consume_stats_json(table, broker.broker_stats.group_get.tps(group, topic)))
            stats_list.append({group: per_topic})
        body = {"brokerAddr": broker.addr, "consumeStatsList": stats_list, "totalDiff": total_diff}
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(body))

    @guarded
    async def get_all_consumer_connections(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """``{"brokerAddr", "groups": [{"group", <the ConsumerConnection fields>}, ...]}``, every
        group with an online member, sorted by name."""
        broker = self.broker
        groups = [
            dict(consumer_connection_json(info), group=name)
            for name, info in sorted(broker.client_manager.consumer_table.items())
            if info.channel_info_table
        ]
        return request.response(
            ResponseCode.SUCCESS, None, None, _json_body({"brokerAddr": broker.addr, "groups": groups})
        )
