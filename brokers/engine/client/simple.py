"""Minimal wire-protocol clients: a producer and a pull client, for mqadmin, tests and benchmarks.

No load balancing and no push consumption (the full Producer/PushConsumer are producer.py and push_consumer.py):

- :class:`AsyncSimpleProducer` / :class:`SimpleProducer` (blocking), in
  :mod:`brokers.engine.client.simple_producer` (plans in :mod:`~brokers.engine.client.producer_plans`): route lookup on the name servers (falling back to the
  TBW102 template route for a topic that does not exist yet, so the broker auto-creates it, as
  RocketMQ's producer does), SEND_MESSAGE_V2 with the one-letter header keys,
  SEND_BATCH_MESSAGE with a batch body, a UNIQ_KEY per message (§5.9,
  :mod:`brokers.engine.client.identity`), round robin over the writable queues with retries on
  another queue. The async producer pipelines: any number of ``send`` calls may be in flight at
  once on one connection per broker.
- :class:`AsyncPullClient` / :class:`PullClient` (blocking), in
  :mod:`brokers.engine.client.puller`: PULL_MESSAGE with the subscription in the request
  (sysFlag bit 2, so no heartbeat is needed to pull), tag re-filtering by string, offsets
  (query/update/min/max/search by time) and queue discovery. ``subscribe`` registers a
  subscription that heartbeats announce to the brokers (consumer connection info), and the
  client answers GET_CONSUMER_RUNNING_INFO.

Both send HEART_BEAT every 30 s once they talked to a broker (a broker closes client
connections registered by a heartbeat that stay silent for 120 s;
:mod:`brokers.engine.client.front_end`). Both share the route cache of
:mod:`brokers.engine.client.route_cache`. Operations are plans (see
:mod:`brokers.engine.client.plan`) run by an AsyncDriver or a BlockingDriver.

This module re-exports the names defined here before the split, so
``from brokers.engine.client.simple import ...`` keeps working.
"""

from __future__ import annotations

from brokers.engine.client.admin_bodies import inflate_bodies  # noqa: F401 (re-exported)
from brokers.engine.client.admin_plans import AdminPlans  # noqa: F401 (re-exported)
from brokers.engine.client.admin_types import SubscriptionData, TopicRouteData  # noqa: F401 (re-exported)
from brokers.engine.client.driver import DEFAULT_TIMEOUT_S, AsyncDriver, BlockingDriver  # noqa: F401 (re-exported)
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError  # noqa: F401 (re-exported)
from brokers.engine.client.front_end import HEARTBEAT_INTERVAL_S, log  # noqa: F401 (re-exported)
from brokers.engine.client.identity import UniqIdGenerator, build_client_id, local_ip  # noqa: F401 (re-exported)
from brokers.engine.client.plan import Call, Fanout, Plan, check  # noqa: F401 (re-exported)
from brokers.engine.client.producer_plans import (  # noqa: F401 (re-exported)
    COMPRESS_LEVEL,
    COMPRESS_OVER,
    DEFAULT_PRODUCER_GROUP,
    NOT_ALLOWED_SEND_TOPICS,
    RETRY_TIMES_WHEN_SEND_FAILED,
    ProducerPlans,
)
from brokers.engine.client.puller import (  # noqa: F401 (re-exported)
    PULL_SYS_FLAG_COMMIT_OFFSET,
    PULL_SYS_FLAG_SUBSCRIPTION,
    PULL_SYS_FLAG_SUSPEND,
    SUB_ALL,
    TOOLS_CONSUMER_GROUP,
    AsyncPullClient,
    AsyncSimplePuller,
    PullClient,
    PullPlans,
    PullResult,
    PullStatus,
    SimplePuller,
    build_subscription,
)
from brokers.engine.client.route_cache import ROUTE_TTL_S, ClientPlans  # noqa: F401 (re-exported)
from brokers.engine.client.send_result import SendResult, SendStatus  # noqa: F401 (re-exported)
from brokers.engine.client.simple_producer import AsyncSimpleProducer, SimpleProducer  # noqa: F401 (re-exported)

# What this module re-exports (its names before the split), for mypy's explicit re-export rule.
__all__ = [
    "AdminPlans",
    "AsyncDriver",
    "AsyncPullClient",
    "AsyncSimpleProducer",
    "AsyncSimplePuller",
    "BlockingDriver",
    "CLIENT_ERROR",
    "COMPRESS_LEVEL",
    "COMPRESS_OVER",
    "Call",
    "ClientPlans",
    "DEFAULT_PRODUCER_GROUP",
    "DEFAULT_TIMEOUT_S",
    "Fanout",
    "HEARTBEAT_INTERVAL_S",
    "MQBrokerError",
    "MQClientError",
    "NOT_ALLOWED_SEND_TOPICS",
    "PULL_SYS_FLAG_COMMIT_OFFSET",
    "PULL_SYS_FLAG_SUBSCRIPTION",
    "PULL_SYS_FLAG_SUSPEND",
    "Plan",
    "ProducerPlans",
    "PullClient",
    "PullPlans",
    "PullResult",
    "PullStatus",
    "RETRY_TIMES_WHEN_SEND_FAILED",
    "ROUTE_TTL_S",
    "SUB_ALL",
    "SendResult",
    "SendStatus",
    "SimpleProducer",
    "SimplePuller",
    "SubscriptionData",
    "TOOLS_CONSUMER_GROUP",
    "TopicRouteData",
    "UniqIdGenerator",
    "build_client_id",
    "build_subscription",
    "check",
    "inflate_bodies",
    "local_ip",
    "log",
]
