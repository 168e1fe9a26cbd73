"""Which broker of the group a consumer should pull from next, and how a slave corrects offsets
(RocketMQ 4.9's PullMessageProcessor and DefaultMessageStore.nextOffsetCorrection).

``suggestWhichBrokerId`` in a pull answer: with ``slaveReadEnable`` on, the subscription group's
``whichBrokerWhenConsumeSlowly`` (default 1, a slave) when the store said what is left to read
is more than ``accessMessageInMemoryMaxRatio`` of the RAM (``suggest_pulling_from_slave``, set on
master and slave alike), else the group's ``brokerId`` (default 0, the master); with it off,
always the master. A client pulls from the suggested id when the route lists it, else from any
address of the broker name, so consumers keep going from a slave while the master is down.

On a slave the store's offset corrections are not applied (the slave may simply be behind the
offset the consumer got from the master): for the statuses that would move the consumer's
offset, the answer keeps the requested offset, and PULL_OFFSET_MOVED becomes
PULL_RETRY_IMMEDIATELY suggesting the group's brokerId.
"""

from __future__ import annotations

from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.store.results import GetMessageStatus

MASTER_ID = 0

# Statuses whose next_begin_offset is a correction (nextOffsetCorrection), not progress.
CORRECTED_STATUSES = frozenset(
    {
        GetMessageStatus.NO_MESSAGE_IN_QUEUE,
        GetMessageStatus.NO_MATCHED_LOGIC_QUEUE,
        GetMessageStatus.OFFSET_TOO_SMALL,
        GetMessageStatus.OFFSET_OVERFLOW_BADLY,
        GetMessageStatus.OFFSET_OVERFLOW_ONE,
        GetMessageStatus.OFFSET_FOUND_NULL,
    }
)


def suggest_which_broker_id(
    *,
    slave_read_enable: bool,
    suggest_pulling_from_slave: bool,
    which_broker_when_consume_slowly: int,
    group_broker_id: int,
) -> int:
    """The broker id a pull answer suggests (see the module docstring)."""
    if not slave_read_enable:
        return MASTER_ID
    return which_broker_when_consume_slowly if suggest_pulling_from_slave else group_broker_id


def slave_pull_answer(
    code: int,
    status: GetMessageStatus,
    requested_offset: int,
    next_begin_offset: int,
    suggest: int,
    group_broker_id: int,
) -> tuple[int, int, int]:
    """On a slave: (code, nextBeginOffset, suggestWhichBrokerId) after RocketMQ's slave rules."""
    if status in CORRECTED_STATUSES:
        next_begin_offset = requested_offset
    if code == ResponseCode.PULL_OFFSET_MOVED:
        return ResponseCode.PULL_RETRY_IMMEDIATELY, next_begin_offset, group_broker_id
    return code, next_begin_offset, suggest
