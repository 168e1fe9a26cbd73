"""The broker's store: commit log segments, consume queues, key index, checkpoint, recovery and
flushing: :class:`DefaultMessageStore` behind the :class:`MessageStore` Protocol the broker uses
(see docs/engine-internals.md, ``store``)."""

from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH, StoreConfig
from brokers.engine.store.default_message_store import DefaultMessageStore
from brokers.engine.store.errors import StoreCorruptionError, StoreError, StoreLockedError, StoreNotOpenError
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.message_store import MessageStore
from brokers.engine.store.recovery import RecoveryReport
from brokers.engine.store.results import GetMessageResult, GetMessageStatus, PutMessageResult, PutMessageStatus

__all__ = [
    "ASYNC_FLUSH",
    "SYNC_FLUSH",
    "DefaultMessageStore",
    "GetMessageResult",
    "GetMessageStatus",
    "MessageExtBatch",
    "MessageExtBrokerInner",
    "MessageStore",
    "PutMessageResult",
    "PutMessageStatus",
    "RecoveryReport",
    "StoreConfig",
    "StoreCorruptionError",
    "StoreError",
    "StoreLockedError",
    "StoreNotOpenError",
]
