"""Frozen dataclasses of a consumer group's dead letters (``%DLQ%<group>``) and of their resend.

What a dead letter carries (set by the broker's CONSUMER_SEND_MSG_BACK when the group's reconsume
times reached its maximum, or by a client's retry copy; RocketMQ's MessageConst names):

- ``RETRY_TOPIC``: the topic the message was first sent to (its original topic);
- ``ORIGIN_MESSAGE_ID``: the client-made id (UNIQ_KEY) of the original message;
- the record's reconsume times: how often the group got it before it was moved;
- its store time in the DLQ: when it was moved.

RocketMQ keeps no consumer exception or reason with the message (the listener's error never
reaches the broker), and neither does Gantry: the console says so instead of showing a "last error".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.translation import gettext_noop

from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import PROPERTY_LAST_ERROR, PROPERTY_ORIGIN_MESSAGE_ID, PROPERTY_RETRY_TOPIC
from topics.types import MessageView

MAX_RESEND = 100  # dead letters one resend takes: one confirmation, one audit entry, a bounded answer
MAX_EXPORT = 10_000  # dead letters one export streams at most (the download says when it stopped there)
PROPERTY_DLQ_RESENT_FROM = "DLQ_RESENT_FROM"  # on a resent copy: the offset message id of the dead letter it copies
NO_REASON_STORED = gettext_noop(
    "Gantry's consumers send their listener's exception with the message they send back, and the broker "
    "keeps it (GANTRY_LAST_ERROR); RocketMQ's clients send none, so their dead letters show none."
)  # the page translates it


def dlq_topic(group: str) -> str:
    return DLQ_GROUP_TOPIC_PREFIX + group


def retry_topic(group: str) -> str:
    return RETRY_GROUP_TOPIC_PREFIX + group


@dataclass(frozen=True)
class DeadLetter:
    """One message of ``%DLQ%<group>`` with what it says about the original."""

    message: MessageView

    @property
    def msg_id(self) -> str:
        return self.message.msg_id

    @property
    def original_topic(self) -> str | None:
        return self.message.prop(PROPERTY_RETRY_TOPIC)

    @property
    def origin_msg_id(self) -> str | None:
        return self.message.prop(PROPERTY_ORIGIN_MESSAGE_ID)

    @property
    def last_error(self) -> str | None:
        return self.message.prop(PROPERTY_LAST_ERROR)

    @property
    def reconsume_times(self) -> int:
        return self.message.reconsume_times

    @property
    def moved_at(self) -> datetime | None:
        return self.message.store_time


@dataclass(frozen=True)
class DeadLetterPage:
    """One page of a group's dead letters, newest first; ``exists`` is False while the group has no DLQ topic."""

    group: str
    letters: tuple[DeadLetter, ...]
    total: int
    page: int
    page_size: int
    exists: bool = True

    @property
    def dlq_topic(self) -> str:
        return dlq_topic(self.group)

    @property
    def retry_topic(self) -> str:
        return retry_topic(self.group)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


@dataclass(frozen=True)
class ResendResult:
    """What became of one dead letter: resent (``new_msg_id``, its copy's UNIQ_KEY) or not (``error``)."""

    msg_id: str
    ok: bool
    new_msg_id: str = ""
    error: str = ""


@dataclass(frozen=True)
class DeadLetterResend:
    """A resend of dead letters to the group's retry topic, message by message."""

    group: str
    topic: str  # where the copies went: %RETRY%<group>
    results: tuple[ResendResult, ...]

    @property
    def resent(self) -> int:
        return sum(r.ok for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.resent
