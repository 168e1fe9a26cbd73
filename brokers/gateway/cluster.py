"""The cluster as the name servers describe it: who answers, the cluster info, and the broker groups.

:func:`masters` is the broker name -> master address map every Django-side caller uses (built
once, by :meth:`ClusterInfo.masters`); :func:`masters_by_addr` is the same map turned around for
the batched reads keyed by address; :func:`broker_names_by_addr` names every member (masters and
slaves), the only addresses the console ever connects to for a message id; :func:`slaves` and :func:`broker_groups` are the views the
master/slave broker groups will read. Each takes the ClusterInfo a caller already holds, or
reads it from the first name server that answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brokers.engine.client.admin import BrokerData, ClusterInfo, parse_cluster_info, parse_kv_table
from brokers.engine.client.plan import Call, Fanout, Plan
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError
from brokers.gateway.client import answered, fanout_to_brokers, get_admin_client, reply_failure, run


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
        error = reply_failure(reply, RequestCode.GET_BROKER_CLUSTER_INFO)
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


def cluster_info() -> ClusterInfo:
    """The cluster info from the first name server that answers (503 when none does)."""
    return require_cluster_info(namesrv_survey())


def masters(info: ClusterInfo | None = None) -> dict[str, str]:
    """Broker name -> master address, sorted by broker name (a name without a master left out)."""
    return (cluster_info() if info is None else info).masters()


def masters_by_addr(info: ClusterInfo | None = None) -> dict[str, str]:
    """Master address -> broker name, in :func:`masters`' order (the batched reads take addresses)."""
    return {addr: name for name, addr in masters(info).items()}


def readable_by_addr(info: ClusterInfo | None = None) -> dict[str, str]:
    """One address per broker name -> that name: the master, or, for a broker whose master the name
    server does not list (it is down), its lowest-id slave. A slave holds its master's topics,
    groups and offsets as of its last sync plus the offsets consumers committed to it since, so the
    reads of every group (the list, a group's page, the health scan's backlog) still count that
    broker, once; writes go to masters (:func:`masters_by_addr`)."""
    info = cluster_info() if info is None else info
    out = masters_by_addr(info)
    listed = set(out.values())
    for name, members in slaves(info).items():
        if name not in listed:
            out[min(members.items())[1]] = name
    return out


def broker_names_by_addr(info: ClusterInfo | None = None) -> dict[str, str]:
    """Every address of every broker (masters and slaves) -> its broker name: the brokers of this cluster."""
    info = cluster_info() if info is None else info
    out = {addr: name for name, addr in masters(info).items()}
    for name, members in slaves(info).items():
        out.update({addr: name for addr in members.values()})
    return out


def slaves(info: ClusterInfo | None = None) -> dict[str, dict[int, str]]:
    """Broker name -> {broker id >= 1: address}, for brokers that have slaves."""
    return (cluster_info() if info is None else info).slaves()


def slave_addrs(info: ClusterInfo | None = None) -> list[str]:
    """Every slave's address, by broker name then broker id."""
    return [addr for _name, members in sorted(slaves(info).items()) for _id, addr in sorted(members.items())]


def broker_groups(info: ClusterInfo | None = None) -> dict[str, BrokerData]:
    """Broker name -> its group (cluster and every address by broker id, 0 the master), sorted by name."""
    info = cluster_info() if info is None else info
    return dict(sorted(info.broker_datas.items()))


def runtime_infos(addrs: Iterable[str]) -> dict[str, dict[str, str] | RemotingError]:
    """Every broker's runtime figures (GET_BROKER_RUNTIME_INFO), all at once."""
    out: dict[str, dict[str, str] | RemotingError] = {}
    for addr, reply in run(fanout_to_brokers(RequestCode.GET_BROKER_RUNTIME_INFO, addrs)).items():
        answer = answered(reply, RequestCode.GET_BROKER_RUNTIME_INFO)
        out[addr] = answer if isinstance(answer, RemotingError) else parse_kv_table(answer.body)
    return out
