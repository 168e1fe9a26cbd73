"""Sending a consumed message back for a later retry (at-least-once delivery).

CONSUMER_SEND_MSG_BACK asks the broker that stored the message to copy it into
``%RETRY%<group>`` with a delay (level ``3 + reconsume times`` when the consumer asks for 0:
10 s, 30 s, 1 min, ...), or into ``%DLQ%<group>`` once it was reconsumed ``max_reconsume_times``
times. When that request fails, the client sends a copy to ``%RETRY%<group>`` itself, as
RocketMQ's client does, with RETRY_TOPIC, ORIGIN_MESSAGE_ID, RECONSUME_TIME,
MAX_RECONSUME_TIMES and DELAY properties and the raised reconsume count in the send header (the
broker moves it to the DLQ past the maximum).
"""

from __future__ import annotations

import logging
import random

from brokers.engine.client.client_instance import CLIENT_INNER_PRODUCER_GROUP, MQClientInstance
from brokers.engine.client.listener import original_topic
from brokers.engine.client.plan import Call, check
from brokers.engine.client.producer_plans import ProducerPlans
from brokers.engine.client.puller import PullPlans
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_LAST_ERROR,
    PROPERTY_MAX_RECONSUME_TIMES,
    PROPERTY_ORIGIN_MESSAGE_ID,
    PROPERTY_RECONSUME_TIME,
    PROPERTY_RETRY_TOPIC,
    Message,
    MessageExt,
)
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.consume import ConsumerSendMsgBackRequestHeader

__all__ = ["MessageBackSender"]

log = logging.getLogger("brokers.engine.client")

_MAX_DELAY_LEVEL = 18


class MessageBackSender:
    """Send messages back to the group's retry topic (or DLQ); see the module docstring."""

    def __init__(self, instance: MQClientInstance, plans: PullPlans, group: str, max_reconsume_times: int) -> None:
        self.instance = instance
        self.plans = plans
        self.group = group
        self.max_reconsume_times = max_reconsume_times
        self._inner: ProducerPlans | None = None

    async def send_back(self, msg: MessageExt, mq: MessageQueue, delay_level: int) -> bool:
        """Return True when the broker took the message back (through sendback or the fallback send)."""
        driver = self.instance.driver
        ext = ConsumerSendMsgBackRequestHeader(
            offset=msg.commit_log_offset,
            group=self.group,
            delay_level=delay_level,
            origin_msg_id=msg.uniq_key or msg.msg_id,
            origin_topic=original_topic(msg, self.group),
            max_reconsume_times=self.max_reconsume_times,
            broker_name=mq.broker_name,
            last_error=msg.properties.get(PROPERTY_LAST_ERROR) or None,  # a Gantry field: RocketMQ's brokers ignore it
        ).encode()
        try:
            addr = await driver.run(self.plans.broker_addr(mq.topic, mq.broker_name))
            check(
                await driver.invoke(Call(RequestCode.CONSUMER_SEND_MSG_BACK, ext, addr=addr)),
                request_code=RequestCode.CONSUMER_SEND_MSG_BACK,
            )
            return True
        except RemotingError as exc:
            log.warning("sendback of %s failed, sending a retry copy: %s", msg.msg_id, exc)
        try:
            await self._send_retry_copy(msg)
            return True
        except RemotingError as exc:
            log.warning("retry copy of %s failed: %s", msg.msg_id, exc)
            return False

    async def _send_retry_copy(self, msg: MessageExt) -> None:
        if self._inner is None:
            self._inner = ProducerPlans(
                self.instance.namesrv_addrs,
                CLIENT_INNER_PRODUCER_GROUP,
                instance_name=self.instance.client_id.split("@", 1)[1],
                timeout_s=self.instance.config.api_timeout_s,
            )
        inner = self._inner
        retry_topic = RETRY_GROUP_TOPIC_PREFIX + self.group
        props = {k: v for k, v in msg.properties.items() if k not in ("MIN_OFFSET", "MAX_OFFSET")}
        props.setdefault(PROPERTY_RETRY_TOPIC, original_topic(msg, self.group))
        props.setdefault(PROPERTY_ORIGIN_MESSAGE_ID, msg.uniq_key or msg.msg_id)
        props[PROPERTY_RECONSUME_TIME] = str(msg.reconsume_times + 1)
        props[PROPERTY_MAX_RECONSUME_TIMES] = str(self.max_reconsume_times)
        props[PROPERTY_DELAY_TIME_LEVEL] = str(min(3 + msg.reconsume_times, _MAX_DELAY_LEVEL))
        driver = self.instance.driver
        queues = await driver.run(inner.publish_queues(retry_topic))
        if not queues:
            raise RemotingError(f"{retry_topic} has no writable queue")
        target = random.choice(queues)
        out = inner.prepare(Message(retry_topic, msg.body, properties=props, flag=msg.flag))
        ext = inner.send_ext(out, target)
        ext["j"] = str(msg.reconsume_times + 1)
        ext["l"] = str(self.max_reconsume_times)
        addr = await driver.run(inner.broker_addr(retry_topic, target.broker_name))
        check(await driver.invoke(Call(out.code, ext, out.body, addr=addr)), request_code=out.code)
