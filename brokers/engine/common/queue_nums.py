"""How many read or write queues a topic may have on one broker: the one rule, 0..1024.

Apache RocketMQ (4.9.x and 5.x) puts no bound on ``readQueueNums`` and ``writeQueueNums``: the
broker's UPDATE_AND_CREATE_TOPIC (``AdminBrokerProcessor.updateAndCreateTopic``), ``mqadmin
updateTopic -r/-w`` (``UpdateTopicSubCommand``, a bare ``Integer.parseInt``) and the admin client
store what they are given, and ``TopicValidator`` checks names only. Zero is a count RocketMQ makes
and serves: a topic auto-created from a template clamps a negative count to 0
(``TopicConfigManager.createTopicInSendMessageMethod``), a topic whose write queues are lowered to 0
takes no new message while its consumers drain the read queues, and the 5.x proxy skips a route
entry with no read queue. So Gantry takes 0 everywhere (the broker, ``mqadmin``, the console, the
name server's registrations, the metadata import), refuses a negative count (meaningless, never
produced by a broker), and keeps its own cap, :data:`MAX_QUEUE_NUMS` (1024: one consume queue
directory per queue; RocketMQ has none), which every front door shares.

The broker's ``default_topic_queue_nums`` (the count of an auto-created topic, 1..1024) and a
subscription group's ``retryQueueNums`` are other facts with their own rules.
"""

from __future__ import annotations

from typing import TypeGuard

from brokers.engine.common.constants import MAX_QUEUE_NUMS

__all__ = ["MAX_QUEUE_NUMS", "MIN_QUEUE_NUMS", "is_valid_queue_nums"]

MIN_QUEUE_NUMS = 0  # RocketMQ stores and serves 0 (see above)


def is_valid_queue_nums(value: object) -> TypeGuard[int]:
    """Return whether ``value`` is a read or write queue count a topic may have: an integer 0..1024.

    A ``bool`` is no count (JSON's ``true`` is not 1 here), nor is a string of digits: parse first.
    """
    return isinstance(value, int) and not isinstance(value, bool) and MIN_QUEUE_NUMS <= value <= MAX_QUEUE_NUMS
