"""Fixtures of the consumer-group tests: the session cluster, topics, API clients, group members."""
from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import members  # noqa: F401 (a fixture)


@pytest.fixture
def cluster(session_cluster, mq_settings, settings):
    mq_settings(session_cluster.namesrv_addr)
    settings.GANTRY_SHRINK_SETTLE_S = 0
    return session_cluster


@pytest.fixture
def admin_mq(cluster):
    with BlockingMQAdminClient(cluster.namesrv_addr) as client:
        yield client


@pytest.fixture
def operator(api_client_as):
    return api_client_as("operator")


@pytest.fixture
def viewer(api_client_as):
    return api_client_as("viewer")


@pytest.fixture
def topic(admin_mq, cluster, topic_name):
    """A topic with 4 queues on each broker."""
    create_topic(admin_mq, cluster, topic_name, queues=4)
    return topic_name


@pytest.fixture
def group(topic_name) -> str:
    return "G_" + topic_name[2:]
