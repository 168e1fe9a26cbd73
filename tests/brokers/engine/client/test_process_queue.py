"""ProcessQueue and the consume services without servers: a dropped queue takes and hands over nothing,
times come from the injected clock, and each listener answer means what RocketMQ says it means."""

from __future__ import annotations

import threading

import pytest

from brokers.engine.client import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus, ConsumerConfig
from brokers.engine.client.consume_service import ConsumeMessageConcurrentlyService
from brokers.engine.client.listener import concurrently_answer, orderly_answer
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.common.clock import ManualClock
from brokers.engine.common.message import PROPERTY_CONSUME_START_TIMESTAMP, MessageExt
from brokers.engine.common.message_queue import MessageQueue

MQ = MessageQueue("T", "broker-a", 0)


def message(offset: int) -> MessageExt:
    return MessageExt(
        topic="T", body=b"x" * 10, queue_id=0, queue_offset=offset, commit_log_offset=offset * 100, properties={}
    )


class _OffsetStore:
    def __init__(self) -> None:
        self.updates: list[tuple[MessageQueue, int]] = []

    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        self.updates.append((mq, offset))


def test_a_dropped_process_queue_takes_no_message() -> None:
    pq = ProcessQueue()
    pq.put_message([message(0)])
    pq.dropped = True
    assert pq.put_message([message(1), message(2)]) is False
    assert pq.msg_count == 1 and pq.offset_range() == (0, 0)


def test_the_process_queue_takes_its_times_from_the_clock() -> None:
    clock = ManualClock(start_ms=1_700_000_000_000)
    pq = ProcessQueue(clock)
    clock.advance(2.0)
    pq.put_message([message(0)])
    assert pq.last_pull_timestamp == 1_700_000_002_000
    pq.mark_locked()
    clock.advance(31.0)
    assert pq.is_lock_expired(30.0)
    info = pq.info(commit_offset=0)
    assert info["lastPullTimestamp"] == 1_700_000_002_000 and info["lastLockTimestamp"] == 1_700_000_002_000
    pq.mark_locked()
    assert not pq.is_lock_expired(30.0)


@pytest.mark.parametrize(
    ("answer", "concurrently", "orderly"),
    [
        (
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
            ConsumeOrderlyStatus.SUCCESS,
        ),
        (
            ConsumeConcurrentlyStatus.RECONSUME_LATER,
            ConsumeConcurrentlyStatus.RECONSUME_LATER,
            ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT,
        ),
        (ConsumeOrderlyStatus.SUCCESS, ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ConsumeOrderlyStatus.SUCCESS),
        (
            ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT,
            ConsumeConcurrentlyStatus.RECONSUME_LATER,
            ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT,
        ),
        ("CONSUME_SUCCESS", ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ConsumeOrderlyStatus.SUCCESS),
        (None, ConsumeConcurrentlyStatus.RECONSUME_LATER, ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT),
        ("nonsense", ConsumeConcurrentlyStatus.RECONSUME_LATER, ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT),
    ],
)
def test_listener_answers(answer, concurrently, orderly) -> None:
    assert concurrently_answer(answer) is concurrently
    assert orderly_answer(answer) is orderly


def test_the_concurrent_service_hands_a_dropped_queue_s_messages_to_no_listener() -> None:
    called = threading.Event()
    clock = ManualClock()

    def listener(msgs):
        called.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    store = _OffsetStore()
    service = ConsumeMessageConcurrentlyService(None, "G", listener, ConsumerConfig(), store, None, True, clock=clock)  # type: ignore[arg-type]
    try:
        pq = ProcessQueue(clock)
        msgs = [message(0), message(1)]
        service.submit_consume_request(msgs, pq, MQ, pq.put_message(msgs))
        assert called.wait(5.0)
        service.executor.shutdown(cancel_pending=False)
        assert service.executor.join(5.0)  # both calls done
        assert store.updates[-1] == (MQ, 2) and service.stats.ok == 2
        assert all(m.properties[PROPERTY_CONSUME_START_TIMESTAMP] == str(clock.now_ms()) for m in msgs)

        called.clear()
        service.executor = type(service.executor)(1, "consume-G")
        dropped = ProcessQueue(clock)
        late = [message(2)]
        dropped.put_message(late)
        dropped.dropped = True  # a rebalance took the queue between the pull and the consume
        service.submit_consume_request(late, dropped, MQ, False)
        service.executor.shutdown(cancel_pending=False)
        assert service.executor.join(5.0)
        assert not called.is_set() and store.updates[-1] == (MQ, 2)
    finally:
        service.shutdown(1.0)
