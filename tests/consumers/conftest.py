"""Fixtures of the consumer-group tests: the session cluster, topics, API clients, group members."""
from __future__ import annotations

import pytest

from tests.brokers.engine.client._cluster import create_topic
from tests.console_fixtures import admin_mq, cluster, operator, viewer  # noqa: F401 (fixtures)
from tests.consumers._groups import members  # noqa: F401 (a fixture)


@pytest.fixture
def topic(admin_mq, cluster, topic_name):
    """A topic with 4 queues on each broker."""
    create_topic(admin_mq, cluster, topic_name, queues=4)
    return topic_name


@pytest.fixture
def group(topic_name) -> str:
    return "G_" + topic_name[2:]
