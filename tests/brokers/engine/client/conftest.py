"""Fixtures of the client tests (the cluster, ``module_cluster``, is tests/fixtures/cluster.py)."""

from __future__ import annotations

import pytest

from brokers.engine.client import Producer


@pytest.fixture
def producer(module_cluster):
    """A started Producer on the module's cluster."""
    with Producer("test_producer", module_cluster.namesrv_addr) as p:
        yield p
