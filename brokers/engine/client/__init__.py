"""Clients of the tier, speaking RocketMQ 4.x's wire protocol.

``admin``: MQAdminClient (asyncio) and BlockingMQAdminClient, every admin call the console needs.
``simple``: AsyncSimpleProducer / SimpleProducer and AsyncPullClient / PullClient, the minimal
send and pull used by mqadmin, tests and benchmarks.

Both are façades over smaller modules, and re-export their names:

- ``errors``: MQClientError, MQBrokerError;
- ``plan``: operations as generators of Calls and Fanouts (no I/O); ``driver``: AsyncDriver and
  BlockingDriver, which run plans, and name server failover;
- ``admin_types``: result dataclasses; ``admin_bodies``: parsing response bodies;
  ``admin_plans``: AdminPlans, every admin operation;
- ``identity``: client id and UNIQ_KEY; ``route_cache``: ClientPlans, the route cache shared by
  ``producer_plans`` and ``puller``; ``front_end``: heartbeats and lifecycle of their clients;
- ``producer_plans``: ProducerPlans, the send plans; ``send_result``: SendResult, SendStatus;
  ``simple_producer``: AsyncSimpleProducer, SimpleProducer; ``puller``: PullPlans and the pull clients.

The load-balancing clients (RocketMQ's DefaultMQProducer / DefaultMQPushConsumer /
DefaultLitePullConsumer), exported here::

    from brokers.engine.client import Producer, PushConsumer, PullConsumer, ConsumeConcurrentlyStatus, Message

- ``producer``: Producer (sync, async, oneway, batch, ordered sends; retries on another
  broker; ``latency_fault_tolerance``: MQFaultStrategy);
- ``consumer_base``: ConsumerBase, what both consumers share (subscriptions, rebalance, offsets,
  lifecycle); ``push_consumer``: PushConsumer (clustering or broadcasting, concurrent or
  orderly); ``pull_consumer``: PullConsumer (subscribe or assign, poll, commit);
- ``client_instance``: MQClientInstance, shared per client id: loop thread, connections, routes,
  heartbeats, rebalance and offset timers; ``mq_client_manager``: the instances by client id;
  ``client_remoting_processor``: the brokers' requests to a client; ``client_config``: the settings;
- ``async_producer``: AsyncProducer and ``async_push_consumer``: AsyncPushConsumer (coroutine
  listener, ``async_consume_service``), the same clients for asyncio code, awaited on the caller's
  loop (``loop_client_instance``: a client instance without a thread of its own);
- ``rebalance``: RebalanceImpl; ``allocation``: RocketMQ's allocation strategies, their Protocol and
  registry (``get_strategy("CONSISTENT_HASH")``; a consumer given none takes AVG);
- ``process_queue``, ``offset_store`` (remote and local file), ``consume_service`` (concurrently
  and orderly, ConsumeCounters), ``send_back`` (retry and DLQ), ``listener`` (ReceivedMessage,
  ConsumeConcurrentlyStatus, ConsumeOrderlyStatus).
"""

from __future__ import annotations

from brokers.engine.client.allocation import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy
from brokers.engine.client.async_consume_service import ConsumeConcurrentlyContext
from brokers.engine.client.async_producer import AsyncProducer
from brokers.engine.client.async_push_consumer import AsyncPushConsumer
from brokers.engine.client.client_config import ClientConfig, ConsumerConfig, ProducerConfig
from brokers.engine.client.listener import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus, ReceivedMessage
from brokers.engine.client.producer import Producer, select_message_queue_by_hash
from brokers.engine.client.pull_consumer import PullConsumer
from brokers.engine.client.push_consumer import PushConsumer
from brokers.engine.client.send_result import SendResult, SendStatus
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue

__all__ = [
    "AllocateMessageQueueAveragely",
    "AllocateMessageQueueStrategy",
    "ClientConfig",
    "ConsumeConcurrentlyStatus",
    "ConsumeOrderlyStatus",
    "ConsumerConfig",
    "Message",
    "MessageQueue",
    "Producer",
    "ProducerConfig",
    "PullConsumer",
    "PushConsumer",
    "ReceivedMessage",
    "SendResult",
    "SendStatus",
    "select_message_queue_by_hash",
]
__all__ += ["AsyncProducer", "AsyncPushConsumer", "ConsumeConcurrentlyContext"]  # asyncio, on the caller's loop
