"""The broker: topic/offset/group config files, the client registry, long polling, the request
processors and the name-server registration, wired together by ``controller.BrokerController``.

Entry point: ``python -m brokers.engine broker ...`` (see ``startup``).
"""
