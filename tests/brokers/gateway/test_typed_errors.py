"""The gateway answers with the engine's typed errors, asked of a real name server and brokers: a topic without
a route is TopicNotFound from every read that names it (route, stats, a group's consume stats, a key query), which
the console maps to a 404; the route lookup for pages turns it into a NotFound naming the topic."""

from __future__ import annotations

import pytest

from brokers.gateway.errors import MQBrokerError, NotFoundError, TopicNotFound
from brokers.gateway.groups import consume_stats
from brokers.gateway.message_keys import query_message_by_key
from brokers.gateway.topic_routes import topic_route, topic_route_data
from brokers.gateway.topics import topic_stats
from console.errors import NotFound
from console.http_errors import problem_for

pytestmark = pytest.mark.django_db

NOWHERE = "TopicThatIsNowhere_gateway_errors"


@pytest.mark.parametrize(
    "read",
    [
        lambda: topic_route(NOWHERE),
        lambda: topic_stats(NOWHERE),
        lambda: consume_stats("group_gateway_errors", NOWHERE),
        lambda: query_message_by_key(NOWHERE, "k", 32),
    ],
    ids=["route", "topic_stats", "consume_stats", "query_message_by_key"],
)
def test_a_topic_without_a_route_is_topic_not_found(console_cluster, read) -> None:
    with pytest.raises(TopicNotFound) as err:
        read()
    assert isinstance(err.value, NotFoundError) and isinstance(err.value, MQBrokerError)
    problem = problem_for(err.value)
    assert problem is not None and (problem.status, problem.code) == (404, "not_found")
    assert "the topic does not exist (TOPIC_NOT_EXIST, code 17)" in problem.detail


def test_the_pages_route_lookup_is_a_404_naming_the_topic(console_cluster) -> None:
    with pytest.raises(NotFound, match=f"topic {NOWHERE} does not exist"):
        topic_route_data(NOWHERE)
