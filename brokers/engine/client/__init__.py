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
  ``producer`` and ``puller``; ``front_end``: heartbeats and lifecycle of their clients.
"""
