"""Admin calls the engine's admin client does not offer, written Django-side as plans.

Each function builds a plan from the engine's public pieces (:class:`Call`, :class:`Fanout`,
:func:`check`, the body readers of ``admin_bodies``) and runs it on the shared client's driver
(:func:`run`), so it shares connections, timeouts and name-server fail-over with every other
admin call. Batched reads fan out to all brokers at once: one request per broker, never one per
row. Candidates to move into ``brokers/engine/client/admin_plans.py`` once the engine is open
for changes again.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from brokers.admin_client import get_admin_client
from brokers.engine.client.admin import ClusterInfo, parse_cluster_info, parse_kv_table
from brokers.engine.client.admin_bodies import as_dict, load_object
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, check, first_error
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError

T = TypeVar("T")


def run(plan: Plan[T]) -> T:
    """Run a plan on the shared admin client."""
    return get_admin_client().driver.run(plan)


def _failure(reply: Reply | RemotingError, request_code: int) -> RemotingError | None:
    """The error of one Fanout answer, or None when it succeeded."""
    if isinstance(reply, RemotingError):
        return reply
    try:
        check(reply, request_code=request_code)
    except RemotingError as exc:
        return exc
    return None


# -- name servers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NamesrvAnswer:
    addr: str
    version: int | None  # the protocol version in the name server's response header
    error: str = ""

    @property
    def live(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class NamesrvSurvey:
    namesrvs: tuple[NamesrvAnswer, ...]
    cluster_info: ClusterInfo | None  # from the first name server that answered


def namesrv_survey_plan(namesrv_addrs: Iterable[str]) -> Plan[NamesrvSurvey]:
    """Ask every name server for the cluster info at once: who answers, with what version."""
    addrs = tuple(namesrv_addrs)
    replies = yield Fanout(tuple(Call(RequestCode.GET_BROKER_CLUSTER_INFO, addr=a) for a in addrs))
    answers, info = [], None
    for addr, reply in zip(addrs, replies):
        error = _failure(reply, RequestCode.GET_BROKER_CLUSTER_INFO)
        if error is not None:
            answers.append(NamesrvAnswer(addr, None, str(error)))
            continue
        answers.append(NamesrvAnswer(addr, reply.command.version if reply.command else None))
        if info is None:
            info = parse_cluster_info(reply.body)
    return NamesrvSurvey(tuple(answers), info)


def namesrv_survey() -> NamesrvSurvey:
    client = get_admin_client()
    return client.driver.run(namesrv_survey_plan(client.namesrv_addrs))


def require_cluster_info(survey: NamesrvSurvey) -> ClusterInfo:
    """The survey's cluster info; RemotingConnectError (503) when no name server answered."""
    if survey.cluster_info is None:
        detail = "; ".join(f"{a.addr}: {a.error}" for a in survey.namesrvs)
        raise RemotingConnectError(f"no name server answered ({detail})", ";".join(a.addr for a in survey.namesrvs))
    return survey.cluster_info


def delete_topic_in_namesrv_plan(namesrv_addrs: Iterable[str], topic: str, cluster: str | None = None) -> Plan[None]:
    """Drop the topic's route on every name server (only that cluster's brokers' queues when named)."""
    ext: dict[str, object] = {"topic": topic}
    if cluster is not None:
        ext["clusterName"] = cluster
    replies = yield Fanout(tuple(Call(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext, addr=a) for a in namesrv_addrs))
    if not any(isinstance(r, Reply) and r.code == ResponseCode.SUCCESS for r in replies):
        first_error(replies, RequestCode.DELETE_TOPIC_IN_NAMESRV)


# -- brokers, batched ------------------------------------------------------------------------------


def _fanout_to_brokers(code: int, addrs: Iterable[str], ext: dict[str, object] | None = None) -> Plan[dict[str, Reply | RemotingError]]:
    addrs = tuple(dict.fromkeys(addrs))
    if not addrs:
        return {}
    replies = yield Fanout(tuple(Call(code, ext, addr=a) for a in addrs))
    return dict(zip(addrs, replies))


def all_topic_configs(addrs: Iterable[str]) -> dict[str, dict[str, TopicConfig] | RemotingError]:
    """Every broker's topic table (GET_ALL_TOPIC_CONFIG), one request per broker, all at once."""
    out: dict[str, dict[str, TopicConfig] | RemotingError] = {}
    for addr, reply in run(_fanout_to_brokers(RequestCode.GET_ALL_TOPIC_CONFIG, addrs)).items():
        error = _failure(reply, RequestCode.GET_ALL_TOPIC_CONFIG)
        if error is not None:
            out[addr] = error
            continue
        table = as_dict(load_object(reply.body).get("topicConfigTable"))
        out[addr] = {str(name): TopicConfig.from_json(as_dict(cfg)) for name, cfg in table.items()}
    return out


def runtime_infos(addrs: Iterable[str]) -> dict[str, dict[str, str] | RemotingError]:
    """Every broker's runtime figures (GET_BROKER_RUNTIME_INFO), all at once."""
    out: dict[str, dict[str, str] | RemotingError] = {}
    for addr, reply in run(_fanout_to_brokers(RequestCode.GET_BROKER_RUNTIME_INFO, addrs)).items():
        error = _failure(reply, RequestCode.GET_BROKER_RUNTIME_INFO)
        out[addr] = error if error is not None else parse_kv_table(reply.body)
    return out


def topic_consumer_groups(topic: str, addrs: Iterable[str]) -> tuple[list[str], list[str]]:
    """The groups that consume ``topic`` (QUERY_TOPIC_CONSUME_BY_WHO on each broker of its route).

    Returns the sorted group names and the errors of brokers that did not answer.
    """
    groups: set[str] = set()
    errors: list[str] = []
    for addr, reply in run(_fanout_to_brokers(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, addrs, {"topic": topic})).items():
        error = _failure(reply, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO)
        if error is not None:
            errors.append(f"{addr}: {error}")
            continue
        groups.update(str(g) for g in load_object(reply.body).get("groupList") or ())
    return sorted(groups), errors


def delete_topic_in_broker(addr: str, topic: str) -> None:
    """Delete the topic's config, offsets and queues on one broker (DELETE_TOPIC_IN_BROKER)."""

    def plan() -> Plan[None]:
        check((yield Call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": topic}, addr=addr)),
              request_code=RequestCode.DELETE_TOPIC_IN_BROKER)

    run(plan())


def delete_topic_in_namesrv(topic: str, cluster: str | None = None) -> None:
    client = get_admin_client()
    client.driver.run(delete_topic_in_namesrv_plan(client.namesrv_addrs, topic, cluster))
