"""Clients of the tier, speaking RocketMQ 4.x's wire protocol.

``admin``: MQAdminClient (asyncio) and BlockingMQAdminClient, every admin call the console needs.
``simple``: AsyncSimpleProducer / SimpleProducer and AsyncPullClient / PullClient, the minimal
send and pull used by mqadmin, tests and benchmarks.
"""
