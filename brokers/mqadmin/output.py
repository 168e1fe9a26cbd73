"""Formatting shared by the mqadmin subcommands, following RocketMQ mqadmin's printouts."""

from __future__ import annotations

import datetime

from brokers.engine.common.message import MessageExt
from brokers.engine.common.perm import perm_to_string
from brokers.engine.common.topic_config import TopicConfig


def human_time_ms(ms: int) -> str:
    """``yyyy-MM-dd HH:mm:ss,SSS`` in local time (UtilAll.timeMillisToHumanString2); "" for 0."""
    if ms <= 0:
        return ""
    dt = datetime.datetime.fromtimestamp(ms / 1000)
    return dt.strftime("%Y-%m-%d %H:%M:%S") + f",{ms % 1000:03d}"


def date_time(ms: int) -> str:
    """``yyyy-MM-dd HH:mm:ss`` in local time; ``N/A`` for 0 (consumerProgress's LastTime)."""
    if ms <= 0:
        return "N/A"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def topic_config_string(config: TopicConfig) -> str:
    """TopicConfig.toString() as RocketMQ prints it after updateTopic."""
    return (
        f"TopicConfig [topicName={config.topic_name}, readQueueNums={config.read_queue_nums}, "
        f"writeQueueNums={config.write_queue_nums}, perm={perm_to_string(config.perm)}, "
        f"topicFilterType={config.topic_filter_type}, topicSysFlag={config.topic_sys_flag}, order={str(config.order).lower()}]"
    )


def body_text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")


def display_msg_id(msg: MessageExt) -> str:
    """The id Java tools show for a message: its UNIQ_KEY when set, else the offset message id."""
    return msg.uniq_key or msg.msg_id


def message_details(msg: MessageExt) -> list[str]:
    """The lines queryMsgById prints for one message (the body inline instead of in a file)."""
    props = ", ".join(f"{k}={v}" for k, v in sorted(msg.properties.items()))
    rows = [
        ("OffsetID:", msg.msg_id),
        ("Topic:", msg.topic),
        ("Tags:", f"[{msg.tags}]"),
        ("Keys:", f"[{msg.keys}]"),
        ("Queue ID:", str(msg.queue_id)),
        ("Queue Offset:", str(msg.queue_offset)),
        ("CommitLog Offset:", str(msg.commit_log_offset)),
        ("Reconsume Times:", str(msg.reconsume_times)),
        ("Born Timestamp:", human_time_ms(msg.born_timestamp)),
        ("Store Timestamp:", human_time_ms(msg.store_timestamp)),
        ("Born Host:", msg.born_host),
        ("Store Host:", msg.store_host),
        ("System Flag:", str(msg.sys_flag)),
        ("Properties:", "{" + props + "}"),
        ("Message Body:", body_text(msg.body)),
    ]
    return [f"{label:<20} {value}" for label, value in rows]


def message_line(msg: MessageExt) -> str:
    """One consumed message, as consumeMessage prints it."""
    return (
        f"MSGID: {display_msg_id(msg)} MessageExt [topic={msg.topic}, queueId={msg.queue_id}, "
        f"queueOffset={msg.queue_offset}, storeTimestamp={msg.store_timestamp}, tags={msg.tags}, "
        f"keys={msg.keys}, offsetMsgId={msg.msg_id}] BODY: {body_text(msg.body)}"
    )
