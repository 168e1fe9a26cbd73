"""Messages found by key: the brokers' key index (QUERY_MESSAGE), as ``mqadmin queryMsgByKey``.

A message is indexed under each of its KEYS and, for a unique-key query, its client-made id
(UNIQ_KEY); every broker of the topic's route is asked. The range is store timestamps in
milliseconds, :data:`MAX_TIMESTAMP` for "up to now".
"""

from __future__ import annotations

from brokers.engine.client.admin_plans import MAX_TIMESTAMP
from brokers.engine.common.message import MessageExt
from brokers.gateway.client import get_admin_client

__all__ = ["MAX_TIMESTAMP", "query_message_by_key"]


def query_message_by_key(
    topic: str, key: str, max_num: int, begin_ms: int = 0, end_ms: int = MAX_TIMESTAMP, *, unique_key: bool = False
) -> list[MessageExt]:
    """The messages of ``topic`` whose KEYS (or, with ``unique_key``, UNIQ_KEY) hold ``key``, at most
    ``max_num`` per broker; TopicNotFound when the name servers have no route."""
    return get_admin_client().query_message_by_key(topic, key, max_num, begin_ms, end_ms, unique_key=unique_key)
