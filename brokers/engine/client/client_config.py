"""Settings of the load-balancing clients: frozen dataclasses, one per role, RocketMQ's defaults.

- :class:`ClientConfig`: the timers of one MQClientInstance (shared by every producer and
  consumer with the same client id): route polling, heartbeats, rebalance, offset persistence;
- :class:`ProducerConfig`: send timeout, retries, latency fault tolerance;
- :class:`ConsumerConfig`: pulling, flow control, the listener thread pool, retries, orderly locks.

Each default is RocketMQ 4.9's (protocol reference §7.1); tests shorten the timers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from brokers.engine.common.constants import MAX_RECONSUME_TIMES

__all__ = ["ClientConfig", "ConsumerConfig", "ProducerConfig"]


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Timers of one client instance (RocketMQ's ClientConfig and MQClientInstance)."""

    poll_name_server_interval_s: float = 30.0  # pollNameServerInterval: route refresh of every used topic
    heartbeat_broker_interval_s: float = 30.0  # heartbeatBrokerInterval; brokers expire clients silent for 120 s
    persist_consumer_offset_interval_s: float = 5.0  # persistConsumerOffsetInterval
    rebalance_interval_s: float = 20.0  # rocketmq.client.rebalance.waitInterval
    api_timeout_s: float = 3.0  # mqClientApiTimeout: every request but pulls

    def __post_init__(self) -> None:
        for name in (
            "poll_name_server_interval_s",
            "heartbeat_broker_interval_s",
            "persist_consumer_offset_interval_s",
            "rebalance_interval_s",
            "api_timeout_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")


@dataclass(frozen=True, slots=True)
class ProducerConfig:
    """Producer settings (DefaultMQProducer)."""

    send_timeout_s: float = 3.0  # sendMsgTimeout
    retry_times_when_send_failed: int = 2  # extra attempts, each on another broker when there is one
    send_latency_fault_enable: bool = False  # avoid brokers whose sends were slow or failed (MQFaultStrategy)
    compress_over: int = 4096  # compressMsgBodyOverHowmuch
    async_workers: int = 4  # threads running send callbacks
    # send / send_batch talk to the broker from the caller's thread on connections of their own
    # (direct_connection.py) rather than through the client instance's loop thread; False: the loop
    direct_send: bool = True

    def __post_init__(self) -> None:
        if self.retry_times_when_send_failed < 0:
            raise ValueError("retry_times_when_send_failed must be >= 0")
        if self.send_timeout_s <= 0:
            raise ValueError("send_timeout_s must be positive")


@dataclass(frozen=True, slots=True)
class ConsumerConfig:
    """Consumer settings (DefaultMQPushConsumer / DefaultLitePullConsumer)."""

    pull_batch_size: int = 32  # pullBatchSize: maxMsgNums of a pull
    pull_suspend_ms: int = 15_000  # long-poll hold asked of the broker (brokerSuspendMaxTimeMillis)
    pull_delay_on_error_s: float = 1.0  # pull again this long after a failed pull
    pull_threshold_for_queue: int = 1000  # flow control: cached messages per queue before pulling pauses
    flow_control_delay_s: float = 0.05  # pause of a queue over its threshold
    consume_thread_min: int = 20  # consumeThreadMin (reported; the pool starts threads where they help)
    consume_thread_max: int = 20  # consumeThreadMax: listener threads at most (worker_pool.py)
    consume_message_batch_max_size: int = 1  # messages per listener call
    max_reconsume_times: int = MAX_RECONSUME_TIMES  # retries before the dead-letter queue (16)
    delay_level_when_next_consume: int = 0  # sendback delay level: 0 = broker picks 3 + reconsume times
    consume_later_delay_s: float = 5.0  # re-consume locally when a sendback failed
    suspend_current_queue_time_s: float = 1.0  # orderly: pause a queue whose listener asked to retry
    lock_interval_s: float = 20.0  # orderly: re-lock held queues on their brokers
    lock_max_live_s: float = 30.0  # orderly: a lock not refreshed this long is stale locally
    consume_timestamp_ms: int | None = None  # CONSUME_FROM_TIMESTAMP start; default now - 30 min
    local_offset_store_dir: str = os.path.join(os.path.expanduser("~"), ".rocketmq_offsets")  # broadcasting offsets
    await_termination_s: float = 5.0  # shutdown waits this long for listener calls in progress
    reset_offset_wait_s: float = (
        10.0  # an offset reset waits at most this long for listener calls in progress (Java sleeps 10 s)
    )

    def __post_init__(self) -> None:
        if self.pull_batch_size < 1 or self.consume_message_batch_max_size < 1:
            raise ValueError("batch sizes must be >= 1")
        if self.consume_thread_max < 1 or self.consume_thread_min < 1:
            raise ValueError("consume thread counts must be >= 1")
        if self.max_reconsume_times < 0:
            raise ValueError("max_reconsume_times must be >= 0")
