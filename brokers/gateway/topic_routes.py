"""Where a topic lives: its route from the name servers.

The one route lookup the Django apps share (topics and consumers both read routes; neither
imports the other): :func:`topic_route` answers the route or raises the engine's
:class:`~brokers.gateway.errors.TopicNotFound`, :func:`topic_route_data` maps that to
:class:`~console.errors.NotFound` (a 404 naming the topic). Neither checks the name: each front door
checks it first, reporting the error on its own field. The cluster reads beside it are in
:mod:`brokers.gateway.cluster`.
"""

from __future__ import annotations

from brokers.engine.client.admin import TopicRouteData
from brokers.gateway.client import get_admin_client
from brokers.gateway.errors import TopicNotFound
from console.errors import NotFound

__all__ = ["TopicRouteData", "topic_route", "topic_route_data"]


def topic_route(name: str) -> TopicRouteData:
    """The route of topic ``name`` (a name already checked); TopicNotFound when the name servers have none."""
    return get_admin_client().examine_topic_route_info(name)


def topic_route_data(name: str) -> TopicRouteData:
    """The route of topic ``name`` (a name already checked); NotFound when the name servers have none."""
    try:
        return topic_route(name)
    except TopicNotFound:
        raise NotFound(f"topic {name} does not exist") from None
