"""Fixtures of the consumer-group tests (the cluster, topic, group and members fixtures are
tests/fixtures/console.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def online(console_cluster, topic, group, members) -> str:
    """The group with one member online (a subscribed PullClient)."""
    members(group, topic, "m1")
    return group
