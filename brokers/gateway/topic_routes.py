"""Where a topic lives: its route from the name servers, and the masters its queues are read on.

The one route lookup the Django apps share (topics and consumers both read routes; neither
imports the other): :func:`topic_route_data` maps the name servers' TOPIC_NOT_EXIST to
:class:`~console.errors.NotFound`. It does not check the name: each front door checks it first,
reporting the error on its own field. :func:`cluster_info` and :func:`masters_by_addr` are the
cluster reads the route's callers need beside it.
"""
from __future__ import annotations

from brokers.admin_client import get_admin_client
from brokers.admin_extras import namesrv_survey, require_cluster_info
from brokers.engine.client.admin import ClusterInfo, MQBrokerError, TopicRouteData
from brokers.engine.remoting.codes import ResponseCode
from console.errors import NotFound

__all__ = ["cluster_info", "masters_by_addr", "topic_route_data"]


def topic_route_data(name: str) -> TopicRouteData:
    """The route of topic ``name`` (a name already checked); NotFound when the name servers have none."""
    try:
        return get_admin_client().examine_topic_route_info(name)
    except MQBrokerError as exc:
        if exc.code == ResponseCode.TOPIC_NOT_EXIST:
            raise NotFound(f"topic {name} does not exist") from None
        raise


def cluster_info() -> ClusterInfo:
    """The cluster info from the first name server that answers (503 when none does)."""
    return require_cluster_info(namesrv_survey())


def masters_by_addr(info: ClusterInfo | None = None) -> dict[str, str]:
    """Master address -> broker name, sorted by broker name (a broker without a master left out)."""
    info = cluster_info() if info is None else info
    return {data.master_addr: name for name, data in sorted(info.broker_datas.items()) if data.master_addr}
