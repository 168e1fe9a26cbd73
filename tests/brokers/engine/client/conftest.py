"""Fixtures for the client tests: one embedded cluster (name server + two brokers) per module."""
from __future__ import annotations

import itertools
import re

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import EmbeddedCluster

_names = itertools.count(1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = EmbeddedCluster(tmp_path_factory.mktemp("cluster")).start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def admin(cluster):
    client = BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=3.0)
    yield client
    client.close()


@pytest.fixture
def topic_name(request) -> str:
    """A fresh topic name per test."""
    return re.sub(r"[^A-Za-z0-9_]", "_", f"T_{request.node.name[5:45]}_{next(_names)}")
