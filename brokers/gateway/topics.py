"""Topic reads and deletes the engine's admin client does not batch: every broker at once.

Every topic table of every broker (one GET_ALL_TOPIC_CONFIG each, all at once), one topic's config on
each of its brokers (GET_TOPIC_CONFIG, for its attributes: the route carries none), the groups that
consume a topic, and deleting a topic on a broker and in every name server.
"""

from __future__ import annotations

from collections.abc import Iterable

from brokers.engine.client.admin_bodies import load_object, parse_group_list, parse_topic_config_table
from brokers.engine.client.admin_types import TopicStats
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, check, first_error
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.brokers import GetTopicConfigRequestHeader, QueryTopicConsumeByWhoRequestHeader
from brokers.engine.remoting.headers.topics import DeleteTopicFromNamesrvRequestHeader, DeleteTopicRequestHeader
from brokers.gateway.client import answered, fanout_to_brokers, get_admin_client, run


def all_topic_configs(addrs: Iterable[str]) -> dict[str, dict[str, TopicConfig] | RemotingError]:
    """Every broker's topic table (GET_ALL_TOPIC_CONFIG), one request per broker, all at once."""
    out: dict[str, dict[str, TopicConfig] | RemotingError] = {}
    for addr, reply in run(fanout_to_brokers(RequestCode.GET_ALL_TOPIC_CONFIG, addrs)).items():
        answer = answered(reply, RequestCode.GET_ALL_TOPIC_CONFIG)
        out[addr] = answer if isinstance(answer, RemotingError) else parse_topic_config_table(answer.body)
    return out


def topic_configs(topic: str, addrs: Iterable[str]) -> dict[str, TopicConfig | RemotingError]:
    """The topic's config on each broker (GET_TOPIC_CONFIG, RocketMQ 5's 351, attributes included), all at once.

    A broker without the topic answers TOPIC_NOT_EXIST: an error in the result, like a broker that
    does not answer (an Apache 4.x broker answers REQUEST_CODE_NOT_SUPPORTED).
    """
    out: dict[str, TopicConfig | RemotingError] = {}
    ext = GetTopicConfigRequestHeader(topic=topic).encode()
    for addr, reply in run(fanout_to_brokers(RequestCode.GET_TOPIC_CONFIG, addrs, ext)).items():
        answer = answered(reply, RequestCode.GET_TOPIC_CONFIG)
        out[addr] = answer if isinstance(answer, RemotingError) else TopicConfig.from_json(load_object(answer.body))
    return out


def topic_consumer_groups(topic: str, addrs: Iterable[str]) -> tuple[list[str], list[str]]:
    """The groups that consume ``topic`` (QUERY_TOPIC_CONSUME_BY_WHO on each broker of its route).

    Returns the sorted group names and the errors of brokers that did not answer.
    """
    groups: set[str] = set()
    errors: list[str] = []
    ext = QueryTopicConsumeByWhoRequestHeader(topic=topic).encode()
    for addr, reply in run(fanout_to_brokers(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, addrs, ext)).items():
        answer = answered(reply, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO)
        if isinstance(answer, RemotingError):
            errors.append(f"{addr}: {answer}")
            continue
        groups.update(parse_group_list(answer.body))
    return sorted(groups), errors


def delete_topic_in_broker(addr: str, topic: str) -> None:
    """Delete the topic's config, offsets and queues on one broker (DELETE_TOPIC_IN_BROKER)."""

    def plan() -> Plan[None]:
        check(
            (yield Call(RequestCode.DELETE_TOPIC_IN_BROKER, DeleteTopicRequestHeader(topic=topic).encode(), addr=addr)),
            request_code=RequestCode.DELETE_TOPIC_IN_BROKER,
        )

    run(plan())


def delete_topic_in_namesrv_plan(namesrv_addrs: Iterable[str], topic: str, cluster: str | None = None) -> Plan[None]:
    """Drop the topic's route on every name server (only that cluster's brokers' queues when named)."""
    ext = DeleteTopicFromNamesrvRequestHeader(topic=topic, cluster_name=cluster).encode()
    replies = yield Fanout(tuple(Call(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext, addr=a) for a in namesrv_addrs))
    if not any(isinstance(r, Reply) and r.code == ResponseCode.SUCCESS for r in replies):
        first_error(replies, RequestCode.DELETE_TOPIC_IN_NAMESRV)


def delete_topic_in_namesrv(topic: str, cluster: str | None = None) -> None:
    client = get_admin_client()
    client.driver.run(delete_topic_in_namesrv_plan(client.namesrv_addrs, topic, cluster))


def topic_stats(name: str) -> TopicStats:
    """Min and max offset and last update time of every queue of topic ``name`` on every broker of its
    route (GET_TOPIC_STATS_INFO); TopicNotFound when the name servers have no route."""
    return get_admin_client().examine_topic_stats(name)


def create_or_update_topic(addr: str, config: TopicConfig, attributes: str | None = None) -> None:
    """UPDATE_AND_CREATE_TOPIC on the broker at ``addr`` (``attributes``: RocketMQ 5's ``+k=v,-k`` text)."""
    get_admin_client().create_or_update_topic(addr, config, attributes)


def delete_topic(name: str, cluster: str | None = None) -> list[str]:
    """Delete the topic on the masters of ``cluster`` (every broker of its route when None), then on every
    name server; the broker addresses it was deleted on."""
    return get_admin_client().delete_topic(name, cluster=cluster)
