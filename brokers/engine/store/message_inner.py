"""What the broker hands the store: one message (MessageExtBrokerInner) or a batch (MessageExtBatch).

The store fills in what only it knows: queue offset, physical offset, store timestamp and
store host.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brokers.engine.common.message import PROPERTY_TAGS


@dataclass(slots=True)
class MessageExtBrokerInner:
    topic: str
    queue_id: int
    body: bytes
    properties: dict[str, str] = field(default_factory=dict)
    flag: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: str = "127.0.0.1:0"  # the producer's peer address as the broker sees it
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    # Consume-queue tag slot: hash of TAGS when None; SCHEDULE_TOPIC_XXXX puts a delivery time here.
    tags_code: int | None = None
    # The properties as stored; encoded from ``properties`` when None (RocketMQ's propertiesString).
    properties_string: str | None = None
    # With SYNC_FLUSH, False answers without waiting for the flush (the WAIT=false property).
    wait_store_msg_ok: bool = True

    @property
    def tags(self) -> str | None:
        return self.properties.get(PROPERTY_TAGS)


@dataclass(slots=True)
class MessageExtBatch:
    """A SEND_BATCH_MESSAGE: ``body`` is a batch body (``message_codec.encode_batch_body``).

    ``properties`` are the batch-level ones (e.g. CLUSTER); they are appended to each inner
    message's own properties. Inner messages get consecutive queue offsets.
    """

    topic: str
    queue_id: int
    body: bytes
    properties: dict[str, str] = field(default_factory=dict)
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: str = "127.0.0.1:0"
    reconsume_times: int = 0
    wait_store_msg_ok: bool = True
    # ``body`` already split into (flag, body, properties string) entries (``iter_batch_body``), when the
    # caller has; otherwise the store splits it.
    entries: list[tuple[int, bytes, str]] | None = None
