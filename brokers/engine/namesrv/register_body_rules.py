"""check_registration: what a REGISTER_BROKER must hold before the route tables see any of it.

RocketMQ 4.x's name server stores whatever a registration says, so a queue count of 10^9 or a topic
named ``a/b`` reaches every client's route and the console's pages. Gantry refuses such a
registration whole (SYSTEM_ERROR, a remark naming the first bad field; nothing changes):

- ``brokerName`` and ``clusterName``: the topic naming rule's characters plus ``.`` (Java's default
  broker name is the host name), 1..127 characters;
- ``brokerAddr``: ``host:port`` (``broker_address_rule.split_addr``);
- at most :data:`MAX_TOPICS_PER_REGISTRATION` topics, each a JSON object whose ``topicName`` is its
  key and follows the one naming rule (``common/topic_validator.py``; the topics a broker makes
  from its own broker and cluster names follow the broker-name rule instead), read and write queue
  counts in 0..``MAX_QUEUE_NUMS`` (1024, ``common/queue_nums.py``: a broker registers a topic whose
  write queues were lowered to 0), ``perm`` in 0..7, ``topicSysFlag`` a non-negative 32-bit
  int, ``topicFilterType`` SINGLE_TAG or MULTI_TAG, ``order`` a boolean;
- ``dataVersion``: absent, or an object of at most 16 integer fields;
- ``filterServerList``: at most :data:`MAX_FILTER_SERVERS` ``host:port`` strings.

A RocketMQ 5.x broker with ``enableSingleTopicRegister`` sends each new topic alone, REGISTER_TOPIC_IN_NAMESRV
with a TopicRouteData body (``{"queueDatas": [QueueData, ...]}``, one per broker name; its own):
:func:`check_topic_registration` holds its topic and queue data to the same rules.

The body's size is bounded by the frame limit already (and a compressed body by
``register_body.MAX_DECOMPRESSED_SIZE``).
"""

from __future__ import annotations

from typing import TypeGuard

from brokers.engine.common import json_compat
from brokers.engine.common.perm import PERM_MAX, PERM_MIN, is_valid_perm
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS, is_valid_queue_nums
from brokers.engine.common.route import QueueData
from brokers.engine.common.topic_validator import (
    REPLY_TOPIC_POSTFIX,
    VALID_CHARS,
    InvalidNameError,
    validate_topic,
)
from brokers.engine.namesrv.broker_address_rule import BrokerAddressError, split_addr
from brokers.engine.namesrv.register_body import MAX_TOPICS_PER_REGISTRATION, RegisterBodyError, RegisterBrokerBody

MAX_FILTER_SERVERS = 64  # filter servers are gone from RocketMQ 4.3+; a few are plenty
MAX_DATA_VERSION_FIELDS = 16  # counter, timestamp, 5.x's stateVersion: room to spare
BROKER_NAME_MAX_LENGTH = 127
MAX_QUEUE_DATAS = 64  # a broker registers a topic of its own broker name only: one entry
_BROKER_NAME_CHARS = VALID_CHARS | {"."}
_FILTER_TYPES = frozenset({"SINGLE_TAG", "MULTI_TAG"})
_INT32_MAX = 2**31 - 1


def check_broker_name(kind: str, name: str) -> None:
    """``kind`` is ``brokerName`` or ``clusterName``; RegisterBodyError when ``name`` breaks the rule."""
    if not name or len(name) > BROKER_NAME_MAX_LENGTH:
        raise RegisterBodyError(f"{kind} must be 1..{BROKER_NAME_MAX_LENGTH} characters long")
    bad = next((ch for ch in name if ch not in _BROKER_NAME_CHARS), None)
    if bad is not None:
        raise RegisterBodyError(f"{kind} {name!r} contains {bad!r}; allowed are letters, digits and % | _ - .")


