"""Where a topic lives: its route from the name servers.

The one route lookup the Django apps share (topics and consumers both read routes; neither
imports the other): :func:`topic_route_data` maps the name servers' TOPIC_NOT_EXIST to
:class:`~console.errors.NotFound`. It does not check the name: each front door checks it first,
reporting the error on its own field. The cluster reads beside it are in :mod:`brokers.gateway.cluster`.
"""

from __future__ import annotations

from brokers.engine.client.admin import MQBrokerError, TopicRouteData
from brokers.engine.remoting.codes import ResponseCode
from brokers.gateway.client import get_admin_client
from console.errors import NotFound

__all__ = ["topic_route_data"]


def topic_route_data(name: str) -> TopicRouteData:
    """The route of topic ``name`` (a name already checked); NotFound when the name servers have none."""
    try:
        return get_admin_client().examine_topic_route_info(name)
    except MQBrokerError as exc:
        if exc.code == ResponseCode.TOPIC_NOT_EXIST:
            raise NotFound(f"topic {name} does not exist") from None
        raise
