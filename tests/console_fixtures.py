"""Fixtures shared by the console apps' tests (topics, consumers): the session cluster with
Django pointed at it, an admin client, and API clients by role. Import them in a conftest."""
from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient


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