def check_registration(broker_name: str, cluster_name: str, broker_addr: str, body: RegisterBrokerBody) -> None:
    """Raise RegisterBodyError naming the first bad field; return when the whole registration is sound."""
    check_broker_name("brokerName", broker_name)
    check_broker_name("clusterName", cluster_name)
    try:
        split_addr(broker_addr)
    except BrokerAddressError as exc:
        raise RegisterBodyError(str(exc)) from None
    wrapper = body.topic_config_wrapper
    _check_data_version(wrapper.get("dataVersion"))
    table = wrapper.get("topicConfigTable") or {}
    if len(table) > MAX_TOPICS_PER_REGISTRATION:
        raise RegisterBodyError(f"the registration lists {len(table)} topics, more than {MAX_TOPICS_PER_REGISTRATION}")
    own_topics = {broker_name, cluster_name, f"{cluster_name}_{REPLY_TOPIC_POSTFIX}"}
    for key, config in table.items():
        _check_topic_config(key, config, own_topics)
    filters = body.filter_server_list
    if len(filters) > MAX_FILTER_SERVERS:
        raise RegisterBodyError(f"filterServerList has {len(filters)} entries, more than {MAX_FILTER_SERVERS}")
    for entry in filters:
        try:
            split_addr(entry)
        except BrokerAddressError:
            raise RegisterBodyError(f"filterServerList entry {entry[:80]!r} is not host:port") from None


def check_topic_registration(topic: str, body: bytes) -> list[QueueData]:
    """REGISTER_TOPIC_IN_NAMESRV's body, its queue data checked like a registration's topics; RegisterBodyError
    naming the first bad field."""
    try:
        data = json_compat.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise RegisterBodyError(f"topic route body is not JSON: {exc}") from None
    queue_datas = data.get("queueDatas") if isinstance(data, dict) else None
    if not isinstance(queue_datas, list) or not 1 <= len(queue_datas) <= MAX_QUEUE_DATAS:
        raise RegisterBodyError(f"queueDatas must be an array of 1..{MAX_QUEUE_DATAS} objects")
    out = []
    for entry in queue_datas:
        if not isinstance(entry, dict):
            raise RegisterBodyError("a queueDatas entry is not an object")
        missing = [field for field in ("brokerName", "readQueueNums", "writeQueueNums", "perm") if field not in entry]
        if missing:
            raise RegisterBodyError(f"a queueDatas entry has no {', '.join(missing)}")
        name = entry.get("brokerName")
        check_broker_name("queueDatas[].brokerName", name if isinstance(name, str) else "")
        _check_topic_config(topic, {**entry, "topicName": topic}, set())
        out.append(QueueData.from_json(entry))
    return out


def _check_data_version(version: object) -> None:
    if version is None:
        return
    if not isinstance(version, dict) or len(version) > MAX_DATA_VERSION_FIELDS:
        raise RegisterBodyError(f"dataVersion must be an object of at most {MAX_DATA_VERSION_FIELDS} integer fields")
    for name, value in version.items():
        if not _is_int(value):
            raise RegisterBodyError(f"dataVersion.{str(name)[:40]} is not an integer")


def _check_topic_config(key: object, config: object, own_topics: set[str]) -> None:
    shown = repr(key)[:140]
    if not isinstance(config, dict):
        raise RegisterBodyError(f"topicConfigTable[{shown}] is not an object")
    name = config.get("topicName")
    if name != key:
        raise RegisterBodyError(f"topicConfigTable[{shown}].topicName is {repr(name)[:140]}, not its key")
    try:
        if name in own_topics:
            check_broker_name("topicName", name)
        else:
            validate_topic(name)
    except InvalidNameError as exc:
        raise RegisterBodyError(f"topicConfigTable[{shown}].topicName: {exc}") from None
    for field in ("readQueueNums", "writeQueueNums"):
        value = config.get(field, 16)  # TopicConfig's default when absent
        if not is_valid_queue_nums(value):
            raise RegisterBodyError(
                f"topic {name}: {field} {repr(value)[:40]} is not within {MIN_QUEUE_NUMS}..{MAX_QUEUE_NUMS}"
            )
    perm = config.get("perm", 6)
    if not is_valid_perm(perm):
        raise RegisterBodyError(f"topic {name}: perm {repr(perm)[:40]} is not within {PERM_MIN}..{PERM_MAX}")
    sys_flag = config.get("topicSysFlag", config.get("topicSynFlag", 0))
    if not _is_int(sys_flag) or not 0 <= sys_flag <= _INT32_MAX:
        raise RegisterBodyError(
            f"topic {name}: topicSysFlag {repr(sys_flag)[:40]} is not a non-negative 32-bit integer"
        )
    filter_type = config.get("topicFilterType", "SINGLE_TAG")
    if filter_type not in _FILTER_TYPES:
        raise RegisterBodyError(
            f"topic {name}: topicFilterType {repr(filter_type)[:40]} is not SINGLE_TAG or MULTI_TAG"
        )
    if not isinstance(config.get("order", False), bool):
        raise RegisterBodyError(f"topic {name}: order is not a boolean")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
