"""Fixtures shared across the suite: an embedded cluster and pointing Django at it."""
from __future__ import annotations

import socket

import pytest


@pytest.fixture(scope="session")
def session_cluster(tmp_path_factory):
    """One real name server and brokers broker-a, broker-b on ephemeral loopback ports."""
    from tests.brokers.engine.client._cluster import EmbeddedCluster

    cluster = EmbeddedCluster(tmp_path_factory.mktemp("session-cluster")).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def mq_settings(settings):
    """Return a function that points the Django side at a name server address."""
    from brokers.admin_client import reset_admin_client

    def point_at(namesrv_addr: str) -> None:
        settings.MQ = {**settings.MQ, "NAMESRV_ADDR": namesrv_addr, "ADMIN_TIMEOUT_S": 2.0}
        reset_admin_client()

    yield point_at
    reset_admin_client()


@pytest.fixture
def unused_addr() -> str:
    """A loopback address where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def pytest_collection_modifyitems(config, items):
    """Run browser tests last: Playwright's sync API holds an event loop on the main thread while
    a browser is open, and tests that call asyncio.run() cannot share the thread with it."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
