"""Values shared by every part of the tier: queues, messages, topic configs, names, time."""

from brokers.engine.common.message_queue import MessageQueue

__all__ = ["MessageQueue"]
